"""The chat transcript: messages rendered from Markdown into a QTextBrowser, updated in place.

A streamed reply is re-rendered many times a second, so an update touches only the live
message: finished messages stay in the QTextDocument as they were inserted, and the live one is
the range from where it starts to the end of the document, of which only the tail is removed
and inserted again on each update (app/ui/chat_live.py). The cost of an update therefore does
not grow with the conversation, the user's selection in earlier messages survives, and the
scroll position stays where the user put it (the view follows the reply only while it is
scrolled to the bottom).

Text too big to render at once is folded before anything parses it (app/chat/fold.py): a
finished message is rendered from a bounded copy, with a "Show all" link that shows the stored
text whole as plain text, and the live reply is folded as it grows, so an update costs at most
the folded size. Copy always copies the stored text.

Each message is a distinct block: the view keeps where each message starts (so finding the
ones in view is a bisection), app/ui/chat_paint.py paints its role's icon beside its name line,
a tinted rounded block behind the user's messages and the keyboard-current message's focus
ring. The actions (copy, edit, regenerate, the versions) are one small toolbar of icon buttons
over the message under the mouse or, from the keyboard (Alt+Up and Alt+Down, then Tab), over
the current message (app/ui/chat_bar.py): a widget, not links, so the document stays what it
was, one sealed QTextDocument (app/ui/chat_document.py; docs/architecture.md, "The chat view",
says why).

Model output never makes the view read a file or the network: app/chat/render.py makes HTML
without images or resource links, and the document refuses to load any resource anyway (Qt's
own image handler reads a file named by an ``<img>`` even when ``loadResource`` declines, so
that handler is replaced too). Links open in the system browser only for http, https and mailto.
"""

from __future__ import annotations

import bisect
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QDesktopServices,
    QFocusEvent,
    QKeyEvent,
    QMouseEvent,
    QPaintEvent,
    QPalette,
    QResizeEvent,
    QShowEvent,
    QTextBlock,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QApplication, QTextBrowser, QWidget

from app.chat.message import Message
from app.chat.render import (
    ACTION_SCHEME,
    ALLOWED_SCHEMES,
    ENGLISH,
    WHOLE_INLINE_CHARS,
    Theme,
    Words,
    code_blocks,
    link_allowed,
    render_markdown,
    render_message,
    render_placeholder,
)
from app.chat.toolcalls import IGNORED_CALLS_NOTE
from app.chat.transcript import DOCUMENTS_USED, ReplyEnd, end_note
from app.storage.images import ImageStore
from app.ui.chat_bar import BarPlace, MessageBar
from app.ui.chat_document import (
    Blocks,
    NoImages,
    SealedDocument,
    WholeText,
    WholeWindows,
    refused,
)
from app.ui.chat_images import StoreImages
from app.ui.chat_live import LiveReply
from app.ui.chat_paint import MessagePainter
from app.ui.lang import tr
from app.ui.style.palette import roles
from app.ui.style.tokens import SPACING

# Where they were before the view was split in modules (app/ui/model_card.py and tests use them).
__all__ = ["ChatView", "MessageBar", "NoImages", "SealedDocument", "WholeText", "theme_for",
           "words"]

log = logging.getLogger(__name__)

# After the first show, when the renderer is made ready (see showEvent): late enough not to
# delay the window's first paint, long before a person has typed a first message.
WARM_UP_MS = 300
FOLLOW_SLACK_PX = 4  # this close to the bottom counts as "at the bottom": the view follows
# Room between the text and the view's edges: the user's tinted block and the focus ring are
# drawn this much outside the text (BUBBLE_PAD_PX), the rest is air.
DOCUMENT_MARGIN_PX = SPACING.xxl
BUBBLE_PAD_PX = SPACING.md


def words() -> Words:
    """The transcript's words in the window's language."""
    return Words(
        you=tr("You"), assistant=tr("Assistant"), system=tr("System"), copy_code=tr("Copy"),
        code=tr("Code"), image=tr("[image]"), image_alt=tr("[image: {alt}]"),
        thinking=tr("Thinking… ({count} characters)"),
        reasoning=tr("Reasoning ({count} characters)"),
        show_all=tr("Show all ({count} characters)"),
        show_all_window=tr("Show all in a window ({count} characters)"),
        show_less=tr("Show less"), speed=tr("{speed} tokens/s"),
        sent_whole=tr("{source} (sent whole: the server does not stream)"),
        documents=tr("With this message:"), document_whole=tr("{name} (whole)"),
        document_passage=tr("1 passage from {name}"),
        document_passages=tr("{count} passages from {name}"), page=tr("page {number}"),
        tool_line=tr("Tool {name}: {status}"), tool_states=(
            ("asking", tr("waiting for your answer")), ("running", tr("running…")),
            ("ok", tr("done")), ("error", tr("failed")), ("denied", tr("not allowed")),
            ("timed_out", tr("took too long")), ("cancelled", tr("cancelled")),
            ("unknown", tr("no such tool"))),
        tool_arguments=tr("Arguments"), tool_result=tr("Result"),
        notes=_notes())


