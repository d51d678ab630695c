"""The chat page: the main window over the real conversation service (a temp SQLite database) and
the in-memory runner, loader and streamer of tests/gui/fakes.py.

Each test drives the fake stream and looks at what the user sees (the view, the buttons, the
status line, the sidebar) and at what the database holds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl

from app.chat.message import Message
from app.library.conversations import Conversation, ConversationStore
from app.services.chat_session import ChatSession
from app.services.chat_stream import StreamEnded
from app.services.runner_process import RunnerState
from app.services.storage import ConversationService, StoreService
from app.storage.db import StoreThread, open_database
from app.storage.legacy import LegacySources
from app.ui.main_window import MainWindow
from tests.fixtures.header_only import LLAMA31_8B, write_header_only
from tests.gui.fakes import Fakes, make_fakes
from tests.unit.planner.conftest import load_report

WAIT_MS = 5000  # generous: the store thread answers through the event loop on a busy machine
MODEL = "/models/first.gguf"


@pytest.fixture(scope="module")
def a_plan(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A real plan, with a 4096-token context (the context meter is measured against it)."""
    from app.gguf import read_model
    from app.planner import plan

    path = write_header_only(tmp_path_factory.mktemp("m") / "llama-8b.gguf", LLAMA31_8B)
    made = plan(read_model(path), load_report("rtx4090_24gb"))
    return dataclasses.replace(made, settings=dataclasses.replace(made.settings, n_ctx=4096))


