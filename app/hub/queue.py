"""The list of downloads, kept in one JSON file that a crash never leaves half written (no Qt).

The app keeps it at ``paths.data_dir() / "downloads.json"``. Each change is written at once
with :func:`app.storage.atomic.write_json_atomic`. A download that was running when the app
stopped is found as "downloading" and becomes "queued" again on load, so it resumes from its
partial file. A file that cannot be read is moved aside (``.bad``) rather than overwritten, so
nothing is lost without a trace.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.hub.types import HubFile
from app.storage.atomic import write_json_atomic

_log = logging.getLogger(__name__)

FORMAT = "hearth-downloads"
VERSION = 1
STATES = ("queued", "downloading", "paused", "failed", "done")


@dataclass(frozen=True)
class QueueEntry:
    """One download: a group of files (all parts of a split model) from one repository commit."""

    id: str
    repo_id: str
    revision: str
    group: str  # the FileGroup's name
    files: tuple[HubFile, ...]
    folder: str  # where the files go (absolute)
    state: str = "queued"
    error: str = ""  # the sentence shown for "failed" or "paused"
    added: float = field(default_factory=time.time)

    @property
    def size(self) -> int | None:
        sizes = [f.size for f in self.files]
        return None if any(s is None for s in sizes) else sum(s or 0 for s in sizes)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "repo_id": self.repo_id, "revision": self.revision, "group": self.group,
                "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.files],
                "folder": self.folder, "state": self.state, "error": self.error, "added": self.added}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> QueueEntry:
        files = tuple(HubFile(str(f["path"]), None if f.get("size") is None else int(f["size"]),
                              None if f.get("sha256") is None else str(f["sha256"]))
                      for f in raw["files"])
        state = str(raw.get("state", "queued"))
        if state not in STATES:
            raise ValueError(f"unknown state {state!r}")
        return cls(id=str(raw["id"]), repo_id=str(raw["repo_id"]), revision=str(raw["revision"]),
                   group=str(raw["group"]), files=files, folder=str(raw["folder"]), state=state,
                   error=str(raw.get("error", "")), added=float(raw.get("added", 0.0)))


class DownloadQueue:
    """Thread-safe; every method that changes something writes the file before it returns."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._entries: list[QueueEntry] = self._load()

    # -- reading ---------------------------------------------------------------------------------

    def entries(self) -> list[QueueEntry]:
        with self._lock:
            return list(self._entries)

    def get(self, entry_id: str) -> QueueEntry | None:
        with self._lock:
            return next((e for e in self._entries if e.id == entry_id), None)

    def next_queued(self) -> QueueEntry | None:
        """The oldest entry waiting to run."""
        with self._lock:
            return next((e for e in self._entries if e.state == "queued"), None)

    # -- changing --------------------------------------------------------------------------------

    def add(self, repo_id: str, revision: str, group: str, files: tuple[HubFile, ...] | list[HubFile],
            folder: Path | str) -> QueueEntry:
        """Queue a download; the same repository, revision and group again returns the entry
        already there (queued again if it had failed or was paused)."""
        with self._lock:
            for i, e in enumerate(self._entries):
                if (e.repo_id, e.revision, e.group) == (repo_id, revision, group):
                    if e.state in ("failed", "paused"):
                        e = replace(e, state="queued", error="")
                        self._entries[i] = e
                        self._save()
                    return e
            entry = QueueEntry(uuid.uuid4().hex, repo_id, revision, group, tuple(files),
                               str(Path(folder).resolve()))
            self._entries.append(entry)
            self._save()
            return entry

    def set_state(self, entry_id: str, state: str, error: str = "") -> QueueEntry:
        if state not in STATES:
            raise ValueError(f"state must be one of {', '.join(STATES)}, not {state!r}")
        with self._lock:
            for i, e in enumerate(self._entries):
                if e.id == entry_id:
                    self._entries[i] = e = replace(e, state=state, error=error)
                    self._save()
                    return e
        raise KeyError(entry_id)

    def remove(self, entry_id: str) -> None:
        """Forget an entry (its files are the caller's business: app.hub.download.discard)."""
        with self._lock:
            before = len(self._entries)
            self._entries = [e for e in self._entries if e.id != entry_id]
            if len(self._entries) != before:
                self._save()

    # -- the file --------------------------------------------------------------------------------

    def _save(self) -> None:
        write_json_atomic(self.path, {"format": FORMAT, "version": VERSION,
                                      "entries": [e.to_json() for e in self._entries]})

    def _load(self) -> list[QueueEntry]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        try:
            raw = json.loads(text)
            if not isinstance(raw, dict) or raw.get("format") != FORMAT:
                raise ValueError("not a Hearth download list")
            if raw.get("version") != VERSION:
                raise ValueError(f"version {raw.get('version')!r}, this Hearth reads {VERSION}")
            entries = [QueueEntry.from_json(e) for e in raw["entries"]]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self._set_aside(exc)
            return []
        # "downloading" on load means the app stopped mid-way: run it again (it resumes).
        return [replace(e, state="queued") if e.state == "downloading" else e for e in entries]

    def _set_aside(self, exc: Exception) -> None:
        bad = self.path.with_name(self.path.name + ".bad")
        try:
            os.replace(self.path, bad)
        except OSError as move_exc:
            _log.warning("The download list %s cannot be read (%s) nor moved aside (%s); starting "
                         "with an empty list.", self.path, exc, move_exc)
            return
        _log.warning("The download list %s cannot be read (%s); it was moved to %s and Hearth starts "
                     "with an empty list.", self.path, exc, bad)
