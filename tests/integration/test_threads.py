"""The runner's thread count on a busy machine, for real: a real runner, a real model, and real
programs keeping cores busy (``while True: pass``). Two threads, one of them sharing a core with
such a program, decode 2-3x slower than one thread on a free core, so the figures leave room for
a noisy machine."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.fixtures.models import BENCH, model_path
from tests.integration.conftest import Runner, StartRunner

ADAPT = ("--threads", "2", "--adapt-threads", "--max-threads", "2")


@contextlib.contextmanager
def busy_cores() -> Iterator[None]:
    """Every core but one kept busy: of two threads, one must share a core."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(max(1, (os.cpu_count() or 2) - 1))]
    try:
        time.sleep(0.3)
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def _threads(r: Runner) -> dict[str, Any]:
    got = httpx2.get(f"{r.url}/runner/status", headers={"Authorization": f"Bearer {r.key}"},
                     trust_env=False).json()
    return dict(got["threads"])


def _generate(r: Runner, tokens: int) -> None:
    resp = httpx2.post(f"{r.url}/v1/completions", headers={"Authorization": f"Bearer {r.key}"},
                       json={"prompt": "once upon a time", "max_tokens": tokens,
                             "ignore_eos": True, "temperature": 0},
                       timeout=120, trust_env=False)
    assert resp.json()["usage"]["completion_tokens"] == tokens


# The load's trial stops after 2 s, keeping the fastest count measured so far: on a machine
# busier than these tests make it, that can be before every count was measured. These tests check
# what a whole trial measures and chooses, so they give it the time it needs (a hang guard only).
WHOLE_TRIAL = {"HEARTH_CALIBRATE_SECONDS": "120"}


def _ready(start_runner: StartRunner, *args: str) -> Runner:
    return start_runner(*args, model=model_path(BENCH), env=WHOLE_TRIAL)


def test_the_load_measures_each_count_and_reports_it(start_runner: StartRunner) -> None:
    st = _threads(_ready(start_runner, *ADAPT))
    assert st["adaptive"] is True
    assert st["trials"] == 1 and st["last_trial"] == "model loaded"
    assert set(st["tokens_per_second"]) == {"1", "2"}
    assert all(v > 0 for v in st["tokens_per_second"].values())
    best = max(st["tokens_per_second"], key=lambda k: st["tokens_per_second"][k])
    # The fastest, or one within the tie margin of it.
    assert st["tokens_per_second"][str(st["threads"])] >= 0.95 * st["tokens_per_second"][best]


def test_a_fixed_count_is_kept_and_not_measured(start_runner: StartRunner) -> None:
    r = _ready(start_runner, "--threads", "2")
    _generate(r, 32)
    st = _threads(r)
    assert (st["adaptive"], st["threads"], st["trials"]) == (False, 2, 0)
    assert st["recent_tokens_per_second"] > 0


def _fastest(st: dict[str, Any]) -> None:
    """The count in use is the fastest the last trial measured, or within its tie margin."""
    tps = st["tokens_per_second"]
    assert tps[str(st["threads"])] >= 0.97 * max(tps.values()), json.dumps(st)


def test_loaded_while_a_core_is_busy_it_measures_with_the_program_running(
        start_runner: StartRunner) -> None:
    with busy_cores():
        r = _ready(start_runner, *ADAPT)
        st = _threads(r)
    # That the runner saw the program: it gets less than a whole core while the runner's own
    # threads measure beside it (0.47 was seen under CI's load).
    assert st["measured_busy_cores"] >= 0.3, json.dumps(st)
    _fastest(st)


@pytest.mark.slow
def test_a_program_that_starts_mid_chat_is_noticed(start_runner: StartRunner) -> None:
    r = _ready(start_runner, *ADAPT)
    before = _threads(r)
    time.sleep(2.5)  # the runner idles: its load reference is this machine's quiet
    with busy_cores():
        _generate(r, 400)
        st = _threads(r)
    assert st["trials"] > before["trials"], json.dumps(st)
    assert st["last_trial"] != "model loaded"
    _fastest(st)
