"""Importing the JSON files of earlier Hearth versions into the database (no Qt).

Earlier versions kept each conversation in ``<data dir>/conversations/<id>.json`` and the recent
models in ``<config dir>/recent_models.json``. Nothing of that may be lost:

- each conversation file is imported in its own transaction and then moved (never deleted) into
  ``conversations/imported/``. The row remembers the file's id (``legacy_id``), so a crash between
  the commit and the move cannot import it twice: the next start only finishes the move. A damaged
  file is skipped with a warning and left where it is.
- the recent-models list is imported once, recorded in the ``imports`` table. The file stays in
  place because the window still reads it until it switches to the model library.

This runs at every open, not as a migration: it costs one folder listing, and a file an older
Hearth writes after an upgrade (someone going back and forth) is still picked up.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app import paths
from app.i18n import T_
from app.storage.errors import StorageError

if TYPE_CHECKING:
    from app.storage.db import Database

log = logging.getLogger(__name__)

TITLE_CHARS = 60
UNTITLED = "Imported conversation"
RECENT_IMPORT = "recent_models.json"


@dataclass(frozen=True)
class LegacySources:
    """Where the old JSON files are; None means "nothing of that kind to import"."""

    conversations_dir: Path | None = None
    recent_file: Path | None = None

    @classmethod
    def default(cls) -> LegacySources:
        """The places earlier versions used (moved by ``HEARTH_HOME`` like everything else)."""
        return cls(paths.data_dir() / "conversations", paths.config_dir() / "recent_models.json")


@dataclass(frozen=True)
class ImportReport:
    """What one open imported; ``skipped`` are damaged files left in place."""

    conversations: int = 0
    models: int = 0
    skipped: tuple[Path, ...] = ()


@dataclass
class _OldConversation:
    legacy_id: str
    created: float
    updated: float
    model: str
    messages: list[tuple[str, str, str]] = field(default_factory=list)  # role, content, note


def short_title(text: str, limit: int = TITLE_CHARS) -> str:
    """A one-line title from a message: whitespace collapsed, cut at a word near ``limit``."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[:limit - 1]
    space = cut.rfind(" ")
    # A word boundary not too far back reads better than half a word.
    if line[len(cut)] != " " and space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def import_legacy(db: Database, sources: LegacySources,
                  clock: Callable[[], float] = time.time) -> ImportReport:
    """Import whatever old JSON files ``sources`` names and the database does not have yet."""
    conversations, skipped = _import_conversations(db, sources.conversations_dir)
    models = _import_recent(db, sources.recent_file, clock)
    if conversations or models or skipped:
        log.info("imported %d conversations and %d recent models from JSON files; %d skipped",
                 conversations, models, len(skipped))
    return ImportReport(conversations, models, tuple(skipped))


def _import_conversations(db: Database, folder: Path | None) -> tuple[int, list[Path]]:
    if folder is None or not folder.is_dir():
        return 0, []
    count, skipped = 0, []
    for file in sorted(folder.glob("*.json")):
        try:
            old = _read_conversation(file)
        except (OSError, ValueError) as exc:
            log.warning("not importing %s (left in place): %s", file, exc)
            skipped.append(file)
            continue
        try:
            count += _store(db, old)
        except StorageError as exc:
            # The files not yet imported stay where they are; the next start tries again.
            log.warning("importing old conversations stopped at %s: %s", file, exc)
            break
        _move_aside(file, folder / "imported")
    return count, skipped


def _read_conversation(file: Path) -> _OldConversation:
    data = json.loads(file.read_text("utf-8"))
    if not isinstance(data, dict):
        raise ValueError("not a conversation object")
    raw = data.get("messages", [])
    if not isinstance(raw, list):
        raise ValueError('"messages" is not a list')
    mtime = file.stat().st_mtime
    created = data.get("created")
    start = float(created) if isinstance(created, int | float) else mtime
    messages = [(m["role"], _text(m.get("content")), _text(m.get("note"))) for m in raw
                if isinstance(m, dict) and isinstance(m.get("role"), str) and m["role"]]
    return _OldConversation(legacy_id=str(data.get("id") or file.stem), created=start,
                            updated=max(start, mtime), model=_text(data.get("model")),
                            messages=messages)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _store(db: Database, old: _OldConversation) -> int:
    """Insert one old conversation; 0 when an earlier, interrupted start already did."""
    action = T_("import an old conversation")
    with db.transaction(action):
        if db.query("SELECT 1 FROM conversations WHERE legacy_id = ?", (old.legacy_id,),
                    action=action):
            return 0
        first = next((c for r, c, _ in old.messages if r == "user" and c.strip()), "")
        cursor = db.execute(
            "INSERT INTO conversations (title, model, created, updated, legacy_id)"
            " VALUES (?, ?, ?, ?, ?)",
            (short_title(first) if first else UNTITLED, old.model, old.created, old.updated,
             old.legacy_id), action=action)
        conv_id = cursor.lastrowid
        parent: int | None = None
        for role, content, note in old.messages:
            parent = db.execute(
                "INSERT INTO messages (conversation_id, parent_id, role, content, note, created)"
                " VALUES (?, ?, ?, ?, ?, ?)", (conv_id, parent, role, content, note, old.created),
                action=action).lastrowid
        db.execute("UPDATE conversations SET head_id = ? WHERE id = ?", (parent, conv_id),
                   action=action)
    return 1


def _move_aside(file: Path, folder: Path) -> None:
    try:
        folder.mkdir(exist_ok=True)
        target = folder / file.name
        n = 1
        while target.exists():  # never overwrite an earlier import of the same name
            target = folder / f"{file.stem}-{n}{file.suffix}"
            n += 1
        os.replace(file, target)
    except OSError as exc:
        # Imported already (legacy_id): the next start finds the row and only retries the move.
        log.warning("imported %s but could not move it into %s: %s", file, folder, exc)


def _import_recent(db: Database, file: Path | None, clock: Callable[[], float]) -> int:
    if file is None:
        return 0
    action = T_("import the recent models list")
    if db.query("SELECT 1 FROM imports WHERE name = ?", (RECENT_IMPORT,), action=action):
        return 0
    try:
        text = file.read_text("utf-8")
        newest = file.stat().st_mtime
    except FileNotFoundError:
        return 0  # nothing to import yet; a later start looks again
    except OSError as exc:
        log.warning("could not read %s, will try again next start: %s", file, exc)
        return 0
    try:
        data = json.loads(text)
        if not isinstance(data, list):
            raise ValueError("not a list of paths")
    except ValueError as exc:
        log.warning("not importing the damaged recent models list %s: %s", file, exc)
        data = []
    models = [p for p in data if isinstance(p, str) and p]
    try:
        with db.transaction(action):
            for i, path in enumerate(models):
                # Newest first in the file: one second apart keeps that order in the library.
                db.execute("INSERT OR IGNORE INTO models (path, name, size, last_used)"
                           " VALUES (?, ?, ?, ?)", (path, Path(path).name, _size(path), newest - i),
                           action=action)
            db.execute("INSERT INTO imports (name, done) VALUES (?, ?)", (RECENT_IMPORT, clock()),
                       action=action)
    except StorageError as exc:
        log.warning("importing the recent models list failed, will try again next start: %s", exc)
        return 0
    return len(models)


def _size(path: str) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None
