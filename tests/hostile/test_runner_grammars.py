"""Grammars from hostile JSON schemas: refused with a 400 that names the limit, never a crash.

Issue 24's items 1, 2, 4 and 9. llama.cpp's grammar parser recurses once per nesting level and
overflowed the thread's stack on a 174-byte schema; schema sizes became gigabytes of grammar;
a grammar built on the scheduler thread stalled every client; an unparsable grammar was a 500
with the whole grammar dumped on stderr.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx2
import psutil
import pytest

from tests.hostile.conftest import RunnerSource
from tests.integration.conftest import Runner

ASK = [{"role": "user", "content": "hello"}]


def _schema_format(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}


def _chat(r: Runner, body: dict[str, Any], timeout: float = 60.0) -> httpx2.Response:
    with r.client(timeout=httpx2.Timeout(timeout)) as http:
        return http.post("/v1/chat/completions", json={"messages": ASK, "max_tokens": 4, **body})


def _chat_answered(r: Runner) -> None:
    """A 4-token chat gets its answer (the time-out is a hang guard; how long it takes while a
    bomb is in flight is tests/bench/hostile.py's figure)."""
    resp = _chat(r, {"max_tokens": 4})
    assert resp.status_code == 200, resp.text
    assert resp.json()["usage"]["completion_tokens"] >= 1


def _assert_up(r: Runner) -> None:
    assert r.process.poll() is None, (
        f"the runner died (exit {r.process.returncode}): {r.stderr_text()[-1500:]}")
    with r.client() as http:
        assert http.get("/health").status_code == 200


def _assert_refused(resp: httpx2.Response, *words: str) -> str:
    assert resp.status_code == 400, resp.text[:500]
    error = resp.json()["error"]
    assert error["type"] == "invalid_request_error"
    message: str = error["message"]
    for word in words:
        assert word in message, message
    assert len(message) < 400, message
    return message


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("schema", "names"), [
    ({"type": "string", "maxLength": 100000}, ("maxLength", "1000")),
    ({"type": "string", "pattern": "^a{0,100000}$"}, ("pattern", "100000", "1000")),
    ({"type": "array", "items": {"type": "integer"}, "maxItems": 100000}, ("maxItems", "1000")),
], ids=["maxLength", "pattern", "maxItems"])
def test_schema_repetition_bomb_is_a_400_not_a_crash(
        hostile_runner: RunnerSource, schema: dict[str, Any], names: tuple[str, ...]) -> None:
    r = hostile_runner()
    resp = _chat(r, {"response_format": _schema_format(schema)})
    _assert_refused(resp, *names)
    _assert_up(r)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("pattern", ["^((a){0,1000}){0,1000}$", "^(a*){0,1000}$"],
                         ids=["counted-in-counted", "star-in-counted"])
def test_nested_pattern_repeats_are_a_400_not_a_stall(hostile_runner: RunnerSource,
                                                      pattern: str) -> None:
    """Admitted by every size check (about 14 KB of grammar), these cost llama.cpp a parse stack
    per way to split the a's at every token: seconds per token on a 512-token vocabulary, on the
    thread all clients share."""
    r = hostile_runner()
    schema = {"type": "string", "pattern": pattern}
    # Refused by its shape, so never sampled; and the next client is served as usual.
    resp = _chat(r, {"response_format": _schema_format(schema), "max_tokens": 8})
    _assert_refused(resp, "pattern", "1000", "64")
    _chat_answered(r)
    _assert_up(r)


@pytest.mark.timeout(60)
def test_forced_tool_call_with_a_parameter_bomb_is_a_400_not_a_crash(
        tool_runner: RunnerSource) -> None:
    r = tool_runner()
    tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"s": {"type": "string", "maxLength": 100000}},
        "required": ["s"]}}}]
    resp = _chat(r, {"tools": tools, "tool_choice": "required"})
    _assert_refused(resp, "maxLength", "1000")
    _assert_up(r)


@pytest.mark.timeout(120)
def test_huge_min_items_is_refused_before_any_memory_is_spent(
        hostile_runner: RunnerSource) -> None:
    r = hostile_runner()
    before = psutil.Process(r.pid).memory_info().rss
    schema = {"type": "array", "items": {"type": "integer"}, "minItems": 10_000_000}
    # Refused from the number, before any grammar (how soon: tests/bench/hostile.py's refusals).
    resp = _chat(r, {"response_format": _schema_format(schema)}, timeout=100)
    _assert_refused(resp, "minItems", "10000000")
    grown = psutil.Process(r.pid).memory_info().rss - before
    assert grown < 100 * 2**20, f"the runner grew by {grown / 2**20:.0f} MiB"
    _assert_up(r)


