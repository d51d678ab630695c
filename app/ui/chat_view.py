"""The chat transcript: messages rendered from Markdown into a QTextBrowser, updated in place.

A streamed reply is re-rendered many times a second, so an update touches only the live
message: finished messages stay in the QTextDocument as they were inserted, and the live one is
the range from ``_live_start`` to the end of the document, removed and inserted again on each
update. The cost of an update therefore does not grow with the conversation, the user's
selection in earlier messages survives, and the scroll position stays where the user put it
(the view follows the reply only while it is scrolled to the bottom).

Text too big to render at once is folded before anything parses it (app/chat/fold.py): a
finished message is rendered from a bounded copy, with a "Show all" link that shows the stored
text whole as plain text, and the live reply is folded as it grows, so an update costs at most
the folded size. Copy always copies the stored text.

Model output never makes the view read a file or the network: app/chat/render.py makes HTML
without images or resource links, and the document refuses to load any resource anyway (Qt's
own image handler reads a file named by an ``<img>`` even when ``loadResource`` declines, so
that handler is replaced too). Links open in the system browser only for http, https and mailto.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, QMimeData, QSizeF, Qt, QUrl, Signal
from PySide6.QtGui import (
    QDesktopServices,
    QFontDatabase,
    QPainter,
    QPalette,
    QPyTextObject,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QTextBrowser, QWidget

from app.chat.fold import Folder
from app.chat.message import Message
from app.chat.render import (
    ACTION_SCHEME,
    ALLOWED_SCHEMES,
    CURSOR_MARK,
    MESSAGE_GAP_PX,
    NAME_GAP_PX,
    WHOLE_INLINE_CHARS,
    Theme,
    break_long_lines,
    code_blocks,
    link_allowed,
    render_markdown,
    render_message,
    render_name,
    render_placeholder,
    render_reasoning,
)
from app.chat.streaming import Reasoned, StreamSplitter, split_reasoning

log = logging.getLogger(__name__)

FOLLOW_SLACK_PX = 4  # this close to the bottom counts as "at the bottom": the view follows
DOCUMENT_MARGIN_PX = 10  # room between the text and the view's edges


def theme_for(palette: QPalette) -> Theme:
    """The transcript's colours for a palette (light or dark)."""
    role = QPalette.ColorRole
    return Theme.from_colors(text=palette.color(role.Text).name(),
                             base=palette.color(role.Base).name(),
                             link=palette.color(role.Link).name(),
                             muted=palette.color(role.PlaceholderText).name())


def _refused(name: QUrl | str) -> None:
    log.debug("Refused to load a resource for the chat: %.200s",
              name if isinstance(name, str) else name.toString())


class SealedDocument(QTextDocument):
    """A document that loads no resource: no file, no network, whatever the HTML names."""

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        _refused(name)
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


