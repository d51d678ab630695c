"""The chat's status line in the person's language: numbers in the locale's format."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QLocale

from app.chat.stats import ReplyStats
from app.ui.chat_status import ChatStatus


@pytest.fixture
def german_numbers() -> Iterator[None]:
    QLocale.setDefault(QLocale("de_DE"))
    try:
        yield
    finally:
        QLocale.setDefault(QLocale("en_US"))


def _status(qtbot: Any) -> ChatStatus:
    status = ChatStatus()
    qtbot.addWidget(status)
    status.set_context_size(32768)
    status.show_stats(ReplyStats(ttft_ms=1434.0, tokens_per_s=4.44, prompt_tokens=100,
                                 completion_tokens=16))
    return status


def test_english_numbers(qtbot: Any) -> None:
    status = _status(qtbot)
    assert status.speed.text() == "4.4 tokens/s · first token after 1,434 ms"
    assert status.meter_label.text() == "Context 116 / 32,768"


def test_german_numbers(qtbot: Any, german_numbers: None) -> None:
    status = _status(qtbot)
    assert status.speed.text() == "4,4 tokens/s · first token after 1.434 ms"
    assert status.meter_label.text() == "Context 116 / 32.768"
    assert "32.768" in status.meter_label.toolTip()