@pytest.mark.timeout(120)
def test_huge_enum_is_refused_and_a_concurrent_chat_is_answered(
        hostile_runner: RunnerSource) -> None:
    r = hostile_runner()
    schema = {"enum": [f"value-{i}" for i in range(100_000)]}
    answer: list[httpx2.Response] = []
    bomb = threading.Thread(target=lambda: answer.append(
        _chat(r, {"response_format": _schema_format(schema)})))
    bomb.start()
    _chat_answered(r)  # sent right after it (what the enum costs a chat: the benchmark)
    bomb.join(60)
    assert answer, "the enum request got no answer within 60 s"
    _assert_refused(answer[0], "enum", "100000", "1000")
    _assert_up(r)


@pytest.mark.timeout(120)
def test_admitted_grammar_builds_off_the_scheduler(start_runner: Any) -> None:
    """With the limits raised, a grammar that takes seconds to build (a 60,000-value enum) is
    built while other clients keep chatting: not on the scheduler thread, not on the loop."""
    r = start_runner("--max-schema-items", "100000", "--max-grammar-bytes", "4000000",
                     "--max-grammar-seconds", "60")
    schema = {"enum": [f"value-{i}" for i in range(60_000)]}
    # Sent on a socket of its own, never read: closed at the end (the runner then drops it).
    with _post_raw(r, {"messages": ASK, "max_tokens": 1,
                       "response_format": _schema_format(schema)}):
        _wait_status(r, lambda s: s["requests"]["building_grammar"])  # the build has begun
        with r.client() as http:
            for _ in range(5):
                assert http.get("/health").status_code == 200
        _chat_answered(r)
        # Those were answered while the grammar was still being built: they did not wait for
        # it. (How much slower /health and a stream are meanwhile: tests/bench/hostile.py.)
        assert _status(r)["requests"]["building_grammar"], \
            "the grammar was built before a chat could be answered: either the chat waited " \
            "for it, or the enum is too small to show anything"
    _assert_up(r)


@contextlib.contextmanager
def _post_raw(r: Runner, body: dict[str, Any]) -> Iterator[socket.socket]:
    data = json.dumps(body).encode()
    parts = urlsplit(r.url)
    assert parts.hostname is not None and parts.port is not None
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
            f"Authorization: Bearer {r.key}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=60) as sock:
        sock.sendall(head + data)
        yield sock


def _status(r: Runner) -> dict[str, Any]:
    with r.client() as http:
        status: dict[str, Any] = http.get("/runner/status").json()
    return status


def _wait_status(r: Runner, ready: Callable[[dict[str, Any]], bool],
                 timeout_s: float = 60.0) -> None:
    """Until ``ready(status)`` (a hang guard only)."""
    deadline = time.monotonic() + timeout_s
    while not ready(_status(r)):
        assert time.monotonic() < deadline, f"not so within {timeout_s:g} s: {_status(r)}"
        time.sleep(0.01)


@pytest.mark.timeout(60)
def test_unparsable_grammar_is_a_400_and_not_dumped_on_stderr(
        hostile_runner: RunnerSource) -> None:
    """llama.cpp cannot parse the grammar made for a "\\d" pattern (an escape GBNF lacks)."""
    r = hostile_runner()
    # Many properties make a grammar of some kilobytes: the log must not carry it.
    props: dict[str, Any] = {f"field_{i}": {"type": "string"} for i in range(60)}
    props["code"] = {"type": "string", "pattern": "^\\d+$"}
    schema = {"type": "object", "properties": props, "required": list(props)}
    lines_before = len(r.stderr_lines)
    resp = _chat(r, {"response_format": _schema_format(schema)})
    _assert_refused(resp, "grammar")
    _assert_up(r)
    # The refusal's own line comes after whatever llama.cpp wrote while parsing: once it is read,
    # so is all the rest.
    r.wait_event("grammar_refused", lines_before)
    new = r.stderr_lines[lines_before:]
    logged = "\n".join(new)
    assert "field-59-kv ::=" not in logged and "field_59" not in logged, logged[:2000]
    assert all(len(line) < 2000 for line in new), max(new, key=len)[:2000]
