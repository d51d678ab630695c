"""A new user's first minutes, by keyboard (issue 25, defect 8): Tab leaves the message box, the
focus goes round every control in reading order and back, a menu bar names every action with its
shortcut, and the shortcuts work from the message box.

The window is the one the app composes (tests/gui/conftest.py's make_window); keys go through
QTest to the widget that has the focus, and widgets are found by their accessible names, as a
screen reader finds them.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QMenu, QWidget

from app.services.runner_process import RunnerState


def name_of(widget: QWidget) -> str:
    """Its accessible name; else the name a screen reader says for it (a button's text)."""
    if widget.accessibleName():
        return widget.accessibleName()
    face = QAccessible.queryAccessibleInterface(widget)
    return face.text(QAccessible.Text.Name) if face is not None else ""


def named(window: QWidget, name: str) -> QWidget:
    """The visible widget with this accessible name (else, a button with this text)."""
    shown = [w for w in window.findChildren(QWidget) if w.isVisible()]
    found = [w for w in shown if w.accessibleName() == name] or \
        [w for w in shown if not w.accessibleName() and name_of(w) == name]
    assert len(found) == 1, f"{len(found)} visible widgets named {name!r}"
    return found[0]


def focused() -> QWidget:
    widget = QApplication.focusWidget()
    assert widget is not None
    return widget


def press(key: Qt.Key, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    QTest.keyClick(focused(), key, modifiers)


def shown(qtbot: Any, window: Any) -> Any:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=10_000)
    return window


def test_tab_leaves_the_message_box_and_goes_round_every_control_both_ways(
        qtbot: Any, make_window: Any) -> None:
    window = shown(qtbot, make_window())
    message = named(window, "Message")
    qtbot.mouseClick(message, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is message, timeout=5000)
    QTest.keyClicks(message, "hello")
    press(Qt.Key.Key_Tab)
    assert message.toPlainText() == "hello"  # no tab typed into the message
    assert focused() is not message

    # Forward from the message box until the focus comes back to it: a closed ring.
    forward: list[QWidget] = [message]
    for _ in range(80):
        if focused() is message:
            break
        forward.append(focused())
        press(Qt.Key.Key_Tab)
    assert focused() is message, f"Tab never came back: {[name_of(w) for w in forward]}"
    names = [name_of(w) for w in forward]
    assert all(names), f"a control without a name: {names}"
    # Every control of the top bar is reached, in reading order, and the tab corner's Settings.
    top = ["Model", "Load", "Offload settings", "Chat settings"]
    for name in [*top, "Settings", "Search conversations"]:
        assert name in names, f"{name!r} is not reached by Tab: {names}"
    at = [names.index(n) for n in top]
    assert at == sorted(at), names

    # Backward: the same ring the other way round.
    backward: list[QWidget] = [message]
    press(Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    for _ in range(80):
        if focused() is message:
            break
        backward.append(focused())
        press(Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert focused() is message
    assert [name_of(w) for w in backward] == [names[0], *reversed(names[1:])]


EXPECTED_MENUS = {
    "File": {"Open GGUF file…": "Ctrl+O", "Settings…": "Ctrl+,", "Quit": "Ctrl+Q"},
    "Model": {"Choose model…": "Ctrl+L", "Load": "F5", "Unload": "Shift+F5",
              "Offload settings…": "Ctrl+Shift+O", "Vision projector…": ""},
    "Chat": {"New chat": "Ctrl+N", "Search conversations": "Ctrl+K", "Stop reply": "Esc"},
    "Help": {"Keyboard shortcuts": "F1", "About Hearth": ""},
}


def test_the_menu_bar_names_every_action_with_its_shortcut(qtbot: Any,
                                                           make_window: Any) -> None:
    window = shown(qtbot, make_window())
    bar = window.menuBar()
    assert bar.isVisible()
    menus: dict[str, dict[str, str]] = {}
    for action in bar.actions():
        menu = action.menu()
        assert isinstance(menu, QMenu)
        title = action.text().replace("&", "")
        menus[title] = {a.text().replace("&", ""): a.shortcut().toString(
            QKeySequence.SequenceFormat.PortableText)
            for a in menu.actions() if not a.isSeparator()}
    assert menus == EXPECTED_MENUS


def test_shortcuts_work_from_the_message_box(qtbot: Any, make_window: Any,
                                             tiny_model: str) -> None:
    window = shown(qtbot, make_window())
    message = named(window, "Message")
    message.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is message, timeout=5000)

    # Ctrl+L: to the model list, whose arrow keys then choose.
    press(Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    picker = named(window, "Model")
    qtbot.waitUntil(lambda: picker.hasFocus() or picker.view().isVisible(), timeout=5000)
    if picker.view().isVisible():
        picker.hidePopup()

    # Ctrl+, opens the settings without waiting for anything; Esc closes them.
    message.setFocus()
    press(Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.findChildren(QDialog)),
                    timeout=10_000)
    dialog = next(d for d in window.findChildren(QDialog) if d.isVisible())
    dialog.reject()
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    shown(qtbot, window)  # the system gives the window back its activation; offscreen must ask

    # F5 loads the model chosen in the list, Shift+F5 unloads it.
    window.choose_model(tiny_model)  # what `hearth model.gguf` does
    message.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is message, timeout=5000)
    with qtbot.waitSignal(window.runner.ready, timeout=60_000):
        press(Qt.Key.Key_F5)
    assert window.runner.state == RunnerState.READY
    qtbot.waitUntil(lambda: QApplication.focusWidget() is message, timeout=5000)  # ready: type
    press(Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: window.runner.state == RunnerState.STOPPED, timeout=30_000)

    # Ctrl+Q quits: the window closes (the app ends with its last window).
    message.setFocus()
    press(Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=10_000)
