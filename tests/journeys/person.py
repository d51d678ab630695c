"""What a person does with Hearth, as test helpers: find a control by the name a screen reader
says for it, click it, type into it, press keys, answer a file dialog, pick from a list, follow
a link in the conversation, open a menu.

Every action is a real mouse or key event sent through QTest (or a wheel event, which QTest
lacks) to the widget a person would aim at; nothing here calls a widget's private method or a
service. Reading what the screen shows (a label's text, whether a button is enabled) is how the
journeys see the result, as a person does by looking.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx2 as httpx
from PySide6.QtCore import QPoint, QPointF, Qt, QTimer
from PySide6.QtGui import QAccessible, QTextCursor, QTextDocument, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QMenu,
    QMenuBar,
    QRadioButton,
    QTabBar,
    QTextEdit,
    QWidget,
)

LEFT = Qt.MouseButton.LeftButton
NO_KEYS = Qt.KeyboardModifier.NoModifier
CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier

# Generous: a load of a tiny model takes seconds here, but CI machines are busy.
LOAD_MS = 90_000
REPLY_MS = 60_000
UI_MS = 10_000


# ---- finding controls ---------------------------------------------------------------------------


def name_of(widget: QWidget) -> str:
    """Its accessible name; else the name a screen reader says for it (a button's text)."""
    if widget.accessibleName():
        return widget.accessibleName()
    face = QAccessible.queryAccessibleInterface(widget)
    return face.text(QAccessible.Text.Name) if face is not None else ""


def all_named(root: QWidget, name: str) -> list[QWidget]:
    """The visible widgets inside ``root`` (or ``root`` itself) a screen reader names ``name``:
    those whose accessible name it is, else those it says for another reason (a button's
    text)."""
    shown = [w for w in [root, *root.findChildren(QWidget)] if w.isVisible()]
    return [w for w in shown if w.accessibleName() == name] or \
        [w for w in shown if not w.accessibleName() and name_of(w) == name]


def named(root: QWidget, name: str) -> Any:
    """The one visible widget named ``name`` inside ``root``."""
    found = all_named(root, name)
    if len(found) != 1:
        buttons = sorted({name_of(w) for w in root.findChildren(QAbstractButton)
                          if w.isVisible()})
        raise AssertionError(f"{len(found)} visible widgets named {name!r} (buttons shown: "
                             f"{buttons})")
    return found[0]


def wait_named(qtbot: Any, root: QWidget, name: str, timeout: int = UI_MS,
               enabled: bool = False) -> Any:
    """Wait until ``name`` is shown (and enabled, if asked), as a person waits to see it."""
    def there() -> None:
        widget = named(root, name)
        assert not enabled or widget.isEnabled(), f"{name!r} is disabled"

    qtbot.waitUntil(there, timeout=timeout)
    return named(root, name)


def focused() -> QWidget:
    widget = QApplication.focusWidget()
    assert widget is not None, "nothing has the keyboard focus"
    return widget


def owned_by(owner: QWidget, widget: QWidget) -> bool:
    """Whether ``widget`` is ``owner`` or one of its windows (a dialog it opened, or one such
    a dialog opened)."""
    node: QWidget | None = widget
    while node is not None:
        if node is owner:
            return True
        node = node.parentWidget()
    return False


def dialogs(owner: QWidget, title: str | None = None) -> list[QDialog]:
    """The dialogs of ``owner`` on screen now (optionally only those with this title); other
    tests' windows left in the same process are not this person's."""
    return [w for w in QApplication.topLevelWidgets()
            if isinstance(w, QDialog) and w.isVisible() and owned_by(owner, w)
            and (title is None or w.windowTitle() == title)]


def wait_dialog(qtbot: Any, owner: QWidget, title: str | None = None, timeout: int = UI_MS,
                starts_with: str | None = None) -> QDialog:
    """The dialog of ``owner`` that opened (by its title, or the start of it)."""
    def shown() -> list[QDialog]:
        return [d for d in dialogs(owner, title)
                if starts_with is None or d.windowTitle().startswith(starts_with)]

    def one() -> None:
        titles = [d.windowTitle() for d in dialogs(owner)]
        assert len(shown()) == 1, f"dialogs on screen: {titles}"

    qtbot.waitUntil(one, timeout=timeout)
    return shown()[0]


# ---- mouse and keys -----------------------------------------------------------------------------


def click(qtbot: Any, root: QWidget, name: str) -> None:
    """Click the control named ``name`` (it must be enabled: a person cannot click it else)."""
    widget = named(root, name)
    assert widget.isEnabled(), f"{name!r} is disabled"
    if isinstance(widget, QCheckBox | QRadioButton):
        # On the box at its left (its label counts too, but the widget may be wider).
        QTest.mouseClick(widget, LEFT, NO_KEYS, QPoint(7, widget.height() // 2))
    else:
        QTest.mouseClick(widget, LEFT, NO_KEYS, widget.rect().center())


def press(key: Qt.Key, modifiers: Qt.KeyboardModifier = NO_KEYS) -> None:
    """A key (with modifiers) pressed: it goes to whatever has the keyboard focus, else to the
    active window."""
    target = QApplication.focusWidget() or QApplication.activeWindow()
    assert target is not None, "no window is active: the key goes nowhere"
    QTest.keyClick(target, key, modifiers)


def type_text(text: str) -> None:
    """Typed on the keyboard: into whatever has the focus."""
    QTest.keyClicks(focused(), text)


def type_into(qtbot: Any, root: QWidget, name: str, text: str, replace: bool = False) -> Any:
    """Click into the box named ``name``, (select what it holds and) type ``text``."""
    box = named(root, name)
    QTest.mouseClick(box.viewport() if hasattr(box, "viewport") else box, LEFT, NO_KEYS,
                     QPoint(10, 10))
    qtbot.waitUntil(until(lambda: QApplication.focusWidget() is not None and
                          QApplication.focusWidget() in (box, box.focusProxy()),
                          f"a click does not put the focus in {name!r}"), timeout=UI_MS)
    if replace:
        press(Qt.Key.Key_A, CTRL)
    type_text(text)
    return box


def wheel(widget: QWidget, steps: int) -> None:
    """The mouse wheel turned ``steps`` notches over ``widget`` (positive: up)."""
    at = QPointF(widget.rect().center())
    event = QWheelEvent(at, QPointF(widget.mapToGlobal(at)), QPoint(0, 0),
                        QPoint(0, 120 * steps), Qt.MouseButton.NoButton, NO_KEYS,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def choose_in_list(qtbot: Any, combo: QComboBox, contains: str) -> None:
    """Open the drop-down list with a click and click the entry whose text has ``contains``."""
    assert combo.isEnabled(), f"the list {name_of(combo)!r} is disabled"
    QTest.mouseClick(combo, LEFT, NO_KEYS, combo.rect().center())
    view = combo.view()
    qtbot.waitUntil(view.isVisible, timeout=UI_MS)
    rows = [combo.itemText(i) for i in range(combo.count())]
    matches = [i for i, text in enumerate(rows) if contains in text]
    assert len(matches) == 1, f"{len(matches)} entries with {contains!r} in {rows}"
    index = combo.model().index(matches[0], combo.modelColumn())
    for _ in range(200):  # a long list: the wheel brings the entry into sight
        rect = view.visualRect(index)
        if view.viewport().rect().contains(rect):
            break
        wheel(view.viewport(), 1 if rect.top() < 0 else -1)
        QApplication.processEvents()
    # The list ignores a release within a double-click's time of opening (the release of the
    # click that opened it): a person's second click comes later than that.
    qtbot.wait(QApplication.doubleClickInterval() + 200)
    rect = view.visualRect(index)
    QTest.mouseMove(view.viewport(), rect.center())
    QTest.mouseClick(view.viewport(), LEFT, NO_KEYS, rect.center())
    qtbot.waitUntil(lambda: not view.isVisible(), timeout=UI_MS)


def open_menu(qtbot: Any, window: Any, menu_title: str, item: str) -> None:
    """Click ``menu_title`` in the window's menu bar, then ``item`` in the menu it opens."""
    bar: QMenuBar = window.menuBar()
    titles = {a.text().replace("&", ""): a for a in bar.actions()}
    assert menu_title in titles, f"no menu {menu_title!r} in {sorted(titles)}"
    top = titles[menu_title]
    QTest.mouseClick(bar, LEFT, NO_KEYS, bar.actionGeometry(top).center())
    menu = top.menu()
    assert isinstance(menu, QMenu)
    qtbot.waitUntil(menu.isVisible, timeout=UI_MS)
    entries = {a.text().replace("&", ""): a for a in menu.actions() if not a.isSeparator()}
    assert item in entries, f"no {item!r} in the {menu_title} menu: {sorted(entries)}"
    assert entries[item].isEnabled(), f"{menu_title} → {item} is disabled"
    QTest.mouseClick(menu, LEFT, NO_KEYS, menu.actionGeometry(entries[item]).center())


def _rail_buttons(window: QWidget) -> list[QAbstractButton]:
    """The page buttons of the window's navigation rail (none in a dialog)."""
    rails = [r for r in window.findChildren(QWidget, "rail") if r.isVisible()]
    return [b for r in rails for b in r.findChildren(QAbstractButton)
            if b.isVisible() and b.property("nav") and b.isCheckable()]


def switch_tab(qtbot: Any, window: QWidget, title: str) -> None:
    """Click the page called ``title`` in the window's rail, or the tab in its tab bar(s)."""
    for button in _rail_buttons(window):
        if name_of(button) == title:
            QTest.mouseClick(button, LEFT, NO_KEYS, button.rect().center())
            qtbot.waitUntil(button.isChecked, timeout=UI_MS)
            return
    bars = [b for b in window.findChildren(QTabBar) if b.isVisible()]
    for bar in bars:
        for i in range(bar.count()):
            if bar.tabText(i).replace("&", "") == title:
                QTest.mouseClick(bar, LEFT, NO_KEYS, bar.tabRect(i).center())
                qtbot.waitUntil(lambda b=bar, i=i: b.currentIndex() == i, timeout=UI_MS)
                return
    tabs = [[b.tabText(i) for i in range(b.count())] for b in bars]
    pages = [name_of(b) for b in _rail_buttons(window)]
    raise AssertionError(f"no tab {title!r}: {tabs}, pages {pages}")


def current_tab(window: QWidget) -> str:
    """The page the window's rail shows (the one checked), else the selected tab of the
    window's top tab bar."""
    checked = [b for b in _rail_buttons(window) if b.isChecked()]
    if checked:
        return name_of(checked[0])
    bars = [b for b in window.findChildren(QTabBar) if b.isVisible()]
    assert bars, "no rail and no tab bar is shown"
    top = min(bars, key=lambda b: b.mapTo(window, QPoint(0, 0)).y())
    return top.tabText(top.currentIndex()).replace("&", "")


# ---- the conversation's links -------------------------------------------------------------------


def link_positions(view: QTextEdit, text: str) -> list[int]:
    """Where the links that read ``text`` are in the conversation (document positions)."""
    doc = view.document()
    flags = QTextDocument.FindFlag.FindCaseSensitively
    found: list[int] = []
    cursor = doc.find(text, 0, flags)
    while not cursor.isNull():
        if cursor.charFormat().isAnchor():
            found.append((cursor.selectionStart() + cursor.selectionEnd()) // 2)
        cursor = doc.find(text, cursor, flags)
    return found


def click_link(qtbot: Any, view: QTextEdit, text: str, which: int = -1) -> None:
    """Click the link reading ``text`` (the ``which``-th of them: -1 the last), scrolling the
    conversation with the mouse wheel until it is in sight."""
    positions = link_positions(view, text)
    assert positions, f"no {text!r} link in the conversation:\n{view.toPlainText()[-2000:]}"
    cursor = QTextCursor(view.document())
    cursor.setPosition(positions[which])
    viewport = view.viewport()
    for _ in range(400):
        rect = view.cursorRect(cursor)
        if viewport.rect().contains(rect):
            break
        wheel(viewport, 1 if rect.top() < 0 else -1)
        QApplication.processEvents()
    rect = view.cursorRect(cursor)
    assert viewport.rect().contains(rect), f"the {text!r} link cannot be scrolled into sight"
    at = QPoint(rect.center().x(), rect.center().y())
    QTest.mouseMove(viewport, at)
    QTest.mouseClick(viewport, LEFT, NO_KEYS, at)


def hover_message(qtbot: Any, view: Any, which: int = -1) -> Any:
    """Move the mouse over the ``which``-th message of the conversation (-1: the last),
    scrolling it with the mouse wheel until the message's top is in sight; returns the action
    bar that shows over it (app/ui/chat_view.py's icon buttons)."""
    index = range(len(view.messages()))[which]
    viewport = view.viewport()
    for _ in range(400):
        rect = view.message_rect(index).translated(0, -view.verticalScrollBar().value())
        if viewport.rect().contains(rect.topLeft().toPoint() + QPoint(0, 40)):
            break
        wheel(viewport, 1 if rect.top() < 0 else -1)
        QApplication.processEvents()
    rect = view.message_rect(index).translated(0, -view.verticalScrollBar().value())
    at = QPoint(int(rect.center().x()), int(min(rect.center().y(), rect.top() + 40)))
    # From elsewhere first: a move to where the pointer already is makes no event, so a retry
    # (waitUntil) after the view re-laid out would never show the bar again.
    QTest.mouseMove(viewport, QPoint(at.x(), max(0, at.y() - 20)))
    QApplication.processEvents()
    QTest.mouseMove(viewport, at)
    QApplication.processEvents()
    bar = view.message_bar()
    assert bar.isVisible() and bar.index == index, "no action bar over the message"
    return bar


def click_message_action(qtbot: Any, view: Any, action: str, which: int = -1) -> None:
    """Click the icon button named ``action`` ("Write this reply again", …) of the
    ``which``-th message, which shows while the mouse is over that message."""
    bar = hover_message(qtbot, view, which)
    buttons = [b for b in bar.buttons() if b.accessibleName() == action]
    assert buttons, f"no {action!r} button on that message: " + \
        str([b.accessibleName() for b in bar.buttons()])
    QTest.mouseClick(buttons[0], LEFT, NO_KEYS, buttons[0].rect().center())


def message_versions(qtbot: Any, view: Any, which: int = -1) -> str:
    """The versions a message shows in its action bar ("2/2"; "" for a single version)."""
    bar = hover_message(qtbot, view, which)
    return "" if bar.versions.isHidden() else bar.versions.text()


# ---- modal dialogs a person answers -------------------------------------------------------------


class FileAnswer:
    """Answers the next file dialog as a person does: types the file's path into its file name
    box and presses Enter. Started before the action that opens the dialog (which waits in the
    dialog's own event loop); :attr:`answered` says whether a dialog came."""

    def __init__(self, path: str, timeout_ms: int = 30_000) -> None:
        self.path = path
        self.answered = False
        self.seen: list[str] = []
        self._tries = timeout_ms // 50
        QTimer.singleShot(50, self._poll)

    def _poll(self) -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, QFileDialog) and dialog.isVisible():
            edit = QApplication.focusWidget()
            self.seen.append(f"{dialog.windowTitle()}: focus on {type(edit).__name__}")
            if edit is not None and dialog.isAncestorOf(edit):
                QTest.keyClicks(edit, self.path)
                QTest.keyClick(edit, Qt.Key.Key_Return)
                self.answered = True
                return
        self._tries -= 1
        if self._tries > 0:
            QTimer.singleShot(50, self._poll)


def back_to(qtbot: Any, window: QWidget) -> None:
    """Once a dialog has gone, the window under it is the active one again: desktops do this
    (the window manager), the offscreen platform does not, so it is done here as they do."""
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None, timeout=UI_MS)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=UI_MS)


# ---- the runner, as another program sees it -----------------------------------------------------


def http_get(url: str, key: str | None, timeout: float = 10.0) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.get(url, headers=headers, timeout=timeout)


def runner_status(window: Any) -> dict[str, Any] | None:
    """``/runner/status`` of the runner the window started (None while none answers)."""
    runner = window.runner
    if not runner.url or not runner.key:
        return None
    try:
        reply = http_get(runner.url.rstrip("/") + "/runner/status", runner.key)
    except httpx.HTTPError:
        return None
    return reply.json() if reply.status_code == 200 else None


def prompt_tokens(window: Any) -> int:
    """The prompt tokens of the runner's last request (0 before any)."""
    last = (runner_status(window) or {}).get("last_request") or {}
    return int(last.get("prompt_tokens") or 0)


def reply_done(window: Any) -> bool:
    """No reply streams, and Send is ready for the next question."""
    return named(window, "Send").isEnabled() and named(window, "Conversation").live() is None


def until(predicate: Callable[[], object], what: str | Callable[[], str]) -> Callable[[], None]:
    """A waitUntil callback that says ``what`` it was waiting for when it times out (a callable
    says it as things are then)."""
    def check() -> None:
        assert predicate(), what() if callable(what) else what

    return check
