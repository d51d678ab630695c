"""The conversation store: the sidebar's order, messages in order, the live reply, search."""

from __future__ import annotations

import pytest

from app.library.conversations import (
    ConversationNotFoundError,
    ConversationStore,
    MessageNotFoundError,
)
from app.storage.db import Database
from tests.unit.library.conftest import Clock


@pytest.fixture
def store(db: Database, clock: Clock) -> ConversationStore:
    return ConversationStore(db, clock)


def test_create_get_and_messages_in_order(store: ConversationStore) -> None:
    conv = store.create("First", "/m/a.gguf")
    user = store.append_message(conv, "user", "Hi")
    reply = store.append_message(conv, "assistant", "")
    store.update_message(reply, "Hel")
    store.update_message(reply, "Hello!", "Stopped.")
    got = store.get(conv)
    assert (got.id, got.title, got.model, got.pinned) == (conv, "First", "/m/a.gguf", False)
    assert [(m.id, m.role, m.content, m.note) for m in got.messages] == [
        (user, "user", "Hi", ""), (reply, "assistant", "Hello!", "Stopped.")]
    assert got.messages[0].created < got.messages[1].created
    assert got.updated == got.messages[1].created


def test_pinned_first_then_most_recently_updated(store: ConversationStore) -> None:
    a = store.create("a")
    b = store.create("b")
    c = store.create("c")
    assert [s.id for s in store.summaries()] == [c, b, a]
    store.append_message(a, "user", "back to a")
    assert [s.id for s in store.summaries()] == [a, c, b]
    store.set_pinned(b, True)
    assert [(s.id, s.pinned) for s in store.summaries()] == [(b, True), (a, False), (c, False)]
    store.update_message(store.append_message(c, "user", "x"), "y")
    assert [s.id for s in store.summaries()] == [b, c, a]
    store.rename(a, "renamed")  # renaming does not reorder
    assert [s.id for s in store.summaries()] == [b, c, a]
    store.set_pinned(b, False)
    assert [s.id for s in store.summaries()] == [c, a, b]


def test_summaries_count_messages(store: ConversationStore) -> None:
    conv = store.create("t", "model")
    for i in range(3):
        store.append_message(conv, "user", str(i))
    (summary,) = store.summaries()
    assert (summary.title, summary.model, summary.message_count) == ("t", "model", 3)
    assert summary.created < summary.updated


def test_delete_cascades_to_messages(db: Database, store: ConversationStore) -> None:
    keep = store.create("keep")
    store.append_message(keep, "user", "stays")
    gone = store.create("gone")
    message = store.append_message(gone, "user", "goes")
    store.delete(gone)
    store.delete(gone)  # already gone: fine
    assert [s.id for s in store.summaries()] == [keep]
    assert db.query("SELECT COUNT(*) FROM messages", action="test")[0][0] == 1
    with pytest.raises(ConversationNotFoundError, match="no longer exists"):
        store.get(gone)
    with pytest.raises(MessageNotFoundError):
        store.update_message(message, "late piece of a reply")


def test_changes_to_a_missing_conversation_say_so(store: ConversationStore) -> None:
    for change in (lambda: store.append_message(42, "user", "x"), lambda: store.rename(42, "x"),
                   lambda: store.set_pinned(42, True)):
        with pytest.raises(ConversationNotFoundError) as caught:
            change()
        assert caught.value.conv_id == 42


def test_search_titles_and_content(store: ConversationStore) -> None:
    recipes = store.create("Bread recipes")
    physics = store.create("Physics")
    store.append_message(physics, "user", "Why is the sky BLUE?")
    store.create("Other")
    assert [s.id for s in store.search("bread")] == [recipes]
    assert [s.id for s in store.search("sky blue")] == [physics]  # ASCII case is ignored
    assert {s.id for s in store.search("e")} >= {recipes, physics}
    assert store.search("nothing like it") == []
    assert len(store.search("")) == 3


@pytest.mark.parametrize("needle", ["100%", "a_b", "back\\slash"])
def test_search_wildcards_match_themselves(store: ConversationStore, needle: str) -> None:
    literal = store.create("literal")
    store.append_message(literal, "user", f"x {needle} y")
    decoy = store.create("decoy")
    # Would match if % or _ were wildcards, or if the backslash were taken as an escape.
    store.append_message(decoy, "user", needle.replace("%", "0").replace("_", "X")
                         .replace("\\", "/") + " and 100 abb backslash")
    assert [s.id for s in store.search(needle)] == [literal]
