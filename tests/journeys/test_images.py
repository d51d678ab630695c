"""Journey (issue 30): a person with a vision model (its projector lies beside it, as a download
puts it) copies a picture, pastes it into the message box with Ctrl+V and asks about it. The
model sees it (the runner's prompt count holds the image's tokens), the question shows the
picture, and the picture goes again with a Regenerate and after Hearth is closed and opened.
Real window, real runner with libmtmd, a generated tiny vision model (Gemma 3's projector type;
replies are noise: what is shown is what reaches the model)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage
from PySide6.QtTest import QTest

from app.chat.transcript import IMAGES
from tests.fixtures.vision import VISION_PROJECTOR, vision_pair
from tests.journeys.person import (
    LOAD_MS,
    REPLY_MS,
    UI_MS,
    choose_in_list,
    click,
    click_message_action,
    named,
    press,
    prompt_tokens,
    reply_done,
    type_into,
    until,
    wait_named,
)

RED = QColor(220, 30, 30)


def _red_pixels(window: Any) -> int:
    """Red in the conversation, scrolled to its top (where the question with the picture is)."""
    view = named(window, "Conversation")
    view.verticalScrollBar().setValue(0)
    shot = view.viewport().grab().toImage()
    hits = 0
    for y in range(0, shot.height(), 3):
        for x in range(0, shot.width(), 3):
            c = shot.pixelColor(x, y)
            hits += abs(c.red() - RED.red()) + abs(c.green() - RED.green()) + \
                abs(c.blue() - RED.blue()) < 60
    return hits


def _load(qtbot: Any, window: Any, name: str) -> None:
    picker = named(window, "Model")
    qtbot.waitUntil(until(lambda: any(name in picker.itemText(i) for i in range(picker.count())),
                          "the model is not listed"), timeout=60_000)
    choose_in_list(qtbot, picker, name)
    click(qtbot, window, "Load")
    wait_named(qtbot, window, "Send", timeout=LOAD_MS, enabled=True)


@pytest.mark.timeout(300)
def test_a_pasted_picture_reaches_the_model_and_stays_with_the_question(
        qtbot: Any, returning: Any, start_hearth: Any) -> None:
    text_model, projector = vision_pair()
    folder = returning.models / "tiny-vision"
    model = returning.put_model(text_model, "tiny-vision-F32.gguf", folder)
    returning.put_model(projector, "mmproj-tiny-vision-F32.gguf", folder)
    window = start_hearth()
    _load(qtbot, window, model.stem)

    # Copy a picture (as from an image viewer or a screenshot tool), paste it into the box.
    picture = QImage(300, 200, QImage.Format.Format_RGB32)
    picture.fill(RED)
    QGuiApplication.clipboard().setImage(picture)
    box = named(window, "Message")
    box.setFocus()
    QTest.keyClick(box, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    chips = window.chat_panel.attachments
    qtbot.waitUntil(until(lambda: len(chips.images) == 1, "the pasted picture is not attached"),
                    timeout=UI_MS)
    assert box.toPlainText() == "" and not chips.note.isVisibleTo(chips)  # the model sees

    type_into(qtbot, window, "Message", "What colour is this?")
    press(Qt.Key.Key_Return)
    qtbot.waitUntil(until(lambda: reply_done(window), "the reply did not end"),
                    timeout=REPLY_MS)
    question = window.gui.session.transcript.messages[-2]
    (ref,) = question.meta[IMAGES]
    # Scaled to what the projector looks at (64 pixels on the longer side).
    assert (ref["width"], ref["height"]) == (64, 43)
    assert chips.images == []  # sent: the next question starts bare
    with_image = prompt_tokens(window)
    assert _red_pixels(window) > 50, "the question does not show its picture"

    # The same words without a picture: the image was the difference.
    type_into(qtbot, window, "Message", "What colour is this?")
    press(Qt.Key.Key_Return)
    qtbot.waitUntil(until(lambda: reply_done(window), "the second reply did not end"),
                    timeout=REPLY_MS)
    assert with_image >= VISION_PROJECTOR.tokens_per_image + 8

    # Regenerate the first reply: the picture goes again.
    click_message_action(qtbot, named(window, "Conversation"), "Write this reply again", which=1)
    qtbot.waitUntil(until(lambda: reply_done(window) and prompt_tokens(window) == with_image,
                          lambda: f"regenerated with {prompt_tokens(window)} prompt tokens, "
                                  f"not {with_image}"), timeout=REPLY_MS)

    # Close Hearth, open it again, open the conversation, regenerate: still the picture.
    window.close()
    window.gui.close()
    again = start_hearth()
    _load(qtbot, again, model.stem)
    conversations = named(again, "Conversations")
    qtbot.waitUntil(until(lambda: conversations.model().rowCount() > 0, "no conversations"),
                    timeout=UI_MS)
    rows = [conversations.model().index(i, 0) for i in range(conversations.model().rowCount())]
    row = next(i for i in rows if "colour" in str(i.data()))
    QTest.mouseClick(conversations.viewport(), Qt.MouseButton.LeftButton,
                     Qt.KeyboardModifier.NoModifier, conversations.visualRect(row).center())
    view = named(again, "Conversation")
    qtbot.waitUntil(until(lambda: "What colour is this?" in view.toPlainText(),
                          "the conversation did not open"), timeout=UI_MS)
    qtbot.waitUntil(until(lambda: _red_pixels(again) > 50, "the picture is not shown after a "
                                                           "restart"), timeout=UI_MS)
    click_message_action(qtbot, view, "Write this reply again", which=1)
    qtbot.waitUntil(until(lambda: reply_done(again) and prompt_tokens(again) == with_image,
                          lambda: f"after a restart: {prompt_tokens(again)} prompt tokens, "
                                  f"not {with_image}"), timeout=REPLY_MS)
