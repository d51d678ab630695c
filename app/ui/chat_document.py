"""The chat transcript's document: sealed (it loads no resource, whatever model output names),
and written a message, or a piece of the live reply, at a time in blocks of their own.

:class:`Blocks` holds the block formats and the few edits the view makes (insert at the end,
remove from a position to the end, replace a range): every part of app/ui/chat_view.py that
writes the document goes through it, so the streamed reply and the finished message come out
in the same blocks (docs/architecture.md, "The chat view"). A message too big for the
transcript opens whole in a plain-text window of its own (:class:`WholeText`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import shiboken6
from PySide6.QtCore import QMimeData, QSizeF, Qt, QUrl
from PySide6.QtGui import (
    QFontDatabase,
    QPainter,
    QPyTextObject,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from app.chat.message import Message
from app.chat.render import MESSAGE_GAP_PX, NAME_GAP_PX, break_long_lines
from app.ui.lang import tr
from app.ui.style.tokens import SPACING

log = logging.getLogger(__name__)

ROLE_ICON_PX = 16
NAME_INDENT_PX = ROLE_ICON_PX + SPACING.sm  # the name line's room for its role icon


def refused(name: QUrl | str) -> None:
    """Log a resource the transcript would not load."""
    log.debug("Refused to load a resource for the chat: %.200s",
              name if isinstance(name, str) else name.toString())


class SealedDocument(QTextDocument):
    """A document that loads no resource: no file, no network, whatever the HTML names."""

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        refused(name)
        return None


class NoImages(QPyTextObject):
    """Stands in for Qt's image handler, which would read the image file from disk."""

    def intrinsicSize(self, doc: QTextDocument, pos: int, format: QTextFormat) -> QSizeF:
        return QSizeF(0, 0)

    def drawObject(self, painter: QPainter, rect: Any, doc: QTextDocument, pos: int,
                   format: QTextFormat) -> None:
        return None


