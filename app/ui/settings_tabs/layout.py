"""The layout pieces the Settings dialog's pages share: a page that scrolls and asks for its
whole content's height, and the rows its boxes are made of."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLineEdit,
    QScrollArea,
    QStyle,
    QWidget,
)

# The width the pages are laid out for when the screen has room: the notes wrap to a few lines.
PAGE_WIDTH = 600


class ScrollingPage(QScrollArea):
    """A tab's content, scrolling when the dialog is smaller than it (a small or scaled
    screen). Its size hint is the whole content laid out :data:`PAGE_WIDTH` wide, wrapped text
    included, so the dialog opens showing all of it where the screen has room."""

    def __init__(self, content: QWidget) -> None:
        super().__init__()
        self.setWidgetResizable(True)  # the content gets its width, and its height for it
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidget(content)
        # The tab's own background shows through, as it did before the pages scrolled.
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


def beside(main: QWidget, button: QWidget) -> QWidget:
    """``main`` taking the room, ``button`` at its right."""
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
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
