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


# ---- branches, settings, details (schema version 3) --------------------------------------------


def test_a_regenerated_reply_is_a_branch_and_the_old_one_is_kept(store: ConversationStore) -> None:
    conv = store.create("t")
    q = store.append_message(conv, "user", "Q")
    a1 = store.append_message(conv, "assistant", "first answer")
    a2 = store.append_message(conv, "assistant", "second answer", parent=q,
                              meta={"model": "m.gguf", "tokens_per_s": 12.5})
    got = store.get(conv)
    assert [m.content for m in got.messages] == ["Q", "second answer"]
    assert got.messages[1].siblings == (a1, a2) and got.messages[1].branch == (2, 2)
    assert got.messages[1].parent is got.messages[0]
    assert got.messages[1].meta == {"model": "m.gguf", "tokens_per_s": 12.5}
    back = store.show_branch(conv, a1)
    assert [m.content for m in back.messages] == ["Q", "first answer"]
    assert back.messages[1].branch == (1, 2)
    assert store.get(conv).messages[1].id == a1  # the choice is stored


def test_an_edited_question_branches_and_showing_it_follows_its_newest_reply(
        store: ConversationStore) -> None:
    conv = store.create("t")
    q1 = store.append_message(conv, "user", "Q1")
    store.append_message(conv, "assistant", "A1")
    store.append_message(conv, "user", "Q2")
    store.append_message(conv, "assistant", "A2")
    q1b = store.append_message(conv, "user", "Q1 edited", parent=None)
    store.append_message(conv, "assistant", "A1b")
    assert [m.content for m in store.get(conv).messages] == ["Q1 edited", "A1b"]
    assert [m.content for m in store.show_branch(conv, q1).messages] == ["Q1", "A1", "Q2", "A2"]
    assert store.get(conv).messages[0].siblings == (q1, q1b)
    with pytest.raises(MessageNotFoundError):
        store.show_branch(conv, 999_999)


def test_settings_and_model_are_stored_and_unreadable_settings_open_empty(
        db: Database, store: ConversationStore) -> None:
    conv = store.create("t")
    store.set_settings(conv, {"system_prompt": "Be brief.", "sampling": {"temperature": 0.2}})
    store.set_model(conv, "/m/b.gguf")
    got = store.get(conv)
    assert got.settings == {"system_prompt": "Be brief.", "sampling": {"temperature": 0.2}}
    assert got.model == "/m/b.gguf"
    db.execute("UPDATE conversations SET settings = '[1, 2' WHERE id = ?", (conv,), action="t")
    assert store.get(conv).settings == {}
    with pytest.raises(ConversationNotFoundError):
        store.set_settings(999_999, {})


def test_update_keeps_details_unless_given(store: ConversationStore) -> None:
    conv = store.create("t")
    r = store.append_message(conv, "assistant", "", meta={"model": "m"})
    store.update_message(r, "partial")
    assert store.get(conv).messages[0].meta == {"model": "m"}
    store.update_message(r, "done", meta={"model": "m", "ttft_ms": 80})
    assert store.get(conv).messages[0].meta == {"model": "m", "ttft_ms": 80}
