"""Settings → Sharing → Model server: the lines for each kind of tool (the same as `hearth env`)
with Copy, and start at login written off the GUI thread, a failure said and undone."""

from __future__ import annotations

import shlex
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from app.autostart import AutostartError
from app.i18n import T_
from app.library.folders import LibraryFolders
from app.remote.share import KEY_NAME, SharedKey
from app.settings import AppSettings
from app.storage import secrets
from app.ui.settings_dialog import SettingsDialog
from tests.gui import model_fakes as mf
from tests.gui.fakes import FakeRunner

FOLDERS = LibraryFolders(Path("/home/me/models"))


class FakeAutostart:
    """The login entry as a flag; ``fail`` makes the next change fail with a sentence."""

    def __init__(self) -> None:
        self.on = False
        self.fail = False
        self.threads: list[str] = []

    def is_enabled(self) -> bool:
        return self.on

    def _change(self, on: bool) -> Path:
        self.threads.append(threading.current_thread().name)
        if self.fail:
            raise AutostartError(T_("Hearth cannot write {path}, so the model server cannot be "
                                    "set to start at login: {reason}.", path="/x/unit",
                                    reason="Read-only file system"))
        self.on = on
        return Path("/x/unit")

    def enable(self) -> Path:
        return self._change(True)

    def disable(self) -> Path:
        return self._change(False)


def _dialog(qtbot: Any, settings: AppSettings, autostart: FakeAutostart,
            copied: list[str]) -> SettingsDialog:
    secrets.put(KEY_NAME, "kept-key-123")
    d = SettingsDialog(settings, models=mf.FakeLocalModels(), hub=mf.FakeHub(),
                       runner=FakeRunner(), runtimes=lambda: [], apply_theme=lambda _t: None,
                       save=lambda _s: None, folders=lambda: FOLDERS,
                       interfaces=lambda: [], shared_key=SharedKey(), copy_text=copied.append,
                       autostart=autostart)
    qtbot.addWidget(d)
    d.show()
    d.show_page("sharing")
    return d


def test_the_lines_for_each_kind_of_tool_point_at_the_port_with_the_key(qtbot: Any) -> None:
    copied: list[str] = []
    d = _dialog(qtbot, AppSettings(runner_port=4327), FakeAutostart(), copied)
    box = d.server_box
    assert box is not None and box.lines.isVisible()
    wanted = {"openai": {"OPENAI_BASE_URL": "http://127.0.0.1:4327/v1",
                         "OPENAI_API_KEY": "kept-key-123"},
              "anthropic": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:4327",
                            "ANTHROPIC_AUTH_TOKEN": "kept-key-123"},
              "ollama": {"OLLAMA_HOST": "http://127.0.0.1:4327"}}
    for i in range(box.kind_combo.count()):
        box.kind_combo.setCurrentIndex(i)
        exported = dict(shlex.split(line.removeprefix("export "))[0].split("=", 1)
                        for line in box.lines.toPlainText().splitlines()
                        if line.startswith("export "))
        for name, value in wanted[box.kind_combo.itemData(i)].items():
            assert exported[name] == value
        qtbot.mouseClick(box.copy_btn, Qt.MouseButton.LeftButton)
        assert copied[-1] == box.lines.toPlainText()


def test_a_port_that_changes_at_every_start_gives_no_lines_to_copy(qtbot: Any) -> None:
    d = _dialog(qtbot, AppSettings(runner_port=0), FakeAutostart(), [])
    box = d.server_box
    assert box is not None
    assert box.lines.toPlainText().startswith("# ") and "fixed port" in box.lines.toPlainText()
    assert not box.copy_btn.isEnabled()


def test_start_at_login_is_written_off_the_gui_thread_and_a_failure_is_said(
        qtbot: Any) -> None:
    autostart = FakeAutostart()
    d = _dialog(qtbot, AppSettings(runner_port=4327), autostart, [])
    box = d.server_box
    assert box is not None and not box.login_check.isChecked()
    box.login_check.click()
    qtbot.waitUntil(lambda: box.login_check.isEnabled())
    assert autostart.on and autostart.threads == ["autostart"]
    assert not box.login_note.isVisible()
    autostart.fail = True
    box.login_check.click()  # off: fails
    qtbot.waitUntil(lambda: box.login_check.isEnabled())
    assert box.login_check.isChecked()  # what is on disk: still on
    assert box.login_note.isVisible() and "Read-only file system" in box.login_note.text()


def test_without_an_autostart_there_is_no_model_server_section(qtbot: Any) -> None:
    d = SettingsDialog(AppSettings(), models=mf.FakeLocalModels(), hub=mf.FakeHub(),
                       runner=FakeRunner(), runtimes=lambda: [], apply_theme=lambda _t: None,
                       save=lambda _s: None, folders=lambda: FOLDERS)
    qtbot.addWidget(d)
    assert d.server_box is None


def test_running_the_server_while_hearth_is_open_is_a_saved_setting(qtbot: Any) -> None:
    saved: list[AppSettings] = []
    secrets.put(KEY_NAME, "kept-key-123")
    d = SettingsDialog(AppSettings(), models=mf.FakeLocalModels(), hub=mf.FakeHub(),
                       runner=FakeRunner(), runtimes=lambda: [], apply_theme=lambda _t: None,
                       save=saved.append, folders=lambda: FOLDERS, interfaces=lambda: [],
                       shared_key=SharedKey(), copy_text=lambda _t: None,
                       autostart=FakeAutostart())
    qtbot.addWidget(d)
    d.show()
    d.show_page("sharing")
    box = d.server_box
    assert box is not None and not box.window_check.isChecked()
    changed: list[AppSettings] = []
    d.changed.connect(changed.append)
    box.window_check.click()
    assert saved[-1].serve_models and changed[-1].serve_models
    box.window_check.click()
    assert not saved[-1].serve_models
