"""What makes the transcript's messages look like blocks, painted around its one document
(app/ui/chat_view.py): under the text each role's icon beside its name line, a tinted rounded
block behind the user's messages and the keyboard's focus ring; over it a copy icon in each
code block's header. Only for what is in view, found by bisection (no layout walk)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QPixmap

from app.chat.render import ACTION_SCHEME, COPY_ICON_ROOM, Theme, mix
from app.ui.chat_document import ROLE_ICON_PX
from app.ui.style.icons import pixmap
from app.ui.style.palette import roles
from app.ui.style.tokens import RADII, SPACING

if TYPE_CHECKING:
    from app.ui.chat_view import ChatView

COPY_ROOM_TEXT = "\N{NO-BREAK SPACE}" * COPY_ICON_ROOM.count("&nbsp;")  # as the document holds it
USER_TINT = 0.07  # how far the user's block moves from the background towards the accent


@dataclass(frozen=True)
class _Kit:
    theme: Theme  # what they were made for
    tint: QColor  # behind the user's messages
    focus: QColor  # the keyboard's current message
    user: QPixmap
    assistant: QPixmap
    copy: QPixmap


class MessagePainter:
    """Paints the marks of the messages of ``view`` that are in view."""

    def __init__(self, view: ChatView) -> None:
        self._view = view
        self._kit_made: _Kit | None = None

    def under(self, area: QRect) -> None:
        """What goes under the text of ``area`` (viewport coordinates)."""
        view = self._view
        painter = QPainter(view.viewport())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        offset = view.scroll_offset()
        painter.translate(-offset)
        self._marks(painter, QRectF(area).translated(offset))
        painter.end()

    def over(self, area: QRect) -> None:
        """What goes over the text: a code block's header has a background of its own."""
        view = self._view
        painter = QPainter(view.viewport())
        offset = view.scroll_offset()
        painter.translate(-offset)
        self._copy_icons(painter, QRectF(area).translated(offset))
        painter.end()

    def _marks(self, painter: QPainter, seen: QRectF) -> None:
        """The messages in ``seen`` (document coordinates): the user's tinted block, each
        role's icon, the keyboard's focus ring."""
        view = self._view
        kit = self._kit()
        count = view.message_count()
        first = max(bisect.bisect_right(range(count), seen.top(), key=view.message_top) - 1, 0)
        current = view.current_message() if view.hasFocus() else -1
        doc = view.document()
        for i in range(first, count):
            rect = view.message_rect(i)
            if rect.top() > seen.bottom():
                break
            m = view.message_at_index(i)
            if m is None:
                continue
            if m.role == "user":
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(kit.tint)
                painter.drawRoundedRect(rect, RADII.lg, RADII.lg)
            name = doc.findBlock(view.message_start(i))
            line = name.layout().lineAt(0) if name.layout().lineCount() else None
            if line is not None:
                at = view.block_rect(name).topLeft() + QPointF(0, line.y() +
                                                              (line.height() - ROLE_ICON_PX) / 2)
                painter.drawPixmap(at, kit.user if m.role == "user" else kit.assistant)
            if i == current:
                painter.setPen(QPen(kit.focus, 2))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRoundedRect(rect.adjusted(1, 1, -1, -1), RADII.lg, RADII.lg)

    def _copy_icons(self, painter: QPainter, seen: QRectF) -> None:
        """A copy icon before each code block's Copy link in ``seen`` (document coordinates)."""
        view = self._view
        doc = view.document()
        # The first block in view, by bisection over the blocks' bottoms (no layout walk).
        first = bisect.bisect_right(range(doc.blockCount()), seen.top(), key=lambda n:
                                    view.block_rect(doc.findBlockByNumber(n)).bottom())
        block = doc.findBlockByNumber(max(first - 1, 0))
        prefix = f"{ACTION_SCHEME}:copy-code/"
        icon = self._kit().copy
        while block.isValid():
            rect = view.block_rect(block)
            if rect.top() > seen.bottom():
                break
            # The header's room for the icon is the cheap sign; most blocks have no such run.
            it = block.begin() if COPY_ROOM_TEXT in block.text() else block.end()
            while not it.atEnd():
                frag = it.fragment()
                if frag.charFormat().anchorHref().startswith(prefix):
                    layout = block.layout()
                    pos = frag.position() - block.position()
                    line = layout.lineForTextPosition(pos)
                    if line.isValid():
                        found = line.cursorToX(pos)
                        x = float(found[0] if isinstance(found, tuple) else found) + SPACING.xxs  # type: ignore[arg-type]
                        y = line.y() + (line.height() - icon.height() / icon.devicePixelRatio()) / 2
                        painter.drawPixmap(rect.topLeft() + QPointF(x, y), icon)
                    break
                it += 1
            block = block.next()

    def _kit(self) -> _Kit:
        """The colours and icons the marks are painted with, for the theme on screen."""
        theme = self._view.theme()
        if self._kit_made is None or self._kit_made.theme is not theme:
            c = roles(self._view.palette())
            self._kit_made = _Kit(
                theme=theme, tint=QColor(mix(c.raised_surface, c.accent, USER_TINT)),
                focus=QColor(c.focus), user=pixmap("user", ROLE_ICON_PX, "text"),
                assistant=pixmap("assistant", ROLE_ICON_PX, "accent"),
                copy=pixmap("copy", ROLE_ICON_PX - 2, "muted"))
        return self._kit_made
