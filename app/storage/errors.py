"""Typed storage errors, kept apart from bugs (no Qt).

SQLite reports a full disk, a file held by another program and a damaged file through the same
exception classes as a typo in SQL. Only the first kind is something a user can act on, so only
those (recognized by SQLite's result code, not by the message text) become :class:`StorageError`
subclasses whose ``str()`` says what happened and what to do. Everything else (wrong SQL, wrong
parameter types, a broken constraint, a connection used from the wrong thread) is a bug and
propagates unchanged.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.i18n import T_, TextError

# SQLite primary result codes (https://sqlite.org/rescode.html); extended codes carry the
# primary one in their low byte.
SQLITE_PERM = 3
SQLITE_BUSY = 5
SQLITE_LOCKED = 6
SQLITE_NOMEM = 7
SQLITE_READONLY = 8
SQLITE_IOERR = 10
SQLITE_CORRUPT = 11
SQLITE_FULL = 13
SQLITE_CANTOPEN = 14
SQLITE_PROTOCOL = 15
SQLITE_NOLFS = 22
SQLITE_NOTADB = 26


class StorageError(TextError):
    """Hearth could not read or write its data; ``str()`` is the sentence to show (an
    :class:`app.i18n.Text` the window translates)."""


    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


class StorageFullError(StorageError):
    """The disk (or the database's size limit) is full."""


class StorageBusyError(StorageError):
    """Another connection held the database longer than the busy timeout."""


class StorageCorruptError(StorageError):
    """The file is not a SQLite database, or a damaged one; nothing was written to it."""

    def __init__(self, message: str, path: Path | None = None, detail: str = "") -> None:
        super().__init__(message, path)
        self.detail = detail  # what SQLite found, in its words, for the notice at start


class StorageTooNewError(StorageError):
    """The database was written by a newer Hearth; it was left exactly as it was."""


def too_new(path: Path, found: int, known: int) -> StorageTooNewError:
    """The refusal to open a database whose schema is newer than this Hearth understands."""
    return StorageTooNewError(
        T_("The library at {path} was written by a newer version of Hearth (schema version {found}; "
           "this version understands up to {known}). Update Hearth to open it; nothing in it was "
           "changed.", path=path, found=found, known=known), path)


def damaged(path: Path, detail: str, action: str) -> StorageCorruptError:
    """The error for a damaged library file (or one that is not a database at all).

    At start Hearth sets such a file aside itself (db.py's ``open_library``); this sentence is
    for damage found later, or a file that could not be moved.
    """
    return StorageCorruptError(
        T_("Hearth could not {action}: the library file {path} is damaged or is not a Hearth database "
           "({detail}). Quit Hearth and start it again: at start it sets a damaged library aside "
           "(nothing in it is deleted) and begins a new one. If this message comes back, move the file "
           "(with any {name}-wal and {name}-shm beside it) to another folder yourself, or restore it "
           "from a backup.", action=action, path=path, detail=detail, name=path.name), path, detail)


def translate(exc: sqlite3.Error, path: Path, action: str) -> StorageError | None:
    """The typed error for an environmental SQLite failure, or None when ``exc`` is a bug.

    ``action`` completes "Hearth could not …", e.g. "save the reply".
    """
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(code, int):
        return None  # raised by Python's sqlite3 module itself: misuse, not the disk
    primary = code & 0xFF
    detail = str(exc)  # SQLite's own words, e.g. "file is not a database"
    if primary == SQLITE_FULL:
        return StorageFullError(
            T_("The disk is full: Hearth could not {action}. Free some space; nothing already saved is "
               "lost.", action=action), path)
    if primary in (SQLITE_BUSY, SQLITE_LOCKED):
        return StorageBusyError(
            T_("Hearth could not {action}: the library file {path} is in use by another program "
               "(perhaps a second Hearth). Close the other program and try again; nothing already "
               "saved is lost.", action=action, path=path), path)
    if primary in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return damaged(path, detail, action)
    if primary in (SQLITE_READONLY, SQLITE_PERM):
        return StorageError(
            T_("Hearth could not {action}: the library file {path} cannot be written ({detail}). Check "
               "that the disk is not read-only and that you may write to that folder.", action=action,
               path=path, detail=detail), path)
    if primary in (SQLITE_CANTOPEN, SQLITE_NOLFS):
        return StorageError(
            T_("Hearth could not {action}: the library file {path} cannot be opened ({detail}). Check "
               "that the folder exists and that you may write to it.", action=action, path=path,
               detail=detail), path)
    if primary in (SQLITE_IOERR, SQLITE_PROTOCOL, SQLITE_NOMEM):
        return StorageError(
            T_("Hearth could not {action}: reading or writing the library file {path} failed "
               "({detail}). Check that the disk is connected and healthy, then try again; nothing "
               "already saved is lost.", action=action, path=path, detail=detail), path)
    return None
