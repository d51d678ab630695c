"""Hearth's SQLite database: opening, migrating, and the one thread that owns it (no Qt).

Settings chosen for "never lose a conversation" at streaming speed:

- WAL journal with ``synchronous=NORMAL``: a commit is one append to the log, no fsync, and it
  survives the app being killed (only a power cut can undo the last commits, never corrupt).
  The live reply can then be committed several times a second for almost nothing.
- ``foreign_keys=ON`` so deleting a conversation deletes its messages.
- a ``busy_timeout`` so a second program briefly holding the file waits instead of failing.
- ``PRAGMA quick_check`` at every open: a library with damaged pages otherwise opens, lists
  nothing and fails at some saves. Found at open, :func:`open_library` sets it aside and begins a
  new one. quick_check reads every page (about 0.1 s for 120 MB here, on the store thread, not
  the GUI's); unlike integrity_check it does not match indexes against their rows: damaged
  pages are what make reads fail, while an index that disagrees can be rebuilt and is no reason
  to move the person's conversations out of sight.
- connections in autocommit mode (``isolation_level=None``): a lone statement is its own
  transaction, and :meth:`Database.transaction` groups several explicitly.

One connection belongs to one thread: :class:`StoreThread` creates it there and runs every call
there; sqlite3's ``check_same_thread`` stays on to catch any use from elsewhere.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from app import paths
from app.i18n import T_
from app.storage.errors import (
    StorageBusyError,
    StorageCorruptError,
    StorageError,
    StorageFullError,
    StorageTooNewError,
    damaged,
    too_new,
    translate,
)
from app.storage.legacy import ImportReport, LegacySources, import_legacy
from app.storage.schema import LATEST_VERSION, MIGRATIONS

__all__ = [
    "Database",
    "SetAside",
    "StorageBusyError",
    "StorageCorruptError",
    "StorageError",
    "StorageFullError",
    "StorageTooNewError",
    "StoreThread",
    "default_path",
    "open_database",
    "open_library",
    "set_aside_damaged",
]

log = logging.getLogger(__name__)

T = TypeVar("T")
FILE_NAME = "hearth.sqlite3"
BUSY_TIMEOUT_MS = 5000
QUICK_CHECK_FINDINGS = 3  # quick_check stops after this many: enough to say what is wrong
Params = Sequence[Any] | Mapping[str, Any]


def default_path() -> Path:
    """``<data dir>/hearth.sqlite3``."""
    return paths.data_dir() / FILE_NAME


@contextmanager
def _typed_errors(path: Path, action: str) -> Iterator[None]:
    """Environmental SQLite failures become StorageErrors; bugs pass through unchanged."""
    try:
        yield
    except sqlite3.Error as exc:
        typed = translate(exc, path, action)
        if typed is None:
            raise
        log.warning("could not %s (%s): %s", action, path, exc)
        raise typed from exc


@dataclass(frozen=True)
class SetAside:
    """A damaged library that :func:`open_library` moved out of the way before beginning anew."""

    original: Path  # where the library is, now a new one
    moved: Path  # where the damaged file went (its -wal and -shm beside it, if there were any)
    detail: str  # what SQLite found, in its words

    def headline(self) -> str:
        return T_("Hearth's library of conversations was damaged, so Hearth set it aside and "
                  "started a new, empty one.")

    def details(self) -> str:
        if self.detail:
            return T_("The damaged file is now {moved}; nothing in it was deleted. The "
                      "conversations saved before are in that file: a recovery tool (for example "
                      "the sqlite3 program's .recover command) may get them back. What was wrong: "
                      "{detail}.", moved=self.moved, detail=self.detail.rstrip("."))
        return T_("The damaged file is now {moved}; nothing in it was deleted. The conversations "
                  "saved before are in that file: a recovery tool (for example the sqlite3 "
                  "program's .recover command) may get them back.", moved=self.moved)

    def __str__(self) -> str:
        return T_("{headline} {details}", headline=self.headline(), details=self.details())


class Database:
    """An open, migrated database; use it only on the thread that opened it."""

    def __init__(self, connection: sqlite3.Connection, path: Path,
                 imported: ImportReport | None = None) -> None:
        self.path = path
        self.imported = imported or ImportReport()
        self.set_aside: SetAside | None = None  # open_library began anew: tell the person
        self._conn = connection

    def execute(self, sql: str, params: Params = (), *, action: str) -> sqlite3.Cursor:
        """Run one statement; ``action`` completes "Hearth could not …" in a typed error."""
        with _typed_errors(self.path, action):
            return self._conn.execute(sql, params)

    def query(self, sql: str, params: Params = (), *, action: str) -> list[sqlite3.Row]:
        """Run one statement and return all its rows (columns by name or index)."""
        with _typed_errors(self.path, action):
            return self._conn.execute(sql, params).fetchall()

    @contextmanager
    def transaction(self, action: str) -> Iterator[None]:
        """Group statements into one transaction: all of them are saved, or none.

        ``BEGIN IMMEDIATE`` takes the write lock up front, so a busy database fails here, before
        any work, rather than halfway through.
        """
        with _typed_errors(self.path, action):
            self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._rollback()
            raise
        with _typed_errors(self.path, action):
            try:
                self._conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    def close(self) -> None:
        """Close the connection (SQLite then folds the WAL back into the main file)."""
        try:
            self._conn.execute("PRAGMA optimize")
        except sqlite3.Error as exc:
            log.debug("PRAGMA optimize failed at close: %s", exc)
        self._conn.close()

    def _rollback(self) -> None:
        # SQLite may already have rolled back (a full disk does that): never hide the cause.
        if self._conn.in_transaction:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error as exc:
                log.warning("rollback failed: %s", exc)


def open_database(path: Path | None = None, *, legacy: LegacySources | None = None,
                  busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> Database:
    """Open (creating if needed) and migrate the database, then import old JSON files.

    ``path`` defaults to :func:`default_path`. ``legacy`` says where earlier versions' JSON files
    are; left out, the default database imports from the default places and any other database
    imports nothing (a test's or a copy's database never takes the user's files).

    Raises :class:`StorageTooNewError` for a database from a newer Hearth (left untouched),
    :class:`StorageCorruptError` for a damaged file (quick_check's findings) or one that is not
    a database (:func:`open_library` sets such a file aside), and other :class:`StorageError`
    subclasses when the disk fails.
    """
    target = default_path() if path is None else Path(path)
    if legacy is None and path is None:
        legacy = LegacySources.default()
    action = T_("open its library")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(T_("Hearth could not create the folder for its library, {parent} "
                              "({error}). Check that you may write there.", parent=target.parent,
                              error=exc.strerror or str(exc)), target) from exc
    with _typed_errors(target, action):
        conn = sqlite3.connect(target, timeout=busy_timeout_ms / 1000, isolation_level=None)
    try:
        with _typed_errors(target, action):
            _configure(conn, target, busy_timeout_ms)
            _migrate(conn, target)
        conn.row_factory = sqlite3.Row
        db = Database(conn, target)
        if legacy is not None:
            db.imported = import_legacy(db, legacy)
    except BaseException:
        conn.close()
        raise
    return db


def open_library(path: Path | None = None, *, legacy: LegacySources | None = None,
                 busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> Database:
    """:func:`open_database`, except that a damaged library is set aside and a new one begun.

    The app's opener: a damaged file is renamed beside itself (:func:`set_aside_damaged`, never
    deleted) and the returned database's ``set_aside`` says where it went, for the window to
    tell. When even the rename fails (a read-only folder), the damage is raised as
    :class:`StorageCorruptError` saying so. Other errors are raised as by :func:`open_database`.
    """
    target = default_path() if path is None else Path(path)
    try:
        return open_database(path, legacy=legacy, busy_timeout_ms=busy_timeout_ms)
    except StorageCorruptError as exc:
        damage = exc
    try:
        moved = set_aside_damaged(target)
    except OSError as exc:
        raise StorageCorruptError(
            T_("{damage} Hearth could not set it aside itself ({error}).", damage=str(damage),
               error=exc.strerror or str(exc)), target,
            damage.detail) from exc
    db = open_database(path, legacy=legacy, busy_timeout_ms=busy_timeout_ms)
    db.set_aside = SetAside(target, moved, damage.detail)
    return db


def _user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _configure(conn: sqlite3.Connection, path: Path, busy_timeout_ms: int) -> None:
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    # Read before writing anything: a file that is not a database fails here untouched, and a
    # newer schema is refused before even the journal mode is changed.
    found = _user_version(conn)
    if found > LATEST_VERSION:
        raise too_new(path, found, LATEST_VERSION)
    _check_pages(conn, path)
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        # Some network file systems cannot share memory for WAL; rollback journaling still works.
        log.warning("the database at %s stays in %s journal mode, not WAL", path, mode)
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")


def _check_pages(conn: sqlite3.Connection, path: Path) -> None:
    """Raise StorageCorruptError when quick_check finds damage (before anything is written).

    Damage bad enough that SQLite cannot even walk the pages raises SQLITE_CORRUPT from the
    pragma itself, which :func:`_typed_errors` turns into the same error.
    """
    findings = [str(row[0]) for row in
                conn.execute(f"PRAGMA quick_check({QUICK_CHECK_FINDINGS})").fetchall()]
    if findings == ["ok"]:
        return
    # One line per finding (SQLite packs several into a row after a "*** in database main ***"
    # heading), and SQLite's own phrase for SQLITE_CORRUPT first, so both routes read alike.
    lines = [line.strip() for f in findings for line in f.splitlines()]
    found = [line for line in lines if line and not line.startswith("*** in database")]
    detail = "database disk image is malformed: " + "; ".join(found[:QUICK_CHECK_FINDINGS])
    raise damaged(path, detail, T_("open its library"))


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    for migration in MIGRATIONS:
        if _user_version(conn) >= migration.version:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read under the write lock: another Hearth may have migrated meanwhile.
            current = _user_version(conn)
            if current > LATEST_VERSION:
                raise too_new(path, current, LATEST_VERSION)
            if current < migration.version:
                for statement in migration.statements:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {migration.version}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        log.info("database %s migrated to version %d: %s", path, migration.version,
                 migration.summary)


def set_aside_damaged(path: Path | None = None) -> Path:
    """Rename a damaged database (and its -wal/-shm files) out of the way; return its new path.

    For the window to offer after :class:`StorageCorruptError`: the next open starts an empty
    library, and the old file stays on disk for recovery tools. Call it with no connection open.
    """
    source = default_path() if path is None else Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    moved = source.with_name(f"{source.name}.damaged-{stamp}")
    n = 1
    while moved.exists():
        moved = source.with_name(f"{source.name}.damaged-{stamp}-{n}")
        n += 1
    for suffix in ("-wal", "-shm"):
        companion = source.with_name(source.name + suffix)
        if companion.exists():
            companion.replace(moved.with_name(moved.name + suffix))
    source.replace(moved)
    log.warning("set the damaged database %s aside as %s", source, moved)
    return moved


_Job = tuple[Callable[[Database], Any], "Future[Any]"]


class StoreThread:
    """The one thread that opens the database and runs every call on it, in order.

    ``opener`` runs on that thread (default: :func:`open_database` with its defaults). Its
    outcome is :attr:`opened`: the import report, or the error that kept the database closed,
    which every later call then fails with as well.
    """

    def __init__(self, opener: Callable[[], Database] = open_database, *,
                 name: str = "hearth-store") -> None:
        self.opened: Future[ImportReport] = Future()
        self._opener = opener
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False
        # A daemon thread: a window that forgets close() must still be able to quit. Being cut
        # off mid-transaction is then like a crash, which WAL survives.
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[[Database], T]) -> Future[T]:
        """Run ``fn(db)`` on the store thread after everything submitted before it.

        ``fn`` must not keep the Database or its rows' cursors for use elsewhere.
        """
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the store thread is closed")
            self._jobs.put((fn, future))
        return future

    def close(self, timeout: float | None = None) -> None:
        """Run what is queued, close the connection, and end the thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._jobs.put(None)
        self._thread.join(timeout)

    def __enter__(self) -> StoreThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> None:
        db: Database | None = None
        failure: BaseException | None = None
        try:
            db = self._opener()
        except BaseException as exc:  # the window must hear why, not find a dead thread
            failure = exc
            if not isinstance(exc, StorageError):
                log.error("opening the database failed", exc_info=exc)
            self.opened.set_exception(exc)
        else:
            self.opened.set_result(db.imported)
        try:
            while (job := self._jobs.get()) is not None:
                fn, future = job
                if not future.set_running_or_notify_cancel():
                    continue
                if db is None:
                    assert failure is not None
                    future.set_exception(failure)
                    continue
                try:
                    result = fn(db)
                except BaseException as exc:
                    future.set_exception(exc)
                else:
                    future.set_result(result)
        finally:
            if db is not None:
                db.close()
