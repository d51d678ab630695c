"""No part of a page flashes up as a window of its own (issue 27's redraw found it): ``show()``
on a widget that has no parent yet opens it as a top-level window, which on a desktop flickers
and takes the activation from Hearth's window, so keyboard focus and the journeys' "window is
active" wait were lost. The window is composed as the app composes it and every page shown."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QDialog, QMainWindow, QMenu, QWidget


class _WindowWatch(QObject):
    """Records every widget shown as a window that is not a window by design."""

    def __init__(self) -> None:
        super().__init__()
        self.stray: list[str] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Show and isinstance(watched, QWidget) \
                and watched.isWindow() \
                and not isinstance(watched, QMainWindow | QDialog | QMenu) \
                and type(watched).__name__ not in ("QTipLabel", "PickerPopup", "WholeText",
                                                   "QComboBoxPrivateContainer"):
            text = getattr(watched, "text", lambda: "")()
            self.stray.append(f"{type(watched).__name__} {text!r}")
        return False


def test_no_widget_opens_as_a_window_of_its_own(qtbot: Any, make_window: Any) -> None:
    watch = _WindowWatch()
    app = QApplication.instance()
    assert app is not None
    app.installEventFilter(watch)
    try:
        window = make_window()
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow, timeout=10_000)
        hardware = window.gui.hardware  # the Hardware page builds its cards from the report
        qtbot.waitUntil(lambda: hardware.report is not None, timeout=30_000)
        for index in range(window.tabs.count()):
            window.tabs.setCurrentIndex(index)
            qtbot.wait(20)
        assert window.isActiveWindow()
    finally:
        app.removeEventFilter(watch)
    assert not watch.stray, f"shown as windows of their own: {watch.stray}"
