"""The model library: local model files the user has used, newest first (no Qt).

It replaces the recent-files list. Paths are kept exactly as given (the file picker gives
absolute ones), so the caller's string comes back unchanged. The store reads the file's size once,
when it is added or used again; whether a file still exists is for the caller to check when it
shows the list, as the disk may change at any time.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.storage.db import Database

RECENT_LIMIT = 10


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
            (model.path, model.name, model.size, model.last_used), action="save the model list")
        return model

    def recent(self, limit: int = RECENT_LIMIT) -> list[LocalModel]:
        """The most recently used models, newest first."""
        rows = self._db.query("SELECT path, name, size, last_used FROM models"
                              " ORDER BY last_used DESC, rowid DESC LIMIT ?", (limit,),
                              action="read the model list")
        return [_model(r) for r in rows]

    def remove(self, path: str | os.PathLike[str]) -> None:
        """Forget a model (the file itself is not touched); forgetting an unknown one is fine."""
        self._db.execute("DELETE FROM models WHERE path = ?", (os.fspath(path),),
                         action="update the model list")


def _model(r: sqlite3.Row) -> LocalModel:
    return LocalModel(path=r["path"], name=r["name"], size=r["size"], last_used=r["last_used"])
