"""The reply being streamed, at the end of the transcript's document (app/ui/chat_view.py).

The live reply is rendered in two parts: its finished blocks (app/chat/streaming.py), each
inserted once, and its tail, removed and inserted again on each update, so an update costs
the tail's size whatever the length of the conversation. When the reply ends its finished
blocks stay, and the finished message takes ("adopts") those that are what rendering it whole
makes of them: rendering and laying out a long reply again is the longest pause of its end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtGui import QTextCursor

from app.chat.fold import Folder, fold
from app.chat.message import Message
from app.chat.render import (
    CURSOR_MARK,
    Theme,
    render_footer,
    render_markdown,
    render_name,
    render_note,
    render_reasoning,
    render_tools,
    tools_key,
)
from app.chat.streaming import Reasoned, StreamSplitter, split_reasoning
from app.ui.chat_document import Blocks

# Blocks that Qt builds differently when their HTML is inserted in parts than in one piece (a
# list's items, a code block's or a table's empty end block): a chunk holding one is rendered
# again at the end of a reply, with all that follows it.
_UNADOPTABLE = ("<ul", "<ol", "<pre", "<table", "<hr")
# A link reference definition ("[name]: url") changes how text before it renders.
_LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]+\]:", re.MULTILINE)


class LiveReply:
    """Where the live reply's parts begin in the document, and the edits that an update, its
    end (:meth:`retire`) and its taking-over as the finished message (:meth:`adopt`) make.

    ``index`` is the reply's place in the conversation (the number of finished messages);
    ``expanded``, whether its reasoning is unfolded.
    """

    def __init__(self, blocks: Blocks) -> None:
        self._blocks = blocks
        self.start = 0  # where the live part begins (the end of the finished messages)
        self.name = 0  # where its name line begins
        self._tail_start = 0  # where its unfinished tail begins
        self._answer_start = 0  # where its answer begins (after its head)
        self._splitter = StreamSplitter()
        self._folder = Folder(live=True)  # the live answer's folded copy, as it grows
        self._shown = ""  # that copy, as last rendered
        self._head: tuple[object, ...] | None = None  # what the live head was drawn from
        # The live answer's finished chunks, in order (what adopt() may keep of them).
        self._chunks: list[_Chunk] = []
        # A reply that ended (retire()) whose finished chunks stay in the document until
        # adopt() takes them as the finished message, or drop_retired() removes them: (the
        # reply, where its part of the document begins).
        self.retired: tuple[Message, int] | None = None

    def insert(self, cur: QTextCursor, m: Message, index: int, expanded: bool,
               theme: Theme) -> None:
        """The live reply from scratch, at the end: its name and reasoning line, then its
        answer."""
        cur.movePosition(QTextCursor.MoveOperation.End)
        self.start = cur.position()
        self._splitter = StreamSplitter()
        self._folder, self._shown = Folder(live=True), ""
        self._chunks = []
        reasoned = split_reasoning(m.content)
        self._head = _head_key(m, reasoned, expanded)
        self.name = self._blocks.insert(cur, render_name(m, theme) +
                                        render_reasoning(reasoned, theme, index, expanded) +
                                        render_tools(m, theme, index, expanded))
        cur.movePosition(QTextCursor.MoveOperation.End)
        self._tail_start = self._answer_start = cur.position()
        if reasoned.thinking:
            self._blocks.insert(cur, f"<p>{CURSOR_MARK}</p>", self._blocks.plain_format)
            return
        self._update_answer(cur, reasoned.answer, index, theme)

    def update(self, cur: QTextCursor, m: Message, index: int, expanded: bool,
               theme: Theme) -> None:
        """One more piece of the live reply: only what changed is rendered again."""
        reasoned = split_reasoning(m.content)
        # The reasoning grew or closed, or a tool call moved on: the head changes, so the live
        # reply is drawn again.
        if _head_key(m, reasoned, expanded) != self._head:
            self.remove(cur)
            self.insert(cur, m, index, expanded, theme)
            return
        self._update_answer(cur, reasoned.answer, index, theme)

    def remove(self, cur: QTextCursor) -> None:
        """Take the live reply out of the document."""
        self._blocks.remove_from(cur, self.start)

    def _update_answer(self, cur: QTextCursor, answer: str, index: int, theme: Theme) -> None:
        # The splitter cuts the folded copy, not the answer: what it renders stays bounded.
        shown = self._folder.feed(answer)
        if not shown.startswith(self._shown[:self._splitter.done]):
            # What was rendered as finished changed (the fold promises it does not; this
            # only keeps a broken promise from showing a garbled reply): render it anew.
            self._splitter = StreamSplitter()
            self._tail_start = self._answer_start
            self._chunks = []
        self._shown = answer = shown
        follows = self._splitter.open_paragraph  # before advance(): where the tail began
        chunks = self._splitter.advance(answer)
        self._blocks.remove_from(cur, self._tail_start)
        if chunks:
            first = self._splitter.code_blocks - sum(c.code_blocks for c in chunks)
            for chunk in chunks:
                html = render_markdown(chunk.markdown, theme, (index, first))
                cur.movePosition(QTextCursor.MoveOperation.End)
                at = cur.position()
                self._blocks.put(cur, html, follows, chunk.open_paragraph)
                self._chunks.append(_Chunk.of(at, chunk.markdown, html))
                follows = chunk.open_paragraph
                first += chunk.code_blocks
            cur.movePosition(QTextCursor.MoveOperation.End)
            self._tail_start = cur.position()
        tail = render_markdown(self._splitter.tail(answer), theme,
                               (index, self._splitter.code_blocks))
        self._blocks.put(cur, _with_cursor(tail), follows)

    def retire(self, cur: QTextCursor, live: Message) -> bool:
        """The live reply ended: its tail (with the cursor mark) goes now; its finished chunks
        stay for :meth:`adopt` to take as the finished message (True: the caller drops them
        on the next turn of the event loop at the latest, :meth:`drop_retired`)."""
        if self._chunks and self._chunks[0].plain and self._tail_start > self._answer_start:
            self._blocks.remove_from(cur, self._tail_start)
            self.retired = (live, self.start)
            return True
        self.remove(cur)
        return False

    def drop_retired(self, cur: QTextCursor) -> None:
        """Remove what a retired reply left in the document, if anything."""
        if self.retired is not None:
            self._blocks.remove_from(cur, self.retired[1])
            self.retired = None

    def adopt(self, cur: QTextCursor, m: Message, index: int, expanded: bool, whole: bool,
              theme: Theme) -> bool:
        """Take the retired reply's blocks as the finished message ``m`` (just appended, at
        ``index``): its name line (at :attr:`name`), and its chunks that are what rendering
        ``m`` makes of their text (:class:`_Chunk`); the rest and the lines under it are
        rendered. False (nothing done) when ``m`` is not the retired reply or is drawn another
        way (shown whole, folded, its reasoning changed, a link defined by reference)."""
        retired, chunks = self.retired, self._chunks
        if retired is None or retired[0] is not m:
            return False
        reasoned = split_reasoning(m.content)
        if whole or m.role != "assistant" or reasoned.thinking or \
                _head_key(m, reasoned, expanded) != self._head:
            return False
        text = fold(reasoned.answer)
        # The chunks were cut from the live folded copy: the finished one must begin the same.
        streamed = self._shown[:self._splitter.done]
        if text.cut or not text.text.startswith(streamed) or _LINK_DEFINITION.search(text.text):
            return False
        kept = _kept(chunks, text.text, index, theme)
        if kept is None:
            return False
        segments, rest_from, rest = kept
        self.retired = None
        self._blocks.remove_from(cur, chunks[rest_from].at if rest_from < len(chunks) else
                                 self._tail_start)
        tail = rest + render_note(m, theme) + render_footer(m, theme, index)
        if tail:
            self._blocks.put(cur, tail, False)
        for a, b in reversed(segments):  # from the end: what comes before keeps its place
            if b - a > 1:
                offset = sum(c.length for c in chunks[:a])
                html = render_markdown(text.text[offset:offset + sum(
                    c.length for c in chunks[a:b])], theme, (index, 0))
                self._blocks.replace(cur, chunks[a].at,
                                     chunks[b].at if b < len(chunks) else self._tail_start, html)
        return True


def _kept(chunks: list[_Chunk], text: str, index: int, theme: Theme
          ) -> tuple[list[tuple[int, int]], int, str] | None:
    """What :meth:`LiveReply.adopt` keeps of ``chunks`` for the finished answer ``text``: the
    segments ([first, last) chunk indexes) kept, the first chunk rendered again at the end,
    and that rest's HTML; None when nothing can be kept.

    Paragraphs, headings and quotes up to the first chunk with anything else, in segments that
    each end at a blank line: a segment of one chunk is kept as it is, one of several (a
    paragraph cut at line ends while it grew) is rendered again in place. The rest, from the
    first other chunk or the open last segment on, is rendered again at the end."""
    plain = next((i for i, c in enumerate(chunks) if not c.plain), len(chunks))
    segments: list[tuple[int, int]] = []
    first = 0
    for i in range(plain):
        if chunks[i].ends_block:
            segments.append((first, i + 1))
            first = i + 1
    rest_from = first
    while True:
        done = sum(c.length for c in chunks[:rest_from])
        rest = render_markdown(text[done:], theme, (index, 0))
        if not rest.startswith(_UNADOPTABLE):
            return segments, rest_from, rest
        # Inserted after a block of its own, a list or a table would not come out as in
        # one piece: what is rendered again starts with the paragraph before it.
        if not segments:
            return None
        rest_from = segments.pop()[0]


@dataclass(frozen=True)
class _Chunk:
    """A finished chunk of the live answer, as the view inserted it."""

    at: int  # where it begins in the document (the end of what comes before it)
    length: int  # its Markdown's length: the characters of the answer it holds (when plain)
    # It ends at a blank line, not at a line end or a space inside a paragraph (cut because
    # the paragraph grew long): what follows begins a block of its own.
    ends_block: bool
    # Only paragraphs, headings and quotes: its blocks are what rendering the whole answer
    # makes of its text when it is a block of its own (and its Markdown, no fence reopened,
    # is exactly that text).
    plain: bool

    @classmethod
    def of(cls, at: int, markdown: str, html: str) -> _Chunk:
        before, _, last = markdown[:-1].rpartition("\n")
        ends = markdown.endswith("\n") and bool(before) and not last.strip()
        return cls(at, len(markdown), ends, not any(tag in html for tag in _UNADOPTABLE))


def _head_key(m: Message, reasoned: Reasoned, expanded: bool) -> tuple[object, ...]:
    """What the live reply's head (its reasoning line and tool calls) is drawn from: it is
    drawn again when this changes (while folded and thinking, only the reasoning's length
    counts)."""
    return (reasoned.reasoning is not None, reasoned.thinking, expanded,
            reasoned.reasoning if expanded or not reasoned.thinking else
            len(reasoned.reasoning or ""), tools_key(m))


def _with_cursor(body: str) -> str:
    # Inside the last paragraph when there is one, so the mark sits after the last word.
    if body.endswith("</p>\n"):
        return body[:-5] + CURSOR_MARK + "</p>\n"
    return body + f"<p>{CURSOR_MARK}</p>\n"
