"""The layout pieces the Settings dialog's pages share: a page that scrolls and asks for its
whole content's height, a page's title, a section (a small header over a card of rows) and the
rows its cards are made of.

Nothing here carries a colour or a size of text: the labels name their ``tone`` and ``type``
and the application's stylesheet (app/ui/style/sheet.py) draws them.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from app.ui.common import plain_label
from app.ui.style.components import Card, heading, section_header
from app.ui.style.tokens import SPACING

# The width the pages are laid out for when the screen has room: the notes wrap to a few lines.
PAGE_WIDTH = 620


class ScrollingPage(QScrollArea):
    """A page's content, scrolling when the dialog is smaller than it (a small or scaled
    screen). Its size hint is the whole content laid out :data:`PAGE_WIDTH` wide, wrapped text
    included, so the dialog opens showing all of it where the screen has room."""

    def __init__(self, content: QWidget) -> None:
        super().__init__()
        self.setWidgetResizable(True)  # the content gets its width, and its height for it
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidget(content)
        # The dialog's own background shows through.
        self.viewport().setAutoFillBackground(False)
        content.setAutoFillBackground(False)

    def sizeHint(self) -> QSize:
        content = self.widget()
        if content is None:
            return super().sizeHint()
        width = max(PAGE_WIDTH, content.minimumSizeHint().width())
        height = content.heightForWidth(width) if content.hasHeightForWidth() else -1
        if height < 0:
            height = content.sizeHint().height()
        # Room for a vertical scroll bar, so the content keeps its width when one appears.
        bar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, self)
        return QSize(width + bar, height)


def page(title: str, *sections: QWidget) -> QWidget:
    """A page's content: its title, then ``sections`` one under the other, the room left below
    them (a taller dialog grows there, not inside the cards)."""
    content = QWidget()
    column = QVBoxLayout(content)
    column.setContentsMargins(SPACING.xxl, SPACING.xl, SPACING.xxl, SPACING.xl)
    column.setSpacing(SPACING.xl)
    column.addWidget(heading(title, "title"))
    for section in sections:
        column.addWidget(section)
    column.addStretch(1)
    return content


class Section(QWidget):
    """A small header over a card; the rows go into :attr:`body` (the card's column)."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(SPACING.sm)
        self.header = section_header(title.upper())
        self.header.setAccessibleName(title)
        self.card = Card(spacing=SPACING.md)
        self.body = self.card.body
        column.addWidget(self.header)
        column.addWidget(self.card)

    def add_divider(self) -> None:
        """A thin line between two groups of rows of the card."""
        line = QFrame()
        line.setObjectName("sunken")  # the sheet's sunken fill, one pixel high: a quiet line
        line.setFixedHeight(1)
        self.body.addWidget(line)


def note(text: str = "", *, tone: str = "muted", kind: str = "small",
         selectable: bool = False) -> QLabel:
    """A wrapped line of plain text under a setting (its ``tone`` and ``type`` drawn by the
    sheet; "" for the normal text)."""
    return plain_label(text, selectable=selectable, tone=tone, kind=kind)


def setting_row(title: str, detail: QWidget | None, *controls: QWidget) -> QWidget:
    """One setting: its name with ``detail`` under it (a path, a state) at the left, taking
    the room, and ``controls`` at the right."""
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(SPACING.lg)
    text = QVBoxLayout()
    text.setSpacing(SPACING.xxs)
    name = QLabel()
    name.setTextFormat(Qt.TextFormat.PlainText)
    name.setText(title)
    name.setProperty("type", "subheading")
    text.addWidget(name)
    if detail is not None:
        text.addWidget(detail)
        if controls:
            name.setBuddy(controls[0])
    layout.addLayout(text, 1)
    for control in controls:
        layout.addWidget(control, 0, Qt.AlignmentFlag.AlignVCenter)
    return row


def beside(main: QWidget, button: QWidget) -> QWidget:
    """``main`` taking the room, ``button`` at its right."""
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(SPACING.sm)
    layout.addWidget(main, 1)
    layout.addWidget(button)
    return row


def at_left(widget: QWidget) -> QWidget:
    """``widget`` at its natural width, at the left of the row."""
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(widget)
    layout.addStretch(1)
    return row


def readonly_edit(name: str) -> QLineEdit:
    """A read-only field in a fixed-width font, for text to copy (an address, a key)."""
    edit = QLineEdit()
    edit.setReadOnly(True)
    edit.setAccessibleName(name)
    edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    return edit
