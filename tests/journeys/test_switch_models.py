"""Journey: two models in Hearth's models folder. The person loads one, switches to the other,
switches back, and chats with the one loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.journeys.person import (
    LOAD_MS,
    REPLY_MS,
    UI_MS,
    choose_in_list,
    click,
    named,
    press,
    runner_status,
    type_into,
    until,
    wait_named,
)


def serving(window: Any) -> str | None:
    """The model file the runner says it serves (None while none is ready)."""
    status = runner_status(window)
    if status is None or status.get("status") != "ok":
        return None
    return str(status["model"]["path"])


def listed(window: Any, name: str) -> bool:
    picker = named(window, "Model")
    return any(name in picker.itemText(i) for i in range(picker.count()))


@pytest.mark.timeout(300)
def test_switch_to_a_second_model_and_back(qtbot: Any, returning: Any, start_hearth: Any,
                                           talker_file: Path, second_file: Path) -> None:
    alpha = returning.put_model(talker_file, "alpha.gguf")
    beta = returning.put_model(second_file, "beta.gguf")
    window = start_hearth()
    qtbot.waitUntil(until(lambda: listed(window, "alpha.gguf") and listed(window, "beta.gguf"),
                          "the models folder's two models are not both in the list"),
                    timeout=60_000)

    choose_in_list(qtbot, named(window, "Model"), "alpha.gguf")
    click(qtbot, window, "Load")
    qtbot.waitUntil(until(lambda: serving(window) == str(alpha), "alpha.gguf is not served"),
                    timeout=LOAD_MS)
    wait_named(qtbot, window, "Send", timeout=LOAD_MS, enabled=True)

    # Another model chosen while one is loaded: the button says Switch, and switching unloads
    # the first and loads the second.
    wait_named(qtbot, window, "Model", timeout=UI_MS, enabled=True)
    choose_in_list(qtbot, named(window, "Model"), "beta.gguf")
    wait_named(qtbot, window, "Switch", enabled=True)
    click(qtbot, window, "Switch")
    qtbot.waitUntil(until(lambda: serving(window) == str(beta), "beta.gguf is not served"),
                    timeout=LOAD_MS)
    wait_named(qtbot, window, "Send", timeout=LOAD_MS, enabled=True)
    assert "beta.gguf" in named(window, "Model status").text()

    # And back.
    wait_named(qtbot, window, "Model", timeout=UI_MS, enabled=True)
    choose_in_list(qtbot, named(window, "Model"), "alpha.gguf")
    wait_named(qtbot, window, "Switch", enabled=True)
    click(qtbot, window, "Switch")
    qtbot.waitUntil(until(lambda: serving(window) == str(alpha),
                          "alpha.gguf is not served again"), timeout=LOAD_MS)
    wait_named(qtbot, window, "Send", timeout=LOAD_MS, enabled=True)
    assert "alpha.gguf" in named(window, "Model status").text()
    picker = named(window, "Model")
    assert "alpha.gguf" in picker.currentText() and "(loaded)" in picker.currentText()

    # The chat goes to the model loaded now.
    type_into(qtbot, window, "Message", "Hello again.")
    press(Qt.Key.Key_Return)
    qtbot.waitUntil(until(lambda: "Hello again." in named(window, "Conversation")
                          .toPlainText(), "the question is not in the conversation"),
                    timeout=REPLY_MS)
    # Some words of the reply, then Stop (a whole reply can take long on a busy machine).
    qtbot.waitUntil(until(lambda: named(window, "Stop").isEnabled() and
                          len(named(window, "Conversation").toPlainText().split(
                              "Hello again.")[-1]) > 40,
                          "no reply is being written"), timeout=REPLY_MS)
    click(qtbot, window, "Stop")
    qtbot.waitUntil(until(lambda: named(window, "Send").isEnabled() and
                          named(window, "Conversation").live() is None,
                          "the reply did not end after Stop"), timeout=REPLY_MS)
    text = named(window, "Conversation").toPlainText()
    assert "alpha.gguf" in text.split("Hello again.")[-1], text[-500:]
