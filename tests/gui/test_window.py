"""The main window's behaviour with in-memory fakes of its services (tests/gui/fakes.py).

No runner, no threads, no disk: each test drives the fakes and looks at the widgets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from app.chat.transcript import RUNNER_DIED_NOTE
from app.services.chat_stream import FailureKind
from app.services.runner_process import RunnerState
from tests.fixtures.header_only import LLAMA31_8B, write_header_only
from tests.unit.planner.conftest import load_report


@pytest.fixture(scope="module")
def a_plan(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from app.gguf import read_model
    from app.planner import plan

    path = write_header_only(tmp_path_factory.mktemp("m") / "llama-8b.gguf", LLAMA31_8B)
    return plan(read_model(path), load_report("rtx4090_24gb"))


def ready(fakes: Any, a_plan: Any, model: str = "/models/first.gguf") -> Any:
    window = fakes.extra["window"]
    window.choose_model(model)
    window.load_selected()
    assert fakes.loader.loads[-1][0] == model
    assert "Planning how to load first.gguf" in window.status.text()
    assert not window.load_btn.isEnabled() and window.unload_btn.isEnabled()
    fakes.loader.finish_planning(a_plan)
    assert "is ready" in window.status.text()
    return window


def send(qtbot: Any, window: Any, text: str) -> None:
    window.input.setPlainText(text)
    qtbot.mouseClick(window.send_btn, Qt.MouseButton.LeftButton)


def test_the_picker_lists_the_library_and_a_chosen_model_goes_on_top(fakes: Any) -> None:
    window = fakes.extra["window"]
    items = [window.picker.itemText(i) for i in range(window.picker.count())]
    assert items == ["first.gguf", "Open GGUF file…"]
    window.choose_model("/models/second.gguf")
    assert window.selected_model() == "/models/second.gguf"
    assert fakes.library.paths == ["/models/second.gguf", "/models/first.gguf"]
    # The library's list arriving later (it is read off the GUI thread) keeps the selection.
    fakes.library.recent_changed.emit(["/models/first.gguf", "/models/second.gguf"])
    assert window.selected_model() == "/models/second.gguf"


def test_a_reply_streams_into_the_view_and_the_buttons_follow(qtbot: Any, fakes: Any,
                                                              a_plan: Any) -> None:
    window = ready(fakes, a_plan)
    assert window.send_btn.isEnabled() and not window.stop_btn.isEnabled()
    send(qtbot, window, "Hello there")
    assert window.input.toPlainText() == ""
    assert not window.send_btn.isEnabled() and window.stop_btn.isEnabled()
    request = fakes.streamer.requests[0]
    assert request.url == fakes.runner.url and request.key == "fake-key"
    fakes.streamer.piece("General ")
    fakes.streamer.piece("Kenobi")
    qtbot.waitUntil(lambda: "General Kenobi" in window.chat.toPlainText(), timeout=10_000)
    assert "▍" in window.chat.toPlainText()  # still streaming
    fakes.streamer.finish("stop")
    assert "▍" not in window.chat.toPlainText()
    assert window.send_btn.isEnabled() and not window.stop_btn.isEnabled()
    assert [s.content for s in fakes.store.saves][-1] == "General Kenobi"


def test_stop_right_after_send_ends_the_reply_as_stopped(qtbot: Any, fakes: Any,
                                                         a_plan: Any) -> None:
    window = ready(fakes, a_plan)
    send(qtbot, window, "Tell me everything")
    qtbot.mouseClick(window.stop_btn, Qt.MouseButton.LeftButton)
    assert fakes.streamer.requests[0].token.cancelled  # the request's own token
    qtbot.waitUntil(lambda: not window.session.busy, timeout=10_000)
    assert window.session.transcript.messages[-1].note == "Stopped."
    assert "Stopped." in window.chat.toPlainText()


def test_runner_death_mid_reply_keeps_it_and_offers_restart(qtbot: Any, fakes: Any,
                                                            a_plan: Any) -> None:
    window = ready(fakes, a_plan)
    send(qtbot, window, "Keep talking")
    fakes.streamer.piece("so far")
    qtbot.waitUntil(lambda: "so far" in window.chat.toPlainText(), timeout=10_000)
    fakes.runner.die("The model runner stopped unexpectedly: it crashed.")
    assert window.restart_btn.isVisible()
    assert "Restart the model" in window.status.text()
    assert RUNNER_DIED_NOTE in window.chat.toPlainText()
    reply = window.session.transcript.messages[-1]
    assert reply.content == "so far" and reply.note == RUNNER_DIED_NOTE
    assert not window.send_btn.isEnabled()
    # The stream's own failure arrives later: nothing changes, no second note.
    fakes.streamer.fail(FailureKind.RUNNER_GONE, "The model runner closed the connection.")
    assert window.chat.toPlainText().count(RUNNER_DIED_NOTE) == 1
    qtbot.mouseClick(window.restart_btn, Qt.MouseButton.LeftButton)
    assert fakes.runner.state == RunnerState.READY and not window.restart_btn.isVisible()
    assert "so far" in window.chat.toPlainText()  # the conversation is kept


def test_a_failed_plan_is_shown_as_an_error_and_load_is_offered_again(fakes: Any) -> None:
    window = fakes.extra["window"]
    window.load_selected()
    fakes.loader.fail_planning("Not loaded: notes.gguf is not a GGUF model.")
    assert window.status.text() == "Not loaded: notes.gguf is not a GGUF model."
    # An error: in a danger banner under the strip, the chip says so in a word.
    assert window.banner.isVisible() and window.banner.tone == "danger"
    assert window.banner.text.text() == "Not loaded: notes.gguf is not a GGUF model."
    assert window.status.property("tone") == "danger"
    assert window.state_chip.text() == "Failed" and window.state_chip.property("chip") == "danger"
    assert window.load_btn.isEnabled() and not window.send_btn.isEnabled()


def test_unload_cancels_planning_and_closing_shuts_every_service_down(
        qtbot: Any, fakes: Any, a_plan: Any) -> None:
    window = fakes.extra["window"]
    window.load_selected()
    qtbot.mouseClick(window.unload_btn, Qt.MouseButton.LeftButton)
    assert fakes.loader.cancelled == 1 and window.status.text() == "No model loaded."
    ready(fakes, a_plan)
    send(qtbot, window, "Hi")
    fakes.streamer.piece("partial")
    window.close()
    assert fakes.loader.shut_down and fakes.streamer.shut and fakes.store.flushed
    assert fakes.runner.state == RunnerState.STOPPED
    assert fakes.store.saves[-1].note == "The window was closed during this reply."


def test_the_plans_reasons_fold_out(qtbot: Any, fakes: Any, a_plan: Any) -> None:
    window = ready(fakes, a_plan)
    assert window.why_btn.isVisible() and not window.reasons_label.isVisible()
    qtbot.mouseClick(window.why_btn, Qt.MouseButton.LeftButton)
    assert window.reasons_label.isVisible() and "layers" in window.reasons_label.text()


def test_placeholder_and_screenshot(fakes: Any, tmp_path: Path) -> None:
    window = fakes.extra["window"]
    assert "Pick a GGUF model" in window.chat.toPlainText()
    image = window.grab()
    assert not image.isNull() and image.save(str(tmp_path / "empty.png"))


def test_hostile_text_in_a_status_is_shown_as_text_never_loaded(fakes: Any) -> None:
    # A runner error or a model's name is untrusted: as rich text, <img> would read the file.
    window = fakes.extra["window"]
    window.load_selected()
    fakes.loader.fail_planning("Not loaded: <img src='/dev/zero'> is not a GGUF model.")
    assert window.status.textFormat() == Qt.TextFormat.PlainText
    assert "<img src='/dev/zero'>" in window.status.text()
    assert window.reasons_label.textFormat() == Qt.TextFormat.PlainText
    assert window.steps_label.textFormat() == Qt.TextFormat.PlainText


def test_the_rail_switches_pages_by_click_and_by_ctrl_number(qtbot: Any, fakes: Any) -> None:
    from PySide6.QtWidgets import QLabel, QToolButton, QWidget

    window = fakes.extra["window"]
    other = QLabel("another page")
    window.tabs.addTab(other, "Discover")
    rail = window.findChild(QWidget, "rail")
    assert rail is not None and rail.isVisible()
    buttons = sorted((b for b in rail.findChildren(QToolButton) if b.property("nav")),
                     key=rail.layout().indexOf)  # top to bottom
    assert [b.accessibleName() for b in buttons] == ["Chat", "Discover", "Settings"]
    assert all(b.toolTip() and not b.icon().isNull() for b in buttons)
    assert "Ctrl+2" in buttons[1].toolTip() and buttons[0].isChecked()
    qtbot.mouseClick(buttons[1], Qt.MouseButton.LeftButton)
    assert window.tabs.currentWidget() is other and buttons[1].isChecked()
    assert not window.settings_btn.isVisible()  # the chat's drawer button: chat page only
    assert window.status.isVisible()  # the model strip stays in sight on every page
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=10_000)
    window.input.setFocus()
    from PySide6.QtTest import QTest
    QTest.keyClick(window, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentIndex() == 0 and buttons[0].isChecked()
    QTest.keyClick(window, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentIndex() == 1
    # Settings opens the dialog (the composition root's), it is no page of its own.
    with qtbot.waitSignal(window.settings_requested, timeout=1000):
        qtbot.mouseClick(buttons[2], Qt.MouseButton.LeftButton)
    assert window.tabs.currentIndex() == 1 and not buttons[2].isChecked()


def test_the_state_chip_says_where_the_model_is_in_words(fakes: Any, a_plan: Any) -> None:
    window = fakes.extra["window"]
    assert window.state_chip.text() == "No model"
    assert window.load_btn.property("primary")  # nothing runs: Load is the main action
    window.load_selected()
    assert window.state_chip.text() == "Loading…" and window.state_chip.property("chip") == "info"
    fakes.loader.finish_planning(a_plan)
    assert window.state_chip.text() == "Ready" and window.state_chip.property("chip") == "success"
    assert not window.load_btn.property("primary")
    # The whole sentence and the plan's reasons are in the status line's tooltip.
    assert "is ready" in window.status.toolTip() and "layers" in window.status.toolTip()


def test_the_shortcuts_dialog_lists_the_windows_keys(qtbot: Any, fakes: Any) -> None:
    from PySide6.QtWidgets import QDialog

    from app.ui.shortcuts_dialog import window_shortcuts

    window = fakes.extra["window"]
    found = dict(window_shortcuts(window))
    assert found["Load"] == "F5" and found["New chat"] == "Ctrl+N"
    assert found["Show Chat"] == "Ctrl+1" and found["Keyboard shortcuts"] == "F1 / Ctrl+/"
    assert found["Open GGUF file"] == "Ctrl+O"  # no platform-only key beside it
    window.menu.shortcuts.trigger()
    dialog = next(d for d in window.findChildren(QDialog) if d.isVisible())
    assert dialog.windowTitle() == "Keyboard shortcuts"
    rows = {dialog.table.item(r, 0).text(): dialog.table.item(r, 1).text()
            for r in range(dialog.table.rowCount())}
    assert rows["Load"] == "F5" and rows["Send the message"] == "Enter"
    dialog.reject()


def test_the_chat_splitter_state_comes_back(qtbot: Any, fakes: Any) -> None:
    window = fakes.extra["window"]
    window.settings_btn.setChecked(True)  # the drawer open: two columns to size
    qtbot.waitUntil(lambda: window.splitter.sizes()[-1] > 0, timeout=5000)
    total = sum(window.splitter.sizes())
    window.splitter.setSizes([total - 250, 250])
    kept = window.splitter.sizes()
    saved = window.splitter_state()
    assert isinstance(saved, bytes) and saved
    window.splitter.setSizes([total - 400, 400])
    assert window.splitter.sizes() != kept
    window.restore_splitter(saved)
    assert window.splitter.sizes()[-1] == 250  # the drawer's width, as it was saved
    window.restore_splitter(None)  # the first start: the sizes stay
    window.restore_splitter(b"not a state")  # another layout's: ignored
    assert window.splitter.sizes()[-1] == 250


def test_send_and_stop_share_the_composers_corner(qtbot: Any, fakes: Any, a_plan: Any) -> None:
    window = ready(fakes, a_plan)
    assert window.send_btn.isVisible() and not window.stop_btn.isVisible()
    assert window.send_btn.parentWidget().objectName() == "composer"
    assert "(Esc)" in window.stop_btn.toolTip() and window.send_btn.accessibleName() == "Send"
    send(qtbot, window, "Hello")
    assert window.stop_btn.isVisible() and not window.send_btn.isVisible()
