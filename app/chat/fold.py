"""A bounded copy of a message for display: what the chat view renders when the stored text is
too big to render whole (no Qt).

Why fold, and why here: Markdown parsing, Pygments and Qt's layout all cost at least linear time
in what they are given, and Qt's costs far more on some shapes (measured here: a 1 MB line
without spaces takes minutes to lay out, one with spaces about a second; a table cell about half
a millisecond). Folding the *text*, before anything parses it, is the only place where every one
of those costs is bounded at once, and a plain pass over lines stays linear itself. The stored
message never changes: Copy copies it, and the view's "Show all" shows it whole as plain text.

The rules (each with its marker, so a reader sees what is missing):

- a line longer than :attr:`FoldLimits.line_chars` is cut: `` … (N more characters)``;
- outside code, a line with more than :attr:`FoldLimits.columns` table cells keeps one fewer and
  a last ``…`` cell (``---`` in the delimiter row). The rule needs no context, so a header is cut
  the same way before anyone knows it is one: the shown text never has to be rewritten;
- a table keeps rows while its cells fit :attr:`FoldLimits.table_cells`: ``… (N more rows)``;
- a fenced code block keeps :attr:`FoldLimits.code_lines` lines: ``… (N more lines)``;
- the whole message keeps what fits :attr:`FoldLimits.budget` (a character costs one, a table
  cell :attr:`FoldLimits.cell_units` more: Qt lays a cell out like a small document);
  the rest is ``… (N more characters)``.

A reply being streamed is folded as it grows (:class:`Folder`, ``live=True``): each update reads
only what was added, so its cost is bounded by the size of the folded copy, not of the reply.
Lines already shown are never changed (app/chat/streaming.py renders them once), and the last,
unfinished line is folded anew on each update; its markers carry no counts, which grow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

ELLIPSIS = "…"


@dataclass(frozen=True)
class FoldLimits:
    """Where folding starts. The defaults keep one message to a few screenfuls of layout."""

    line_chars: int = 4_000  # about one screenful of wrapped text
    columns: int = 12  # cells shown per table row (a wider row shows 11 and "…")
    table_cells: int = 300  # about a screenful of a 12-column table (25 rows)
    code_lines: int = 200
    budget: int = 32_000  # about 8,000 tokens of prose
    cell_units: int = 40  # what a table cell costs Qt, counted in characters of prose


LIMITS = FoldLimits()


@dataclass(frozen=True)
class Folded:
    """The text to render and whether anything of the stored text was left out."""

    text: str
    cut: bool


def fold(text: str, markdown: bool = True, limits: FoldLimits = LIMITS) -> Folded:
    """A finished message's text, folded (``markdown=False``: only lines and the budget, for
    text shown as typed)."""
    lines = text.count("\n") + 1
    if (len(text) <= limits.line_chars and lines <= limits.code_lines
            and len(text) + lines <= limits.budget and "|" not in text):
        # No rule can apply (no long line, code block, table or budget): most replies are
        # this, and a line-by-line pass in Python would cost a tenth of their rendering.
        return Folded(text, False)
    folder = Folder(markdown, limits=limits)
    return Folded(folder.feed(text, final=True), folder.cut)


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_DELIMITER = re.compile(r" {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_PIPE = re.compile(r"(?<!\\)\|")
# The line end before what ends a table for the fold: a blank line or a code fence.
# (markdown-it ends one at the start of some other blocks too; hiding those with the rows is
# only a coarser fold.) Each pattern starts with a line end, which the regular expression engine
# finds as fast as str.find: hidden lines cost next to nothing.
_TABLE_END = re.compile(r"\n(?:[ \t]*(?:\n|\Z)| {0,3}(?:`{3}|~{3}))")


@lru_cache(maxsize=32)
def _fence_end(opening: str) -> re.Pattern[str]:
    # The line end before the closing line of a fence opened by ``opening`` (e.g. "```"): same
    # character, at least as many, nothing after.
    return re.compile(rf"\n {{0,3}}{re.escape(opening[0])}{{{len(opening)},}}[ \t]*(?:\n|\Z)")


def _closes(opening: str, line: str) -> bool:
    m = _FENCE.match(line)
    return bool(m and m.group(1)[0] == opening[0] and len(m.group(1)) >= len(opening)
                and not m.group(2).strip())


def _lines(text: str, start: int, end: int) -> int:
    """How many lines text[start:end] holds (a last one without its line end counts)."""
    if end <= start:
        return 0
    return text.count("\n", start, end) + (text[end - 1] != "\n")


def _count(n: int, what: str) -> str:
    return f"{n:,} more {what}{'' if n == 1 else 's'}"


class Folder:
    """Folds one text as it grows at its end (``feed`` the whole text each time).

    ``live``: the text is still being written. Lines already returned are never changed, markers
    carry no counts, and the unfinished last line is folded provisionally.
    """

    def __init__(self, markdown: bool = True, *, live: bool = False,
                 limits: FoldLimits = LIMITS) -> None:
        self._markdown = markdown
        self._live = live
        self._lim = limits
        self._shown: list[str] = []  # the folded lines so far, each ending in "\n"
        self._pos = 0  # where the first line not yet folded starts
        self._scanned = 0  # no line end in text[_pos:_scanned]: never searched twice
        self._used = 0  # of the budget
        self._spent_at = -1  # where the budget ran out (-1: it has not)
        self._fence = ""  # the open fence's marker ("```"), "" outside code
        self._code_lines = 0
        self._code_hidden = 0
        self._table_cols = 0  # cells in each row of the open table (0: not in a table)
        self._table_cells = 0
        self._rows_hidden = 0
        self._cols_hidden = 0  # the most cells cut from one row of the open table
        self._after_text = False  # the previous line had text (a table's header, maybe)
        self.cut = False  # something was left out

    # ---- feeding ---------------------------------------------------------------------------------

    def feed(self, text: str, final: bool = False) -> str:
        """The folded copy of ``text`` (which extends what was fed before). ``final``: the text
        is complete, so its last line is folded for good and the markers get their counts."""
        n = len(text)
        while self._spent_at < 0:
            # Hidden lines are skipped at the speed of a regular expression, up to the line
            # that ends them, which is then folded like any other.
            if self._table_cols and self._rows_hidden and not self._skip_rows(text, final):
                break
            if self._fence and self._code_hidden and not self._skip_code(text, final):
                break
            nl = text.find("\n", max(self._pos, self._scanned))
            if nl < 0:
                self._scanned = n
                if final and self._pos < n:
                    self._line(text, self._pos, n)
                    self._pos = n
                break
            self._line(text, self._pos, nl)
            self._pos = self._scanned = nl + 1
        shown = "".join(self._shown)
        if final:
            shown += self._closing(n)
            # The text's own last line had no line end: neither has its copy.
            return shown[:-1] if shown.endswith("\n") and not text.endswith("\n") else shown
        return shown + self._pending(text)

    def _skip_rows(self, text: str, final: bool) -> bool:
        """Hide a folded table's rows up to its end; False when its end is not here yet."""
        # From the line end before: the line at _pos may be the table's end itself.
        m = _TABLE_END.search(text, self._pos - 1)
        # A blank last line may still grow into a row: only a finished line ends the table.
        found = m is not None and (final or text.find("\n", m.start() + 1) >= 0)
        end = m.start() + 1 if m is not None and found else self._rest(text, final)
        self._rows_hidden += _lines(text, self._pos, end)
        self._pos = self._scanned = max(self._pos, end)
        if found or final:
            self._end_table()
        return found

    def _skip_code(self, text: str, final: bool) -> bool:
        """Hide a folded code block's lines up to its closing fence; False when not here yet."""
        m = _fence_end(self._fence).search(text, self._pos - 1)
        found = m is not None and (final or text.find("\n", m.start() + 1) >= 0)
        end = m.start() + 1 if m is not None and found else self._rest(text, final)
        self._code_hidden += _lines(text, self._pos, end)
        self._pos = self._scanned = max(self._pos, end)
        return found

    def _rest(self, text: str, final: bool) -> int:
        """Where the finished lines end (all of the text when it is complete)."""
        return len(text) if final else max(self._pos, text.rfind("\n", self._pos) + 1)

    # ---- one line --------------------------------------------------------------------------------

    def _line(self, text: str, start: int, end: int) -> None:
        """Fold the line text[start:end] (its line end not included)."""
        line = self._cut_line(text, start, end)
        if not self._markdown:
            self._keep(line, start)
            return
        if self._fence:
            self._after_text = False
            if _closes(self._fence, line):
                self._end_code()
                self._keep(line, start)
            elif self._code_lines >= self._lim.code_lines:
                self._code_hidden += 1
                self.cut = True
            else:
                self._code_lines += 1
                self._keep(line, start)
            return
        blank = not line.strip()
        if self._table_cols:
            if blank or _FENCE.match(line):
                self._end_table()
            elif self._table_cells + self._table_cols > self._lim.table_cells:
                self._rows_hidden += 1
                self.cut = True
                return
            else:
                row, hidden = self._cut_row(line)
                self._cols_hidden = max(self._cols_hidden, hidden)
                if self._keep(row, start, self._table_cols):
                    self._table_cells += self._table_cols
                return
        m = _FENCE.match(line)
        if m:
            self._fence, self._code_lines, self._code_hidden = m.group(1), 0, 0
            self._keep(line, start)
        elif self._after_text and "|" in line and _DELIMITER.match(line):
            row, hidden = self._cut_row(line)
            cols = min(self._cells(line), self._lim.columns)
            # The header, shown already, is laid out as cells too.
            if self._keep(row, start, cols):
                self._table_cols, self._table_cells = cols, cols
                self._rows_hidden, self._cols_hidden = 0, hidden
        else:
            row, _ = self._cut_row(line)
            self._keep(row, start)
        self._after_text = not blank

    def _keep(self, line: str, start: int, cells: int = 0) -> bool:
        """Show one folded line, if the budget still has room for it (else spend it)."""
        cost = len(line) + 1 + cells * self._lim.cell_units
        if self._used + cost > self._lim.budget:
            self._spend(start)
            return False
        self._used += cost
        self._shown.append(line + "\n")
        return True

    def _spend(self, at: int) -> None:
        self._spent_at, self.cut = at, True
        if self._fence:  # the marker goes after the code, not into it
            self._shown.append(self._fence + "\n")
            self._fence = ""
        self._table_cols = 0
        if self._live:
            self._shown.append(f"\n{ELLIPSIS}\n")

    def _end_code(self) -> None:
        if self._code_hidden:
            hidden = "" if self._live else f" ({_count(self._code_hidden, 'line')})"
            self._shown.append(f"{ELLIPSIS}{hidden}\n")
        self._fence, self._code_hidden = "", 0

    def _end_table(self) -> None:
        rows, cols = self._rows_hidden, self._cols_hidden
        self._table_cols = self._rows_hidden = self._cols_hidden = 0
        if self._live:
            if rows:  # a last row, as the provisional one was
                self._shown.append(f"{ELLIPSIS}\n")
        elif rows or cols:
            what = ", ".join(([_count(rows, "row")] if rows else []) +
                             ([_count(cols, "column")] if cols else []))
            # A paragraph of its own: a line right after the rows would be one more row.
            self._shown.append(f"\n{ELLIPSIS} ({what})\n\n")

    def _closing(self, n: int) -> str:
        """What a complete text's folded copy ends with: the markers still open."""
        if self._spent_at >= 0:
            return f"\n{ELLIPSIS} ({_count(n - self._spent_at, 'character')})\n"
        if self._fence:
            before = len(self._shown)
            self._end_code()
            return "".join(self._shown[before:])
        if self._table_cols:
            before = len(self._shown)
            self._end_table()
            return "".join(self._shown[before:])
        return ""

    def _pending(self, text: str) -> str:
        """The unfinished last line, folded for now (live). It has no line end, so the view's
        stream splitter never takes it for finished; see the module's notes."""
        if self._spent_at >= 0:
            return ""
        if (self._table_cols and self._rows_hidden) or (self._fence and self._code_hidden):
            return ELLIPSIS
        line = self._cut_line(text, self._pos, len(text))
        if not self._markdown:
            return line
        if self._fence:
            return ELLIPSIS if self._code_lines >= self._lim.code_lines else line
        row, _ = self._cut_row(line)
        cells = self._table_cols
        if cells and self._table_cells + cells > self._lim.table_cells and line.strip():
            return ELLIPSIS
        if self._used + len(row) + 1 + cells * self._lim.cell_units > self._lim.budget:
            return ELLIPSIS
        return row

    # ---- cutting ---------------------------------------------------------------------------------

    def _cut_line(self, text: str, start: int, end: int) -> str:
        """text[start:end], cut to the line limit."""
        over = end - start - self._lim.line_chars
        if over <= 0:
            return text[start:end]
        self.cut = True
        line = text[start:start + self._lim.line_chars]
        # Live, the marker stays " …" with no space after it: the stream splitter may cut this
        # line after its last space, and what comes before the cut must never change.
        return line + (f" {ELLIPSIS}" if self._live else
                       f" {ELLIPSIS} ({_count(over, 'character')})")

    def _cells(self, line: str) -> int:
        s = line.strip()
        pipes = len(_PIPE.findall(s))
        return pipes + 1 - s.startswith("|") - (s.endswith("|") and not s.endswith("\\|"))

    def _cut_row(self, line: str) -> tuple[str, int]:
        """A line with more table cells than the limit, cut to it: (the line, cells cut)."""
        if line.count("|") < self._lim.columns:
            return line, 0
        cells = self._cells(line)
        if cells <= self._lim.columns:
            return line, 0
        self.cut = True
        keep = self._lim.columns - 1
        pipes = [m.start() for m in _PIPE.finditer(line)]
        # The pipe that closes the last kept cell (a leading pipe opens the first).
        close = pipes[keep] if line.lstrip().startswith("|") else pipes[keep - 1]
        last = "---" if "|" in line and _DELIMITER.match(line) else ELLIPSIS
        return f"{line[:close + 1]} {last} |", cells - keep
