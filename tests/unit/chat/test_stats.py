"""What the chat's status line says: translatable sentences whose numbers the window formats
for the locale (German "4,4 tokens/s", "32.768")."""

from __future__ import annotations

from app.chat.stats import ContextMeter, ReplyStats, status_text, trimmed_text
from app.i18n import Text


def _german(value: float | int, spec: str) -> str:
    """A stand-in for the window's locale formatter: German separators."""
    english = format(value, spec)
    return english.replace(",", "\0").replace(".", ",").replace("\0", ".")


def _same(template: str, n: int) -> str:
    return template


def test_the_speed_line_is_one_sentence_with_locale_numbers() -> None:
    text = status_text(ReplyStats(ttft_ms=1434.2, tokens_per_s=4.44))
    assert text == "4.4 tokens/s · first token after 1,434 ms"
    assert isinstance(text, Text)
    assert text.translated(_same, _german) == "4,4 tokens/s · first token after 1.434 ms"
    assert status_text(ReplyStats(tokens_per_s=32.5)) == "32.5 tokens/s"
    assert status_text(ReplyStats(ttft_ms=180)) == "First token after 180 ms"
    assert status_text(ReplyStats()) == ""


def test_the_meter_label_and_warnings_are_translatable() -> None:
    meter = ContextMeter(116, 32768)
    assert meter.text() == "Context 116 / 32,768"
    assert meter.text().translated(_same, _german) == "Context 116 / 32.768"
    assert meter.warning() == ""
    warn = ContextMeter(900, 1000).warning()
    assert isinstance(warn, Text) and warn.startswith("The context is 90% full. From the next")
    full = ContextMeter(1000, 1000).warning()
    assert isinstance(full, Text) and full.startswith("The context is full. From the next")


def test_left_out_messages_are_counted_as_a_plural() -> None:
    assert trimmed_text(0) == ""
    one = trimmed_text(1)
    assert "the oldest message was left out" in one and "(it stays" in one
    three = trimmed_text(3)
    assert isinstance(three, Text) and three.n == 3
    assert "the 3 oldest messages were left out" in three
