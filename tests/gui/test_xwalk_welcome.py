"""Found walking the first start under a real X server: Ctrl+O (File ▸ Open GGUF file…) while
the welcome page shows ends the welcome, as the page's own Open button does, instead of
selecting the model quietly in the hidden chat tab."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import SIGNAL, QCoreApplication, QEvent, QObject, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog

from app.ui.welcome import WelcomePage


def test_ctrl_o_on_the_welcome_page_opens_the_model_and_ends_the_welcome(
        qtbot: Any, tmp_path: Path, closed_url: str, tiny_model: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from app.__main__ import compose

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HEARTH_HOME", str(tmp_path / "hearth"))
    monkeypatch.setenv("HF_ENDPOINT", closed_url)
    monkeypatch.setenv("HEARTH_MODELS_DIR", str(tmp_path / "hearth-models"))
    asked: list[str] = []

    def pick(_parent: Any, caption: str, *_args: Any) -> tuple[str, str]:
        asked.append(caption)
        return tiny_model, ""  # the person picks the file and presses Enter

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(pick))
    parent = QObject()
    gui = compose(parent, store_path=tmp_path / "hearth.sqlite3", show_welcome=True)
    window = gui.window
    qtbot.addWidget(window)
    try:
        window.show()
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow, timeout=10_000)
        page = window.findChild(WelcomePage)
        assert page is not None and page.isVisible()
        QTest.keyClick(window, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
        assert asked, "Ctrl+O did not ask for a file"
        assert window.pages.currentWidget() is window.tabs  # the welcome is done
        assert not page.isVisible()
        assert window.selected_model() == tiny_model
        assert window.tabs.currentIndex() == 0  # the chat, where the model loads
        assert gui.settings().first_run_done  # not shown again at the next start
        # The page is gone, and with it the link: a later Ctrl+O only selects, as always.
        qtbot.waitUntil(lambda: window.findChild(WelcomePage) is None)
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        assert window.receivers(SIGNAL("model_chosen(QString)")) == 0
    finally:
        window.close()  # stops the runner the choice started
        gui.close()
