"""The database schema as an ordered list of migrations (no Qt).

``PRAGMA user_version`` holds the number of the last migration applied. A migration, once
released, never changes: a later change is a new migration appended here, so any database, from
the first version on, walks the same path to the current schema. Each migration runs in one
transaction together with the version bump (db.py), so a crash leaves the old version or the new
one. ``PRAGMA foreign_keys`` cannot change inside a transaction: a future migration that rebuilds
a table referenced by a foreign key must keep the rows consistent itself.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    """One step: the SQL statements that take version ``version - 1`` to ``version``."""

    version: int
    summary: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "conversations and their messages", (
        """CREATE TABLE conversations (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL,
            model TEXT NOT NULL DEFAULT '',
            created REAL NOT NULL,
            updated REAL NOT NULL,
            pinned INTEGER NOT NULL DEFAULT 0,
            legacy_id TEXT UNIQUE  -- the id of the JSON file it was imported from, if any
        )""",
        "CREATE INDEX conversations_order ON conversations (pinned DESC, updated DESC)",
        """CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            created REAL NOT NULL
        )""",
        "CREATE INDEX messages_by_conversation ON messages (conversation_id, id)",
        # One-time imports already done (e.g. the old recent-models list), so none runs twice.
        "CREATE TABLE imports (name TEXT PRIMARY KEY, done REAL NOT NULL)",
    )),
    Migration(2, "the model library and per-model settings", (
        """CREATE TABLE models (
            path TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            size INTEGER,
            last_used REAL NOT NULL
        )""",
        "CREATE INDEX models_by_use ON models (last_used DESC)",
        """CREATE TABLE model_settings (
            key TEXT PRIMARY KEY,
            settings TEXT NOT NULL,  -- a JSON object
            updated REAL NOT NULL
        )""",
    )),
    Migration(3, "branches, per-conversation settings and reply details", (
        # A conversation is a tree: editing a question or regenerating a reply adds a sibling,
        # and the old branch stays. head_id is the last message of the branch shown.
        "ALTER TABLE conversations ADD COLUMN head_id INTEGER",
        # The system prompt and sampling settings (a JSON object: new keys need no migration).
        "ALTER TABLE conversations ADD COLUMN settings TEXT NOT NULL DEFAULT '{}'",
        "ALTER TABLE messages ADD COLUMN parent_id INTEGER"
        " REFERENCES messages (id) ON DELETE CASCADE",
        # Per reply: the model it came from, tokens/s, time to first token, reasoning (JSON).
        "ALTER TABLE messages ADD COLUMN meta TEXT NOT NULL DEFAULT '{}'",
        # Version 2's conversations were lines: each message's parent is the one before it.
        """UPDATE messages SET parent_id = (
            SELECT MAX(p.id) FROM messages p
            WHERE p.conversation_id = messages.conversation_id AND p.id < messages.id)""",
        """UPDATE conversations SET head_id = (
            SELECT MAX(m.id) FROM messages m WHERE m.conversation_id = conversations.id)""",
        "CREATE INDEX messages_by_parent ON messages (parent_id)",
    )),
)

LATEST_VERSION = MIGRATIONS[-1].version