@dataclass
class Page:
    window: MainWindow
    session: ChatSession
    service: ConversationService
    store: StoreService
    fakes: Fakes

    # ---- doing ---------------------------------------------------------------------------------

    def send(self, qtbot: Any, text: str) -> None:
        self.window.input.setPlainText(text)
        qtbot.mouseClick(self.window.send_btn, Qt.MouseButton.LeftButton)

    def stream(self, qtbot: Any, *pieces: str) -> None:
        for piece in pieces:
            self.fakes.streamer.piece(piece)
        want = self.session.transcript.live
        assert want is not None
        qtbot.waitUntil(lambda: want.content.endswith("".join(pieces)), timeout=WAIT_MS)

    def reply(self, qtbot: Any, *pieces: str, reason: str = "stop") -> Message:
        self.stream(qtbot, *pieces)
        with qtbot.waitSignal(self.session.reply_finished, timeout=WAIT_MS) as done:
            self.fakes.streamer.finish(reason)
        return done.args[0]

    def link(self, href: str) -> None:
        """The user clicks one of the view's own links ("hearth:regenerate/1")."""
        self.window.chat.anchorClicked.emit(QUrl(href))

    def focus(self, qtbot: Any, widget: Any) -> None:
        self.window.activateWindow()
        widget.setFocus()
        qtbot.waitUntil(widget.hasFocus, timeout=WAIT_MS)

    def open_from_sidebar(self, qtbot: Any, conv_id: int) -> None:
        """Click the conversation's row in the sidebar and wait until the chat shows it."""
        sidebar = self.window.sidebar
        assert sidebar is not None

        def row() -> Any:
            index = sidebar.model.index_of(conv_id)
            return index if index.isValid() else None

        qtbot.waitUntil(lambda: row() is not None, timeout=WAIT_MS)
        rect = sidebar.list.visualRect(row())
        qtbot.mouseClick(sidebar.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.waitUntil(lambda: self.session.transcript.conversation_id == conv_id and
                        bool(self.window.chat.messages()), timeout=WAIT_MS)

    # ---- looking -------------------------------------------------------------------------------

    def conv_id(self, qtbot: Any) -> int:
        qtbot.waitUntil(lambda: self.session.transcript.conversation_id is not None,
                        timeout=WAIT_MS)
        conv = self.session.transcript.conversation_id
        assert conv is not None
        return conv

    def stored(self, conv_id: int) -> Conversation:
        assert self.store.flush(5)
        return self.store.call(lambda db: ConversationStore(db).get(conv_id)).result(5)

    def stored_titles(self) -> list[str]:
        assert self.store.flush(5)
        return [s.title for s in
                self.store.call(lambda db: ConversationStore(db).summaries()).result(5)]

    def shown(self) -> list[tuple[str, str]]:
        """The finished messages the view shows, (role, text)."""
        return [(m.role, m.content) for m in self.window.chat.messages()]

    def text(self) -> str:
        return self.window.chat.toPlainText()

    def versions(self, index: int) -> tuple[str, bool, bool]:
        """What the action bar of message ``index`` shows of its versions, reached as from the
        keyboard (the current message): ("2/2", previous enabled, next enabled)."""
        chat = self.window.chat
        chat.set_current(index)
        bar = chat.message_bar()
        assert bar.isVisible() and bar.index == index
        if bar.versions.isHidden():
            return "", False, False
        return bar.versions.text(), bar.prev.isEnabled(), bar.next.isEnabled()


@pytest.fixture
def page(qtbot: Any, tmp_path: Path, a_plan: Any) -> Iterator[Page]:
    store = StoreService(StoreThread(lambda: open_database(tmp_path / "h.sqlite3",
                                                           legacy=LegacySources())))
    service = ConversationService(store)
    fakes = make_fakes([MODEL])
    session = ChatSession(fakes.streamer, service)
    window = MainWindow(fakes.runner, fakes.loader, session, fakes.library,
                        conversations=service)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.choose_model(MODEL)
    window.load_selected()
    fakes.loader.finish_planning(a_plan)  # the runner becomes READY with a 4096-token context
    assert fakes.runner.state == RunnerState.READY and window.send_btn.isEnabled()
    try:
        yield Page(window, session, service, store, fakes)
    finally:
        window.close()
        store.close()


def _seed(page: Page, title: str, model: str, *messages: tuple[str, str]) -> int:
    def make(db: Any) -> int:
        conversations = ConversationStore(db)
        conv = conversations.create(title, model)
        for role, text in messages:
            conversations.append_message(conv, role, text)
        return conv

    conv = page.store.call(make).result(5)
    assert page.window.sidebar is not None
    page.window.sidebar.refresh()
    return conv


def test_a_cut_reply_shows_continue_which_goes_on_from_the_partial_text(qtbot: Any,
                                                                       page: Page) -> None:
    window = page.window
    assert not window.continue_btn.isVisible()
    page.send(qtbot, "Tell me a story")
    assert window.input.toPlainText() == ""
    assert not window.continue_btn.isVisible()  # not while it streams
    page.stream(qtbot, "Once upon ", "a time")
    qtbot.waitUntil(lambda: "Once upon a time" in page.text(), timeout=WAIT_MS)
    cut = page.reply(qtbot, reason="length")
    assert cut.note == "The reply reached its length limit."
    assert "The reply reached its length limit." in page.text()
    assert window.continue_btn.isVisible() and window.send_btn.isEnabled()

    qtbot.mouseClick(window.continue_btn, Qt.MouseButton.LeftButton)
    request = page.fakes.streamer.requests[-1]
    assert request.messages[-2:] == [{"role": "user", "content": "Tell me a story"},
                                     {"role": "assistant", "content": "Once upon a time"}]
    assert not window.continue_btn.isVisible() and window.stop_btn.isEnabled()
    done = page.reply(qtbot, ", there was a hearth.")
    assert done is cut  # the same reply went on
    assert done.content == "Once upon a time, there was a hearth." and done.note == ""
    assert not window.continue_btn.isVisible()
    assert "Once upon a time, there was a hearth." in page.text()
    stored = page.stored(page.conv_id(qtbot))
    assert [(m.role, m.content, m.note) for m in stored.messages] == [
        ("user", "Tell me a story", ""),
        ("assistant", "Once upon a time, there was a hearth.", "")]


# ---- the view after Continue, Regenerate and Edit --------------------------------------------------
# Continue, Regenerate and Edit change the branch shown: the messages that left it must leave the
# view, a continued reply must not show twice, and no link may name a message no longer there.


def test_after_continue_the_view_shows_the_reply_once(qtbot: Any, page: Page) -> None:
    page.send(qtbot, "Tell me a story")
    page.reply(qtbot, "Once upon a time", reason="length")
    qtbot.mouseClick(page.window.continue_btn, Qt.MouseButton.LeftButton)
    page.reply(qtbot, ", there was a hearth.")
    assert page.shown() == [("user", "Tell me a story"),
                            ("assistant", "Once upon a time, there was a hearth.")]
    assert page.text().count("Once upon a time") == 1
    assert "length limit" not in page.text()


def test_after_regenerate_the_view_shows_only_the_new_reply(qtbot: Any, page: Page) -> None:
    page.send(qtbot, "Name a colour")
    page.reply(qtbot, "Blue.")
    page.link("hearth:regenerate/1")
    page.reply(qtbot, "Green.")
    assert page.shown() == [("user", "Name a colour"), ("assistant", "Green.")]
    assert "Blue." not in page.text()
    # Every link shown works: Regenerate under the reply shown second regenerates it again.
    page.link("hearth:regenerate/1")
    assert page.session.busy


def test_after_an_edit_the_view_shows_only_the_new_question(qtbot: Any, page: Page) -> None:
    page.send(qtbot, "What is 2+2?")
    page.reply(qtbot, "4")
    page.link("hearth:edit/0")
    page.window.input.setPlainText("What is 3+3?")
    qtbot.mouseClick(page.window.send_btn, Qt.MouseButton.LeftButton)
    page.reply(qtbot, "6")
    assert page.shown() == [("user", "What is 3+3?"), ("assistant", "6")]
    assert "2+2" not in page.text()


def test_regenerate_starts_a_new_reply_and_the_versions_show_after_reopening(
        qtbot: Any, page: Page) -> None:
    page.send(qtbot, "Name a colour")
    page.reply(qtbot, "Blue.")
    conv = page.conv_id(qtbot)
    assert "‹" not in page.text()  # one version: no version links

    page.link("hearth:regenerate/1")
    assert page.session.busy and page.window.stop_btn.isEnabled()
    request = page.fakes.streamer.requests[-1]
    assert request.messages == [{"role": "user", "content": "Name a colour"}]  # not "Blue."
    page.reply(qtbot, "Green.")
    assert "Green." in page.text()
    assert [m.content for m in page.stored(conv).messages] == ["Name a colour", "Green."]

    # Reopened from the sidebar (after a new chat), the reply has its version links.
    qtbot.keyClick(page.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: page.window.chat.messages() == [], timeout=WAIT_MS)
    page.open_from_sidebar(qtbot, conv)
    assert page.shown() == [("user", "Name a colour"), ("assistant", "Green.")]
    assert page.versions(1) == ("2/2", True, False)
    page.link("hearth:prev/1")
    qtbot.waitUntil(lambda: page.shown() == [("user", "Name a colour"), ("assistant", "Blue.")],
                    timeout=WAIT_MS)
    assert page.versions(1) == ("1/2", False, True)
    page.link("hearth:next/1")
    qtbot.waitUntil(lambda: page.shown()[-1] == ("assistant", "Green."), timeout=WAIT_MS)


def test_edit_fills_the_input_esc_cancels_and_send_makes_a_branch(qtbot: Any,
                                                                   page: Page) -> None:
    window = page.window
    page.send(qtbot, "What is 2+2?")
    page.reply(qtbot, "4")
    conv = page.conv_id(qtbot)

    page.link("hearth:edit/0")
    assert window.input.toPlainText() == "What is 2+2?"
    assert window.edit_label.isVisible() and "Esc cancels" in window.edit_label.text()
    page.focus(qtbot, window.input)
    qtbot.keyClick(window.input, Qt.Key.Key_Escape)
    assert not window.edit_label.isVisible() and window.input.toPlainText() == ""
    assert len(page.fakes.streamer.requests) == 1  # nothing was sent

    page.link("hearth:edit/0")
    assert window.edit_label.isVisible()
    window.input.setPlainText("What is 3+3?")
    qtbot.mouseClick(window.send_btn, Qt.MouseButton.LeftButton)
    assert not window.edit_label.isVisible() and window.input.toPlainText() == ""
    assert page.fakes.streamer.requests[-1].messages == [{"role": "user",
                                                          "content": "What is 3+3?"}]
    page.reply(qtbot, "6")
    assert "What is 3+3?" in page.text()
    assert [m.content for m in page.stored(conv).messages] == ["What is 3+3?", "6"]

    # The old question and its reply are kept as the other version.
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    page.open_from_sidebar(qtbot, conv)
    assert page.versions(0) == ("2/2", True, False)
    page.link("hearth:prev/0")
    qtbot.waitUntil(lambda: page.shown() == [("user", "What is 2+2?"), ("assistant", "4")],
                    timeout=WAIT_MS)
    # The next message after an edit goes on from the branch shown (a plain Send, not an edit).
    page.send(qtbot, "And 4+4?")
    assert page.fakes.streamer.requests[-1].messages[-3:] == [
        {"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4"},
        {"role": "user", "content": "And 4+4?"}]
    page.reply(qtbot, "8")
    assert [m.content for m in page.stored(conv).messages] == ["What is 2+2?", "4",
                                                               "And 4+4?", "8"]


def test_esc_during_a_reply_stops_it_and_keeps_the_text(qtbot: Any, page: Page) -> None:
    window = page.window
    page.send(qtbot, "Count to a thousand")
    page.stream(qtbot, "one two three")
    qtbot.waitUntil(lambda: "one two three" in page.text(), timeout=WAIT_MS)
    page.focus(qtbot, window.input)
    with qtbot.waitSignal(page.session.reply_finished, timeout=WAIT_MS) as done:
        qtbot.keyClick(window.input, Qt.Key.Key_Escape)
    reply = done.args[0]
    assert (reply.content, reply.note) == ("one two three", "Stopped.")
    assert page.shown() == [("user", "Count to a thousand"), ("assistant", "one two three")]
    assert "Stopped." in page.text() and "▍" not in page.text()
    assert window.send_btn.isEnabled() and not window.stop_btn.isEnabled()
    assert window.continue_btn.isVisible()  # a stopped reply can go on
    stored = page.stored(page.conv_id(qtbot))
    assert [(m.content, m.note) for m in stored.messages] == [
        ("Count to a thousand", ""), ("one two three", "Stopped.")]


def test_ctrl_n_starts_an_empty_conversation(qtbot: Any, page: Page) -> None:
    window = page.window
    page.send(qtbot, "First chat")
    page.reply(qtbot, "Hello")
    first = page.conv_id(qtbot)
    assert window.sidebar is not None
    qtbot.waitUntil(lambda: window.sidebar is not None and window.sidebar.selected_id() == first,
                    timeout=WAIT_MS)
    page.focus(qtbot, window.input)
    qtbot.keyClick(window.input, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert page.session.transcript.messages == [] and window.chat.messages() == []
    assert page.session.transcript.conversation_id is None
    assert "First chat" not in page.text()
    assert window.sidebar.list.selectionModel().selectedIndexes() == []  # no row marked as shown
    assert window.input.hasFocus()
    page.send(qtbot, "Second chat")
    page.reply(qtbot, "Hi again")
    second = page.conv_id(qtbot)
    assert second != first
    qtbot.waitUntil(lambda: [r.title for r in window.sidebar.rows()] == ["Second chat",
                                                                         "First chat"],
                    timeout=WAIT_MS)
    assert [m.content for m in page.stored(first).messages] == ["First chat", "Hello"]


def test_ctrl_k_focuses_the_sidebar_search(qtbot: Any, page: Page) -> None:
    window = page.window
    assert window.sidebar is not None
    window.sidebar.search.setText("old words")
    page.focus(qtbot, window.input)
    qtbot.keyClick(window.input, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert window.sidebar.search.hasFocus()
    assert window.sidebar.search.selectedText() == "old words"  # typing replaces the search


def _end_with_usage(page: Page, usage: dict[str, Any]) -> None:
    streamer = page.fakes.streamer
    request = streamer.current
    assert request is not None
    streamer.current = None
    streamer.ended.emit(StreamEnded(request.id, "stop", usage))


def test_the_status_line_shows_speed_and_warns_when_the_context_fills(qtbot: Any,
                                                                      page: Page) -> None:
    window = page.window
    status = window.chat_status
    assert page.session.context_size == 4096  # from the plan
    page.send(qtbot, "Write a long essay")
    page.stream(qtbot, "Essay ")
    qtbot.wait(100)  # time passes between the first token and the last
    page.stream(qtbot, "text")
    with qtbot.waitSignal(page.session.reply_finished, timeout=WAIT_MS) as done:
        _end_with_usage(page, {"prompt_tokens": 3000, "completion_tokens": 500})
    assert "tokens/s" in status.speed.text() and "first token after" in status.speed.text()
    assert status.meter.isVisible() and status.meter_label.text() == "Context 3,500 / 4,096"
    assert status.warning.isVisible()
    assert "85% full" in status.warning.text()
    assert "the oldest turns are left out" in status.warning.text()
    # The speed is kept with the reply and shown under it.
    reply = done.args[0]
    assert isinstance(reply.meta.get("tokens_per_s"), float)
    assert f"{reply.meta['tokens_per_s']:.1f} tokens/s" in page.text()
    assert page.stored(page.conv_id(qtbot)).messages[-1].meta["completion_tokens"] == 500

    # A new conversation has measured nothing yet.
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert status.speed.text() == "" and not status.warning.isVisible()
    assert not status.meter.isVisible()


def test_opening_a_conversation_from_the_sidebar_shows_its_messages(qtbot: Any,
                                                                    page: Page) -> None:
    window = page.window
    conv = _seed(page, "Old chat", "/models/other.gguf",
                 ("user", "What did we say about owls?"), ("assistant", "They are **wise**."))
    page.send(qtbot, "A new question")
    page.reply(qtbot, "A new answer")
    page.open_from_sidebar(qtbot, conv)
    assert page.shown() == [("user", "What did we say about owls?"),
                            ("assistant", "They are **wise**.")]
    assert "They are wise." in page.text()  # rendered as Markdown
    assert "A new question" not in page.text()
    assert "written with other.gguf" in window.statusBar().currentMessage()
    assert window.sidebar is not None and window.sidebar.selected_id() == conv
    # Going on in it: the reply is stored in that conversation.
    page.send(qtbot, "Tell me more")
    assert page.fakes.streamer.requests[-1].messages[0] == {
        "role": "user", "content": "What did we say about owls?"}
    page.reply(qtbot, "Owls see at night.")
    assert [m.content for m in page.stored(conv).messages] == [
        "What did we say about owls?", "They are **wise**.", "Tell me more", "Owls see at night."]


def test_deleting_the_open_conversation_starts_a_new_one(qtbot: Any, page: Page,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    window = page.window
    sidebar = window.sidebar
    assert sidebar is not None
    other = _seed(page, "Keep me", "", ("user", "keep this"))
    page.send(qtbot, "Delete me")
    page.reply(qtbot, "Gone soon")
    conv = page.conv_id(qtbot)
    questions: list[str] = []

    actions: list[str] = []

    def yes(_parent: Any, _title: str, question: str, action: str = "", keep: str = "") -> bool:
        questions.append(question)
        actions.append(action)
        return True

    monkeypatch.setattr(sidebar, "_confirm", yes)  # the injected confirmation
    qtbot.waitUntil(lambda: sidebar.selected_id() == conv, timeout=WAIT_MS)
    sidebar.delete_selected()
    assert len(questions) == 1 and "Delete me" in questions[0] and actions == ["Delete"]
    assert page.session.transcript.conversation_id is None
    assert window.chat.messages() == [] and "Gone soon" not in page.text()
    qtbot.waitUntil(lambda: [r.title for r in sidebar.rows()] == ["Keep me"], timeout=WAIT_MS)
    assert page.stored_titles() == ["Keep me"]

    # Deleting another conversation leaves the one shown alone.
    page.send(qtbot, "Stay open")
    page.reply(qtbot, "Still here")
    kept = page.conv_id(qtbot)
    model = sidebar.list.model()
    for i in range(model.rowCount()):
        if model.index(i, 0).data(Qt.ItemDataRole.UserRole) == other:
            sidebar.list.setCurrentIndex(model.index(i, 0))
    assert sidebar.selected_id() == other
    sidebar.delete_selected()
    qtbot.waitUntil(lambda: [r.title for r in sidebar.rows()] == ["Stay open"], timeout=WAIT_MS)
    assert page.session.transcript.conversation_id == kept
    assert page.shown() == [("user", "Stay open"), ("assistant", "Still here")]


def test_a_base_model_gets_a_notice_with_a_search_for_its_instruct_version(
        qtbot: Any, page: Page, a_plan: Any) -> None:
    window = page.window
    assert not window.base_box.isVisible()  # the plan's model is an instruct model
    base = dataclasses.replace(a_plan, model=dataclasses.replace(
        a_plan.model, name="Llama-3.1-8B", chat_template=None,
        general={**a_plan.model.general, "general.name": "Llama-3.1-8B",
                 "general.finetune": "", "general.basename": "Llama-3.1"}))
    window.unload()
    qtbot.waitUntil(lambda: page.fakes.runner.state == RunnerState.STOPPED, timeout=WAIT_MS)
    window.load_selected()
    page.fakes.loader.finish_planning(base)
    assert window.base_box.isVisible()
    assert "has no chat template" in window.base_label.text()
    with qtbot.waitSignal(window.find_instruct, timeout=WAIT_MS) as search:
        qtbot.mouseClick(window.base_btn, Qt.MouseButton.LeftButton)
    assert search.args[0] == "Llama-3.1 instruct"