class ChatView(QTextBrowser):
    """The transcript of one conversation, with the reply being streamed at its end.

    The live reply is rendered in two parts: its finished blocks (app/chat/streaming.py), each
    inserted once, and its tail, removed and inserted again on each update. Links under each
    message (Copy, Edit, Regenerate, the versions at a branch point, the folded reasoning, Copy
    code) are the view's own ``hearth:`` links; copying and unfolding happen here, the rest is
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
        self._live_start = 0  # where the live part begins (the end of the finished messages)
        self._tail_start = 0  # where the live reply's unfinished tail begins
        self._answer_start = 0  # where the live reply's answer begins (after its head)
        self._splitter = StreamSplitter()
        self._folder = Folder(live=True)  # the live answer's folded copy, as it grows
        self._shown = ""  # that copy, as last rendered
        self._live_head: tuple[object, ...] | None = None  # what the live head was drawn from
        self._expanded: set[int] = set()  # messages whose reasoning is unfolded
        self._whole: set[int] = set()  # folded messages the user asked to see whole
        self._windows: list[tuple[Message, WholeText]] = []  # bigger ones, in windows
        self._placeholder = ""
        self._showing_placeholder = False
        self._theme = theme_for(self.palette())

        doc = SealedDocument(self)
        self.setDocument(doc)
        doc.setUndoRedoEnabled(False)  # read-only: undo steps would only pile up, one per update
        doc.setDocumentMargin(DOCUMENT_MARGIN_PX)
        self._no_images = NoImages(doc)
        doc.documentLayout().registerHandler(QTextFormat.ObjectTypes.ImageObject, self._no_images)
        # The name line's block format, set by hand: insertHtml keeps the current block's format
        # for the first block it inserts, so the name line's margins in the HTML would be lost.
        self._name_format = QTextBlockFormat()
        self._name_format.setTopMargin(MESSAGE_GAP_PX)
        self._name_format.setBottomMargin(NAME_GAP_PX)
        self._plain_format = QTextBlockFormat()
        self._follow_format = QTextBlockFormat()
        self._follow_format.setTopMargin(0)

        self.setOpenLinks(False)  # links go through _on_anchor, never through the browser's own
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._on_anchor)
        self.setAccessibleName("Conversation")

    # ---- the API the main window uses ---------------------------------------------------------

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
        self._rebuild()
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def messages(self) -> list[Message]:
        """The finished messages shown, in order."""
        return list(self._messages)

    def append_message(self, m: Message) -> None:
        """Add a finished message (before the live reply, if one is streaming).

        The user's own message brings the view to the end, where the reply will come.
        """
        self._messages.append(m)
        if self._showing_placeholder:
            self._rebuild()
            return
        with self._keeping_scroll(follow=m.role == "user"), self._edit() as cur:
            live = self._live
            if live is not None:
                self._remove_from(cur, self._live_start)
            self._insert(cur, self._render(m, len(self._messages) - 1))
            if live is not None:
                self._insert_live(cur, live)

    def set_live(self, m: Message | None) -> None:
        """The reply being streamed, re-rendered on each coalesced update; None removes it."""
        had_live = self._live is not None
        if m is None and not had_live:
            return
        new = m is not self._live
        self._live = m
        if self._showing_placeholder or (m is None and not self._messages):
            self._rebuild()
            return
        with self._keeping_scroll(), self._edit() as cur:
            if m is None:
                self._remove_from(cur, self._live_start)
            elif new or not had_live:
                if had_live:
                    self._remove_from(cur, self._live_start)
                self._insert_live(cur, m)
            else:
                self._update_live(cur, m)

    # ---- more -----------------------------------------------------------------------------------

    def theme(self) -> Theme:
        """The colours in use (from the palette)."""
        return self._theme

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        """Refuse every resource: what the transcript shows comes from model output."""
        _refused(name)
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
                              whole=index in self._whole)

    def _rebuild(self) -> None:
        """Render everything again (another conversation, another palette, unfolded reasoning)."""
        doc = self.document()
        doc.clear()
        cur = QTextCursor(doc)
        cur.beginEditBlock()
        self._showing_placeholder = not self._messages and self._live is None
        if self._showing_placeholder:
            if self._placeholder:
                cur.insertHtml(render_placeholder(self._placeholder, self._theme).rstrip())
        else:
            # One insertion into an empty document keeps every block's format from the HTML.
            cur.insertHtml("".join(self._render(m, i)
                                   for i, m in enumerate(self._messages)).rstrip())
            if self._live is not None:
                self._insert_live(cur, self._live)
        cur.endEditBlock()

    @contextmanager
    def _edit(self) -> Iterator[QTextCursor]:
        # One edit block: Qt lays out and signals once, for the changed range only.
        cur = QTextCursor(self.document())
        cur.beginEditBlock()
        try:
            yield cur
        finally:
            cur.endEditBlock()

    def _insert(self, cur: QTextCursor, html: str, block: QTextBlockFormat | None = None) -> None:
        cur.movePosition(QTextCursor.MoveOperation.End)
        if not self.document().isEmpty():
            # A clean block, so nothing of the previous message's last block (a code block's
            # background, a list) carries over; its format is the name line's.
            cur.insertBlock(block or self._name_format, QTextCharFormat())
        cur.insertHtml(html.rstrip())  # a trailing newline would end the last line in a space

    def _insert_live(self, cur: QTextCursor, m: Message) -> None:
        """The live reply from scratch: its name and reasoning line, then its answer."""
        cur.movePosition(QTextCursor.MoveOperation.End)
        self._live_start = cur.position()
        self._splitter = StreamSplitter()
        self._folder, self._shown = Folder(live=True), ""
        reasoned = split_reasoning(m.content)
        index = len(self._messages)
        expanded = index in self._expanded
        self._live_head = _head_key(reasoned, expanded)
        self._insert(cur, render_name(m.role, self._theme) +
                     render_reasoning(reasoned, self._theme, index, expanded))
        cur.movePosition(QTextCursor.MoveOperation.End)
        self._tail_start = self._answer_start = cur.position()
        if reasoned.thinking:
            self._insert(cur, f"<p>{CURSOR_MARK}</p>", self._plain_format)
            return
        self._update_answer(cur, reasoned.answer)

    def _update_live(self, cur: QTextCursor, m: Message) -> None:
        """One more piece of the live reply: only what changed is rendered again."""
        reasoned = split_reasoning(m.content)
        # The reasoning grew or closed: its line changes, so the live reply is drawn again.
        if _head_key(reasoned, len(self._messages) in self._expanded) != self._live_head:
            self._remove_from(cur, self._live_start)
            self._insert_live(cur, m)
            return
        self._update_answer(cur, reasoned.answer)

    def _update_answer(self, cur: QTextCursor, answer: str) -> None:
        index = len(self._messages)
        # The splitter cuts the folded copy, not the answer: what it renders stays bounded.
        shown = self._folder.feed(answer)
        if not shown.startswith(self._shown[:self._splitter.done]):
            # What was rendered as finished changed (the fold promises it does not; this
            # only keeps a broken promise from showing a garbled reply): render it anew.
            self._splitter = StreamSplitter()
            self._tail_start = self._answer_start
        self._shown = answer = shown
        follows = self._splitter.open_paragraph  # before advance(): where the tail began
        chunks = self._splitter.advance(answer)
        self._remove_from(cur, self._tail_start)
        if chunks:
            first = self._splitter.code_blocks - sum(c.code_blocks for c in chunks)
            for chunk in chunks:
                self._put(cur, render_markdown(chunk.markdown, self._theme, (index, first)),
                          follows)
                follows = chunk.open_paragraph
                first += chunk.code_blocks
            cur.movePosition(QTextCursor.MoveOperation.End)
            self._tail_start = cur.position()
        tail = render_markdown(self._splitter.tail(answer), self._theme,
                               (index, self._splitter.code_blocks))
        self._put(cur, _with_cursor(tail), follows)

    def _put(self, cur: QTextCursor, html: str, follows: bool) -> None:
        """A block of the live answer. ``follows``: it goes on with a paragraph cut in two (a
        reply that is one long paragraph), so no gap above it. It is still a block of its
        own: Qt lays out a whole block on every change, and the tail must stay short."""
        self._insert(cur, html, self._follow_format if follows else self._plain_format)

    def _remove_from(self, cur: QTextCursor, start: int) -> None:
        # From the end of what stays: this takes the block break before the removed part too,
        # and the last block that stays keeps its own format.
        cur.setPosition(start)
        cur.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cur.removeSelectedText()

    @contextmanager
    def _keeping_scroll(self, follow: bool = False) -> Iterator[None]:
        """Keep the scroll position the user chose, or follow the end when they are there."""
        bar = self.verticalScrollBar()
        follow = follow or bar.value() >= bar.maximum() - FOLLOW_SLACK_PX
        value = bar.value()
        yield
        bar.setValue(bar.maximum() if follow else value)

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
            self._show_whole(message)
        elif kind in ("think", "whole"):
            unfolded = self._expanded if kind == "think" else self._whole
            if index in unfolded:
                unfolded.discard(index)
            else:
                unfolded.add(index)
            with self._keeping_scroll():
                self._rebuild()
        elif kind == "copy":
            QApplication.clipboard().setText(message.content)
            self.copied.emit("the message")
        elif kind == "copy-code" and len(numbers) > 1:
            blocks = code_blocks(message.content)
            if numbers[1] < len(blocks):
                QApplication.clipboard().setText(blocks[numbers[1]])
                self.copied.emit("the code")
        elif kind in ("edit", "regenerate", "prev", "next") and live is None:
            self.action.emit(kind, message)


    def _show_whole(self, message: Message) -> WholeText:
        """A message too big for the transcript, whole in a window (raised if already open)."""
        # A closed window deletes itself (WA_DeleteOnClose); its wrapper stays here until now.
        self._windows = [(m, w) for m, w in self._windows if shiboken6.isValid(w)]
        for m, window in self._windows:
            if m is message:
                window.raise_()
                window.activateWindow()
                return window
        who = "Your message" if message.role == "user" else "The reply"
        # A child of the view, so that it closes with the app's window.
        window = WholeText(message.content, f"{who} ({len(message.content):,} characters)",
                           self)
        self._windows.append((message, window))
        window.show()
        return window


def _head_key(reasoned: Reasoned, expanded: bool) -> tuple[object, ...]:
    """What the live reply's reasoning line is drawn from: it is drawn again when this changes
    (while folded and thinking, only its length counts)."""
    return (reasoned.reasoning is not None, reasoned.thinking, expanded,
            reasoned.reasoning if expanded or not reasoned.thinking else
            len(reasoned.reasoning or ""))


def _with_cursor(body: str) -> str:
    # Inside the last paragraph when there is one, so the mark sits after the last word.
    if body.endswith("</p>\n"):
        return body[:-5] + CURSOR_MARK + "</p>\n"
    return body + f"<p>{CURSOR_MARK}</p>\n"