def _notes() -> tuple[tuple[str, str], ...]:
    """The notes under a reply (app/chat/transcript.py keeps them in English): each in the
    window's language."""
    return ((end_note(ReplyEnd.STOPPED), tr("Stopped.")),
            (end_note(ReplyEnd.LENGTH), tr("The reply reached its length limit.")),
            (end_note(ReplyEnd.CLOSED), tr("The window was closed during this reply.")),
            (end_note(ReplyEnd.FAILED), tr("The reply failed.")),
            (end_note(ReplyEnd.RUNNER_DIED), tr(
                "The model runner stopped during this reply. Restart the model to continue; "
                "the conversation is kept.")),
            (IGNORED_CALLS_NOTE, tr(IGNORED_CALLS_NOTE)))


def theme_for(palette: QPalette) -> Theme:
    """The transcript's colours: the design tokens of the scheme ``palette`` shows (light or
    dark), the same colours every other screen is drawn in."""
    c = roles(palette)
    found = words()
    return Theme.from_colors(text=c.text, base=c.raised_surface, link=c.link,
                             muted=c.muted_text, accent=c.accent, danger=c.danger,
                             code_bg=c.sunken, border=c.border,
                             words=found if found != ENGLISH else ENGLISH)


def cites(messages: list[Message], m: Message, index: int) -> tuple[int, list[str]] | None:
    """For a reply at ``index``: the question before it and the names of its documents."""
    if m.role != "assistant" or not 0 < index <= len(messages):
        return None
    question = messages[index - 1]
    used = question.meta.get(DOCUMENTS_USED) if question.role == "user" else None
    if not isinstance(used, list):
        return None
    return index - 1, [str(u.get("name") or "") if isinstance(u, dict) else "" for u in used]


