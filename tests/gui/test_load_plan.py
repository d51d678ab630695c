"""Loading with a plan, against the real runner: the plan's flags reach the runner, the load is
measured and remembered, and out-of-memory failures step down the fallback ladder.

Out of memory is simulated by a stand-in runner (``HEARTH_RUNNER``, the launch command's own
override): a script that fails the first N launches the way the runner does (a JSON error line,
exit code 4) and then hands over to the real runner.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from app.loading.prepare import thread_shape
from app.planner.corrections import CorrectionStore, model_key
from app.planner.threads import ThreadMemory
from app.services.runner_process import RunnerState
from tests.fixtures.models import TINY, model_path
from tests.gui.conftest import load, unload
from tests.unit.loading.stand_in import alive, make_stand_in
from tests.unit.planner.conftest import load_report

REPO = Path(__file__).resolve().parents[2]
# Trained for 8192 tokens: the plan picks a context the runner's own default (4096) is not, and
# the ladder has context steps to take (8192 -> 4096 -> 2048 -> q8_0 KV -> nothing left).
LONG = replace(TINY, n_ctx_train=8192, name="hearth-test-8k")

OOM_LINE = {"level": "error", "logger": "runner",
            "msg": "llama.cpp could not create a context: failed to allocate CPU buffer "
                   "(out of memory). Try a smaller context.",
            "event": "load_failed", "exit_code": 4}

FAKE_RUNNER = '''#!{python}
import json, os, sys
state, log = {state!r}, {log!r}
serve = sys.argv[1:2] == ["serve"]  # the dry run ("probe") goes through, counted nowhere
n = int(open(state).read()) if os.path.exists(state) else 0
if serve:
    open(state, "w").write(str(n + 1))
    with open(log, "a") as f:
        f.write(json.dumps(sys.argv[1:]) + "\\n")
if serve and n < {fails}:
    print(json.dumps({{"event": "listening", "url": "http://127.0.0.1:9"}}), flush=True)
    sys.stderr.write(json.dumps({line}) + "\\n")
    sys.stderr.flush()
    sys.exit({code})
os.environ["PYTHONPATH"] = {repo!r} + os.pathsep + os.environ.get("PYTHONPATH", "")
os.execv(sys.executable, [sys.executable, "-m", "runner", *sys.argv[1:]])
'''


@pytest.fixture(scope="module")
def long_model() -> str:
    return str(model_path(LONG))


class FakeRunner:
    def __init__(self, folder: Path, fails: int, code: int = 4,
                 line: dict[str, Any] | None = None) -> None:
        self.log = folder / "launches.jsonl"
        self.path = folder / "fake-runner"
        self.path.write_text(FAKE_RUNNER.format(
            python=sys.executable, state=str(folder / "count"), log=str(self.log), fails=fails,
            code=code, line=repr(line or OOM_LINE), repo=str(REPO)))
        self.path.chmod(self.path.stat().st_mode | stat.S_IXUSR)

    def launches(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(x) for x in self.log.read_text().splitlines() if x.strip()]

    def ctx_sizes(self) -> list[int]:
        return [int(a[a.index("--ctx-size") + 1]) for a in self.launches()]


@pytest.fixture
def fake_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    if os.name == "nt":
        pytest.skip("the stand-in runner is a shebang script")

    def make(fails: int, code: int = 4, line: dict[str, Any] | None = None) -> FakeRunner:
        fake = FakeRunner(tmp_path, fails, code, line)
        monkeypatch.setenv("HEARTH_RUNNER", str(fake.path))
        return fake

    return make


def test_load_plans_first_and_starts_with_the_plan(qtbot: Any, make_window: Any,
                                                   long_model: str) -> None:
    window = make_window()
    order: list[str] = []
    window.loader.planned.connect(lambda p: order.append("planned"))
    window.runner.state_changed.connect(lambda s: order.append(s.value))
    load(qtbot, window, long_model)
    assert order[:2] == ["planned", "starting"]
    plan = window.loader.plan
    assert plan is not None and plan.fits and plan.fallback_steps == ()
    assert plan.settings.n_ctx == 8192  # not the runner's default of 4096
    with window.runner.client() as client:
        status = client.status()
    settings = status["settings"]
    assert settings["ctx_size"] == plan.settings.n_ctx == status["context"]["n_ctx"]
    assert settings["n_gpu_layers"] == plan.settings.n_gpu_layers
    assert settings["threads"] == plan.settings.n_threads
    assert settings["flash_attn"] == plan.settings.flash_attn
    args = window.runner._launch.args
    assert args.count("--model") == 1 and long_model in args

    # The key numbers in the status line; the reasons in its tooltip and behind the toggle.
    text = window.status.text()
    assert "is ready" in text and "on the CPU" in text and "context 8192" in text
    assert plan.reason_texts()[0] in window.status.toolTip()
    assert window.why_btn.isVisible() and not window.reasons_label.isVisible()
    qtbot.mouseClick(window.why_btn, Qt.MouseButton.LeftButton)
    assert window.reasons_label.isVisible()
    assert "dry run" in window.reasons_label.text()  # confirmed with llama.cpp's dry run
    assert not window.steps_label.isVisible()


def test_user_flags_come_after_the_plan(qtbot: Any, make_window: Any, long_model: str) -> None:
    window = make_window(runner_flags=["--ctx-size", "1024"])
    with qtbot.waitSignal(window.loader.measured, timeout=120_000) as measured:
        load(qtbot, window, long_model)
    with window.runner.client() as client:
        assert client.status()["settings"]["ctx_size"] == 1024  # the user's pin wins
    # The measurement is not recorded: it is not of the settings the plan predicted.
    assert measured.args[0] == []


def test_load_is_measured_and_the_next_plan_uses_it(qtbot: Any, make_window: Any,
                                                    long_model: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEARTH_HOME", str(tmp_path / "home"))  # an empty store
    # The runner's thread trial at load gets the time it needs on a busy machine: cut short at
    # its usual 2 s, it compares fewer than two counts and there is nothing to keep.
    monkeypatch.setenv("HEARTH_CALIBRATE_SECONDS", "120")
    window = make_window()
    with qtbot.waitSignal(window.loader.measured, timeout=120_000) as measured:
        load(qtbot, window, long_model)
    assert window.loader.applied == {}  # nothing measured before
    recorded = measured.args[0]
    assert [m.device for m in recorded] == ["CPU"]
    assert recorded[0].measured_kv > 0 and recorded[0].measured_compute > 0
    store = CorrectionStore()
    assert store.path.is_relative_to(tmp_path / "home")
    entries = json.loads(store.path.read_text())["entries"]
    assert len(entries) == 1 and entries[0]["model"] == model_key(long_model)
    assert entries[0]["settings"].startswith("n_gpu_layers=0,n_ctx=8192")
    build = entries[0]["build"]
    assert build.startswith("llama-cpp-python-")
    expected = store.corrections(model_key(long_model), build)
    assert "CPU" in expected and not expected["CPU"].is_identity()
    # The runner's thread measurement is kept too, under the plan's model shape.
    with window.runner.client() as client:
        threads = client.status()["threads"]
    memory = ThreadMemory()
    assert memory.path.is_relative_to(tmp_path / "home")
    if threads["max"] > 1:  # one core: nothing to compare, nothing kept
        kept = json.loads(memory.path.read_text())["entries"]
        assert [(e["shape"], e["threads"]) for e in kept] == \
            [(thread_shape(window.loader.plan), threads["threads"])]

    # Unload and load again: the plan starts from the measured figures and says so.
    unload(qtbot, window)
    load(qtbot, window, long_model)
    assert window.loader.applied == expected
    assert any("earlier load" in r for r in window.loader.plan.reason_texts())


def test_out_of_memory_steps_down_the_ladder(qtbot: Any, make_window: Any, long_model: str,
                                             fake_runner: Any) -> None:
    fake = fake_runner(fails=1)
    window = make_window()
    steps: list[str] = []
    window.loader.retrying.connect(steps.append)
    load(qtbot, window, long_model)
    assert fake.ctx_sizes() == [8192, 4096]
    assert all(a.count("--model") == 1 for a in fake.launches())
    assert steps == ["Out of memory: retrying with a context of 4096 instead of 8192."]
    plan = window.loader.plan
    assert plan.settings.n_ctx == 4096 and plan.fallback_steps == ("ctx",)
    with window.runner.client() as client:
        assert client.status()["settings"]["ctx_size"] == 4096
    # Each step stays on screen, and the status line ends with the settings it loaded with.
    assert window.steps_label.isVisible() and steps[0] in window.steps_label.text()
    assert "is ready" in window.status.text() and "context 4096" in window.status.text()
    assert steps[0] in window.reasons_label.text()
    assert not window.banner.isVisible()  # not shown as an error
    assert window.status.property("tone") == "muted"


def test_ladder_ends_with_the_failure(qtbot: Any, make_window: Any, long_model: str,
                                      fake_runner: Any) -> None:
    fake = fake_runner(fails=99)
    window = make_window()
    steps: list[str] = []
    window.loader.retrying.connect(steps.append)
    window.choose_model(long_model)
    with qtbot.waitSignal(window.loader.failed, timeout=60_000) as failed:
        window.load_selected()
    # 8192 -> 4096 -> 2048 (the floor) -> the KV cache as q8_0 -> nothing smaller is left.
    assert fake.ctx_sizes() == [8192, 4096, 2048, 2048]
    last = fake.launches()[-1]
    assert last[last.index("--cache-type-k") + 1] == "q8_0"
    assert len(steps) == 3 and steps[-1].endswith("KV cache stored as q8_0.")
    message = failed.args[0]
    assert "out of memory" in message and "retried 3 times" in message
    assert "context 2048, KV cache q8_0" in message
    assert window.status.text() == message and window.status.property("tone") == "danger"
    assert window.banner.isVisible() and window.banner.text.text() == message
    assert window.steps_label.text().splitlines() == steps
    assert window.load_btn.isEnabled() and not window.restart_btn.isVisible()
    qtbot.wait(600)
    assert len(fake.launches()) == 4  # and it stays stopped


def test_unload_cancels_the_ladder(qtbot: Any, make_window: Any, long_model: str,
                                   fake_runner: Any) -> None:
    fake = fake_runner(fails=99)
    window = make_window()
    # The user presses Unload while the first step is on screen.
    window.loader.retrying.connect(lambda _r: qtbot.mouseClick(window.unload_btn,
                                                               Qt.MouseButton.LeftButton))
    window.choose_model(long_model)
    with qtbot.waitSignal(window.loader.retrying, timeout=30_000):
        window.load_selected()
    qtbot.wait(800)
    assert len(fake.launches()) == 1
    assert window.runner.state in (RunnerState.STOPPED, RunnerState.FAILED)
    assert window.status.text() == "No model loaded."
    assert window.load_btn.isEnabled() and not window.unload_btn.isEnabled()


def test_load_failure_that_is_not_memory_is_not_retried(qtbot: Any, make_window: Any,
                                                        long_model: str,
                                                        fake_runner: Any) -> None:
    line = dict(OOM_LINE, msg="broken.gguf: llama.cpp could not load the model: unknown "
                              "architecture 'llamaX'.", exit_code=3)
    fake = fake_runner(fails=99, code=3, line=line)
    window = make_window()
    window.choose_model(long_model)
    with qtbot.waitSignal(window.loader.failed, timeout=30_000) as failed:
        window.load_selected()
    assert len(fake.launches()) == 1
    assert failed.args[0] == line["msg"]
    assert window.status.text() == line["msg"]


def test_plan_parts_start_folded_away(make_window: Any) -> None:
    # Before any load there is no plan to explain and nothing to restart.
    window = make_window()
    assert not window.why_btn.isVisible() and not window.restart_btn.isVisible()
    assert not window.steps_label.isVisible() and not window.reasons_label.isVisible()


@pytest.mark.parametrize("how", ["cancel", "shutdown"])
def test_unloading_while_planning_kills_the_dry_run(qtbot: Any, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    tiny_model: str, how: str) -> None:
    """Defect: Unload (or closing the window) during the dry run left it running for up to a
    minute, and its plan could still arrive and start the runner."""
    from PySide6.QtCore import QObject

    from app.services.loader import ModelLoader
    from app.services.runner_process import RunnerProcess
    from app.services.tasks import TaskRunner

    # A dry run that would take an hour: only the cancel can end it within the test (the waits
    # below are hang guards, far shorter than that).
    fake = make_stand_in(tmp_path / "runner", monkeypatch, probe_sleep=3600)
    parent = QObject()
    tasks = TaskRunner(parent, name="tasks")
    runner = RunnerProcess(TaskRunner(parent, max_threads=1, name="polls"), parent)
    loader = ModelLoader(runner, tasks, cached_hardware=lambda: load_report("cpu_only_16gb"),
                         store=CorrectionStore(tmp_path / "c.json"), parent=parent)
    said: list[tuple[str, Any]] = []
    loader.planned.connect(lambda p: said.append(("planned", p)))
    loader.failed.connect(lambda m: said.append(("failed", m)))

    assert loader.load(tiny_model) and loader.planning
    qtbot.waitUntil(lambda: fake.probe_pid() is not None, timeout=30_000)
    pid = fake.probe_pid()
    assert pid is not None and alive(pid)
    try:
        loader.cancel() if how == "cancel" else loader.shutdown()
        assert not loader.planning and not loader.busy
        qtbot.waitUntil(lambda: not alive(pid), timeout=30_000)
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    qtbot.wait(500)
    assert said == []  # the cancelled plan says nothing: not planned, not failed
    assert runner.state == RunnerState.STOPPED
    assert [c[0] for c in fake.calls()] == ["devices", "probe"]


def test_a_draft_in_the_library_is_measured_once_and_then_used_as_measured(
        qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    """Speculative decoding in the window: a smaller model of the same family on this computer
    loads beside the model, the runner measures at the first load whether it pays, the verdict
    is kept, and the next load follows it without measuring (issue 32)."""
    from app.loading.drafts import DraftSense
    from app.planner.speculation import SpecMemory
    from tests.fixtures.speculative import DRAFT, TARGET

    target = str(model_path(replace(TARGET, n_layer=12, inert_layers=11,
                                    name="hearth-spec-target-12")))
    draft = str(model_path(DRAFT))
    window = make_window()
    memory = SpecMemory(tmp_path / "spec.json")
    window.loader.drafts = DraftSense(lambda: [target, draft], memory, "this-pc")
    with qtbot.waitSignal(window.loader.measured, timeout=120_000):
        load(qtbot, window, target)
    args = window.runner._launch.args
    assert args[args.index("--spec-draft-model") + 1] == draft and "--spec-measure" in args
    with window.runner.client() as client:
        trial = client.status()["speculative"]["measured"]
    assert any("draft model" in r and "measures" in r for r in window.loader.plan.reason_texts())
    kept = json.loads(memory.path.read_text())["entries"]
    assert [(e["gain"], e["kept"]) for e in kept] == [(trial["gain"], trial["kept"])]

    unload(qtbot, window)
    load(qtbot, window, target)
    args = window.runner._launch.args
    assert "--spec-measure" not in args
    reasons = window.loader.plan.reason_texts()
    gain = f"{trial['gain']:.2f}×"
    if trial["kept"]:
        assert "--spec-draft-model" in args and any(gain in r for r in reasons)
    else:
        assert "--spec-draft-model" not in args
        assert any("left out" in r and gain in r for r in reasons)


def test_speed_settings_are_measured_once_in_the_background_and_then_planned_from(
        qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    """The first load of a model asks the runner to measure flash attention, the KV type and
    the micro-batch once it is ready; the verdict is kept, and the next load plans from it
    without measuring (issue 32)."""
    from app.loading.speed import SpeedSense
    from app.planner.speed import SpeedMemory

    window = make_window()
    memory = SpeedMemory(tmp_path / "speed.json")
    window.loader.speed = SpeedSense(memory, "this-pc")
    path = str(model_path(TINY))
    with qtbot.waitSignal(window.loader.speed_measured, timeout=120_000) as got:
        load(qtbot, window, path)
    args = window.runner._launch.args
    assert "--tune-speed" in args
    assert any("measures" in r and "micro-batch" in r for r in window.loader.plan.reason_texts())
    with window.runner.client() as client:
        trial = client.status()["speed_trial"]
    assert trial["state"] == "done"
    verdict = got.args[0]
    if trial["chosen"] is None:  # the machine could not tell: kept with its reason
        assert verdict.tuned is None and verdict.why == trial["why"]
    else:
        assert verdict.tuned is not None
        assert (verdict.tuned.flash_attn, verdict.tuned.n_ubatch) == \
            (trial["chosen"]["flash_attn"], trial["chosen"]["n_ubatch"])
    assert memory.lookup(json.loads(memory.path.read_text())["entries"][0]["key"]) == verdict

    unload(qtbot, window)
    load(qtbot, window, path)
    args = window.runner._launch.args
    assert "--tune-speed" not in args
    codes = {r.code for r in window.loader.plan.reasons}
    if verdict.tuned is None:
        assert "speed_unmeasured" in codes
    elif "speed_tuned" in codes:
        assert args[args.index("--flash-attn") + 1] == verdict.tuned.flash_attn
        assert args[args.index("--ubatch-size") + 1] == str(verdict.tuned.n_ubatch)
    else:  # the plan's own settings were the fastest
        assert "speed_defaults" in codes
