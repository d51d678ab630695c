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
)

LATEST_VERSION = MIGRATIONS[-1].version
