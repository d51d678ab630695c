"""Rendering chat messages to HTML: model output can format text, never name a resource."""

from __future__ import annotations

import re

import pytest

from app.chat.message import Message
from app.chat.render import (
    CURSOR_MARK,
    Theme,
    escape_text,
    highlight_code,
    link_allowed,
    mix,
    render_markdown,
    render_message,
    render_placeholder,
)
from app.ui.style import tokens


def _theme(c: tokens.ColorRoles) -> Theme:
    # As the window builds it (app/ui/chat_view.theme_for): from the design tokens.
    return Theme.from_colors(text=c.text, base=c.raised_surface, link=c.link, muted=c.muted_text,
                             accent=c.accent, danger=c.danger, code_bg=c.sunken, border=c.border)


LIGHT = _theme(tokens.LIGHT)
DARK = _theme(tokens.DARK)

HOSTILE = """\
![x](/dev/zero) ![secret](file:///home/me/.ssh/id_rsa) ![](http://tracker.example/p.png)
<img src="/dev/zero"> <script>alert(1)</script> <a href="file:///etc/passwd">raw</a>
[js](javascript:alert(1)) [file](file:///etc/passwd) [data](data:text/html,<b>x</b>)
[rel](../secrets.txt) [abs](/etc/passwd) [vb](vbscript:msgbox) <file:///etc/shadow>
[ref][1] [![nested](/dev/zero)](https://example.com)

[1]: file:///etc/hosts
"""


def test_no_markup_from_model_output_names_a_resource() -> None:
    out = render_markdown(HOSTILE, LIGHT)
    tags = re.findall(r"<[^>]*>", out)
    assert tags and not [t for t in tags if t.startswith(("<img", "<script", "<link", "<style"))]
    assert not [t for t in tags if "src=" in t or "url(" in t or "background=" in t]
    assert "&lt;script&gt;" in out and "&lt;img src=" in out  # raw HTML shown as text
    # The only link left is the one to an https page.
    assert re.findall(r'<a href="([^"]*)"', out) == ["https://example.com"]


def test_an_image_is_shown_as_its_alt_text() -> None:
    out = render_markdown("see ![a *small* cat](/dev/zero) and ![](cat.png)", LIGHT)
    assert "[image: a small cat]" in out and "[image]" in out
    assert "<img" not in out
    assert render_markdown("![<b>&](x.png)", LIGHT).count("[image: &lt;b&gt;&amp;]") == 1


@pytest.mark.parametrize("url", [
    "https://example.com/a?b=1", "http://localhost:8080/", "HTTPS://EXAMPLE.COM",
    "mailto:someone@example.com",
])
def test_web_and_mail_links_are_allowed(url: str) -> None:
    assert link_allowed(url)


@pytest.mark.parametrize("url", [
    "file:///etc/passwd", "javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x",
    "vbscript:x", "/etc/passwd", "../x", "relative.html", "#top", "", "http:///nohost",
    "mailto:", "ftp://example.com/x", "qrc:/icon.png", "http://[::1",
])
def test_other_links_are_refused(url: str) -> None:
    assert not link_allowed(url)


def test_a_refused_link_keeps_its_text_and_loses_its_target() -> None:
    out = render_markdown("[click here](javascript:alert(1)) and [docs](https://docs.example/)",
                          LIGHT)
    assert "click here" in out and "javascript" not in out
    assert '<a href="https://docs.example/" title="https://docs.example/"' in out


def test_a_link_target_is_escaped_and_shown_on_hover() -> None:
    out = render_markdown('[x](https://e.example/?a=1&b="2")', LIGHT)
    assert 'href="https://e.example/?a=1&amp;b=%222%22"' in out
    assert 'title="https://e.example/?a=1&amp;b=%222%22"' in out


def test_fenced_code_is_highlighted_with_inline_styles() -> None:
    out = render_markdown("```python\ndef f(x):\n    return x < 1\n```\n", LIGHT)
    assert "<pre" in out and 'style="color:' in out and "class=" not in out
    assert "&lt;" in out and "x < 1" not in out
    assert f"background-color:{LIGHT.code_bg}" in out
    dark = render_markdown("```python\ndef f(x):\n    return x < 1\n```\n", DARK)
    assert dark != out and f"background-color:{DARK.code_bg}" in dark


def test_code_in_an_unknown_language_is_escaped_text() -> None:
    assert highlight_code("<b>", "no-such-language", dark=False) == "&lt;b&gt;"
    assert highlight_code("a < b", "", dark=True) == "a &lt; b"
    out = render_markdown("    indented <code>\n", LIGHT)
    assert "&lt;code&gt;" in out


