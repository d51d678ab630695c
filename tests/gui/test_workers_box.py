"""Settings → Other computers, for real: the box lends this computer through a real
``hearth-runner rpc-worker`` it starts, adds that worker by its address, checks it in a child
process and shows its memory; bad addresses and dead workers get sentences, and nothing is
kept that the user did not add."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from app.services.tasks import TaskRunner
from app.services.workers import WorkersService
from app.ui.workers_box import WorkersBox
from tests.integration.test_runtimes import portable

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def service(qtbot: Any, tmp_path: Path) -> Any:
    rt = portable()
    saved: list[list[str]] = []
    svc = WorkersService(TaskRunner(name="workers-test"),
                         program=lambda: [sys.executable, "-m", "runner", "--runtime", str(rt)],
                         load=lambda: [], save=lambda eps: saved.append(list(eps)))
    svc.saved = saved  # type: ignore[attr-defined]
    yield svc
    svc.stop_lending()


def test_lend_this_computer_then_use_it_as_a_worker(qtbot: Any, service: Any) -> None:
    box = WorkersBox(service)
    qtbot.addWidget(box)
    assert "No worker added" in box.list.item(0).text()
    assert not box.warning.isVisible()  # loopback: no warning

    with qtbot.waitSignal(service.lending_changed, timeout=30_000) as lent:
        service.lend(True, host="127.0.0.1", port=0)
        box.lend.setChecked(True)
    endpoint = lent.args[0]
    assert endpoint.startswith("127.0.0.1:")
    assert endpoint in box.lend_note.text()

    box.address.setText(f"  {endpoint} ")
    with qtbot.waitSignal(service.checked, timeout=30_000):
        box.add_btn.click()
    text = box.list.item(0).text()
    assert text.startswith(endpoint) and "GiB free" in text, text
    qtbot.waitUntil(lambda: service.saved == [[endpoint]])

    # A second address that nothing answers: the check says so, in the list.
    box.address.setText("127.0.0.1:9")
    with qtbot.waitSignal(service.checked, timeout=30_000):
        box.add_btn.click()
    assert "not usable" in box.list.item(1).text() and "cannot be reached" in \
        box.list.item(1).text()

    box.list.setCurrentRow(1)
    box.remove_btn.click()
    assert service.endpoints() == [endpoint]

    service.stop_lending()
    assert service.lent == "" and not box.lend.isChecked()


def test_bad_addresses_are_refused_with_a_sentence(qtbot: Any, service: Any) -> None:
    box = WorkersBox(service)
    qtbot.addWidget(box)
    box.show()
    box.address.setText("http://host/path")
    box.add_btn.click()
    assert "is not an address" in box.message.text() and box.message.isVisible()
    assert service.endpoints() == [] and service.saved == []


def test_lending_beyond_this_computer_shows_the_warning(qtbot: Any, service: Any) -> None:
    box = WorkersBox(service)
    qtbot.addWidget(box)
    box.show()
    box.interface.setCurrentIndex(1)
    assert box.warning.isVisible() and "run code on this computer" in box.warning.text()


def test_settings_has_an_other_computers_tab_wired_to_the_loader(qtbot: Any,
                                                                  make_window: Any) -> None:
    from app.ui.settings_dialog import SettingsDialog

    window = make_window()
    window.settings_requested.emit()
    dialog = window.findChild(SettingsDialog)
    assert dialog is not None and dialog.workers_box is not None
    assert "Other computers" in dialog.page_titles()
    dialog.show_page("others")
    assert dialog.workers_box.isVisible()
    # The loader plans over the very list the box edits.
    assert window.loader._workers() == window.gui.workers.endpoints()
    dialog.close()


def test_the_loader_loads_again_here_when_a_worker_dies_under_a_loaded_model(
        qtbot: Any, tmp_path: Path) -> None:
    """A loaded split model's runner exits 6 (a worker stopped answering): the loader says so
    and starts the plan for this computer alone, without --rpc (fake runner: the real path is
    tests/integration/test_rpc.py's)."""
    from types import SimpleNamespace

    from app.gguf import read_model
    from app.planner import Wishes, plan
    from app.services.loader import LoadPhase, ModelLoader
    from app.services.runner_process import RunnerState
    from tests.fixtures.header_only import REAL_SHAPES, write_header_only
    from tests.gui.fakes import FakeRunner
    from tests.unit.planner.conftest import load_report
    from tests.unit.planner.test_workers import TWO

    class Runner(FakeRunner):
        def __init__(self) -> None:
            super().__init__()
            self.starts: list[list[str]] = []
            self.last_exit: Any = None

        def start(self, model: str, flags: list[str], program: Any = None) -> None:
            self.starts.append(list(flags))
            self.become(RunnerState.STARTING)

    shape = next(s for s in REAL_SHAPES if s.name == "Qwen2.5-32B-Instruct")
    model = read_model(write_header_only(tmp_path / "qwen.gguf", shape))
    split = plan(model, load_report("rtx4090_24gb"), Wishes(context=32768), workers=TWO)
    runner = Runner()
    loader = ModelLoader(runner, TaskRunner(name="loader-test"), probe=None)  # type: ignore[arg-type]
    loader.path = str(tmp_path / "qwen.gguf")
    loader.good_plan = split
    loader.phase = LoadPhase.READY
    runner.last_exit = SimpleNamespace(code=6, crashed=False)
    with qtbot.waitSignal(loader.retrying, timeout=5_000) as retrying:
        runner.die("the RPC worker at 192.168.1.21:50052 stopped answering")
    assert retrying.args[0].startswith("A worker stopped answering: loading again on this "
                                       "computer alone")
    qtbot.waitUntil(lambda: bool(runner.starts), timeout=5_000)
    assert "--rpc" not in runner.starts[0] and loader.phase == LoadPhase.LOADING
    assert loader.plan is not None and loader.plan.fallback_steps == ("local",)

    # Any other death of a loaded model is only reported, as before.
    runner.starts.clear()
    loader.phase = LoadPhase.READY
    runner.last_exit = SimpleNamespace(code=3, crashed=False)
    runner.die("model.gguf: something else")
    qtbot.wait(1200)
    assert runner.starts == [] and loader.phase == LoadPhase.DIED
