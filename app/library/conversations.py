"""Conversations in the database: the sidebar's list, the messages, search (no Qt).

A conversation is a tree of messages (an edited question or a regenerated reply is a sibling of
the one it replaces, and the old branch is kept); ``head_id`` says which branch is shown.

Run on the store thread (app.storage.db.StoreThread). Streaming is cheap by design: the reply is
appended once (which also moves its conversation to the top) and then rewritten in place by
:meth:`ConversationStore.update_message`, one UPDATE of one row per call, however long the
conversation. Each call commits on its own, so what was stored survives the app being killed.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.chat.message import Message
from app.i18n import T_
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

log = logging.getLogger(__name__)

SEARCH_LIMIT = 200

_SUMMARY = """
    SELECT c.id, c.title, c.model, c.created, c.updated, c.pinned,
           (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) AS message_count
    FROM conversations c
    {where}
    ORDER BY c.pinned DESC, c.updated DESC, c.id DESC
"""


class _Head:
    """The default parent: the head of the branch shown."""


HEAD = _Head()


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
    messages: list[Message] = field(default_factory=list)  # the branch shown, oldest first
    settings: dict[str, Any] = field(default_factory=dict)  # system prompt, sampling


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
            (title, model, now, now), action=T_("save the new conversation"))
        return _row_id(cursor.lastrowid)

    def summaries(self) -> list[ConversationSummary]:
        """Every conversation: pinned ones first, then the most recently updated."""
        rows = self._db.query(_SUMMARY.format(where=""), action=T_("read the list of conversations"))
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
                              {"p": pattern, "limit": limit}, action=T_("search the conversations"))
        return [_summary(r) for r in rows]

    def get(self, conv_id: int) -> Conversation:
        """The conversation with the branch shown (root to head) in order, each message knowing
        its siblings; ConversationNotFoundError if gone."""
        action = T_("read the conversation")
        rows = self._db.query("SELECT id, title, model, created, updated, pinned, head_id, settings"
                              " FROM conversations WHERE id = ?", (conv_id,), action=action)
        if not rows:
            raise ConversationNotFoundError(conv_id)
        row = rows[0]
        stored = self._db.query("SELECT id, parent_id, role, content, note, created, meta"
                                " FROM messages WHERE conversation_id = ? ORDER BY id", (conv_id,),
                                action=action)
        return Conversation(id=row["id"], title=row["title"], model=row["model"],
                            created=row["created"], updated=row["updated"],
                            pinned=bool(row["pinned"]), settings=_json_object(row["settings"]),
                            messages=_branch(stored, row["head_id"]))

    def append_message(self, conv_id: int, role: str, content: str, note: str = "", *,
                       parent: int | _Head | None = HEAD, meta: Mapping[str, Any] | None = None
                       ) -> int:
        """Add a message after ``parent`` (default: the head of the branch shown) and make it
        the head; the conversation moves to the top. Returns its id.

        A parent with other children already makes the new message a branch: an edited
        question, a regenerated reply. The old branch is kept.
        """
        action = T_("save the message")
        now = self._clock()
        with self._db.transaction(action):
            found = self._db.query("SELECT head_id FROM conversations WHERE id = ?", (conv_id,),
                                   action=action)
            if not found:
                raise ConversationNotFoundError(conv_id)
            after = found[0]["head_id"] if isinstance(parent, _Head) else parent
            cursor = self._db.execute(
                "INSERT INTO messages (conversation_id, parent_id, role, content, note, created,"
                " meta) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (conv_id, after, role, content, note, now, _dumps(meta)), action=action)
            row = _row_id(cursor.lastrowid)
            self._db.execute("UPDATE conversations SET updated = ?, head_id = ? WHERE id = ?",
                             (now, row, conv_id), action=action)
        return row

    def update_message(self, message_id: int, content: str, note: str = "",
                       meta: Mapping[str, Any] | None = None) -> None:
        """Replace a message's text and note (the live reply as it streams): one UPDATE.

        ``meta`` None keeps the stored details.
        """
        if meta is None:
            cursor = self._db.execute("UPDATE messages SET content = ?, note = ? WHERE id = ?",
                                      (content, note, message_id), action=T_("save the reply"))
        else:
            cursor = self._db.execute(
                "UPDATE messages SET content = ?, note = ?, meta = ? WHERE id = ?",
                (content, note, _dumps(meta), message_id), action=T_("save the reply"))
        if not cursor.rowcount:
            raise MessageNotFoundError(message_id)

    def show_branch(self, conv_id: int, message_id: int) -> Conversation:
        """Show the branch through ``message_id``: its newest continuation becomes the head."""
        action = T_("switch to another version of the conversation")
        with self._db.transaction(action):
            rows = self._db.query("SELECT id, parent_id FROM messages WHERE conversation_id = ?",
                                  (conv_id,), action=action)
            children: dict[int | None, list[int]] = {}
            for r in rows:
                children.setdefault(r["parent_id"], []).append(r["id"])
            if message_id not in {r["id"] for r in rows}:
                raise MessageNotFoundError(message_id)
            head = message_id
            while children.get(head):
                head = max(children[head])  # the newest continuation
            self._db.execute("UPDATE conversations SET head_id = ? WHERE id = ?", (head, conv_id),
                             action=action)
        return self.get(conv_id)

    def set_settings(self, conv_id: int, settings: Mapping[str, Any]) -> None:
        """The conversation's system prompt and sampling settings (a JSON object)."""
        self._change(conv_id, "UPDATE conversations SET settings = ? WHERE id = ?",
                     (_dumps(settings), conv_id), T_("save the conversation's settings"))

    def set_model(self, conv_id: int, model: str) -> None:
        """The model the conversation is written with (it is offered again when reopened)."""
        self._change(conv_id, "UPDATE conversations SET model = ? WHERE id = ?", (model, conv_id),
                     T_("save the conversation's model"))

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
                         action=T_("delete the conversation"))

    def _change(self, conv_id: int, sql: str, params: tuple[object, ...], action: str) -> None:
        if not self._db.execute(sql, params, action=action).rowcount:
            raise ConversationNotFoundError(conv_id)


