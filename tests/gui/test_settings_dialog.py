"""The Settings dialog (app/ui/settings_dialog.py) on in-memory services: folders, token,
sharing the model with its URL and key, port, theme, log folder; every change saved at once."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from app.library.folders import LibraryFolders
from app.runtimes.catalog import BUILTIN, Runtime
from app.runtimes.choose import RuntimeChoice
from app.services.runner_process import RunnerState
from app.settings import AppSettings
from app.ui.settings_dialog import SettingsDialog, openai_base_url
from app.ui.token_dialog import TokenDialog
from tests.gui import model_fakes as mf
from tests.gui.fakes import FakeRunner


class Folders:
    """The local-models fake plus the folders it would keep (the real service's ``folders``)."""

    def __init__(self, models: mf.FakeLocalModels) -> None:
        self.value = LibraryFolders(Path("/home/me/models"))
        models.set_models_dir = self.set_models_dir  # type: ignore[method-assign]
        models.add_folder = self.add_folder  # type: ignore[method-assign]
        self.models = models

    def set_models_dir(self, folder: str) -> None:
        self.models.calls.append(("set_models_dir", folder))
        kept = self.value.with_extra(self.value.models_dir)
        self.value = replace(kept, models_dir=Path(folder))

    def add_folder(self, folder: str) -> None:
        self.models.calls.append(("add_folder", folder))
        self.value = self.value.with_extra(Path(folder))

    def called(self, name: str) -> list[tuple[Any, ...]]:
        return [c for c in self.models.calls if c[0] == name]


@pytest.fixture
def env(qtbot: Any, tmp_path: Path) -> Any:
    e = SimpleNamespace(models=mf.FakeLocalModels(), hub=mf.FakeHub(), runner=FakeRunner(),
                        saved=[], themes=[], opened=[], copied=[], chosen=[], answer="",
                        save_error=None)
    e.folders = Folders(e.models)

    def save(s: AppSettings) -> None:
        if e.save_error is not None:
            raise e.save_error
        e.saved.append(s)

    def choose(_parent: Any, caption: str, start: str) -> str:
        e.chosen.append((caption, start))
        return str(e.answer)

    e.runtimes = [Runtime("cpu-portable", "cpu", tmp_path / "rt" / "cpu-portable"),
                  Runtime("vulkan", "vulkan", tmp_path / "rt" / "vulkan",
                          problem="it has no llama library in lib"), BUILTIN]

    def make(settings: AppSettings | None = None,
             in_use: RuntimeChoice | None = None, page: str = "general") -> SettingsDialog:
        d = SettingsDialog(settings or AppSettings(), models=e.models, hub=e.hub, runner=e.runner,
                           runtimes=lambda: e.runtimes, in_use=in_use,
                           apply_theme=e.themes.append, save=save,
                           folders=lambda: e.folders.value,
                           open_url=lambda url: e.opened.append(url.toLocalFile()),
                           choose_folder=choose, copy_text=e.copied.append,
                           log_folder=tmp_path / "logs")
        qtbot.addWidget(d)
        d.show()
        d.show_page(page)  # what a test sees is on the page a person opens
        e.dialog = d
        return d

    e.make = make
    return e


def test_folders_are_shown_and_changed_through_the_service(env: Any, qtbot: Any) -> None:
    d = env.make()
    assert d.models_dir_label.text() == "/home/me/models"
    assert d.extra_label.text() == "None"
    env.answer = "/mnt/big/models"
    qtbot.mouseClick(d.models_dir_btn, Qt.MouseButton.LeftButton)
    assert env.folders.called("set_models_dir") == [("set_models_dir", "/mnt/big/models")]
    assert env.chosen[-1] == ("Where Hearth downloads models", "/home/me/models")
    assert d.models_dir_label.text() == "/mnt/big/models"
    assert d.extra_label.text() == "/home/me/models"  # the old folder stays listed
    env.answer = "/srv/<b>gguf</b>"
    qtbot.mouseClick(d.add_btn, Qt.MouseButton.LeftButton)
    assert env.folders.called("add_folder") == [("add_folder", "/srv/<b>gguf</b>")]
    assert d.extra_label.text().splitlines() == ["/home/me/models", "/srv/<b>gguf</b>"]
    assert d.extra_label.textFormat() == Qt.TextFormat.PlainText  # a path is never markup
    env.answer = ""  # the chooser was cancelled
    qtbot.mouseClick(d.add_btn, Qt.MouseButton.LeftButton)
    assert len(env.folders.called("add_folder")) == 1
    assert env.saved == []  # folders are the library's, not the app settings'


def test_a_rescan_shows_the_folders_again(env: Any) -> None:
    d = env.make()
    env.folders.value = LibraryFolders(Path("/elsewhere"), (Path("/x"),))
    env.models.set_rows([])
    assert d.models_dir_label.text() == "/elsewhere" and d.extra_label.text() == "/x"


def test_the_token_button_opens_the_token_dialog(env: Any, qtbot: Any) -> None:
    d = env.make()
    assert d.token_note.text() == "No token."
    qtbot.mouseClick(d.token_btn, Qt.MouseButton.LeftButton)
    dialogs = [w for w in d.findChildren(TokenDialog) if w.isVisible()]
    assert len(dialogs) == 1
    env.hub.token_note = lambda: "A token is saved in the system keyring."
    env.hub.account.emit("someone")
    assert d.token_note.text() == "A token is saved in the system keyring."


def test_sharing_shows_the_url_and_key_of_the_running_model(env: Any, qtbot: Any) -> None:
    d = env.make(page="sharing")
    assert not d.share_check.isChecked()
    assert not d.port_spin.isEnabled()
    assert not d.connection.isVisible()
    assert "Only Hearth" in d.connection_note.text()
    d.share_check.setChecked(True)
    assert env.saved[-1].share_runner is True and d.settings.share_runner
    assert d.port_spin.isEnabled()
    assert d.connection.isVisible()  # nothing loaded yet: what sharing will use
    assert "Load a model" in d.connection_note.text()
    env.runner.become(RunnerState.READY)
    assert d.connection.isVisible()
    assert d.url_edit.text() == "http://127.0.0.1:4327/v1"  # the fixed port, not the private
    kept = d.key_edit.text()
    assert kept and kept != "fake-key"  # the kept key, not the private one
    assert d.url_edit.isReadOnly() and d.key_edit.isReadOnly()
    assert "key stays the same at every load" in d.connection_note.text()
    qtbot.mouseClick(d.url_copy, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(d.key_copy, Qt.MouseButton.LeftButton)
    assert env.copied == ["http://127.0.0.1:4327/v1", kept]
    env.runner.become(RunnerState.READY)
    d.share_check.setChecked(False)
    assert not d.connection.isVisible() and d.key_edit.text() == ""  # the key is not left shown
    assert env.saved[-1].share_runner is False


def test_the_port_is_saved_and_low_ports_are_refused(env: Any, qtbot: Any) -> None:
    changed: list[AppSettings] = []
    d = env.make(AppSettings(share_runner=True, runner_port=0))
    d.changed.connect(changed.append)
    assert d.port_spin.text() == "Any free port"
    d.port_spin.setValue(8765)
    assert env.saved[-1].runner_port == 8765 and env.saved[-1].launch_port == 8765
    assert changed[-1] == env.saved[-1]
    d.port_spin.setValue(80)
    assert "administrator" in d.message.text() and d.message.isVisible()
    assert d.port_spin.value() == 8765  # put back
    assert env.saved[-1].runner_port == 8765 and len(env.saved) == 1
    env.runner.become(RunnerState.READY)  # started before the port was chosen: :9
    assert "from the next load" in d.connection_note.text()


def test_the_theme_applies_at_once_and_is_saved(env: Any, qtbot: Any) -> None:
    d = env.make(AppSettings(theme="light"))
    assert d.theme_combo.currentData() == "light"
    d.theme_combo.setCurrentIndex(d.theme_combo.findData("dark"))
    d.theme_combo.activated.emit(d.theme_combo.currentIndex())
    assert env.themes == ["dark"]
    assert env.saved[-1].theme == "dark"


def test_the_runtime_is_automatic_or_one_installed_and_broken_ones_say_why(env: Any) -> None:
    d = env.make(AppSettings(runtime="cuda12"))  # saved, then uninstalled
    items = [d.runtime_combo.itemText(i) for i in range(d.runtime_combo.count())]
    assert items[0].startswith("Automatic")
    assert "cpu-portable (CPU)" in items
    assert "vulkan: cannot be used (it has no llama library in lib)" in items
    assert "built-in" in items and items[-1] == "cuda12 (not installed)"
    assert d.runtime_combo.currentData() == "cuda12"
    d.runtime_combo.setCurrentIndex(d.runtime_combo.findData("cpu-portable"))
    d.runtime_combo.activated.emit(d.runtime_combo.currentIndex())
    assert env.saved[-1].runtime == "cpu-portable"
    d.runtime_combo.setCurrentIndex(0)
    d.runtime_combo.activated.emit(0)
    assert env.saved[-1].runtime == ""
    assert "applies from the next load" in d.runtime_note.text()


def test_the_runtime_in_use_is_named_once_one_was_chosen(env: Any) -> None:
    """The dialog names the runtime the app's selection chose (none before the first load)."""
    assert "In use" not in env.make().runtime_note.text()
    portable = next(rt for rt in env.runtimes if rt.name == "cpu-portable")
    note = env.make(in_use=RuntimeChoice(portable, ())).runtime_note.text()
    assert note.startswith(f"In use: {portable.label()}."), note


def test_a_failed_save_still_applies_and_says_so(env: Any) -> None:
    env.save_error = OSError(28, "No space left on device")
    d = env.make()
    d.share_check.setChecked(True)
    assert d.settings.share_runner
    assert "could not be saved" in d.message.text() and "No space left" in d.message.text()


def test_the_log_folder_opens(env: Any, qtbot: Any, tmp_path: Path) -> None:
    d = env.make()
    assert d.log_label.text() == str(tmp_path / "logs")
    qtbot.mouseClick(d.log_btn, Qt.MouseButton.LeftButton)
    assert env.opened == [str(tmp_path / "logs")]


def test_service_failures_are_shown_as_plain_text(env: Any) -> None:
    d = env.make()
    env.models.failed.emit("Could not remember the folder <i>x</i>: denied")
    assert d.message.text() == "Could not remember the folder <i>x</i>: denied"
    labels = [w for w in d.findChildren(QLabel) if w.objectName() in
              ("message", "models_dir", "extra_folders", "token_note", "log_folder",
               "connection_note")]
    assert len(labels) == 6
    assert all(w.textFormat() == Qt.TextFormat.PlainText for w in labels)


def test_openai_base_url() -> None:
    assert openai_base_url("http://127.0.0.1:8080") == "http://127.0.0.1:8080/v1"
    assert openai_base_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/v1"
    assert openai_base_url("") == ""


def test_sharing_with_other_devices_names_the_network_and_warns(env: Any, qtbot: Any) -> None:
    from app.remote.share import KEY_NAME, Interface, SharedKey
    from app.storage import secrets

    secrets.put(KEY_NAME, "fake-key")  # the kept key the (fake) model was started with
    lan = [Interface("eth0", "192.168.1.23"), Interface("wlan0", "10.0.0.7")]
    d = SettingsDialog(AppSettings(share_runner=True, runner_port=8765), models=env.models,
                       hub=env.hub, runner=env.runner, runtimes=lambda: [],
                       apply_theme=env.themes.append, save=env.saved.append,
                       folders=lambda: env.folders.value, interfaces=lambda: lan,
                       shared_key=SharedKey())
    qtbot.addWidget(d)
    d.show()
    d.show_page("sharing")
    assert d.share_check.text() == "Let other apps and devices use this model"
    assert d.host_combo.currentData() == "127.0.0.1" and not d.share_warning.isVisible()
    assert [d.host_combo.itemData(i) for i in range(d.host_combo.count())] == [
        "127.0.0.1", "0.0.0.0", "192.168.1.23", "10.0.0.7"]
    d.host_combo.setCurrentIndex(1)
    d.host_combo.activated.emit(1)
    assert env.saved[-1].share_host == "0.0.0.0" and env.saved[-1].launch_host == "0.0.0.0"
    assert d.share_warning.isVisible() and "Anyone on your network" in d.share_warning.text()
    # The model running now was started on loopback: the change waits for the next load.
    env.runner.become(RunnerState.READY)
    assert d.url_edit.text() == "http://192.168.1.23:8765/v1"  # what sharing uses
    assert "applies from the next load" in d.connection_note.text()
    # Loaded again on every interface: the address to paste names this computer's network.
    env.runner.listen_url = "http://0.0.0.0:8765"
    env.runner.url = "http://127.0.0.1:8765"
    env.runner.state_changed.emit(RunnerState.READY)
    assert d.url_edit.text() == "http://192.168.1.23:8765/v1"
    assert d.key_edit.text() == "fake-key"
    assert "another device on your network" in d.connection_note.text()
    assert "10.0.0.7" in d.connection_note.text()
    assert "next load" not in d.connection_note.text()
    d.share_check.setChecked(False)  # off: loopback again from the next load
    assert env.saved[-1].launch_host == "127.0.0.1" and not d.share_warning.isVisible()
    assert not d.host_combo.isEnabled()


def test_a_saved_address_that_is_gone_is_still_shown(env: Any) -> None:
    d = SettingsDialog(AppSettings(share_runner=True, share_host="172.16.5.5"), models=env.models,
                       hub=env.hub, runner=env.runner, runtimes=lambda: [],
                       apply_theme=env.themes.append, save=env.saved.append,
                       folders=lambda: env.folders.value, interfaces=lambda: [])
    assert d.host_combo.currentData() == "172.16.5.5"
    assert "not on this computer now" in d.host_combo.currentText()


def test_the_pages_are_listed_in_the_rail_and_shown_by_it(env: Any, qtbot: Any) -> None:
    d = env.make()
    assert d.page_titles() == ["General", "Models", "Sharing", "Runtime", "Appearance",
                               "Language"]
    assert d.current_page() == "general" and d.token_btn.isVisible()
    assert not d.share_check.isVisible()
    for key, button in d.nav_buttons.items():
        assert button.accessibleName() and not button.icon().isNull()
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        assert d.current_page() == key and button.isChecked()
    qtbot.mouseClick(d.nav_buttons["sharing"], Qt.MouseButton.LeftButton)
    assert d.share_check.isVisible() and not d.token_btn.isVisible()
    # No boxes: sections are a header over a card.
    from PySide6.QtWidgets import QGroupBox
    assert not d.findChildren(QGroupBox)


def test_the_language_is_saved_and_said_to_apply_at_the_next_start(env: Any) -> None:
    d = env.make(AppSettings(language="system"), page="language")
    assert [d.language_combo.itemData(i) for i in range(d.language_combo.count())] == [
        "system", "en", "de"]
    assert d.language_combo.itemText(2) == "Deutsch"  # each language in its own words
    restart = d.language_box.restart_note
    assert not restart.isVisible()
    d.language_combo.setCurrentIndex(2)
    d.language_combo.activated.emit(2)
    assert env.saved[-1].language == "de" and d.settings.language == "de"
    assert restart.isVisible() and "the next time it starts" in restart.text()
    d.language_combo.setCurrentIndex(1)
    d.language_combo.activated.emit(1)
    assert env.saved[-1].language == "en" and not restart.isVisible()  # English already


def test_the_dialog_opens_roomy_but_on_the_screen(env: Any) -> None:
    """At least OPENING_MIN where the screen has room, never more than SCREEN_SHARE of it
    (test_settings_layout checks 1280x720 and the HiDPI screens row by row)."""
    from app.ui.settings_dialog import OPENING_MIN, SCREEN_SHARE

    d = env.make()
    area = d.screen().availableGeometry()
    assert d.width() <= area.width() * SCREEN_SHARE and d.height() <= area.height() * SCREEN_SHARE
    assert OPENING_MIN.width() >= 1000 and OPENING_MIN.height() >= 700  # roomy where it can be
    assert d.width() >= min(OPENING_MIN.width(), int(area.width() * SCREEN_SHARE))
    assert d.height() >= min(OPENING_MIN.height(), int(area.height() * SCREEN_SHARE))


def test_a_clicked_page_button_leaves_one_focus_ring_in_the_rail(env: Any, qtbot: Any) -> None:
    """Page buttons take the focus by Tab only; one that holds it hands it to the page shown,
    so no second button looks selected."""
    d = env.make()
    general, models = d.nav_buttons["general"], d.nav_buttons["models"]
    # By Tab only, never by a click (Qt leaves only the checked one of an exclusive group in
    # the tab chain: the arrow keys move within it).
    assert not any(b.focusPolicy().value & Qt.FocusPolicy.ClickFocus.value for b in d.nav_buttons.values())
    general.setFocus()
    qtbot.waitUntil(general.hasFocus, timeout=1000)
    qtbot.mouseClick(models, Qt.MouseButton.LeftButton)
    assert d.current_page() == "models" and models.hasFocus() and not general.hasFocus()
