"""run_with_deadline stops Python code even where the first exception it raises is swallowed."""

from __future__ import annotations

import gc
import threading
import time

import pytest

from runner.template import run_with_deadline


class Stopped(Exception):
    pass


def _spin_until(stop: float) -> str:
    while time.monotonic() < stop:
        pass
    return "ran to the end"


def test_a_loop_that_calls_nothing_is_stopped() -> None:
    with pytest.raises(Stopped):
        run_with_deadline(lambda: _spin_until(time.monotonic() + 60), 0.2, Stopped)


def test_a_swallowed_exception_is_raised_again() -> None:
    # The CI failure: the first exception landed in a garbage-collector callback, which CPython
    # reports as unraisable and goes on from. Here the code itself swallows the first one.
    swallowed = []

    def swallows_once() -> str:
        try:
            _spin_until(time.monotonic() + 60)
        except BaseException as e:  # swallowing is the point of the test
            swallowed.append(type(e).__name__)
        return _spin_until(time.monotonic() + 60)

    with pytest.raises(Stopped):
        run_with_deadline(swallows_once, 0.2, Stopped)
    assert swallowed == ["_Expired"]


def test_one_landing_in_a_gc_callback_does_not_stop_the_deadline() -> None:
    landed = threading.Event()

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            landed.set()
            _spin_until(time.monotonic() + 0.5)  # the deadline lands here, is swallowed

    def work() -> str:
        stop = time.monotonic() + 60
        while time.monotonic() < stop:
            if not landed.is_set():
                gc.collect()
        return "ran to the end"

    gc.callbacks.append(callback)
    try:
        with pytest.raises(Stopped):
            run_with_deadline(work, 0.2, Stopped)
    finally:
        gc.callbacks.remove(callback)


def test_a_result_before_the_deadline_comes_back_and_nothing_lands_later() -> None:
    assert run_with_deadline(lambda: 42, 0.05, Stopped) == 42
    # Were the deadline still armed, it would land in this loop.
    assert _spin_until(time.monotonic() + 0.3) == "ran to the end"
