"""Conversations in the database: the sidebar's list, the messages, search (no Qt).

Run on the store thread (app.storage.db.StoreThread). Streaming is cheap by design: the reply is
appended once (which also moves its conversation to the top) and then rewritten in place by
:meth:`ConversationStore.update_message`, one UPDATE of one row per call, however long the
conversation. Each call commits on its own, so what was stored survives the app being killed.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from app.chat.message import Message
from app.storage.db import Database
from app.storage.legacy import short_title

__all__ = [
    "Conversation",
    "ConversationNotFoundError",
    "ConversationStore",
    "ConversationSummary",
    "MessageNotFoundError",
    "short_title",
]

SEARCH_LIMIT = 200

_SUMMARY = """
    SELECT c.id, c.title, c.model, c.created, c.updated, c.pinned,
           (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) AS message_count
    FROM conversations c
    {where}
    ORDER BY c.pinned DESC, c.updated DESC, c.id DESC
"""


class ConversationNotFoundError(LookupError):
    """The conversation is gone (deleted meanwhile, perhaps in another view)."""

    def __init__(self, conv_id: int) -> None:
        super().__init__("That conversation no longer exists; it may have been deleted.")
        self.conv_id = conv_id


class MessageNotFoundError(LookupError):
    """The message is gone (its conversation was deleted meanwhile)."""

    def __init__(self, message_id: int) -> None:
        super().__init__("That message no longer exists; its conversation may have been deleted.")
        self.message_id = message_id


@dataclass(frozen=True)
class ConversationSummary:
    """One row of the sidebar."""

    id: int
    title: str
    model: str
    created: float
    updated: float
    pinned: bool
    message_count: int


@dataclass
class Conversation:
    """A conversation with its messages, oldest first."""

    id: int
    title: str
    model: str
    created: float
    updated: float
    pinned: bool
    messages: list[Message] = field(default_factory=list)


class ConversationStore:
    """Create, list, read, change and search conversations; ids are the database's row ids."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.time) -> None:
        self._db = db
        self._clock = clock

    def create(self, title: str, model: str = "") -> int:
        """A new, empty conversation; returns its id."""
        now = self._clock()
        cursor = self._db.execute(
            "INSERT INTO conversations (title, model, created, updated) VALUES (?, ?, ?, ?)",
            (title, model, now, now), action="save the new conversation")
        return _row_id(cursor.lastrowid)

    def summaries(self) -> list[ConversationSummary]:
        """Every conversation: pinned ones first, then the most recently updated."""
        rows = self._db.query(_SUMMARY.format(where=""), action="read the list of conversations")
        return [_summary(r) for r in rows]

    def search(self, text: str, limit: int = SEARCH_LIMIT) -> list[ConversationSummary]:
        """Conversations whose title or any message contains ``text`` (in list order).

        ``%`` and ``_`` match themselves. SQLite's LIKE ignores case for ASCII letters only.
        """
        if not text:
            return self.summaries()[:limit]
        pattern = "%" + _escape_like(text) + "%"
        where = ("WHERE c.title LIKE :p ESCAPE '\\' OR EXISTS (SELECT 1 FROM messages m"
                 " WHERE m.conversation_id = c.id AND m.content LIKE :p ESCAPE '\\')")
        rows = self._db.query(_SUMMARY.format(where=where) + " LIMIT :limit",
                              {"p": pattern, "limit": limit}, action="search the conversations")
        return [_summary(r) for r in rows]

    def get(self, conv_id: int) -> Conversation:
        """The conversation with its messages in order; ConversationNotFoundError if gone."""
        action = "read the conversation"
        rows = self._db.query("SELECT id, title, model, created, updated, pinned"
                              " FROM conversations WHERE id = ?", (conv_id,), action=action)
        if not rows:
            raise ConversationNotFoundError(conv_id)
        row = rows[0]
        messages = [Message(role=m["role"], content=m["content"], note=m["note"], id=m["id"],
                            created=m["created"])
                    for m in self._db.query("SELECT id, role, content, note, created FROM messages"
                                            " WHERE conversation_id = ? ORDER BY id", (conv_id,),
                                            action=action)]
        return Conversation(id=row["id"], title=row["title"], model=row["model"],
                            created=row["created"], updated=row["updated"],
                            pinned=bool(row["pinned"]), messages=messages)

    def append_message(self, conv_id: int, role: str, content: str, note: str = "") -> int:
        """Add a message at the end (the conversation moves to the top); returns its id."""
        action = "save the message"
        now = self._clock()
        with self._db.transaction(action):
            if not self._db.execute("UPDATE conversations SET updated = ? WHERE id = ?",
                                    (now, conv_id), action=action).rowcount:
                raise ConversationNotFoundError(conv_id)
            cursor = self._db.execute(
                "INSERT INTO messages (conversation_id, role, content, note, created)"
                " VALUES (?, ?, ?, ?, ?)", (conv_id, role, content, note, now), action=action)
        return _row_id(cursor.lastrowid)

    def update_message(self, message_id: int, content: str, note: str = "") -> None:
        """Replace a message's text and note (the live reply as it streams): one UPDATE."""
        if not self._db.execute("UPDATE messages SET content = ?, note = ? WHERE id = ?",
                                (content, note, message_id), action="save the reply").rowcount:
            raise MessageNotFoundError(message_id)

    def rename(self, conv_id: int, title: str) -> None:
        """Change the title (the conversation keeps its place in the list)."""
        self._change(conv_id, "UPDATE conversations SET title = ? WHERE id = ?", (title, conv_id),
                     "rename the conversation")

    def set_pinned(self, conv_id: int, pinned: bool) -> None:
        """Pin the conversation to the top of the list, or unpin it."""
        self._change(conv_id, "UPDATE conversations SET pinned = ? WHERE id = ?",
                     (int(pinned), conv_id), "pin the conversation" if pinned else "unpin the conversation")

    def delete(self, conv_id: int) -> None:
        """Delete the conversation and its messages; deleting one already gone is no error."""
        self._db.execute("DELETE FROM conversations WHERE id = ?", (conv_id,),
                         action="delete the conversation")

    def _change(self, conv_id: int, sql: str, params: tuple[object, ...], action: str) -> None:
        if not self._db.execute(sql, params, action=action).rowcount:
            raise ConversationNotFoundError(conv_id)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _row_id(value: int | None) -> int:
    assert value is not None  # set by every successful INSERT
    return value


def _summary(r: sqlite3.Row) -> ConversationSummary:
    return ConversationSummary(id=r["id"], title=r["title"], model=r["model"], created=r["created"],
                               updated=r["updated"], pinned=bool(r["pinned"]),
                               message_count=r["message_count"])
