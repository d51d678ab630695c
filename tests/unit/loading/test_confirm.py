"""The dry run: confirming a plan (fake probe), running the runner's probe, and cancelling it."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from app.gguf import ModelInfo
from app.jobs import CancelledError, CancelToken
from app.loading.confirm import ProbeUnavailableError, confirm, run_probe
from app.planner import LaunchPlan, Wishes, plan
from tests.unit.loading.conftest import load_report
from tests.unit.loading.stand_in import alive, make_stand_in

GUARD_S = 30.0  # hang guards: how long a step may take before the test gives up on it


def _fake_probe(factor: float) -> Any:
    calls: list[list[str]] = []

    def probe(args: list[str]) -> dict[str, Any]:
        calls.append(args)
        ctx = int(args[args.index("--ctx-size") + 1])
        kv = 64 * 8 * 128 * 2 * 2 * ctx  # Qwen 32B f16 KV per token × ctx
        return {"devices": [{"device": "CUDA0", "weights": 0, "kv": int(kv * factor),
                             "compute": 332398592}]}

    probe.calls = calls  # type: ignore[attr-defined]
    return probe


def test_confirm_agrees_or_corrects(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("rtx4090_24gb")
    m = real_models["Qwen2.5-32B-Instruct"]

    def replan(corr: Any) -> LaunchPlan:
        return plan(m, hw, Wishes(), corr)

    first = replan({})
    ok = confirm(replan, first, _fake_probe(1.0))
    assert ok.confirmed and ok.plan.settings == first.settings
    assert ok.plan.reasons[-1].code == "probe_matches"
    assert "matches" in ok.plan.reason_texts()[-1]
    probe = _fake_probe(1.25)
    fixed = confirm(replan, first, probe)
    assert fixed.confirmed
    assert fixed.corrections["CUDA0"].kv == pytest.approx(1.25, rel=0.01)
    assert fixed.plan.settings.n_ctx < first.settings.n_ctx
    assert fixed.note.code == "probe_corrected"
    assert fixed.note.params["corrections"]["CUDA0"]["kv"] == pytest.approx(1.25, rel=0.01)
    assert len(probe.calls) == 2


def test_confirm_fails_soft(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("rtx4090_24gb")
    m = real_models["Llama-3.1-8B-Instruct"]
    first = plan(m, hw, Wishes())

    def broken(args: list[str]) -> dict[str, Any]:
        raise ProbeUnavailableError("no runner installed")

    c = confirm(lambda corr: plan(m, hw, Wishes(), corr), first, broken)
    assert not c.confirmed and c.plan.settings == first.settings
    assert c.plan.reasons[:-1] == first.reasons and c.note.code == "probe_unavailable"
    assert "no runner" in c.plan.reason_texts()[-1]


def test_run_probe_runs_the_builds_program(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    fake = make_stand_in(tmp_path / "r", monkeypatch, probe={"n_ctx": 1024, "devices": []})
    monkeypatch.delenv("HEARTH_RUNNER")  # the program is passed, not found in the environment
    assert run_probe(["--ctx-size", "1024"], fake.program)["n_ctx"] == 1024
    assert fake.calls() == [["probe", "--ctx-size", "1024"]]
    with pytest.raises(ProbeUnavailableError, match="could not run"):
        run_probe([], [str(tmp_path / "no-such-runner")])


def test_a_cancelled_dry_run_is_killed_at_once(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Defect: unloading during the dry run left the probe running for up to a minute."""
    # A dry run that would take an hour: only the cancel can end it within the test. The waits
    # below are hang guards, far shorter than that hour.
    fake = make_stand_in(tmp_path / "r", monkeypatch, probe_sleep=3600)
    token = CancelToken()
    outcome: list[BaseException | dict[str, Any]] = []

    def work() -> None:
        try:
            outcome.append(run_probe(["--ctx-size", "1024"], fake.program, token=token))
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    deadline = time.monotonic() + GUARD_S
    while fake.probe_pid() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    pid = fake.probe_pid()
    assert pid is not None and alive(pid)
    try:
        token.cancel()
        thread.join(timeout=GUARD_S)
        assert not thread.is_alive(), "run_probe still waits on the dry run after cancel"
        deadline = time.monotonic() + GUARD_S
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not alive(pid), "the dry run still runs after cancel"
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    assert len(outcome) == 1 and isinstance(outcome[0], CancelledError)
    # A token cancelled before the start never starts the child.
    with pytest.raises(CancelledError):
        run_probe([], fake.program, token=token)
    assert len(fake.calls()) == 1