def test_tables_and_strikethrough_render() -> None:
    out = render_markdown("| a | b |\n|:--|--:|\n| 1 | 2 |\n\n~~gone~~", LIGHT)
    assert "<table" in out and 'align="right"' in out and "<s>gone</s>" in out
    assert f"border-color:{LIGHT.border}" in out


def test_a_users_message_is_markdown_and_its_raw_html_stays_text() -> None:
    out = render_message(Message("user", "**bold** <b>x</b>\nsecond & line"), LIGHT)
    assert "<strong>bold</strong> &lt;b&gt;x&lt;/b&gt;<br />\nsecond &amp; line" in out
    assert "<b>x</b>" not in out and "You" in out
    hostile = render_message(Message("user", HOSTILE), LIGHT, index=0)
    assert "<img" not in hostile.lower() and "file:" not in hostile.replace("file:///", "")
    assert 'href="file' not in hostile and 'href="javascript' not in hostile
    code = render_message(Message("user", "```sh\necho 1\n```"), LIGHT, index=3)
    assert "hearth:copy-code/3/0" in code and "&nbsp;sh&nbsp;" in code  # its language, its Copy


def test_a_streaming_reply_ends_with_the_cursor_mark() -> None:
    out = render_message(Message("assistant", "Hello **there**"), LIGHT, streaming=True)
    assert out.count(CURSOR_MARK) == 1 and out.endswith(f"{CURSOR_MARK}</p>\n")
    after_code = render_message(Message("assistant", "```\ncode"), LIGHT, streaming=True)
    assert after_code.endswith(f"<p>{CURSOR_MARK}</p>\n")
    assert CURSOR_MARK in render_message(Message("assistant", ""), LIGHT, streaming=True)
    assert CURSOR_MARK not in render_message(Message("assistant", "Hi"), LIGHT)


def test_a_note_is_shown_escaped_in_its_colour() -> None:
    out = render_message(Message("assistant", "Hi", note="Stopped <here>."), DARK)
    assert "Stopped &lt;here&gt;." in out and DARK.note in out


def test_placeholder_and_plain_text_are_escaped() -> None:
    assert escape_text("a<b>\r\nc") == "a&lt;b&gt;<br>c"
    assert "Say &lt;hello&gt;" in render_placeholder("Say <hello>", LIGHT)


def test_a_theme_is_mixed_from_the_palette_colours() -> None:
    light = Theme.from_colors(text="#000000", base="#ffffff", link="#0000ff", muted="#808080")
    dark = Theme.from_colors(text="#ffffff", base="#000000", link="#0000ff", muted="#808080")
    assert not light.dark and dark.dark
    assert light.link == "#0000ff"
    assert dark.link != "#0000ff"  # dark blue on black is unreadable: moved towards the text
    assert light.code_bg != light.base and dark.code_bg != dark.base
    assert mix("#000000", "#ffffff", 0.5) == "#808080"
    with pytest.raises(ValueError, match="#rrggbb"):
        mix("red", "#ffffff", 0.5)


def test_a_single_newline_in_a_reply_is_a_line_break() -> None:
    # A chat model's newline is meant: "a\nb" shows as two lines, not "a b" run together.
    out = render_markdown("a\nb", LIGHT)
    assert "a<br />\nb" in out
    saved = "\n".join(["Say hello. Then stop."] * 6)
    assert render_markdown(saved, LIGHT).count("<br />") == 5
    # Code blocks and tables are as they were: their lines are not given <br />.
    code = render_markdown("```\nx = 1\ny = 2\n```", LIGHT)
    assert "<br" not in code and "x = 1\ny = 2" in code
    table = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |", LIGHT)
    assert "<table" in table and "<br" not in table


def test_a_document_keeps_commonmark_soft_breaks() -> None:
    assert "<br" not in render_markdown("a\nb", LIGHT, breaks=False)


def test_thinking_before_a_call_folds_with_the_call() -> None:
    # What a thinking model's round holds (Qwen 3 writes it; the runner folds gpt-oss's
    # analysis the same way): its thinking, then its calls.
    from app.chat.toolcalls import ROUNDS

    question = Message("user", "Weather?")
    reply = Message("assistant", "<think>Done thinking.</think>\n\nSunny.", parent=question,
                    meta={ROUNDS: [{"text": "<think>Use get_weather.</think>\n\nLooking.",
                                    "calls": [{"id": "c1", "name": "get_weather",
                                               "arguments": "{}", "status": "ok",
                                               "result": "sunny"}]}]})
    folded = render_message(reply, LIGHT, index=1)
    assert "think&gt;" not in folded and "<think>" not in folded
    assert "Use get_weather." not in folded and "Looking." in folded
    unfolded = render_message(reply, LIGHT, index=1, expanded=True)
    assert "Use get_weather." in unfolded and "think&gt;" not in unfolded