class WholeText(QPlainTextEdit):
    """A message's whole stored text in a window of its own, for one too big to show in the
    transcript: a plain-text editor lays out only the lines it shows, so a megabyte opens at
    once, scrolls, and resizes without holding up the app. Read-only, and plain text: nothing
    in it is markup, so it cannot name a file either."""

    def __init__(self, text: str, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._text = text
        self.setWindowFlag(Qt.WindowType.Window)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setWindowTitle(title)
        self.setReadOnly(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setPlainText(break_long_lines(text))  # a block per long line: see render.py
        self.resize(820, 640)

    def text(self) -> str:
        """The stored text it shows."""
        return self._text

    def createMimeDataFromSelection(self) -> QMimeData:
        # All of it selected copies the stored text, without the line ends added for Qt.
        cur = self.textCursor()
        if cur.selectionStart() == 0 and cur.selectionEnd() >= self.document().characterCount() - 1:
            data = QMimeData()
            data.setText(self._text)
            return data
        return super().createMimeDataFromSelection()


class WholeWindows:
    """The windows that show messages too big for the transcript whole, one per message."""

    def __init__(self, parent: QWidget) -> None:
        self._parent = parent  # they close with it (with the app's window)
        self._open: list[tuple[Message, WholeText]] = []

    def show(self, message: Message) -> WholeText:
        """``message`` whole in a window (raised if already open)."""
        # A closed window deletes itself (WA_DeleteOnClose); its wrapper stays here until now.
        self._open = [(m, w) for m, w in self._open if shiboken6.isValid(w)]
        for m, window in self._open:
            if m is message:
                window.raise_()
                window.activateWindow()
                return window
        count = f"{len(message.content):,}"
        title = (tr("Your message ({count} characters)") if message.role == "user" else
                 tr("The reply ({count} characters)")).format(count=count)
        window = WholeText(message.content, title, self._parent)
        self._open.append((message, window))
        window.show()
        return window


class Blocks:
    """The transcript document's edits: HTML inserted at the end in blocks of its own, with the
    block formats the whole message rendered at once would give it."""

    def __init__(self, doc: QTextDocument) -> None:
        self.doc = doc
        # The name line's block format, set by hand: insertHtml keeps the current block's format
        # for the first block it inserts, so the name line's margins in the HTML would be lost.
        self.name_format = QTextBlockFormat()
        self.name_format.setTopMargin(MESSAGE_GAP_PX)
        self.name_format.setBottomMargin(NAME_GAP_PX)
        self.name_format.setTextIndent(NAME_INDENT_PX)  # room for the role's icon
        self._indent_format = QTextBlockFormat()
        self._indent_format.setTextIndent(NAME_INDENT_PX)
        self.plain_format = QTextBlockFormat()
        self._follow_format = QTextBlockFormat()
        self._follow_format.setTopMargin(0)

    @contextmanager
    def edit(self) -> Iterator[QTextCursor]:
        # One edit block: Qt lays out and signals once, for the changed range only.
        cur = QTextCursor(self.doc)
        cur.beginEditBlock()
        try:
            yield cur
        finally:
            cur.endEditBlock()

    def insert(self, cur: QTextCursor, html: str, block: QTextBlockFormat | None = None) -> int:
        """Insert ``html`` at the end, in a block of its own; returns where that block begins."""
        cur.movePosition(QTextCursor.MoveOperation.End)
        if not self.doc.isEmpty():
            # A clean block, so nothing of the previous message's last block (a code block's
            # background, a list) carries over; its format is the name line's.
            cur.insertBlock(block or self.name_format, QTextCharFormat())
        start = cur.position()
        cur.insertHtml(html.rstrip())  # a trailing newline would end the last line in a space
        if block is None and start == 0:
            # The first block of an empty document takes the HTML's format: give it the name
            # line's room for the role icon.
            QTextCursor(self.doc.firstBlock()).mergeBlockFormat(self._indent_format)
        return start

    def put(self, cur: QTextCursor, html: str, follows: bool, open_end: bool = False) -> None:
        """A block of the live answer. ``follows``: it goes on with a paragraph cut in two (a
        reply that is one long paragraph), so no gap above it. It is still a block of its
        own: Qt lays out a whole block on every change, and the tail must stay short.
        ``open_end``: its last paragraph goes on in the next block (no gap below it)."""
        self.insert(cur, html, self._follow_format if follows else
                    self.first_format(html, open_end))

    def first_format(self, html: str, open_end: bool) -> QTextBlockFormat:
        """The block format ``html``'s first block has when the whole message is rendered at
        once (a paragraph's margins): insertHtml keeps the current block's format for the
        first block it inserts, and the streamed reply must look as the finished one will.
        The plain format for a first block in a list or a table (its format names objects of
        the document it was parsed in)."""
        parsed = SealedDocument()
        parsed.setHtml(html)
        first = parsed.firstBlock()
        if first.textList() is not None or QTextCursor(first).currentTable() is not None:
            return self.plain_format
        block = QTextBlockFormat(first.blockFormat())
        block.clearProperty(QTextFormat.Property.ObjectIndex)
        if open_end and first == parsed.lastBlock():
            block.setBottomMargin(0)
        return block

    def replace(self, cur: QTextCursor, start: int, end: int, html: str) -> None:
        """The blocks from ``start`` to ``end`` (each the end of what comes before them)
        replaced by ``html`` in blocks of its own, as :meth:`put` inserts it at the end."""
        cur.setPosition(start)
        cur.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cur.removeSelectedText()
        cur.insertBlock(self.first_format(html, False), QTextCharFormat())
        cur.insertHtml(html.rstrip())

    @staticmethod
    def remove_from(cur: QTextCursor, start: int) -> None:
        # From the end of what stays: this takes the block break before the removed part too,
        # and the last block that stays keeps its own format.
        cur.setPosition(start)
        cur.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cur.removeSelectedText()
