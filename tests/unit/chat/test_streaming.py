"""Cutting a streamed reply into finished chunks and a tail, and splitting off reasoning."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.chat.render import Theme, render_markdown
from app.chat.streaming import FORCE_CUT_CHARS, StreamSplitter, split_reasoning

THEME = Theme.from_colors(text="#1f1d1b", base="#ffffff", link="#a8460f", muted="#625e59")


def _feed(text: str, step: int) -> tuple[list[str], str, StreamSplitter]:
    s = StreamSplitter()
    chunks: list[str] = []
    for end in range(step, len(text) + step, step):
        chunks += [c.markdown for c in s.advance(text[:end])]
    return chunks, s.tail(text), s


def test_paragraphs_become_finished_at_their_blank_line() -> None:
    text = "First paragraph.\n\nSecond one,\nstill going\n\nThird"
    chunks, tail, _ = _feed(text, 3)
    assert chunks == ["First paragraph.\n\n", "Second one,\nstill going\n\n"]
    assert tail == "Third"


def test_a_blank_line_inside_a_code_block_does_not_cut_it() -> None:
    text = "Look:\n\n```python\ndef f():\n\n    return 1\n```\n\nDone"
    chunks, tail, s = _feed(text, 1)
    assert chunks == ["Look:\n\n", "```python\ndef f():\n\n    return 1\n```\n\n"]
    assert tail == "Done" and s.code_blocks == 1


def test_a_long_code_block_is_cut_and_reopened_so_each_part_renders_as_code() -> None:
    body = "".join(f"line {i} = {i * i}\n" for i in range(400))
    text = "```python\n" + body
    chunks, tail, s = _feed(text, 50)
    assert chunks and all(c.startswith("```python\n") and c.rstrip().endswith("```")
                          for c in chunks)
    assert tail.startswith("```python\n")
    assert all(len(c) < FORCE_CUT_CHARS + 200 for c in chunks)
    assert "<pre" in render_markdown(tail, THEME) and "<pre" in render_markdown(chunks[-1], THEME)
    # The pieces hold every line once, in order.
    lines = [ln for c in [*chunks, tail] for ln in c.splitlines() if ln.startswith("line")]
    assert lines == body.splitlines()
    assert s.code_blocks == 1  # reopened fences are not new code blocks


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="ab \n`#-*|", max_size=400), st.integers(1, 40))
def test_chunks_and_tail_always_hold_the_whole_reply(text: str, step: int) -> None:
    chunks, tail, s = _feed(text, step)
    # Take the reopened/closed fence lines back out: the rest is the reply itself.
    assert s.done <= len(text)
    joined = "".join(chunks)
    assert len(joined) >= s.done
    assert text.endswith(text[s.done:]) and tail.endswith(text[s.done:])


def test_reasoning_is_split_off_open_or_closed() -> None:
    r = split_reasoning("<think>Let me see.\nOK</think>\n\nThe answer is 4.")
    assert (r.reasoning, r.answer, r.thinking) == ("Let me see.\nOK", "The answer is 4.", False)
    r = split_reasoning("  <think>still thinking")
    assert (r.reasoning, r.answer, r.thinking) == ("still thinking", "", True)
    r = split_reasoning("opened by the template</think>answer")  # the prompt opened it
    assert (r.reasoning, r.answer) == ("opened by the template", "answer")
    r = split_reasoning("Use the <think> tag like this: <think>x</think>")
    assert r.reasoning is None and r.answer.startswith("Use the")


def test_one_long_paragraph_is_cut_at_sentence_ends_so_the_tail_stays_short() -> None:
    text = "".join(f"Sentence number {i} says a little more. " for i in range(200))
    chunks, tail, s = _feed(text, 7)
    assert len(tail) <= FORCE_CUT_CHARS + 60
    assert s.open_paragraph and all(c.endswith(". ") for c in chunks)
    assert "".join(chunks) + tail == text


def test_inline_code_is_never_cut_in_the_middle() -> None:
    text = "word " * 100 + "`" + "code " * 300 + "` and the end " + "x " * 10
    s = StreamSplitter()
    for end in range(1, len(text) + 1, 13):
        for c in s.advance(text[:end]):
            assert c.markdown.count("`") % 2 == 0
