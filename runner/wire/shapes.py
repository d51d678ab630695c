"""The shapes of the runner's errors and of its ``/health``, written once for both sides.

Errors are OpenAI's (``{"error": {"message", "type", "code", "param"}}``), so any
OpenAI-compatible client reads them; the runner makes every one with :func:`error_body` and the
app reads the runner's, and a remote server's, with :func:`read_error`. ``/health`` answers 200
``{"status": "ok"}``, 503 ``{"status": "loading", "progress": 0..1}`` or 500
``{"status": "error", "message": ...}``: :func:`health_body` and :func:`read_health`.

Standard library only (the GUI process imports it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

INVALID_REQUEST = "invalid_request_error"
SERVER_ERROR = "server_error"

HEALTH_OK = "ok"
HEALTH_LOADING = "loading"
HEALTH_ERROR = "error"
HEALTH_STATUS = {HEALTH_OK: 200, HEALTH_LOADING: 503, HEALTH_ERROR: 500}


def error_body(message: str, type_: str = INVALID_REQUEST,
               code: str | None = None) -> dict[str, Any]:
    """OpenAI's error shape, for every error the runner answers."""
    return {"error": {"message": message, "type": type_, "code": code, "param": None}}


@dataclass(frozen=True)
class WireError:
    message: str
    type: str = ""
    code: str | None = None


def read_error(payload: object, limit: int = 2000) -> WireError | None:
    """The error in a parsed body or stream event (``{"error": ...}``), or None where it holds
    none. Other servers send a bare string or FastAPI's ``{"detail": ...}``: read too. Nothing in
    it is trusted: the message is cut to ``limit`` characters, the code kept only as a string."""
    if not isinstance(payload, dict):
        return None
    err = payload.get("error")
    if isinstance(err, dict) and err:
        message = str(err.get("message") or "")[:limit]
        code = err.get("code")
        return WireError(message, str(err.get("type") or ""),
                         str(code)[:200] if isinstance(code, str | int) else None)
    if isinstance(err, str) and err:
        return WireError(err[:limit])
    detail = payload.get("detail")
    if detail:
        return WireError(str(detail)[:limit])
    return None


def health_body(status: str, progress: float = 0.0, message: str = "") -> tuple[dict[str, Any], int]:
    """``/health``'s body and HTTP status for a runner in ``status``."""
    if status == HEALTH_OK:
        return {"status": HEALTH_OK}, HEALTH_STATUS[HEALTH_OK]
    if status == HEALTH_ERROR:
        return {"status": HEALTH_ERROR, "message": message}, HEALTH_STATUS[HEALTH_ERROR]
    return {"status": HEALTH_LOADING, "progress": round(progress, 4)}, HEALTH_STATUS[HEALTH_LOADING]


@dataclass(frozen=True)
class HealthReading:
    status: str
    progress: float
    message: str


def read_health(payload: object, http_status: int) -> HealthReading:
    """What a ``/health`` answer says; a body without a status counts as an error, and progress
    defaults to done for 200 and to nothing otherwise."""
    body = payload if isinstance(payload, dict) else {}
    try:
        progress = float(body.get("progress", 1.0 if http_status == 200 else 0.0))
    except (TypeError, ValueError):
        progress = 0.0
    return HealthReading(str(body.get("status", HEALTH_ERROR)), progress,
                         str(body.get("message", "")))