def _dumps(value: Mapping[str, Any] | None) -> str:
    return json.dumps(dict(value or {}), ensure_ascii=False, sort_keys=True)


def _json_object(text: str) -> dict[str, Any]:
    # Written by a later version, or damaged: the conversation must still open.
    try:
        value = json.loads(text or "{}")
    except ValueError:
        log.warning("ignoring unreadable stored settings: %.80s", text)
        return {}
    return value if isinstance(value, dict) else {}


def _branch(rows: Sequence[sqlite3.Row], head: int | None) -> list[Message]:
    """The messages from the root to ``head``, each linked to its parent and knowing its
    siblings. A missing head (a deleted message) falls back to the newest message."""
    by_id = {r["id"]: r for r in rows}
    if not rows:
        return []
    if head not in by_id:
        head = rows[-1]["id"]
    children: dict[int | None, list[int]] = {}
    for r in rows:
        children.setdefault(r["parent_id"], []).append(r["id"])
    chain: list[sqlite3.Row] = []
    seen: set[int] = set()
    at: int | None = head
    while at is not None and at in by_id and at not in seen:  # a cycle can only be damage
        seen.add(at)
        chain.append(by_id[at])
        at = by_id[at]["parent_id"]
    out: list[Message] = []
    parent: Message | None = None
    for r in reversed(chain):
        siblings = children.get(r["parent_id"], [])
        m = Message(role=r["role"], content=r["content"], note=r["note"], id=r["id"],
                    created=r["created"], parent=parent, meta=_json_object(r["meta"]),
                    siblings=tuple(siblings) if len(siblings) > 1 else ())
        out.append(m)
        parent = m
    return out


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _row_id(value: int | None) -> int:
    assert value is not None  # set by every successful INSERT
    return value


def _summary(r: sqlite3.Row) -> ConversationSummary:
    return ConversationSummary(id=r["id"], title=r["title"], model=r["model"], created=r["created"],
                               updated=r["updated"], pinned=bool(r["pinned"]),
                               message_count=r["message_count"])
