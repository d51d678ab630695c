"""Huge replies in the chat view (issue 24, item 7): folded for display, whole on request.

A 1 MB line, a 2,000 x 50 table or a 20,000-line code block used to be handed whole to
Markdown, Pygments and Qt's layout, which took tens of seconds (minutes for a line without a
space) on every open and every streamed update. These tests check the structure that bounds the
cost, never a duration: the document the view builds stays small, the fold is marked and offers
"Show all", Show all shows the whole stored text (in the transcript, or past 100,000 characters
in a window of its own), Copy copies it, and nothing is loaded.
Time is measured in tests/bench/hostile_view.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextTable
from PySide6.QtWidgets import QApplication

from app.chat.fold import LIMITS
from app.chat.message import Message
from app.chat.render import WHOLE_INLINE_CHARS
from app.ui.chat_view import ChatView, WholeText
from tests.bench.hostile_view import no_spaces, one_line, table

# What a folded message may hold, in characters of the document: the fold's budget and its
# markers, the name and action lines. A whole 1 MB reply is 30 times this.
BOUND = LIMITS.budget + 2_000


def make_view(qtbot: Any) -> ChatView:
    view = ChatView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    qtbot.waitExposed(view)
    return view


def show_all(text: str) -> str:
    """The link under a folded message."""
    where = " in a window" if len(text) > WHOLE_INLINE_CHARS else ""
    return f"Show all{where} ({len(text):,} characters)"


def click(view: ChatView, href: str) -> None:
    view.anchorClicked.emit(QUrl(href))


def table_cells(view: ChatView) -> int:
    """How many table cells the document lays out."""
    cells = 0
    for frame in view.document().rootFrame().childFrames():
        if isinstance(frame, QTextTable):
            cells += frame.rows() * frame.columns()
    return cells


def settle(view: ChatView) -> None:
    QApplication.processEvents()
    view.grab()  # lay out and paint, as a window would


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reply", [one_line(), no_spaces()], ids=["words", "no-spaces"])
def test_a_1_mb_one_line_reply_opens_as_a_bounded_document(qtbot: Any, reply: str) -> None:
    view = make_view(qtbot)
    view.set_messages([Message("user", "Show me."), Message("assistant", reply)])
    settle(view)
    doc = view.document()
    assert doc.characterCount() < 10_000, "the view was handed the whole line"
    text = view.toPlainText()
    # The start of the line is shown (as Markdown), then the mark of the cut.
    assert reply[:40].split("*")[0].split("`")[0] in text
    assert f"… ({len(reply) - LIMITS.line_chars:,} more characters)" in text
    assert show_all(reply) in text
    assert 'href="hearth:whole/1"' in view.toHtml()


@pytest.mark.timeout(60)
def test_a_2000_by_50_table_opens_folded(qtbot: Any) -> None:
    reply = "Here is the data:\n\n" + table(2000, 50) + "\nThat is all."
    view = make_view(qtbot)
    view.set_messages([Message("user", "Show me."), Message("assistant", reply)])
    settle(view)
    cells = table_cells(view)
    assert 0 < cells <= LIMITS.table_cells, cells  # still a table, a screenful of it
    assert view.document().characterCount() < BOUND
    text = view.toPlainText()
    kept_rows = cells // LIMITS.columns - 1  # less the header
    assert f"… ({2000 - kept_rows:,} more rows, {50 - LIMITS.columns + 1} more columns)" in text
    assert "r0c0" in text and "r1999c0" not in text and "That is all." in text
    assert show_all(reply) in text


@pytest.mark.timeout(60)
def test_a_huge_code_block_is_folded_and_copy_code_copies_all_of_it(qtbot: Any) -> None:
    code = "\n".join(f"value_{i} = compute({i}) * 2  # line {i}" for i in range(20_000))
    reply = f"The script:\n\n```python\n{code}\n```\n\nRun it."
    view = make_view(qtbot)
    view.set_messages([Message("user", "Write it."), Message("assistant", reply)])
    settle(view)
    text = view.toPlainText()
    assert view.document().characterCount() < BOUND
    assert f"… ({20_000 - LIMITS.code_lines:,} more lines)" in text and "Run it." in text
    assert "line 0\n" in text and "line 19999" not in text
    click(view, "hearth:copy-code/1/0")
    assert QApplication.clipboard().text() == code


@pytest.mark.timeout(60)
def test_show_all_shows_the_stored_text_whole_and_show_less_folds_it_again(
        qtbot: Any) -> None:
    # A line without a space: laid out whole, it would take Qt time that grows faster than its
    # length. What follows it must survive the round trip too.
    reply = no_spaces(90_000) + "\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![x](/dev/zero) *end*"
    view = make_view(qtbot)
    view.set_messages([Message("user", "Show me."), Message("assistant", reply, note="Stopped.")])
    folded = view.toPlainText()
    assert show_all(reply) in folded and "in a window" not in folded
    click(view, "hearth:whole/1")
    settle(view)
    shown = view.toPlainText()
    # Plain text, broken into blocks for Qt only: all of the stored text, as written.
    assert reply.replace("\n", "") in shown.replace("\n", "")
    assert "Stopped." in shown and "Show less" in shown and "Show all" not in shown
    click(view, "hearth:whole/1")
    assert view.toPlainText() == folded


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reply", [no_spaces(), table(2000, 50)], ids=["no-spaces", "table"])
def test_show_all_of_a_megabyte_opens_it_in_a_window_of_its_own(qtbot: Any, reply: str) -> None:
    view = make_view(qtbot)
    view.set_messages([Message("user", "Show me."), Message("assistant", reply)])
    size = view.document().characterCount()
    assert show_all(reply) in view.toPlainText() and "in a window" in show_all(reply)
    click(view, "hearth:whole/1")
    windows = [w for w in view.findChildren(WholeText) if w.isVisible()]
    assert len(windows) == 1
    window = windows[0]
    qtbot.waitExposed(window)
    window.grab()
    assert window.isWindow() and window.isReadOnly()
    assert window.text() == reply
    assert window.toPlainText().replace("\n", "") == reply.replace("\n", "")
    assert max(len(line) for line in window.toPlainText().split("\n")) <= 2_000
    window.selectAll()
    window.copy()  # all of it selected: the stored text, without the breaks made for Qt
    assert QApplication.clipboard().text() == reply
    # The transcript did not grow, and a second click brings the same window back.
    assert view.document().characterCount() == size
    click(view, "hearth:whole/1")
    assert [w for w in view.findChildren(WholeText) if w.isVisible()] == [window]
    window.close()
    qtbot.waitUntil(lambda: not view.findChildren(WholeText))
    click(view, "hearth:whole/1")  # closed, it opens again
    assert len([w for w in view.findChildren(WholeText) if w.isVisible()]) == 1


@pytest.mark.timeout(60)
def test_copy_copies_the_whole_stored_text_folded_or_not(qtbot: Any) -> None:
    reply = one_line()
    view = make_view(qtbot)
    view.set_messages([Message("user", "Show me."), Message("assistant", reply)])
    assert view.document().characterCount() < 10_000  # what is shown is folded...
    clipboard = QApplication.clipboard()
    click(view, "hearth:copy/1")  # ...what is copied is not
    assert clipboard.text() == reply
    clipboard.clear()
    click(view, "hearth:whole/1")
    click(view, "hearth:copy/1")
    assert clipboard.text() == reply


@pytest.mark.timeout(60)
def test_a_huge_question_is_folded_too(qtbot: Any) -> None:
    question = "Summarise this: " + one_line(500_000)
    view = make_view(qtbot)
    view.set_messages([Message("user", question)])
    settle(view)
    assert view.document().characterCount() < 10_000
    assert show_all(question) in view.toPlainText()
    click(view, "hearth:copy/0")
    assert QApplication.clipboard().text() == question


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reply, piece", [
    (one_line(), 20_000),
    (no_spaces(), 20_000),
    (table(2000, 50), 30_000),
    ("```\n" + "".join(f"line {i}\n" for i in range(50_000)), 20_000),
], ids=["words", "no-spaces", "table", "code"])
def test_streaming_a_huge_reply_keeps_the_document_bounded(qtbot: Any, reply: str,
                                                           piece: int) -> None:
    view = make_view(qtbot)
    view.set_messages([Message("user", "Go on.")])
    live = Message("assistant", "")
    for end in range(piece, len(reply) + piece, piece):
        live.content = reply[:end]
        view.set_live(live)
        size = view.document().characterCount()
        assert size < BOUND, f"at {end:,} characters, the live reply's document held {size:,}"
        assert table_cells(view) <= LIMITS.table_cells + LIMITS.columns
    settle(view)
    # Finished, it is folded the same way as when it is opened, with its Show all link.
    view.set_live(None)
    view.append_message(live)
    assert view.document().characterCount() < BOUND
    assert show_all(reply) in view.toPlainText()


@pytest.mark.timeout(60)
def test_a_huge_reasoning_section_unfolds_folded(qtbot: Any) -> None:
    thought = one_line(400_000)
    view = make_view(qtbot)
    view.set_messages([Message("user", "Think."),
                       Message("assistant", f"<think>{thought}</think>The answer.")])
    click(view, "hearth:think/1")
    settle(view)
    assert view.document().characterCount() < BOUND
    text = view.toPlainText()
    assert "Reasoning (400,000 characters)" in text and "The answer." in text
    assert f"… ({len(thought) - LIMITS.line_chars:,} more characters)" in text
    assert "Show all" in text


@pytest.mark.timeout(60)
def test_a_huge_reply_folded_whole_or_streamed_never_makes_the_view_load_anything(
        qtbot: Any, tmp_path: Path) -> None:
    asked: list[str] = []

    class Recording(ChatView):
        def loadResource(self, type: int, name: QUrl | str) -> Any:
            asked.append(name if isinstance(name, str) else name.toString())
            return super().loadResource(type, name)

    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG\r\n\x1a\n")
    images = f"![x]({secret}) ![y](file://{secret}) <img src=\"{secret}\"> ![z](/dev/zero)\n\n"
    reply = images + table(150, 20) + "\n" + one_line(50_000) + "\n\n" + images
    assert len(reply) < WHOLE_INLINE_CHARS  # Show all shows it in the transcript
    view = Recording()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    view.set_messages([Message("user", "q"), Message("assistant", reply)])
    settle(view)
    click(view, "hearth:whole/1")
    settle(view)
    assert f"![x]({secret})" in view.toPlainText()  # shown whole, as text
    live = Message("assistant", "")
    for end in range(10_000, len(reply) + 10_000, 10_000):
        live.content = reply[:end]
        view.set_live(live)
    settle(view)
    assert asked == []
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            assert not it.fragment().charFormat().isImageFormat()
            it += 1
        block = block.next()
