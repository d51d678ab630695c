"""Where a reply being streamed can be cut so that only its last part is rendered again (no Qt).

A reply grows at its end, and Markdown before the last blank line (outside a code fence) no
longer changes how it renders. The view renders that part once, block by block, and renders
only the tail on each update: showing one more token costs the same at token 4,000 as at token
40. A tail that runs long without a blank line (one long paragraph, a long code block) is cut
at a line end anyway; a cut inside a code fence closes the fence in the finished part and
reopens it in the tail. Only the streaming view is approximate there: the finished reply is
rendered again whole.

Reasoning (``<think>…</think>``) is split off first (:func:`split_reasoning`); this module sees
only the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FORCE_CUT_CHARS = 1200  # a tail longer than this is cut at its last line end
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"


@dataclass(frozen=True)
class Reasoned:
    """A reply split into its reasoning and its answer."""

    reasoning: str | None  # None: the reply has no reasoning section
    answer: str
    thinking: bool  # the reasoning is still being written (no closing tag yet)


def split_reasoning(text: str) -> Reasoned:
    """Split a leading ``<think>…</think>`` section (what reasoning models emit) off the reply.

    Only a section at the very start counts: a reply that *talks about* the tag mid-answer is
    shown as written.
    """
    stripped = text.lstrip()
    if not stripped.startswith(_THINK_OPEN):
        # A template may have opened the section in the prompt: the reply then starts inside it.
        end = text.find(_THINK_CLOSE)
        if end >= 0 and _THINK_OPEN not in text[:end]:
            return Reasoned(text[:end].strip(), text[end + len(_THINK_CLOSE):].lstrip(), False)
        return Reasoned(None, text, False)
    body = stripped[len(_THINK_OPEN):]
    end = body.find(_THINK_CLOSE)
    if end < 0:
        return Reasoned(body.strip(), "", True)
    return Reasoned(body[:end].strip(), body[end + len(_THINK_CLOSE):].lstrip(), False)


@dataclass(frozen=True)
class Chunk:
    """A finished part of the answer, as Markdown that renders on its own."""

    markdown: str
    code_blocks: int  # fenced code blocks it starts (numbers the Copy links)
    # Cut inside a paragraph (one long line): the next chunk, or the tail, goes on in the same
    # paragraph instead of starting a block of its own.
    open_paragraph: bool = False


class StreamSplitter:
    """Follows one answer as it grows: hands out finished chunks, and the tail to re-render."""

    def __init__(self) -> None:
        self.done = 0  # characters of the answer in finished chunks
        self._fence = ""  # the opening line of a fence left open at ``done`` ("" if none)
        self.code_blocks = 0  # fences opened in finished chunks
        self.open_paragraph = False  # the last chunk ended inside a paragraph

    def advance(self, answer: str) -> list[Chunk]:
        """The chunks that became finished since the last call (often none)."""
        out: list[Chunk] = []
        while True:
            found = _walk(answer, self.done, self._fence)
            inline = False
            if found is None and not self._fence:
                found, inline = _inline_cut(answer, self.done), True
            if found is None:
                return out
            cut, fence, opened = found
            markdown = self._reopen() + answer[self.done:cut]
            if fence:  # cut inside a code block: close it here, reopen it in the tail
                markdown = markdown.rstrip("\n") + "\n" + _FENCE.match(fence).group(1) + "\n"  # type: ignore[union-attr]
            out.append(Chunk(markdown, opened, inline))
            self.code_blocks += opened
            self.done, self._fence, self.open_paragraph = cut, fence, inline

    def tail(self, answer: str) -> str:
        """The unfinished rest, as Markdown that renders on its own."""
        return self._reopen() + answer[self.done:]

    def _reopen(self) -> str:
        return self._fence + "\n" if self._fence else ""


def _inline_cut(answer: str, start: int) -> tuple[int, str, int] | None:
    """A cut after a space inside one long last line (a reply that is one paragraph), so that
    its tail stays short too; None while the line is short, in a table or a heading."""
    line_start = answer.rfind("\n", start) + 1
    line = answer[line_start:]
    if line_start < start:
        line_start, line = start, answer[start:]
    if len(line) <= FORCE_CUT_CHARS or line.lstrip().startswith(("|", "#", "`", "~")):
        return None
    # A sentence end reads best; else any space. Backticks must be balanced: a cut inside
    # inline code would show its source until the reply ends.
    limit = line_start + len(line) - 1
    for mark in (". ", " "):
        at = answer.rfind(mark, line_start, limit)
        while at > line_start and answer[line_start:at].count("`") % 2:
            at = answer.rfind(mark, line_start, at)
        if at > line_start:
            return at + len(mark), "", 0
    return None


def _walk(answer: str, start: int, fence: str) -> tuple[int, str, int] | None:
    """The first cut after ``start``: (where, the fence open there, fences opened before it).

    A blank line outside a fence ends a block; failing that, a tail longer than
    :data:`FORCE_CUT_CHARS` is cut at its last line end. None: no cut yet.
    """
    pos, opened = start, 0
    forced: tuple[int, str, int] | None = None
    while (nl := answer.find("\n", pos)) >= 0:
        line = answer[pos:nl]
        m = _FENCE.match(line)
        if fence:
            opening = _FENCE.match(fence)
            assert opening is not None
            if m and m.group(1)[0] == opening.group(1)[0] and \
                    len(m.group(1)) >= len(opening.group(1)) and not m.group(2).strip():
                fence = ""
        elif m:
            fence, opened = line, opened + 1
        elif not line.strip() and pos > start:
            return nl + 1, "", opened
        pos = nl + 1
        forced = (pos, fence, opened)
    if forced is not None and forced[0] - start > FORCE_CUT_CHARS:
        return forced
    return None
