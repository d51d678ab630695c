"""Grammars from hostile JSON schemas: refused with a 400 that names the limit, never a crash.

Issue 24's items 1, 2, 4 and 9. llama.cpp's grammar parser recurses once per nesting level and
overflowed the thread's stack on a 174-byte schema; schema sizes became gigabytes of grammar;
a grammar built on the scheduler thread stalled every client; an unparsable grammar was a 500
with the whole grammar dumped on stderr.
"""

from __future__ import annotations

import threading
import time
from typing import Any

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


def _timed_chat(r: Runner, limit: float) -> float:
    """Seconds a 4-token chat took; fails when it takes over ``limit`` (waits 5 s at most)."""
    started = time.monotonic()
    try:
        resp = _chat(r, {"max_tokens": 4}, timeout=5.0)
    except httpx2.TimeoutException:
        raise AssertionError("a 4-token chat got no answer within 5 s") from None
    took = time.monotonic() - started
    assert resp.status_code == 200, resp.text
    assert took < limit, f"a 4-token chat took {took:.1f} s"
    return took


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
    try:
        resp = _chat(r, {"response_format": _schema_format(schema), "max_tokens": 8}, timeout=5)
    except httpx2.TimeoutException:
        raise AssertionError("no answer within 5 s: the grammar is being sampled") from None
    _assert_refused(resp, "pattern", "1000", "64")
    _timed_chat(r, 2.0)
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
    started = time.monotonic()
    resp = _chat(r, {"response_format": _schema_format(schema)}, timeout=100)
    took = time.monotonic() - started
    _assert_refused(resp, "minItems", "10000000")
    assert took < 2.0, f"refusing took {took:.1f} s"
    grown = psutil.Process(r.pid).memory_info().rss - before
    assert grown < 100 * 2**20, f"the runner grew by {grown / 2**20:.0f} MiB"
    _assert_up(r)


@pytest.mark.timeout(120)
def test_huge_enum_is_refused_and_does_not_stall_a_concurrent_chat(
        hostile_runner: RunnerSource) -> None:
    r = hostile_runner()
    schema = {"enum": [f"value-{i}" for i in range(100_000)]}
    answer: list[httpx2.Response] = []
    bomb = threading.Thread(target=lambda: answer.append(
        _chat(r, {"response_format": _schema_format(schema)})))
    bomb.start()
    time.sleep(0.3)  # the enum is in flight: converting, or being parsed
    _timed_chat(r, 2.0)
    bomb.join(10)
    assert answer, "the enum request got no answer within 10 s"
    _assert_refused(answer[0], "enum", "100000", "1000")
    _assert_up(r)


@pytest.mark.timeout(120)
def test_admitted_grammar_builds_off_the_scheduler(start_runner: Any) -> None:
    """With the limits raised, a grammar that takes seconds to parse (a 60,000-value enum) is
    built while other clients keep chatting: not on the scheduler thread, not on the loop."""
    r = start_runner("--max-schema-items", "100000", "--max-grammar-bytes", "4000000",
                     "--max-grammar-seconds", "60")
    schema = {"enum": [f"value-{i}" for i in range(60_000)]}
    answer: list[httpx2.Response] = []

    def send_bomb() -> None:
        try:  # its answer is not awaited: only that it is being built meanwhile
            answer.append(_chat(r, {"response_format": _schema_format(schema), "max_tokens": 1},
                                timeout=4.0))
        except httpx2.TimeoutException:
            pass

    bomb = threading.Thread(target=send_bomb)
    bomb.start()
    time.sleep(0.5)
    worst_health = 0.0
    with r.client() as http:
        for _ in range(5):
            t = time.monotonic()
            assert http.get("/health").status_code == 200
            worst_health = max(worst_health, time.monotonic() - t)
    _timed_chat(r, 2.0)
    building = bomb.is_alive()
    bomb.join(10)
    assert building, "the enum's grammar was built too fast to show anything; use a bigger one"
    assert worst_health < 0.5, f"/health took {worst_health:.2f} s while a grammar was being built"
    assert not answer or answer[0].status_code == 200, answer[0].text[:300]
    _assert_up(r)


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
    time.sleep(0.2)  # let the stderr reader catch up
    new = r.stderr_lines[lines_before:]
    logged = "\n".join(new)
    assert "field-59-kv ::=" not in logged and "field_59" not in logged, logged[:2000]
    assert all(len(line) < 2000 for line in new), max(new, key=len)[:2000]
