"""The runner's outbox: the scheduler thread's events reach the event loop once per step, in
order, and with every core busy the scheduler waits until the loop has taken them."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from runner.server import Outbox


class _Waits(threading.Event):
    """The outbox's "written" event, recording each wait: (its time-out, what it returned)."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[tuple[float | None, bool]] = []

    def wait(self, timeout: float | None = None) -> bool:
        got = super().wait(timeout)
        self.waits.append((timeout, got))
        return got


def _loop_thread() -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    loop = asyncio.new_event_loop()
    t = threading.Thread(target=loop.run_forever, daemon=True)
    t.start()
    return loop, t


def test_one_wakeup_per_step_in_order() -> None:
    loop, t = _loop_thread()
    calls: list[Any] = []
    wakeups = 0
    real = loop.call_soon_threadsafe

    def counting(*args: Any) -> Any:
        nonlocal wakeups
        wakeups += 1
        return real(*args)

    loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
    try:
        box = Outbox(loop, lambda: True)
        for step in range(3):
            for stream in range(4):
                box.add(calls.append, (step, stream))
            box.flush()  # waits: the items are in before it returns
            assert calls[-1] == (step, 3)
        box.flush()  # nothing to hand over: no wake-up
        assert wakeups == 3
        assert calls == [(s, i) for s in range(3) for i in range(4)]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        t.join(5)


def test_with_free_cores_the_scheduler_does_not_wait() -> None:
    loop, t = _loop_thread()
    gate = threading.Event()
    got: list[str] = []
    try:
        loop.call_soon_threadsafe(gate.wait)  # the loop is busy elsewhere
        box = Outbox(loop, lambda: False)
        box._written = written = _Waits()
        box.add(got.append, "x")
        box.flush()
        assert written.waits == []  # returned without waiting for the loop
        assert got == []  # which has not taken the item yet
        gate.set()
        deadline = time.monotonic() + 5
        while not got and time.monotonic() < deadline:
            time.sleep(0.01)
        assert got == ["x"]
    finally:
        gate.set()
        loop.call_soon_threadsafe(loop.stop)
        t.join(5)


def test_a_stuck_loop_delays_a_step_by_a_bounded_time() -> None:
    loop, t = _loop_thread()
    gate = threading.Event()
    got: list[str] = []
    try:
        loop.call_soon_threadsafe(gate.wait)
        box = Outbox(loop, lambda: True)
        box._written = written = _Waits()
        box.add(got.append, "x")
        box.flush()
        # It waited for the loop, at most WAIT_S, and went on though the loop never took it.
        assert written.waits == [(Outbox.WAIT_S, False)]
        assert got == [] and not gate.is_set()
    finally:
        gate.set()
        loop.call_soon_threadsafe(loop.stop)
        t.join(5)


def test_the_writes_are_awaited_only_where_the_cpu_runs_layers() -> None:
    from runner.server import RunnerState, _gpu_only
    from runner.settings import LoadSettings

    def state(memory: list[dict[str, int | str]], n_cpu_moe: int = 0) -> RunnerState:
        s = RunnerState(LoadSettings(model="m.gguf", n_cpu_moe=n_cpu_moe))
        s.memory = memory  # type: ignore[assignment]
        return s

    gpu = {"device": "CUDA0", "weights": 4 << 30, "kv": 1 << 30, "compute": 1 << 28}
    # Every layer on the GPU (the CPU keeps token_embd and host inputs only): its CPU threads
    # idle through each step, as on the H100 of docs/gpu.md.
    assert _gpu_only(state([gpu, {"device": "CPU", "weights": 1 << 28, "kv": 0, "compute": 1}]))
    # A layer on the CPU has its KV cache there; experts kept in RAM run on the CPU too.
    assert not _gpu_only(state([gpu, {"device": "CPU", "weights": 1 << 30, "kv": 1 << 20,
                                      "compute": 1}]))
    assert not _gpu_only(state([gpu, {"device": "CPU", "weights": 1 << 30, "kv": 0}],
                               n_cpu_moe=4))
    assert not _gpu_only(state([{"device": "CPU", "weights": 1 << 30, "kv": 1 << 20}]))
