"""Folding a message for display: bounded, marked, ordinary text untouched, and a growing reply
folded so that what was shown never changes."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from app.chat.fold import LIMITS, Folder, FoldLimits, fold
from app.chat.render import Theme, render_markdown
from app.chat.streaming import StreamSplitter

SMALL = FoldLimits(line_chars=30, columns=4, table_cells=12, code_lines=3, budget=400,
                   cell_units=2)

ORDINARY = """# Reading a file

Here is how, with a **context manager**:

```python
def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()
```

| Method | Streams | Notes |
|:-------|--------:|-------|
| `open()` | yes | the usual way |
| `read_text()` | no | small files \\| only |

1. Pass an `encoding`.
2. See the [docs](https://docs.python.org/3/).
"""

THEME = Theme.from_colors(text="#1f1d1b", base="#ffffff", link="#a8460f", muted="#625e59")


def test_an_ordinary_reply_is_not_touched() -> None:
    for text in (ORDINARY, ORDINARY.rstrip("\n"), "", "\n\n", "one line", "a|b\n|-|-|\n"):
        folded = fold(text)
        assert folded.text == text and not folded.cut
        assert fold(text, markdown=False).text == text


def test_a_long_line_is_cut_with_its_count() -> None:
    folded = fold("short\n" + "x" * 100 + "\nend", limits=SMALL)
    assert folded.cut
    assert folded.text == f"short\n{'x' * 30} … (70 more characters)\nend"


def test_a_wide_table_keeps_its_first_columns_and_a_screenful_of_rows() -> None:
    rows = "".join(f"| {i} | b | c | d | e | f |\n" for i in range(10))
    text = f"Intro\n\n| A | B | C | D | E | F |\n|:--|---|---|---|---|---|\n{rows}\nAfter"
    folded = fold(text, limits=SMALL)
    # 4 cells a row (3 kept, then "…"), 12 cells in all: the header and two rows.
    assert folded.text == ("Intro\n\n| A | B | C | … |\n|:--|---|---| --- |\n"
                           "| 0 | b | c | … |\n| 1 | b | c | … |\n"
                           "\n… (8 more rows, 3 more columns)\n\n\nAfter")
    html = render_markdown(folded.text, THEME)
    assert html.count("<td ") == 8 and html.count("<th ") == 4


def test_a_table_that_ends_the_reply_gets_its_marker_too() -> None:
    rows = "".join(f"| {i} | b |\n" for i in range(20))
    folded = fold(f"| A | B |\n|---|---|\n{rows.rstrip()}", limits=SMALL)
    assert folded.text.endswith("| 4 | b |\n\n… (15 more rows)\n")


def test_a_long_code_block_keeps_its_first_lines_and_its_fence() -> None:
    code = "".join(f"line {i}\n" for i in range(10))
    folded = fold(f"```py\n{code}```\nafter", limits=SMALL)
    assert folded.text == "```py\nline 0\nline 1\nline 2\n… (7 more lines)\n```\nafter"
    unclosed = fold(f"```py\n{code}", limits=SMALL)
    assert unclosed.text.endswith("line 2\n… (7 more lines)\n")


def test_the_budget_bounds_the_whole_message() -> None:
    text = "word\n" * 10_000
    folded = fold(text, limits=SMALL)
    assert len(folded.text) <= SMALL.budget + 40
    assert folded.text.endswith(f"\n… ({len(text) - 400:,} more characters)\n")
    # Spent inside code, the code block is closed before the marker.
    code = fold("```\n" + "x\n" * 1000, limits=FoldLimits(budget=100, code_lines=10_000))
    assert "```\n\n… (" in code.text


def test_typed_text_is_folded_by_lines_and_budget_only() -> None:
    table = "| a | b | c | d | e | f |\n" * 3
    assert fold(table, markdown=False, limits=SMALL).text == table
    assert fold("y" * 50, markdown=False, limits=SMALL).text == f"{'y' * 30} … (20 more characters)"


def test_a_megabyte_folds_to_the_limits() -> None:
    line = "lorem ipsum " * 90_000
    assert len(fold(line).text) < LIMITS.line_chars + 50
    table = "| h |" + " c |" * 49 + "\n|" + "---|" * 50 + "\n" + ("| x |" + " y |" * 49 + "\n") * 2000
    folded = fold(table)
    assert folded.text.count("\n") < LIMITS.table_cells // LIMITS.columns + 5


# ---- a reply that grows ---------------------------------------------------------------------


def _feed(text: str, step: int, limits: FoldLimits = SMALL) -> list[str]:
    folder = Folder(live=True, limits=limits)
    return [folder.feed(text[:end]) for end in range(step, len(text) + step, step)]


def test_a_live_fold_shows_the_unfinished_line_and_marks_without_counts() -> None:
    shown = _feed("intro\n" + "z" * 100, 7)
    assert shown[-1] == f"intro\n{'z' * 30} …"
    code = "".join(f"line {i}\n" for i in range(10))
    assert _feed(f"```\n{code}```\n", 5)[-1] == "```\nline 0\nline 1\nline 2\n…\n```\n"


LINES = st.lists(st.sampled_from([
    "", "  ", "word and more words", "x" * 45, "y " * 25, "| a | b | c | d | e | f |",
    "|---|---|---|---|---|---|", "a | b", "---|---", "```", "```py", "~~~", "> quote",
    "- item", "    indented",
]), max_size=40)


@settings(max_examples=300, deadline=None)
@given(lines=LINES)
def test_text_under_every_limit_is_shown_as_it_is(lines: list[str]) -> None:
    text = "\n".join(lines)  # at most 40 lines of at most 45 characters, 6 cells a row
    folded = fold(text)
    assert folded.text == text and not folded.cut
    small = fold(text, limits=SMALL)
    assert small.cut or small.text == text


@settings(max_examples=300, deadline=None)
@given(lines=LINES, step=st.integers(1, 23))
def test_what_a_live_fold_has_finished_never_changes(lines: list[str], step: int) -> None:
    text = "\n".join(lines)
    shown = _feed(text, step)
    for before, after in itertools.pairwise(shown):
        finished = before[:before.rfind("\n") + 1]
        assert after.startswith(finished), (before, after)


@settings(max_examples=200, deadline=None)
@given(lines=LINES, step=st.integers(1, 23))
def test_the_stream_splitter_over_a_live_fold_never_renders_a_changed_part(
        lines: list[str], step: int) -> None:
    # What the view does: the splitter cuts the folded copy; what it has finished must stay.
    text = "\n".join(lines)
    folder, splitter = Folder(live=True, limits=SMALL), StreamSplitter()
    previous = ""
    for end in range(step, len(text) + step, step):
        shown = folder.feed(text[:end])
        assert shown.startswith(previous[:splitter.done])
        splitter.advance(shown)
        previous = shown


def test_a_live_fold_reads_only_what_was_added() -> None:
    # A 1 MB line fed 1 KB at a time: each feed folds at most a line's limit, whatever the size.
    folder = Folder(live=True)
    line = "a" * 1_000_000
    for end in range(1000, len(line) + 1, 1000):
        shown = folder.feed(line[:end])
        assert len(shown) <= LIMITS.line_chars + 2
    assert folder._scanned == len(line)  # searched once for a line end, never again
