"""The model library: local model files the user has used, newest first (no Qt).

It replaces the recent-files list. Paths are kept exactly as given (the file picker gives
absolute ones), so the caller's string comes back unchanged. The store reads the file's size once,
when it is added or used again; whether a file still exists is for the caller to check when it
shows the list, as the disk may change at any time. :meth:`ModelLibrary.forget_unusable` (run
once at start, on the store's thread) forgets the files that were deleted or are not models.

:func:`telling_names` gives files of the same name names that tell them apart.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from app.i18n import T_
from app.storage.db import Database

RECENT_LIMIT = 10
GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class LocalModel:
    """A model file the user has loaded."""

    path: str
    name: str  # the file name, for display
    size: int | None  # bytes when last used; None if it could not be read then
    last_used: float


class ModelLibrary:
    """Add, list and forget local model files."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.time) -> None:
        self._db = db
        self._clock = clock

    def add_or_touch(self, path: str | os.PathLike[str]) -> LocalModel:
        """Record that the model at ``path`` was used now (adding it if new)."""
        key = os.fspath(path)
        try:
            size: int | None = os.stat(key).st_size
        except OSError:
            size = None  # the model may sit on a disk that is gone; keep it listed anyway
        model = LocalModel(path=key, name=Path(key).name, size=size, last_used=self._clock())
        self._db.execute(
            "INSERT INTO models (path, name, size, last_used) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (path) DO UPDATE SET name = excluded.name,"
            " size = COALESCE(excluded.size, models.size), last_used = excluded.last_used",
            (model.path, model.name, model.size, model.last_used), action=T_("save the model list"))
        return model

    def recent(self, limit: int = RECENT_LIMIT) -> list[LocalModel]:
        """The most recently used models, newest first."""
        rows = self._db.query("SELECT path, name, size, last_used FROM models"
                              " ORDER BY last_used DESC, rowid DESC LIMIT ?", (limit,),
                              action=T_("read the model list"))
        return [_model(r) for r in rows]

    def remove(self, path: str | os.PathLike[str]) -> None:
        """Forget a model (the file itself is not touched); forgetting an unknown one is fine."""
        self._db.execute("DELETE FROM models WHERE path = ?", (os.fspath(path),),
                         action=T_("update the model list"))

    def forget_unusable(self) -> list[str]:
        """Forget the files that can no longer be loaded; returns their paths.

        Gone: a file deleted from a folder that is still there. A file whose folder is gone too
        stays: it may sit on a drive that is not plugged in now, and comes back with it. Not a
        model: a file that does not start with the GGUF magic (a script or a text file once
        opened by path).
        """
        rows = self._db.query("SELECT path FROM models", (), action=T_("read the model list"))
        unusable = [r["path"] for r in rows if not _usable(r["path"])]
        for path in unusable:
            self.remove(path)
        return unusable


def _model(r: sqlite3.Row) -> LocalModel:
    return LocalModel(path=r["path"], name=r["name"], size=r["size"], last_used=r["last_used"])


def _usable(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(GGUF_MAGIC)) == GGUF_MAGIC
    except FileNotFoundError:
        return not os.path.isdir(os.path.dirname(path) or ".")  # gone, or its drive away
    except OSError:
        return True  # unreadable now (permissions, a drive waking up): not proof of anything


def telling_names(entries: Sequence[tuple[str, str]]) -> list[str]:
    """The names to show for (path, name) pairs: a name that several paths share gets as many
    of its last folders as it takes to tell them apart ("model.gguf (in …/work)", "model.gguf
    (in …/home)"; "model.gguf (in …/a/x)" when both are in an "x"; the whole folder when that is
    all it takes). Unique names stay as they are: most lists have no two alike.
    """
    shown = [name for _, name in entries]
    groups: dict[str, list[int]] = {}
    for i, (_, name) in enumerate(entries):
        groups.setdefault(name, []).append(i)
    for name, indices in groups.items():
        folders = {i: _folder_parts(entries[i][0]) for i in indices}
        if len(indices) < 2 or len(set(folders.values())) < 2:
            continue  # unique, or the very same folder (the same path twice)
        deepest = max(len(parts) for parts in folders.values())
        for depth in range(1, deepest + 1):
            tails = {i: folders[i][-depth:] for i in indices}
            if len(set(tails.values())) == len(indices):
                break
        for i in indices:
            tail = tails[i]
            where = str(PurePath(entries[i][0]).parent) if len(tail) == len(folders[i]) \
                else f"…{os.sep}{PurePath(*tail)}"
            shown[i] = f"{name} (in {where})"
    return shown


def _folder_parts(path: str) -> tuple[str, ...]:
    """The folders above ``path``, the root left out ("/a/x/m.gguf" -> ("a", "x"))."""
    parent = PurePath(path).parent
    return parent.parts[1:] if parent.anchor else parent.parts
