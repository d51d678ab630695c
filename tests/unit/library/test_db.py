"""Opening the database: settings, migrations, refusing what it must not touch, typed errors."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from app.library.conversations import ConversationStore
from app.library.models import ModelLibrary
from app.storage.db import (
    Database,
    StorageBusyError,
    StorageCorruptError,
    StorageFullError,
    StorageTooNewError,
    StoreThread,
    open_database,
    set_aside_damaged,
)
from app.storage.legacy import LegacySources
from app.storage.schema import LATEST_VERSION, MIGRATIONS

NO_LEGACY = LegacySources()

# The first released schema, frozen here: migration 1 must never change once shipped, and a
# database written by that version must open with everything in it.
VERSION_1 = (
    """CREATE TABLE conversations (id INTEGER PRIMARY KEY, title TEXT NOT NULL,
        model TEXT NOT NULL DEFAULT '', created REAL NOT NULL, updated REAL NOT NULL,
        pinned INTEGER NOT NULL DEFAULT 0, legacy_id TEXT UNIQUE)""",
    "CREATE INDEX conversations_order ON conversations (pinned DESC, updated DESC)",
    """CREATE TABLE messages (id INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        role TEXT NOT NULL, content TEXT NOT NULL, note TEXT NOT NULL DEFAULT '',
        created REAL NOT NULL)""",
    "CREATE INDEX messages_by_conversation ON messages (conversation_id, id)",
    "CREATE TABLE imports (name TEXT PRIMARY KEY, done REAL NOT NULL)",
)


def _pragma(db: Database, name: str) -> object:
    return db.query(f"PRAGMA {name}", action="test")[0][0]


def test_a_new_database_is_wal_normal_with_foreign_keys_and_the_latest_schema(db: Database) -> None:
    assert _pragma(db, "journal_mode") == "wal"
    assert _pragma(db, "synchronous") == 1  # NORMAL
    assert _pragma(db, "foreign_keys") == 1
    assert int(_pragma(db, "busy_timeout")) > 0  # type: ignore[call-overload]
    assert _pragma(db, "user_version") == LATEST_VERSION


def test_migrations_are_numbered_from_one_without_gaps() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))


def test_a_version_1_database_opens_with_its_data_and_is_migrated(db_path: Path) -> None:
    conn = sqlite3.connect(db_path, isolation_level=None)
    for statement in VERSION_1:
        conn.execute(statement)
    conn.execute("INSERT INTO conversations (title, created, updated) VALUES ('Old', 1, 2)")
    conn.execute("INSERT INTO messages (conversation_id, role, content, created)"
                 " VALUES (1, 'user', 'hello', 1)")
    conn.execute("PRAGMA user_version = 1")
    conn.close()

    db = open_database(db_path, legacy=NO_LEGACY)
    try:
        assert _pragma(db, "user_version") == LATEST_VERSION
        conv = ConversationStore(db).get(1)
        assert conv.title == "Old" and [m.content for m in conv.messages] == ["hello"]
        ModelLibrary(db).add_or_touch("/models/x.gguf")  # a table from a later migration
        assert [m.path for m in ModelLibrary(db).recent()] == ["/models/x.gguf"]
    finally:
        db.close()
    open_database(db_path, legacy=NO_LEGACY).close()  # opening again migrates nothing


def test_a_failed_migration_leaves_the_previous_version(
        db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.storage import db as dbmod
    from app.storage.schema import Migration

    broken = (*MIGRATIONS, Migration(LATEST_VERSION + 1, "broken",
                                     ("CREATE TABLE later (x)", "THIS IS NOT SQL")))
    monkeypatch.setattr(dbmod, "MIGRATIONS", broken)
    monkeypatch.setattr(dbmod, "LATEST_VERSION", LATEST_VERSION + 1)
    with pytest.raises(sqlite3.OperationalError):  # a bug, not a storage failure
        open_database(db_path, legacy=NO_LEGACY)
    monkeypatch.undo()
    db = open_database(db_path, legacy=NO_LEGACY)
    try:
        assert _pragma(db, "user_version") == LATEST_VERSION
        assert not db.query("SELECT name FROM sqlite_master WHERE name = 'later'", action="test")
    finally:
        db.close()


def test_a_database_from_a_newer_hearth_is_refused_and_left_alone(db_path: Path) -> None:
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("CREATE TABLE future (x)")
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 5}")
    conn.close()
    before = db_path.read_bytes()
    with pytest.raises(StorageTooNewError) as caught:
        open_database(db_path, legacy=NO_LEGACY)
    message = str(caught.value)
    assert "newer version of Hearth" in message and str(db_path) in message
    assert f"version {LATEST_VERSION + 5}" in message
    assert db_path.read_bytes() == before
    assert not Path(f"{db_path}-wal").exists()


def test_a_file_that_is_not_a_database_is_named_and_left_untouched(db_path: Path) -> None:
    garbage = os.urandom(16384)
    db_path.write_bytes(garbage)
    with pytest.raises(StorageCorruptError) as caught:
        open_database(db_path, legacy=NO_LEGACY)
    assert str(db_path) in str(caught.value) and "move the file" in str(caught.value)
    assert caught.value.path == db_path
    assert db_path.read_bytes() == garbage

    moved = set_aside_damaged(db_path)
    assert moved.read_bytes() == garbage and not db_path.exists()
    open_database(db_path, legacy=NO_LEGACY).close()  # a fresh, empty library


def test_a_damaged_page_is_a_storage_corrupt_error(db_path: Path) -> None:
    db = open_database(db_path, legacy=NO_LEGACY)
    store = ConversationStore(db)
    conv = store.create("t")
    for _ in range(100):
        store.append_message(conv, "user", "x" * 2000)
    db.close()
    with db_path.open("r+b") as f:  # page 1 (the header and schema) stays intact
        f.seek(4096)
        f.write(os.urandom(4096 * 8))
    with pytest.raises(StorageCorruptError, match="malformed") as caught:
        db = open_database(db_path, legacy=NO_LEGACY)
        try:
            ConversationStore(db).get(conv)
        finally:
            db.close()
    assert str(db_path) in str(caught.value)


def test_a_full_disk_is_a_storage_full_error_and_loses_nothing_saved(db: Database) -> None:
    store = ConversationStore(db)
    conv = store.create("Kept", "m")
    store.append_message(conv, "user", "saved before the disk filled")
    pages = _pragma(db, "page_count")
    db.execute(f"PRAGMA max_page_count = {pages}", action="test")
    with pytest.raises(StorageFullError) as caught:
        store.append_message(conv, "assistant", "x" * 200_000)
    assert str(caught.value).startswith("The disk is full: Hearth could not save the message.")
    assert "nothing already saved is lost" in str(caught.value)
    assert [m.content for m in store.get(conv).messages] == ["saved before the disk filled"]
    with pytest.raises(StorageFullError):
        store.update_message(1, "y" * 200_000)
    assert store.get(conv).messages[0].content == "saved before the disk filled"


def test_a_database_held_by_another_program_is_a_storage_busy_error(db_path: Path) -> None:
    db = open_database(db_path, legacy=NO_LEGACY, busy_timeout_ms=50)
    other = sqlite3.connect(db_path, isolation_level=None)
    try:
        conv = ConversationStore(db).create("t")
        other.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StorageBusyError) as caught:
            ConversationStore(db).append_message(conv, "user", "hi")
        assert "in use by another program" in str(caught.value) and str(db_path) in str(caught.value)
        with pytest.raises(StorageBusyError):
            ConversationStore(db).rename(conv, "new")
        other.execute("ROLLBACK")
        ConversationStore(db).append_message(conv, "user", "hi")  # works once released
    finally:
        other.close()
        db.close()


def test_programming_errors_propagate_unchanged(db: Database) -> None:
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        db.query("SELECT * FROM nowhere", action="test")
    with pytest.raises(sqlite3.ProgrammingError):
        db.execute("SELECT ?", (object(),), action="test")
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO messages (conversation_id, role, content, created)"
                   " VALUES (999, 'user', 'x', 1)", action="test")


def test_a_failed_transaction_saves_none_of_its_statements(db: Database) -> None:
    with pytest.raises(ZeroDivisionError), db.transaction("test"):
        db.execute("INSERT INTO conversations (title, created, updated) VALUES ('x', 1, 1)",
                   action="test")
        _ = 1 / 0
    assert db.query("SELECT COUNT(*) FROM conversations", action="test")[0][0] == 0


def test_the_store_thread_owns_the_only_connection(db_path: Path) -> None:
    with StoreThread(lambda: open_database(db_path, legacy=NO_LEGACY)) as store:
        assert store.opened.result(timeout=10).conversations == 0
        conv = store.submit(lambda db: ConversationStore(db).create("t")).result(timeout=10)
        names = store.submit(lambda db: threading.current_thread().name).result(timeout=10)
        assert names == "hearth-store" != threading.current_thread().name
        leaked = store.submit(lambda db: db).result(timeout=10)
        with pytest.raises(sqlite3.ProgrammingError, match="thread"):
            ConversationStore(leaked).get(conv)


def test_store_thread_calls_run_in_order_and_close_finishes_the_queue(db_path: Path) -> None:
    store = StoreThread(lambda: open_database(db_path, legacy=NO_LEGACY))
    conv = store.submit(lambda db: ConversationStore(db).create("t")).result(timeout=10)
    row = store.submit(lambda db: ConversationStore(db).append_message(conv, "assistant", ""))

    def update(text: str) -> Callable[[Database], None]:
        return lambda db: ConversationStore(db).update_message(row.result(), text)

    for i in range(50):
        store.submit(update(f"part {i}"))
    failing = store.submit(lambda db: 1 // 0)
    store.close(timeout=10)
    with pytest.raises(ZeroDivisionError):
        failing.result()
    with pytest.raises(RuntimeError):
        store.submit(lambda db: None)
    db = open_database(db_path, legacy=NO_LEGACY)
    try:
        assert ConversationStore(db).get(conv).messages[0].content == "part 49"
    finally:
        db.close()


def test_a_store_thread_that_cannot_open_reports_why_to_every_caller(db_path: Path) -> None:
    db_path.write_bytes(os.urandom(8192))
    with StoreThread(lambda: open_database(db_path, legacy=NO_LEGACY)) as store:
        with pytest.raises(StorageCorruptError):
            store.opened.result(timeout=10)
        with pytest.raises(StorageCorruptError):
            store.submit(lambda db: None).result(timeout=10)


def test_version_2_conversations_become_one_branch_each(db_path: Path) -> None:
    """A database written by schema version 2 (lines of messages) opens as branches."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    for migration in MIGRATIONS[:2]:
        for statement in migration.statements:
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 2")
    for conv in (1, 2):
        conn.execute("INSERT INTO conversations (id, title, created, updated) VALUES (?, ?, 0, 0)",
                     (conv, f"c{conv}"))
    rows = [(1, "user", "a"), (2, "user", "x"), (1, "assistant", "b"), (2, "assistant", "y"),
            (1, "user", "c")]
    for conv, role, content in rows:
        conn.execute("INSERT INTO messages (conversation_id, role, content, created)"
                     " VALUES (?, ?, ?, 0)", (conv, role, content))
    conn.close()
    db = open_database(db_path, legacy=LegacySources())
    try:
        assert _pragma(db, "user_version") == LATEST_VERSION
        store = ConversationStore(db)
        one, two = store.get(1), store.get(2)
        assert [m.content for m in one.messages] == ["a", "b", "c"]
        assert [m.content for m in two.messages] == ["x", "y"]
        assert one.messages[2].parent is one.messages[1] and one.messages[0].parent is None
        assert one.settings == {} and all(not m.siblings for m in one.messages)
        # New messages continue the migrated branch.
        store.append_message(2, "user", "z")
        assert [m.content for m in store.get(2).messages] == ["x", "y", "z"]
    finally:
        db.close()
