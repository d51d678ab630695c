"""The chat session over the real conversation service and SQLite: branches land in the
database with the right parents even though row ids arrive later, and reopen as shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.library.conversations import Conversation, ConversationSummary
from app.loading.endpoint import ChatEndpoint
from app.services.chat_session import ChatSession
from app.services.storage import ConversationService, StoreService
from app.storage.db import StoreThread, open_database
from app.storage.legacy import LegacySources
from tests.gui.fakes import FakeStreamer

RUNNER = ChatEndpoint.local("u", "k", "")  # the model is the conversation's


def _services(tmp_path: Path) -> tuple[StoreService, ConversationService]:
    store = StoreService(StoreThread(lambda: open_database(tmp_path / "h.sqlite3",
                                                           legacy=LegacySources())))
    return store, ConversationService(store)


def _reply(streamer: FakeStreamer, qtbot: Any, session: ChatSession, text: str,
           reason: str = "stop") -> None:
    streamer.piece(text)
    qtbot.wait(60)  # one coalescing tick
    streamer.finish(reason)
    assert not session.busy


def _opened(qtbot: Any, service: ConversationService, conv_id: int) -> Conversation:
    got: list[Conversation] = []
    service.opened.connect(got.append)
    service.open(conv_id)
    qtbot.waitUntil(lambda: bool(got), timeout=3000)
    service.opened.disconnect(got.append)
    return got[0]


def test_regenerate_edit_and_continue_are_stored_as_branches(qtbot: Any, tmp_path: Path) -> None:
    store, service = _services(tmp_path)
    streamer = FakeStreamer()
    session = ChatSession(streamer, service)
    try:
        session.new_conversation("/m/model.gguf", {"system_prompt": "Be brief."})
        # Both questions are sent before any row id is back: parents must still be right.
        assert session.send("Q1", RUNNER)
        _reply(streamer, qtbot, session, "A1 cut", "length")
        first = session.transcript.messages[-1]
        assert session.continue_reply(first, RUNNER)
        assert streamer.requests[-1].messages[-1] == {"role": "assistant", "content": "A1 cut"}
        _reply(streamer, qtbot, session, " and done")
        assert session.regenerate(first, RUNNER)
        _reply(streamer, qtbot, session, "A1 again")
        assert session.send("Q2", RUNNER)
        _reply(streamer, qtbot, session, "A2")
        q1 = session.transcript.messages[0]
        assert session.edit_and_resend(q1, "Q1 edited", RUNNER)
        _reply(streamer, qtbot, session, "A1b")
        assert store.flush(5)
        qtbot.waitUntil(lambda: session.transcript.conversation_id is not None, timeout=3000)
        conv = _opened(qtbot, service, session.transcript.conversation_id or 0)
        assert conv.settings == {"system_prompt": "Be brief."}
        assert [m.content for m in conv.messages] == ["Q1 edited", "A1b"]
        assert conv.messages[0].branch == (2, 2)
        assert conv.messages[1].meta["model"] == "/m/model.gguf"
        # The first question's branch: its newest reply is the regenerated one, then Q2.
        got: list[Conversation] = []
        service.opened.connect(got.append)
        service.show_branch(conv.id, conv.messages[0].siblings[0])
        qtbot.waitUntil(lambda: bool(got), timeout=3000)
        assert [m.content for m in got[0].messages] == ["Q1", "A1 again", "Q2", "A2"]
        assert got[0].messages[1].branch == (2, 2)
        service.opened.disconnect(got.append)
        old = _opened(qtbot, service, conv.id)  # the choice is kept
        assert old.messages[1].content == "A1 again"
        service.opened.connect(got.append)
        service.show_branch(conv.id, old.messages[1].siblings[0])
        qtbot.waitUntil(lambda: len(got) == 2, timeout=3000)
        assert [m.content for m in got[1].messages] == ["Q1", "A1 cut and done"]
    finally:
        session.close()
        store.close()


def test_the_sidebar_calls_list_rename_pin_delete_and_export(qtbot: Any, tmp_path: Path) -> None:
    store, service = _services(tmp_path)
    streamer = FakeStreamer()
    session = ChatSession(streamer, service)
    try:
        for text in ("first chat about cats", "second chat about dogs"):
            session.new_conversation()
            session.send(text, RUNNER)
            _reply(streamer, qtbot, session, f"reply to {text}")
        store.flush(5)
        rows: list[list[ConversationSummary]] = []
        service.listed.connect(rows.append)
        service.list_conversations()
        qtbot.waitUntil(lambda: bool(rows), timeout=3000)
        assert [r.title for r in rows[-1]] == ["second chat about dogs", "first chat about cats"]
        cats = rows[-1][1].id
        service.set_pinned(cats, True)
        service.rename(cats, "Cats")
        service.list_conversations("dogs")
        service.list_conversations()
        qtbot.waitUntil(lambda: len(rows) == 3, timeout=3000)
        assert [r.title for r in rows[1]] == ["second chat about dogs"]
        assert (rows[2][0].title, rows[2][0].pinned) == ("Cats", True)
        done: list[str] = []
        service.exported.connect(done.append)
        target = tmp_path / "out.md"
        service.export(cats, str(target), "markdown")
        qtbot.waitUntil(lambda: bool(done), timeout=3000)
        assert target.read_text(encoding="utf-8").startswith("# Cats\n")
        failures: list[str] = []
        service.failed.connect(failures.append)
        (tmp_path / "a-file").write_text("x")  # a "folder" that is a file: writing fails
        service.export(cats, str(tmp_path / "a-file" / "x.json"), "json")
        qtbot.waitUntil(lambda: bool(failures), timeout=3000)
        assert "Could not write" in failures[0] and "another folder" in failures[0]
        service.delete(cats)
        service.list_conversations()
        qtbot.waitUntil(lambda: len(rows) == 4, timeout=3000)
        assert [r.title for r in rows[3]] == ["second chat about dogs"]
    finally:
        session.close()
        store.close()


def test_a_call_after_the_store_closed_is_dropped_not_raised(qtbot: Any, tmp_path: Path) -> None:
    """A sidebar's search timer fired during a window's teardown: "the store thread is closed"
    was raised in the event loop (and failed the next test's setup)."""
    store, conversations = _services(tmp_path)
    store.close()
    errors: list[str] = []
    store.failed.connect(errors.append)
    future = store.call(lambda db: 1, lambda _v: errors.append("ran"))
    assert future.cancelled()
    conversations.list_conversations("anything")  # what the sidebar's timer calls
    qtbot.wait(20)
    assert errors == []
