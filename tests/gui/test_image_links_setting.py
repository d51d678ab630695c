"""Settings → Sharing → "Let models fetch images from links in requests": off at first, saved
when ticked, and from then on the window's runner is started with ``--image-links`` (through
``serve_window_model``'s configure, as the window applies a Settings change)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import sys
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal

from app.services.model_server import serve_window_model
from app.services.runner_process import RunnerProcess, RunnerState
from app.services.tasks import TaskRunner
from app.settings import AppSettings
from app.ui.settings_dialog import SettingsDialog
from tests.gui import model_fakes as mf
from tests.gui.fakes import FakeRunner


class FakeServer(QObject):
    """The model server as serve_window_model sees it: running or not."""

    changed = Signal()

    def __init__(self, running: bool | None) -> None:
        super().__init__()
        self.running = running

    def hand_over(self, *_a: Any) -> None:
        pass

    def take_back(self) -> None:
        pass


def test_the_checkbox_saves_the_setting(qtbot: Any) -> None:
    saved: list[AppSettings] = []
    changed: list[AppSettings] = []
    d = SettingsDialog(AppSettings(), models=mf.FakeLocalModels(), hub=mf.FakeHub(),
                       runner=FakeRunner(), runtimes=lambda: [], apply_theme=lambda _t: None,
                       save=saved.append, copy_text=lambda _t: None)
    qtbot.addWidget(d)
    d.show()
    d.show_page("sharing")
    d.changed.connect(changed.append)
    check = d.image_links_check
    assert check.isVisible() and not check.isChecked()
    assert check.text() == "Let models fetch images from links in requests"
    note = d.sharing_box.image_links_note
    assert note.isVisible() and "never from addresses on your network" in note.text()
    qtbot.mouseClick(check, Qt.MouseButton.LeftButton)
    assert saved[-1].image_links is True and changed[-1].image_links is True
    qtbot.mouseClick(check, Qt.MouseButton.LeftButton)
    assert saved[-1].image_links is False
    d.close()


def test_the_setting_starts_the_runner_with_the_flag(qtbot: Any) -> None:
    tasks = TaskRunner()
    runner = RunnerProcess(tasks)
    current = [AppSettings()]
    try:
        for server_running in (False, True):  # alone, or beside a model server
            configure = serve_window_model(runner, FakeServer(server_running),  # type: ignore[arg-type]
                                           lambda: current[0])
            for on in (False, True):
                current[0] = current[0].with_changes(image_links=on)
                configure()  # what the window does when Settings change
                # A stand-in program that exits at once: only the command line matters here.
                runner.start("/m/x.gguf", program=[sys.executable, "-c", "pass"])
                assert runner._launch is not None
                assert ("--image-links" in runner._launch.args) is on
                qtbot.waitUntil(lambda: runner.state in (RunnerState.FAILED,
                                                         RunnerState.STOPPED), timeout=10_000)
                runner.stop_and_wait()
                qtbot.waitUntil(lambda: runner._proc is None, timeout=10_000)
    finally:
        runner.stop_and_wait()
        tasks.wait(5000)
