"""Help → Keyboard shortcuts: every key the window answers, read off its actions and buttons (so
the list never drifts from what the keys do), plus the few keys a text box handles itself.

:func:`window_shortcuts` is the reading; :class:`ShortcutsDialog` shows it as a two-column table.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.ui.common import size_on_screen
from app.ui.lang import tr
from app.ui.style.components import heading
from app.ui.style.tokens import SPACING

Shortcut = tuple[str, str]  # what it does, the keys in the platform's spelling
MIN_WIDTH = 460  # the narrowest it opens: a dialog, not a tooltip


def _typed(keys: str) -> bool:
    """Whether ``keys`` is a combination a keyboard has everywhere (a platform's extra binding
    to a media key such as "Open" is left out of the list)."""
    return "+" in keys or len(keys) == 1 or keys == "Esc" or \
        (keys.startswith("F") and keys[1:].isdigit())


def _keys(sequences: Iterable[QKeySequence]) -> str:
    shown = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in sequences]
    return " / ".join(dict.fromkeys(k for k in shown if k and _typed(k)))


def window_shortcuts(window: QWidget, extra: Iterable[Shortcut] = ()) -> list[Shortcut]:
    """What each shortcut of ``window`` does and its keys: its actions (the menus', the rail's)
    and its buttons with a key of their own, then ``extra``; each once, in the order found."""
    found: list[Shortcut] = []
    seen: set[Shortcut] = set()

    def add(what: str, keys: str) -> None:
        what = what.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip(".…")
        if what and keys and (what, keys) not in seen:
            seen.add((what, keys))
            found.append((what, keys))

    for action in window.findChildren(QAction):
        if not action.isSeparator() and action.menu() is None:
            add(action.text(), _keys(action.shortcuts()))
    for button in window.findChildren(QAbstractButton):
        if not button.shortcut().isEmpty():
            add(button.accessibleName() or button.text(), _keys([button.shortcut()]))
    for what, keys in extra:
        add(what, keys)
    return found


class ShortcutsDialog(QDialog):
    """The actions and their keys, in one table, or two side by side where one would not fit
    the screen's height (a 720-pixel laptop screen): no row is hidden below a fold."""

    def __init__(self, shortcuts: list[Shortcut], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Keyboard shortcuts"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACING.xl, SPACING.xl, SPACING.xl, SPACING.lg)
        layout.setSpacing(SPACING.md)
        layout.addWidget(heading(tr("Keyboard shortcuts"), "subheading"))
        self._tables_row = QHBoxLayout()
        self._tables_row.setSpacing(SPACING.xl)
        layout.addLayout(self._tables_row, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.tables = [self._table(shortcuts)]
        self._tables_row.addWidget(self.tables[0])
        free = size_on_screen(self, QSize(10**6, 10**6))  # the most the screen allows
        if len(shortcuts) > 1 and self._wanted().height() > free.height():
            self.tables[0].deleteLater()
            self._tables_row.removeWidget(self.tables[0])
            half = (len(shortcuts) + 1) // 2
            self.tables = [self._table(shortcuts[:half]), self._table(shortcuts[half:])]
            for table in self.tables:
                self._tables_row.addWidget(table, 1)
        self.table = self.tables[0]
        self.resize(self.opening_size())
        self._sized = False  # sized again as it is first shown: the sheet's fonts are known

    def _table(self, shortcuts: list[Shortcut]) -> QTableWidget:
        table = QTableWidget(len(shortcuts), 2)
        table.setAccessibleName(tr("Keyboard shortcuts"))
        table.setHorizontalHeaderLabels([tr("Action"), tr("Keys")])
        table.verticalHeader().hide()
        # Rows one line and a little apart, all the same height: the list is read, not edited.
        table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        table.setShowGrid(False)
        table.setWordWrap(False)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setAlternatingRowColors(False)
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        for row, (what, keys) in enumerate(shortcuts):
            table.setItem(row, 0, QTableWidgetItem(what))
            key_item = QTableWidgetItem(keys)
            key_item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(row, 1, key_item)
        return table

    def showEvent(self, event: QShowEvent) -> None:
        if not self._sized and not event.spontaneous():
            self._sized = True
            self.resize(self.opening_size())
        super().showEvent(event)

    def _wanted(self) -> QSize:
        """The size that shows every row of every table without scrolling."""
        self.ensurePolished()
        width = height = 0
        for table in self.tables:
            table.ensurePolished()
            table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height()
                                                         + SPACING.md)
            frame = 2 * table.frameWidth()
            rows = sum(table.rowHeight(r) for r in range(table.rowCount()))
            height = max(height, table.horizontalHeader().sizeHint().height() + rows + frame)
            # Room between the two columns, and a scroll bar's width spare.
            width += (table.sizeHintForColumn(0) + table.sizeHintForColumn(1) + frame
                      + table.verticalScrollBar().sizeHint().width() + 3 * SPACING.xl)
        width += self._tables_row.spacing() * (len(self.tables) - 1)
        hint = self.sizeHint()
        tables = self._tables_row.sizeHint()
        return QSize(max(MIN_WIDTH, hint.width() - tables.width() + width),
                     hint.height() - tables.height() + height)

    def opening_size(self) -> QSize:
        """Big enough to show every row without scrolling, within the screen's free area
        (:func:`size_on_screen`): past that the table scrolls."""
        return size_on_screen(self, self._wanted())
