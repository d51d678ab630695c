"""Found walking Settings under a real X server: the sharing fields show what sharing uses (the
settings' fixed port and the kept key), not the running model's private port and key; the note
says when the running model does not use them yet, without talking of a "new key" nobody made,
and fits at 1280×720 with Apply now; the mouse wheel scrolls the page instead of changing the
combo boxes and spin boxes that pass under the pointer."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QScrollArea, QWidget

from app.remote.share import KEY_NAME, SharedKey
from app.services.runner_process import RunnerState
from app.settings import AppSettings
from app.storage import secrets
from app.ui.settings_dialog import SettingsDialog
from tests.gui import model_fakes as mf
from tests.gui.fakes import FakeRunner
from tests.layout import Screen, problems_on_screen
from tests.unit.test_secrets import MemoryKeyring

KEPT = "kept-key-of-this-computer"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HEARTH_HOME", str(tmp_path))
    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    try:
        secrets.put(KEY_NAME, KEPT)
        yield
    finally:
        keyring.set_keyring(previous)


def dialog(qtbot: Any, runner: FakeRunner, settings: AppSettings,
           reloads: list[int] | None = None) -> SettingsDialog:
    d = SettingsDialog(settings, models=mf.FakeLocalModels(), hub=mf.FakeHub(), runner=runner,
                       apply_theme=lambda _t: None, save=lambda _s: None,
                       folders=_folders,
                       runtimes=lambda: [], interfaces=lambda: [], shared_key=SharedKey(),
                       reload=(lambda: reloads.append(1) is None) if reloads is not None
                       else None)
    qtbot.addWidget(d)
    d.show()
    qtbot.waitExposed(d)
    d.show_page("sharing")
    return d


def _folders() -> Any:
    from app.library.folders import LibraryFolders

    return LibraryFolders(Path("/home/me/models"))


def loaded_privately() -> FakeRunner:
    """A model loaded while sharing was off: a private port (36483) and a key of its own."""
    runner = FakeRunner()
    runner.become(RunnerState.READY)
    runner.url = runner.listen_url = "http://127.0.0.1:36483"
    runner.state_changed.emit(RunnerState.READY)
    return runner


def test_ticking_share_shows_the_fixed_port_and_kept_key_not_the_private_ones(
        qtbot: Any, store: None) -> None:
    reloads: list[int] = []
    d = dialog(qtbot, loaded_privately(), AppSettings(), reloads)
    box = d.share_check
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(4, box.height() // 2))
    assert d.settings.share_runner
    assert d.connection.isVisible()
    assert d.url_edit.text() == "http://127.0.0.1:4327/v1"  # what sharing uses at every load
    assert d.key_edit.text() == KEPT
    note = d.connection_note.text()
    assert "new key" not in note.lower()  # no key was rotated
    assert "next load" in note and d.apply_btn.isVisible()
    qtbot.mouseClick(d.apply_btn, Qt.MouseButton.LeftButton)
    assert reloads == [1]


def test_with_no_model_loaded_the_sharing_address_and_key_are_shown(qtbot: Any,
                                                                      store: None) -> None:
    d = dialog(qtbot, FakeRunner(), AppSettings(share_runner=True, runner_port=8765))
    assert d.connection.isVisible()
    assert d.url_edit.text() == "http://127.0.0.1:8765/v1" and d.key_edit.text() == KEPT


class SharedRunner(FakeRunner):
    """A model loaded while sharing: the fixed port and the kept key."""

    @property
    def key(self) -> str | None:
        return KEPT if self.url else None


def test_a_rotated_key_is_shown_at_once_and_said_to_be_new(qtbot: Any, store: None) -> None:
    runner = SharedRunner()
    runner.become(RunnerState.READY)
    runner.url = runner.listen_url = "http://127.0.0.1:4327"
    d = dialog(qtbot, runner, AppSettings(share_runner=True), [])
    runner.state_changed.emit(RunnerState.READY)
    assert d.key_edit.text() == KEPT and "next load" not in d.connection_note.text()
    assert not d.apply_btn.isVisible()
    qtbot.mouseClick(d.rotate_btn, Qt.MouseButton.LeftButton)
    assert d.key_edit.text() == secrets.get(KEY_NAME) != KEPT
    assert "The new key applies from the next load." in d.connection_note.text()
    assert d.apply_btn.isVisible()


def apply_now_dialog() -> SettingsDialog:
    """Sharing just ticked while a model runs privately: the note and Apply now both show."""
    runner = loaded_privately()
    d = SettingsDialog(
        AppSettings(share_runner=True), models=mf.FakeLocalModels(), hub=mf.FakeHub(),
        runner=runner, apply_theme=lambda _t: None, save=lambda _s: None, folders=_folders,
        open_url=lambda _u: None, choose_folder=lambda *_a: "", copy_text=lambda _t: None,
        log_folder=Path("/home/someone/.local/state/Hearth/log"), runtimes=lambda: [],
        interfaces=lambda: [], shared_key=SharedKey(_MemoryStore()), reload=lambda: True)
    d.show_page("sharing")
    return d


class _MemoryStore:
    def __init__(self) -> None:
        self.values = {KEY_NAME: KEPT}

    def get(self, name: str) -> str | None:
        return self.values.get(name)

    def put(self, name: str, value: str) -> None:
        self.values[name] = value

    def notice(self) -> str:
        return "Hearth keeps its keys in the system keyring."


def test_the_note_and_apply_now_fit_at_1280x720() -> None:
    problems = problems_on_screen("tests.gui.test_xwalk_settings:apply_now_dialog",
                                  Screen(1280, 720))
    assert not problems, "\n".join(problems)


def wheel(widget: QWidget, steps: int = -1) -> None:
    """One notch of the mouse wheel over ``widget``'s middle (down: negative)."""
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                        QPoint(0, 120 * steps), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_the_wheel_scrolls_the_page_over_unfocused_combos_and_spin_boxes(
        qtbot: Any, store: None) -> None:
    d = dialog(qtbot, FakeRunner(), AppSettings(share_runner=True, theme="system"))
    d.resize(d.width(), 300)  # the pages scroll
    qtbot.waitUntil(lambda: d.page_widget("sharing").verticalScrollBar().maximum() > 0)
    for key, box in (("appearance", d.theme_combo), ("runtime", d.runtime_combo),
                     ("sharing", d.host_combo), ("sharing", d.port_spin)):
        d.show_page(key)
        page = d.pages.currentWidget()
        assert isinstance(page, QScrollArea) and page is d.page_widget(key)
        bar = page.verticalScrollBar()
        assert box.focusPolicy() == Qt.FocusPolicy.StrongFocus
        page.ensureWidgetVisible(box)
        d.share_check.setFocus()
        before, at = (box.currentIndex() if isinstance(box, QComboBox) else box.value(),
                      bar.value())
        wheel(box)
        after = box.currentIndex() if isinstance(box, QComboBox) else box.value()
        assert after == before, f"the wheel changed {box.accessibleName()}"
        assert not box.hasFocus()
        del at
    # (Qt propagates only spontaneous wheel events to the parent, so the page's scrolling
    # itself is not seen here: the filter leaves the event unaccepted for it.)
    assert d.settings.theme == "system" and d.settings.runtime == ""


def test_a_focused_combo_still_takes_the_wheel(qtbot: Any, store: None) -> None:
    d = dialog(qtbot, FakeRunner(), AppSettings(theme="system"))
    d.activateWindow()
    qtbot.waitUntil(d.isActiveWindow, timeout=10_000)
    d.show_page("appearance")
    d.theme_combo.setFocus()
    qtbot.waitUntil(d.theme_combo.hasFocus)
    wheel(d.theme_combo)
    assert d.theme_combo.currentIndex() == 1  # chosen deliberately: the next theme
    spins = [w for w in d.findChildren(QAbstractSpinBox) if isinstance(w, QAbstractSpinBox)]
    assert spins