class ChatView(QTextBrowser):
    """The transcript of one conversation, with the reply being streamed at its end.

    The view owns the document and where each finished message starts in it; the live reply's
    part of it is :class:`~app.ui.chat_live.LiveReply`'s, the marks around the messages are
    :class:`~app.ui.chat_paint.MessagePainter`'s, and the action bar's place is
    :class:`~app.ui.chat_bar.BarPlace`'s. The folded reasoning, "Show all" and a code block's
    Copy are the view's own ``hearth:`` links. Copying and unfolding happen here, the rest is
    reported by :attr:`action`.
    """

    action = Signal(str, object)  # ("edit" | "regenerate" | "prev" | "next", Message)
    copied = Signal(str)  # what was copied, in words ("the code", "the message")

    def __init__(self, parent: QWidget | None = None,
                 open_url: Callable[[QUrl], object] | None = None) -> None:
        """``open_url`` opens a checked link (default: the system browser, QDesktopServices)."""
        super().__init__(parent)
        self._open_url = open_url
        self._messages: list[Message] = []  # finished messages, in the document
        self._live: Message | None = None  # the reply being streamed, at the document's end
        self._expanded: set[int] = set()  # messages whose reasoning is unfolded
        self._whole: set[int] = set()  # folded messages the user asked to see whole
        self._windows = WholeWindows(self)  # bigger ones, in windows
        self._placeholder = ""
        self._showing_placeholder = False
        self._theme = theme_for(self.palette())
        self._starts: list[int] = []  # where each finished message's name line begins
        self._warmed = False  # the renderer was made ready once the view was first shown
        self._places = BarPlace(self)
        self._places.bar.triggered.connect(self._on_bar)
        self._painter = MessagePainter(self)

        doc = SealedDocument(self)
        self.setDocument(doc)
        doc.setUndoRedoEnabled(False)  # read-only: undo steps would only pile up, one per update
        doc.setDocumentMargin(DOCUMENT_MARGIN_PX)
        # Only a question's own images, from Hearth's store (app/ui/chat_images.py).
        self._images = StoreImages(doc)
        doc.documentLayout().registerHandler(QTextFormat.ObjectTypes.ImageObject, self._images)
        self._blocks = Blocks(doc)
        self._reply = LiveReply(self._blocks)

        self.setOpenLinks(False)  # links go through _on_anchor, never through the browser's own
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._on_anchor)
        self.setAccessibleName(tr("Conversation"))
        self.setAccessibleDescription(tr("Alt+Up and Alt+Down move between the messages; Tab "
                                         "then reaches the message's actions."))
        self.viewport().setMouseTracking(True)

    # ---- the API the main window uses ---------------------------------------------------------

    def use_images(self, store: ImageStore) -> None:
        """Draw a question's images from ``store``."""
        self._images.store = store
        self.viewport().update()

    def set_placeholder(self, text: str) -> None:
        """The hint shown while there are no messages."""
        self._placeholder = text
        if not self._messages and self._live is None:
            self._rebuild()

    def set_messages(self, messages: list[Message]) -> None:
        """Show another conversation (its latest messages in view)."""
        self._messages = list(messages)
        self._live = None
        self._expanded.clear()
        self._whole.clear()
        # The keyboard's place is kept (another version of the branch shows the same places).
        self._places.hovered = -1
        if self._places.current >= len(self._messages):
            self._places.current = -1
        self._rebuild()
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
        self._places.rehover()

    def messages(self) -> list[Message]:
        """The finished messages shown, in order."""
        return list(self._messages)

    def live(self) -> Message | None:
        """The reply being streamed, if one is."""
        return self._live

    def append_message(self, m: Message) -> None:
        """Add a finished message (before the live reply, if one is streaming).

        The user's own message brings the view to the end, where the reply will come.
        """
        self._messages.append(m)
        if self._showing_placeholder:
            self._rebuild()
        else:
            with self._keeping_scroll(follow=m.role == "user"), self._blocks.edit() as cur:
                self._add(cur, m)
        self._places.rehover()  # the message under a still mouse may be another now

    def _add(self, cur: QTextCursor, m: Message) -> None:
        index = len(self._messages) - 1
        reply = self._reply
        if self._live is None and reply.adopt(cur, m, index, index in self._expanded,
                                              index in self._whole, self._theme):
            self._starts.append(reply.name)
            return
        reply.drop_retired(cur)
        live = self._live
        if live is not None:
            reply.remove(cur)
        self._starts.append(self._blocks.insert(cur, self._render(m, index)))
        if live is not None:
            self._insert_live(cur, live)

    def set_live(self, m: Message | None) -> None:
        """The reply being streamed, re-rendered on each coalesced update; None removes it."""
        had_live = self._live is not None
        if m is None and not had_live:
            return
        new = m is not self._live
        live = self._live
        self._live = m
        if self._showing_placeholder or (m is None and not self._messages):
            self._rebuild()
            return
        reply = self._reply
        with self._keeping_scroll(), self._blocks.edit() as cur:
            reply.drop_retired(cur)
            if m is None:
                assert live is not None
                if reply.retire(cur, live):
                    # Its finished blocks stay for append_message() to take as the finished
                    # message, until the next turn of the event loop at the latest.
                    QTimer.singleShot(0, self, self._drop_retired_later)
            elif new or not had_live:
                if had_live:
                    reply.remove(cur)
                self._insert_live(cur, m)
            else:
                index = len(self._messages)
                reply.update(cur, m, index, index in self._expanded, self._theme)

    # ---- more -----------------------------------------------------------------------------------

    def theme(self) -> Theme:
        """The colours in use (from the palette)."""
        return self._theme

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        """Refuse every resource: what the transcript shows comes from model output."""
        refused(name)
        return None

    def changeEvent(self, e: QEvent) -> None:
        super().changeEvent(e)
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and \
                hasattr(self, "_theme"):
            theme = theme_for(self.palette())
            if theme != self._theme:
                self._theme = theme
                with self._keeping_scroll():
                    self._rebuild()

    # ---- the document ---------------------------------------------------------------------------

    def _render(self, m: Message, index: int) -> str:
        return render_message(m, self._theme, index=index, expanded=index in self._expanded,
                              whole=index in self._whole, cites=cites(self._messages, m, index))

    def _rebuild(self) -> None:
        """Render everything again (another conversation, another palette, unfolded reasoning)."""
        doc = self.document()
        doc.clear()
        self._reply.retired = None
        cur = QTextCursor(doc)
        cur.beginEditBlock()
        self._showing_placeholder = not self._messages and self._live is None
        self._starts = []
        if self._showing_placeholder:
            if self._placeholder:
                cur.insertHtml(render_placeholder(self._placeholder, self._theme).rstrip())
        else:
            # A message at a time, as append_message does: the same blocks, and where each
            # message begins is known.
            for i, m in enumerate(self._messages):
                self._starts.append(self._blocks.insert(cur, self._render(m, i)))
            if self._live is not None:
                self._insert_live(cur, self._live)
        cur.endEditBlock()
        self._places.place()

    def _insert_live(self, cur: QTextCursor, m: Message) -> None:
        index = len(self._messages)
        self._reply.insert(cur, m, index, index in self._expanded, self._theme)

    def _drop_retired_later(self) -> None:
        if self._reply.retired is not None:
            with self._keeping_scroll(), self._blocks.edit() as cur:
                self._reply.drop_retired(cur)

    @contextmanager
    def _keeping_scroll(self, follow: bool = False) -> Iterator[None]:
        """Keep the scroll position the user chose, or follow the end when they are there."""
        bar = self.verticalScrollBar()
        follow = follow or bar.value() >= bar.maximum() - FOLLOW_SLACK_PX
        value = bar.value()
        yield
        bar.setValue(bar.maximum() if follow else value)

    # ---- messages as blocks: where they are (for the painter, the bar and tests) ---------------

    def message_count(self) -> int:
        """Messages in the document, the live reply included (0 while the hint is shown)."""
        if self._showing_placeholder:
            return 0
        return len(self._starts) + (self._live is not None)

    def finished_count(self) -> int:
        """The finished messages (those with actions)."""
        return len(self._messages)

    def message_at_index(self, i: int) -> Message | None:
        """Message ``i`` of the document: a finished one, or the live reply after them."""
        return self._messages[i] if i < len(self._messages) else self._live

    def message_start(self, i: int) -> int:
        """Where message ``i``'s name line begins in the document."""
        return self._starts[i] if i < len(self._starts) else self._reply.name

    def block_rect(self, block: QTextBlock) -> QRectF:
        return self.document().documentLayout().blockBoundingRect(block)

    def message_top(self, i: int) -> float:
        return self.block_rect(self.document().findBlock(self.message_start(i))).top()

    def message_rect(self, i: int) -> QRectF:
        """Message ``i``'s block in document coordinates: its text, with the room around it."""
        doc = self.document()
        top = self.message_top(i)
        last = doc.findBlock(self.message_start(i + 1) - 1) if i + 1 < self.message_count() \
            else doc.lastBlock()
        bottom = self.block_rect(last).bottom()
        margin = doc.documentMargin() - BUBBLE_PAD_PX
        return QRectF(margin, top - BUBBLE_PAD_PX, doc.textWidth() - 2 * margin,
                      bottom - top + 2 * BUBBLE_PAD_PX)

    def message_at(self, y: float) -> int:
        """The message at document height ``y`` (-1: none): a bisection over their tops."""
        n = self.message_count()
        if n == 0:
            return -1
        i = bisect.bisect_right(range(n), y + BUBBLE_PAD_PX, key=self.message_top) - 1
        x = self.document().documentMargin()
        return i if i >= 0 and self.message_rect(i).contains(QPointF(x, y)) else -1

    def scroll_offset(self) -> QPointF:
        """How far the document is scrolled: document = viewport + this."""
        return QPointF(self.horizontalScrollBar().value(), self.verticalScrollBar().value())

    def paintEvent(self, e: QPaintEvent) -> None:
        # The marks under the text first, then the document, then what goes over it.
        marks = self.message_count() > 0
        if marks:
            self._painter.under(e.rect())
        super().paintEvent(e)
        if marks:
            self._painter.over(e.rect())

    # ---- the action bar and the keyboard --------------------------------------------------------

    def message_bar(self) -> MessageBar:
        """The action bar (for tests and the window's tab order)."""
        return self._places.bar

    def current_message(self) -> int:
        """The keyboard's current message (-1: none)."""
        return self._places.current

    def set_current(self, i: int) -> None:
        """Make message ``i`` the keyboard's current one (-1: none), in view, with its bar."""
        self._places.set_current(i)

    def _on_bar(self, kind: str) -> None:
        self._on_action(f"{kind}/{self._places.bar.index}")

    def mouseMoveEvent(self, e: QMouseEvent) -> None:
        super().mouseMoveEvent(e)
        self._places.mouse_at(e.position().y() + self.scroll_offset().y())

    def viewportEvent(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.Leave:
            self._places.left()
        return super().viewportEvent(e)

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        self._places.place()

    def showEvent(self, e: QShowEvent) -> None:
        super().showEvent(e)
        if not self._warmed:
            # Once the window is up, not while it starts: the Markdown parser and Pygments are
            # imported on first use (app/chat/render.py), a tenth of a second that would
            # otherwise fall on the first message sent.
            self._warmed = True
            QTimer.singleShot(WARM_UP_MS, self, self._warm_up)

    def _warm_up(self) -> None:
        render_markdown("*a* `b`\n\n```python\nc\n```\n", self._theme, (0, 0))

    def resizeEvent(self, e: QResizeEvent) -> None:
        super().resizeEvent(e)
        self._places.place()

    def keyPressEvent(self, e: QKeyEvent) -> None:
        if not self._places.key(e):
            super().keyPressEvent(e)

    def focusInEvent(self, e: QFocusEvent) -> None:
        super().focusInEvent(e)
        if e.reason() in (Qt.FocusReason.TabFocusReason, Qt.FocusReason.BacktabFocusReason) \
                and self._places.current < 0:
            self.set_current(len(self._messages) - 1)
        self.viewport().update()

    def focusOutEvent(self, e: QFocusEvent) -> None:
        super().focusOutEvent(e)
        self.viewport().update()

    def focusNextPrevChild(self, next: bool) -> bool:
        # Tab from the conversation goes into the current message's bar first.
        if next and self._places.tab_in():
            return True
        return super().focusNextPrevChild(next)

    # ---- links ----------------------------------------------------------------------------------

    def _on_anchor(self, url: QUrl) -> None:
        text = url.toString()
        if url.scheme() == ACTION_SCHEME:
            self._on_action(url.path())
            return
        # Checked again here, on Qt's reading of the URL: this is what the browser would get.
        if url.scheme().lower() in ALLOWED_SCHEMES and link_allowed(text):
            (self._open_url or QDesktopServices.openUrl)(url)
        else:
            log.warning("Refused to open a link from the chat (only http, https and mailto "
                        "links open): %.200s", text)

    def _open_document(self, message: Message, n: int) -> None:
        """A document the person attached to ``message``, opened in its own app: the path is
        Hearth's record of the attachment (the message's meta), never text from a reply."""
        used = message.meta.get(DOCUMENTS_USED)
        entry = used[n] if isinstance(used, list) and 0 <= n < len(used) else None
        path = entry.get("path") if isinstance(entry, dict) else None
        if isinstance(path, str) and os.path.isfile(path):
            (self._open_url or QDesktopServices.openUrl)(QUrl.fromLocalFile(path))

    def _on_action(self, path: str) -> None:
        """``copy/3``, ``copy-code/3/1``, ``think/3``, ``whole/3``, ``edit/3``, ``regenerate/3``,
        ``prev/3``…"""
        kind, _, rest = path.partition("/")
        numbers = [int(p) for p in rest.split("/") if p.isdigit()]
        if not numbers:
            return
        index = numbers[0]
        live = self._live if index == len(self._messages) else None
        message = self._messages[index] if index < len(self._messages) else live
        if message is None:
            return  # a link of a message that is gone (another conversation meanwhile)
        if kind == "whole" and live is not None:
            return  # a reply is shown whole once it has finished
        if kind == "whole" and index not in self._whole and \
                len(message.content) > WHOLE_INLINE_CHARS:
            self._windows.show(message)
        elif kind in ("think", "whole"):
            unfolded = self._expanded if kind == "think" else self._whole
            if index in unfolded:
                unfolded.discard(index)
            else:
                unfolded.add(index)
            with self._keeping_scroll():
                self._rebuild()
        elif kind == "open-doc" and len(numbers) > 1:
            self._open_document(message, numbers[1])
        elif kind == "copy":
            QApplication.clipboard().setText(message.content)
            self.copied.emit("the message")
        elif kind == "copy-code" and len(numbers) > 1:
            blocks = code_blocks(message.content, reasoning=message.role != "user")
            if numbers[1] < len(blocks):
                QApplication.clipboard().setText(blocks[numbers[1]])
                self.copied.emit("the code")
        elif live is None and (kind in ("prev", "next") or (kind, message.role) in (
                ("edit", "user"), ("regenerate", "assistant"))):
            self.action.emit(kind, message)
