"""Journey: the very first start, offline. The person opens a model file from the first-run
page, it loads, they chat, stop the reply, ask for another version of it, then edit their
question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from tests.journeys.person import (
    LOAD_MS,
    REPLY_MS,
    UI_MS,
    FileAnswer,
    all_named,
    back_to,
    click,
    click_message_action,
    message_versions,
    named,
    press,
    type_into,
    until,
    wait_named,
)


def conversation(window: Any) -> str:
    return named(window, "Conversation").toPlainText()


def start_and_stop_a_reply(qtbot: Any, window: Any, before: str) -> None:
    """Wait until the reply has shown some words, then click Stop and wait for it to end."""
    qtbot.waitUntil(lambda: named(window, "Stop").isEnabled(), timeout=REPLY_MS)
    qtbot.waitUntil(until(lambda: len(conversation(window)) > len(before) + 40,
                          "the reply shows no words"), timeout=REPLY_MS)
    click(qtbot, window, "Stop")
    # Send takes Stop's place in the message box's corner once the reply has ended.
    qtbot.waitUntil(until(lambda: not all_named(window, "Stop")
                          and named(window, "Send").isEnabled(),
                          "the reply did not end after Stop"), timeout=REPLY_MS)


@pytest.mark.timeout(300)
def test_offline_first_start_open_load_chat_stop_regenerate_edit(
        qtbot: Any, place: Any, start_hearth: Any, talker_file: Path) -> None:
    model = place.put_model(talker_file, "storyteller.gguf", folder=place.downloads)
    window = start_hearth()

    # The first-run page says the Hub cannot be reached and still offers a way in.
    wait_named(qtbot, window, "Retry", timeout=30_000)
    shown = [label.text() for label in window.findChildren(QLabel) if label.isVisible()]
    assert any("cannot be reached" in text for text in shown), shown
    assert named(window, "Open GGUF file…").isEnabled()

    # Open a file: the dialog is answered by typing the path and pressing Enter.
    answer = FileAnswer(str(model))
    click(qtbot, window, "Open GGUF file…")
    qtbot.waitUntil(lambda: answer.answered, timeout=30_000)
    back_to(qtbot, window)

    # The model loads by itself; the chat is shown and the message box is ready.
    qtbot.waitUntil(until(lambda: named(window, "Send").isEnabled(),
                          "the opened model never became ready to chat"), timeout=LOAD_MS)
    assert "storyteller.gguf" in named(window, "Model status").text()

    # Chat, and Stop the reply half-way: what it wrote is kept, marked as stopped.
    type_into(qtbot, window, "Message", "Tell me a story about a warm hearth.")
    before = conversation(window)
    press(Qt.Key.Key_Return)
    start_and_stop_a_reply(qtbot, window, before)
    text = conversation(window)
    assert "Tell me a story about a warm hearth." in text
    assert "Stopped." in text
    assert named(window, "Message").toPlainText() == ""

    # Regenerate: a second version of the reply, the first kept (1/2, 2/2).
    before = conversation(window)
    click_message_action(qtbot, named(window, "Conversation"), "Write this reply again")
    start_and_stop_a_reply(qtbot, window, before)
    view = named(window, "Conversation")
    qtbot.waitUntil(until(lambda: message_versions(qtbot, view) == "2/2",
                          "no second version of the reply is shown"), timeout=UI_MS)

    # Edit the question: it comes back into the message box; the new text is asked as a new
    # version of the question.
    click_message_action(qtbot, named(window, "Conversation"),
                         "Edit this message and send it again", which=0)
    message = named(window, "Message")
    qtbot.waitUntil(lambda: message.toPlainText() == "Tell me a story about a warm hearth.",
                    timeout=UI_MS)
    type_into(qtbot, window, "Message", "Tell me about fire instead.", replace=True)
    before = conversation(window)
    press(Qt.Key.Key_Return)
    start_and_stop_a_reply(qtbot, window, before)
    qtbot.waitUntil(until(lambda: "Tell me about fire instead." in conversation(window),
                          "the edited question is not shown"), timeout=UI_MS)
    # The question shown is the second version of it.
    qtbot.waitUntil(until(lambda: message_versions(qtbot, view, which=0) == "2/2",
                          "the edited question is not shown as a second version"),
                    timeout=UI_MS)
    assert "Tell me a story about a warm hearth." not in conversation(window)
