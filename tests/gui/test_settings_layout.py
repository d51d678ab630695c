"""The Settings dialog fits small and HiDPI screens (issue 25, defect 4): with sharing on and a
model loaded, every row (the base URL and the API key included) gets at least its minimum size,
and the whole dialog, Close included, is on the screen. Each screen is a process of its own
(tests/layout.py); the dialog is made from the in-memory fakes."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path
from typing import Any

import pytest

from tests.layout import SCREENS, Screen, layout_problems, problems_on_screen


def sharing_dialog(**extra: Any) -> Any:
    """Settings with every sharing row shown: sharing with every network on a fixed port, a
    model loaded on another port (so the notes say what waits for the next load). ``extra``:
    more of the dialog's arguments."""
    from app.library.folders import LibraryFolders
    from app.remote.share import Interface
    from app.services.runner_process import RunnerState
    from app.settings import AppSettings
    from app.ui.settings_dialog import SettingsDialog
    from tests.gui import model_fakes as mf
    from tests.gui.fakes import FakeRunner

    runner = FakeRunner()
    runner.become(RunnerState.READY)
    runner.listen_url = "http://0.0.0.0:41234"
    runner.url = "http://127.0.0.1:41234"
    folders = LibraryFolders(Path("/home/someone/.local/share/Hearth/models"),
                             (Path("/mnt/data/gguf"), Path("/home/someone/Downloads/models")))
    lan = [Interface("eth0", "192.168.1.23"), Interface("wlan0", "10.0.0.7")]
    d = SettingsDialog(
        AppSettings(runner_port=8765, share_runner=True, share_host="0.0.0.0"),
        models=mf.FakeLocalModels(), hub=mf.FakeHub(), runner=runner,
        apply_theme=lambda _t: None, save=lambda _s: None, folders=lambda: folders,
        open_url=lambda _u: None, choose_folder=lambda *_a: "", copy_text=lambda _t: None,
        log_folder=Path("/home/someone/.local/state/Hearth/log"), runtimes=lambda: [],
        interfaces=lambda: lan, **extra)
    d.show_page("sharing")  # the fullest page
    return d


@pytest.mark.parametrize("screen", SCREENS, ids=str)
def test_the_sharing_settings_fit_the_screen(screen: Screen) -> None:
    problems = problems_on_screen("tests.gui.test_settings_layout:sharing_dialog", screen)
    assert not problems, "\n".join(problems)


def test_the_connection_rows_are_readable_in_this_process(qtbot: Any) -> None:
    dialog = sharing_dialog(reload=lambda: True)  # Apply now shown too
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.connection.isVisible() and dialog.apply_btn.isVisible()
    problems = layout_problems(dialog)
    assert not problems, "\n".join(problems)
    assert dialog.key_edit.height() >= dialog.key_edit.minimumSizeHint().height()
