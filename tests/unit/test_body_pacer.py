"""Request bodies are read at a bounded rate while a reply is being generated (runner.guards'
Pacer), so big uploads cannot take the cores a stream needs; an idle runner reads at once."""

from __future__ import annotations

import asyncio
from typing import Any

from runner.guards import PACER_BURST, BodyLimit, Pacer

MIB = 2**20


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_passes_then_the_rate_holds_while_generating() -> None:
    clock, busy = Clock(), [True]
    pacer = Pacer(8 * MIB, lambda: busy[0], burst=4 * MIB, clock=clock)
    assert [pacer.wait_for(MIB) for _ in range(4)] == [0.0] * 4  # the burst
    assert pacer.wait_for(2 * MIB) == 0.25  # 2 MiB beyond it at 8 MiB/s
    clock.now += 0.25  # the wait was served
    assert pacer.wait_for(MIB) == 0.125
    assert pacer.paced_bytes == 3 * MIB


def test_idle_nothing_waits_and_the_bucket_refills() -> None:
    clock, busy = Clock(), [False]
    pacer = Pacer(MIB, lambda: busy[0], burst=4 * MIB, clock=clock)
    assert all(pacer.wait_for(32 * MIB) == 0.0 for _ in range(3))
    busy[0] = True
    assert pacer.wait_for(4 * MIB) == 0.0  # the burst is whole again
    assert pacer.wait_for(MIB) == 1.0
    assert pacer.paced_bytes == MIB


def test_connections_share_one_rate() -> None:
    """Two bodies arriving together wait for each other: the rate is for all of them."""
    clock = Clock()
    pacer = Pacer(4 * MIB, lambda: True, burst=0, clock=clock)
    assert pacer.wait_for(MIB) == 0.25
    assert pacer.wait_for(MIB) == 0.5  # the other connection's megabyte is counted too


def _run_body(pacer: Pacer | None, chunks: list[bytes]) -> tuple[list[float], bytes]:
    """A request with ``chunks`` through BodyLimit; the waits it asked for and the body the
    app got."""
    waits: list[float] = []
    got: list[bytes] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        got.append((await receive())["body"])

    messages = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
                for i, c in enumerate(chunks)]

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: Any) -> None:
        raise AssertionError(f"nothing should be answered here: {message}")

    total = sum(map(len, chunks))
    scope = {"type": "http", "path": "/v1/chat/completions",
             "headers": [(b"content-length", str(total).encode())]}
    limit = BodyLimit(app, 64 * MIB, 120.0, pacer, sleep=sleep)
    asyncio.run(limit(scope, receive, send))
    return waits, got[0]


def test_the_body_guard_waits_as_told_and_hands_over_the_whole_body() -> None:
    chunks = [bytes([i]) * MIB for i in range(10)]
    clock = Clock()
    waits, body = _run_body(Pacer(2 * MIB, lambda: True, clock=clock), chunks)
    assert body == b"".join(chunks)
    # 4 MiB at once; each later megabyte (but the last, which ends the body) costs 0.5 s more,
    # as the clock does not move here.
    assert PACER_BURST == 4 * MIB
    assert waits == [0.5 * n for n in range(1, 6)]
    assert _run_body(Pacer(2 * MIB, lambda: False, clock=clock), chunks)[0] == []
    assert _run_body(None, chunks)[0] == []
