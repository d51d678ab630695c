"""The window's navigation (issue 27): a slim icon rail on the left (Chat, Discover, Models,
Downloads, Hardware; Settings at the bottom) beside the page it shows.

:class:`NavPages` keeps the part of QTabWidget's interface the rest of Hearth uses to switch pages
(``addTab``, ``setCurrentWidget``, ``currentIndex``, ``tabText``…), so callers that drove the old
tab bar drive the rail unchanged. Ctrl+1… go to the pages in order and Ctrl+Tab / Ctrl+Shift+Tab
step through them, as they did with the tabs; each is a QAction on the rail, so the shortcuts
dialog (app/ui/shortcuts_dialog.py) finds them and the rail's tooltips name them.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QButtonGroup,
    QHBoxLayout,
    QSizePolicy,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.ui.lang import tr
from app.ui.style.components import tooltip_with_shortcut
from app.ui.style.icons import icon
from app.ui.style.tokens import SPACING

RAIL_ICON = 20  # a rail button's picture, device-independent pixels
PAGE_KEYS = 9  # Ctrl+1 … Ctrl+9


def page_icon(title: str) -> str:
    """The icon of a page, by its English title or that title translated."""
    for english, name in (("Chat", "chat"), ("Discover", "discover"), ("Models", "models"),
                          ("Downloads", "downloads"), ("Hardware", "hardware")):
        if title in (english, tr(english)):
            return name
    return "library"


def nav_button(icon_name: str, caption: str, tip: str,
               shortcut: QKeySequence | str | None = None) -> QToolButton:
    """A rail button: the icon with a short caption under it, checkable, named by ``caption``
    for screen readers and described (with its shortcut) by its tooltip."""
    button = QToolButton()
    button.setProperty("nav", True)
    button.setIcon(icon(icon_name))
    button.setIconSize(QSize(RAIL_ICON, RAIL_ICON))
    button.setText(caption)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextUnderIcon)
    button.setAccessibleName(caption)
    button.setToolTip(tooltip_with_shortcut(tip, shortcut))
    button.setCheckable(True)
    button.setCursor(Qt.CursorShape.PointingHandCursor)
    # Tab only: a clicked button keeping the focus ring looked selected beside the checked one.
    button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
    button.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
    return button


class Rail(QWidget):
    """The column of page buttons, Settings at the bottom (it opens a dialog: never checked)."""

    settings_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rail")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)  # the sheet's fill
        self.setAccessibleName(tr("Pages"))
        self.buttons: list[QToolButton] = []
        self.group = QButtonGroup(self)
        self.group.setExclusive(True)
        self._column = QVBoxLayout(self)
        self._column.setContentsMargins(SPACING.sm, SPACING.md, SPACING.sm, SPACING.md)
        self._column.setSpacing(SPACING.xs)
        self._column.addStretch(1)
        self.settings_btn = nav_button("settings", tr("Settings"),
                                       tr("Models folders, Hugging Face token, sharing, theme"),
                                       "Ctrl+,")
        self.settings_btn.setCheckable(False)
        self.settings_btn.clicked.connect(self.settings_clicked)
        self._column.addWidget(self.settings_btn)

    def add(self, button: QToolButton) -> None:
        """A page's button, under the ones before it."""
        self.group.addButton(button, len(self.buttons))
        self._column.insertWidget(len(self.buttons), button)
        self.buttons.append(button)

    def sizeHint(self) -> QSize:
        # As wide as the widest caption (at least a square button), never wider.
        hint = super().sizeHint()
        return QSize(max(hint.width(), RAIL_ICON + 5 * SPACING.md), hint.height())


class NavPages(QWidget):
    """The rail and the page it shows, with QTabWidget's page-switching methods."""

    currentChanged = Signal(int)
    settings_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rail = Rail()
        self.rail.settings_clicked.connect(self.settings_requested)
        self.stack = QStackedWidget()
        self._titles: list[str] = []
        self.page_actions: list[QAction] = []
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.rail)
        self._column = QVBoxLayout()  # a header over every page (the model strip), the page
        self._column.setContentsMargins(0, 0, 0, 0)
        self._column.setSpacing(0)
        self._column.addWidget(self.stack, 1)
        row.addLayout(self._column, 1)
        self.rail.group.idClicked.connect(self.setCurrentIndex)
        self.stack.currentChanged.connect(self._on_changed)
        self.next_action = self._action(tr("Next page"), ["Ctrl+Tab", "Ctrl+PgDown"],
                                         lambda: self._step(1))
        self.previous_action = self._action(tr("Previous page"), ["Ctrl+Shift+Tab",
                                                                  "Ctrl+PgUp"],
                                            lambda: self._step(-1))

    def _action(self, text: str, keys: list[str], slot: object) -> QAction:
        action = QAction(text, self)
        action.setShortcuts([QKeySequence(k) for k in keys])
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(lambda _checked=False: slot())  # type: ignore[operator]
        self.addAction(action)  # live while the pages are shown (not under the first-run page)
        return action

    def set_header(self, widget: QWidget) -> None:
        """``widget`` above every page (the model in use stays in sight on each)."""
        self._column.insertWidget(0, widget)

    # ---- QTabWidget's interface -----------------------------------------------------------------

    def addTab(self, widget: QWidget, title: str, icon_name: str | None = None) -> int:
        """Add a page with its rail button (the icon guessed from ``title`` if not named)."""
        index = self.stack.addWidget(widget)
        self._titles.append(title)
        shortcut = QKeySequence(f"Ctrl+{index + 1}") if index < PAGE_KEYS else None
        button = nav_button(icon_name or page_icon(title), title, title, shortcut)
        self.rail.add(button)
        if shortcut is not None:
            go = self._action(tr("Show {page}").format(page=title), [shortcut.toString()],
                              lambda i=index: self.setCurrentIndex(i))
            self.page_actions.append(go)
        if index == self.stack.currentIndex():
            button.setChecked(True)
        return index

    def count(self) -> int:
        return self.stack.count()

    def widget(self, index: int) -> QWidget | None:
        return self.stack.widget(index)

    def indexOf(self, widget: QWidget) -> int:
        return self.stack.indexOf(widget)

    def tabText(self, index: int) -> str:
        return self._titles[index] if 0 <= index < len(self._titles) else ""

    def currentIndex(self) -> int:
        return self.stack.currentIndex()

    def currentWidget(self) -> QWidget | None:
        return self.stack.currentWidget()

    def setCurrentIndex(self, index: int) -> None:
        if 0 <= index < self.stack.count():
            self.stack.setCurrentIndex(index)

    def setCurrentWidget(self, widget: QWidget) -> None:
        index = self.stack.indexOf(widget)
        if index >= 0:
            self.stack.setCurrentIndex(index)

    def button(self, index: int) -> QToolButton:
        return self.rail.buttons[index]

    # ---- ---------------------------------------------------------------------------------------

    def _step(self, by: int) -> None:
        if self.stack.count():
            self.setCurrentIndex((self.stack.currentIndex() + by) % self.stack.count())

    def _on_changed(self, index: int) -> None:
        if 0 <= index < len(self.rail.buttons):
            button = self.rail.buttons[index]
            button.setChecked(True)
            # The focus ring stays on one item: if a rail button holds the focus (the window
            # gave it to the first one, or the person tabbed there), it moves to the page shown.
            focused = QApplication.focusWidget()
            if focused is not button and focused in self.rail.buttons:
                button.setFocus(Qt.FocusReason.OtherFocusReason)
        self.currentChanged.emit(index)
