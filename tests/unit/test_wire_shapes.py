"""Errors and /health have one shape, written once in runner/wire/shapes.py and used by both the
runner (which writes them) and the app (which reads them)."""

from __future__ import annotations

import re
from pathlib import Path

from runner.wire.shapes import (
    HEALTH_ERROR,
    HEALTH_LOADING,
    HEALTH_OK,
    WireError,
    error_body,
    health_body,
    read_error,
    read_health,
)

REPO = Path(__file__).resolve().parents[2]


def test_what_the_runner_writes_the_app_reads() -> None:
    body = error_body("too long", code="context_length_exceeded")
    assert body == {"error": {"message": "too long", "type": "invalid_request_error",
                              "code": "context_length_exceeded", "param": None}}
    assert read_error(body) == WireError("too long", "invalid_request_error",
                                         "context_length_exceeded")
    for status, progress, message in ((HEALTH_OK, 1.0, ""), (HEALTH_LOADING, 0.25, ""),
                                      (HEALTH_ERROR, 0.0, "no memory")):
        payload, http = health_body(status, progress, message)
        got = read_health(payload, http)
        assert (got.status, got.progress, got.message) == (status, progress, message)
    assert health_body(HEALTH_OK)[1] == 200 and health_body(HEALTH_LOADING)[1] == 503 \
        and health_body(HEALTH_ERROR)[1] == 500


def test_other_servers_errors_are_read_and_nothing_in_them_is_trusted() -> None:
    assert read_error({"error": "model not found"}) == WireError("model not found")
    assert read_error({"detail": "Not Found"}) == WireError("Not Found")
    assert read_error({"error": {}}) is None and read_error({"choices": []}) is None
    assert read_error(["error"]) is None and read_error(None) is None
    long = read_error({"error": {"message": "x" * 10_000, "code": {"nested": 1}}}, limit=500)
    assert long is not None and len(long.message) == 500 and long.code is None
    assert read_health("not json", 503).status == HEALTH_ERROR
    assert read_health({"status": "loading", "progress": "lots"}, 503).progress == 0.0


def test_no_module_spells_the_error_shape_itself() -> None:
    """Both sides make and read errors through the wire module: no other file writes the
    shape's literal."""
    literal = re.compile(r"""["']error["']\s*:\s*\{\s*["']message["']""")
    spelled = [str(p.relative_to(REPO)) for root in ("app", "runner")
               for p in (REPO / root).rglob("*.py")
               if p.name != "shapes.py" and literal.search(p.read_text("utf-8"))]
    assert not spelled, spelled
