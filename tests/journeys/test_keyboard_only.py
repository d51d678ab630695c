"""Journey: a person who never touches the mouse. They open a model file (Ctrl+O, typing its
path), load it (F5), start a new chat (Ctrl+N), type and send (Enter), stop the reply (Esc),
go to another tab and back (Ctrl+Tab, Ctrl+Shift+Tab), open the settings (Ctrl+,) and close
them (Esc), and quit (Ctrl+Q). Every key goes to whatever has the focus, as on a keyboard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.journeys.person import (
    CTRL,
    LOAD_MS,
    REPLY_MS,
    SHIFT,
    UI_MS,
    FileAnswer,
    back_to,
    current_tab,
    dialogs,
    http_get,
    name_of,
    named,
    press,
    type_text,
    until,
    wait_dialog,
)


def focus_name() -> str:
    widget = QApplication.focusWidget()
    return name_of(widget) if widget is not None else "(nothing)"


@pytest.mark.timeout(300)
def test_keyboard_only_new_chat_type_send_stop_tabs_settings_quit(
        qtbot: Any, returning: Any, start_hearth: Any, talker_file: Path) -> None:
    model = returning.put_model(talker_file, "keys.gguf", folder=returning.downloads)
    window = start_hearth()

    # Ctrl+O: the file dialog; the path typed, Enter.
    answer = FileAnswer(str(model))
    press(Qt.Key.Key_O, CTRL)
    qtbot.waitUntil(until(lambda: answer.answered, "Ctrl+O opened no file dialog"),
                    timeout=UI_MS)
    back_to(qtbot, window)
    qtbot.waitUntil(until(lambda: "keys.gguf" in named(window, "Model").currentText(),
                          "the file opened is not the model chosen"), timeout=UI_MS)

    # F5 loads the model chosen.
    press(Qt.Key.Key_F5)
    qtbot.waitUntil(until(lambda: named(window, "Send").isEnabled(),
                          "F5 did not load the model"), timeout=LOAD_MS)

    # Ctrl+N: a new chat, the message box ready for typing.
    press(Qt.Key.Key_N, CTRL)
    message = named(window, "Message")
    qtbot.waitUntil(until(lambda: QApplication.focusWidget() is message,
                          lambda: f"after Ctrl+N the focus is on {focus_name()!r}, not the "
                                  "message box"), timeout=UI_MS)
    type_text("Hello from the keyboard.")
    assert message.toPlainText() == "Hello from the keyboard."

    # Enter sends; Esc stops the reply, and what it wrote is kept.
    press(Qt.Key.Key_Return)
    conversation = named(window, "Conversation")
    qtbot.waitUntil(until(lambda: named(window, "Stop").isEnabled() and
                          len(conversation.toPlainText().split("Hello from the keyboard.")[-1])
                          > 40, "Enter sent nothing, or no reply is being written"),
                    timeout=REPLY_MS)
    press(Qt.Key.Key_Escape)
    qtbot.waitUntil(until(lambda: named(window, "Send").isEnabled()
                          and "Stopped." in conversation.toPlainText(),
                          "Esc did not stop the reply"), timeout=REPLY_MS)

    # Ctrl+Tab to the next tab, Ctrl+Shift+Tab back.
    assert current_tab(window) == "Chat"
    press(Qt.Key.Key_Tab, CTRL)
    qtbot.waitUntil(until(lambda: current_tab(window) != "Chat",
                          lambda: f"Ctrl+Tab from {focus_name()!r} did not change the tab"),
                    timeout=UI_MS)
    press(Qt.Key.Key_Backtab, CTRL | SHIFT)
    qtbot.waitUntil(until(lambda: current_tab(window) == "Chat",
                          lambda: f"Ctrl+Shift+Tab from {focus_name()!r} did not come back "
                                  f"to Chat (on {current_tab(window)!r})"), timeout=UI_MS)

    # Ctrl+, opens the settings; Esc closes them.
    press(Qt.Key.Key_Comma, CTRL)
    dialog = wait_dialog(qtbot, window, "Settings")
    qtbot.waitUntil(until(lambda: dialog.isActiveWindow(), "the settings are not the active "
                          "window: keys do not reach them"), timeout=UI_MS)
    press(Qt.Key.Key_Escape)
    qtbot.waitUntil(until(lambda: not dialogs(window), "Esc did not close the settings"),
                    timeout=UI_MS)
    back_to(qtbot, window)

    # Ctrl+Q quits: the window closes and the model's runner ends.
    served = window.runner.url
    assert runner_answers(served)
    press(Qt.Key.Key_Q, CTRL)
    qtbot.waitUntil(until(lambda: not window.isVisible(), "Ctrl+Q did not close Hearth"),
                    timeout=UI_MS)
    qtbot.waitUntil(until(lambda: not runner_answers(served),
                          "the model's runner still answers after quitting"), timeout=30_000)


def runner_answers(url: str) -> bool:
    try:
        http_get(url.rstrip("/") + "/health", None, timeout=2.0)
    except httpx.HTTPError:
        return False
    return True
