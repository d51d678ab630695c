"""The download queue as a service: one download at a time, on its own thread, resumable.

The queue itself is a crash-safe file (app/hub/queue.py): a download the app was in the middle
of when it closed or crashed is queued again at the next start and continues from its partial
file and journal (app/hub/download.py). Pause is a cancel that keeps the partial file; Cancel
also deletes it. Progress comes from the download thread through a relay and reaches the view
at most ten times a second.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.hub.download import DownloadProgress, discard, download_group, sources_for
from app.hub.names import safe_join, safe_relative_path
from app.hub.queue import DownloadQueue, QueueEntry
from app.hub.types import (
    DiskFullError,
    FileGroup,
    FileKind,
    HubError,
    RepoDetails,
)
from app.jobs import CancelToken
from app.services.protocols import DownloadRow
from app.services.tasks import TaskRunner

log = logging.getLogger(__name__)


class _Relay(QObject):
    """Carries progress from the download thread to the GUI thread (a queued connection)."""

    progress = Signal(str, object)


def _group(entry: QueueEntry) -> FileGroup:
    return FileGroup(entry.group, FileKind.MODEL, None, entry.files)


class DownloadManager(QObject):
    """Satisfies app/services/protocols.py's DownloadsLike."""

    changed = Signal()
    progress = Signal(object)  # DownloadRow
    finished = Signal(str)  # the path of the model's first file
    failed = Signal(str, str)  # id, sentence

    def __init__(self, tasks: TaskRunner, queue: DownloadQueue, client: Callable[[], Any],
                 models_dir: Callable[[], Path], *,
                 on_verified: Callable[[Path, str], None] | None = None,
                 download: Callable[..., list[Path]] = download_group,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks = tasks
        self._queue = queue
        self._client = client
        self._models_dir = models_dir
        self._on_verified = on_verified
        self._download = download
        self._relay = _Relay()
        self._relay.progress.connect(self._on_progress)
        self._live: dict[str, DownloadProgress] = {}
        self._active: tuple[str, CancelToken] | None = None
        # Cancelled while running: the download thread deletes the files once it has stopped
        # (shared with that thread; set operations are atomic).
        self._discard_after: set[str] = set()

    # -- what the view reads ----------------------------------------------------------------

    def rows(self) -> list[DownloadRow]:
        return [self._row(e) for e in self._queue.entries()]

    def _row(self, e: QueueEntry) -> DownloadRow:
        live = self._live.get(e.id)
        total = sum(f.size for f in e.files if f.size is not None) or None
        if live is not None and e.state == "downloading":
            return DownloadRow(e.id, self._title(e), e.state, live.done, live.total or total,
                               live.rate, live.eta, live.phase, e.error)
        done = total or 0 if e.state == "done" else self._on_disk(e)
        return DownloadRow(e.id, self._title(e), e.state, done, total, 0.0, None,
                           e.state, e.error)

    @staticmethod
    def _title(e: QueueEntry) -> str:
        parts = f" ({len(e.files)} parts)" if len(e.files) > 1 else ""
        return f"{e.repo_id} · {e.group}{parts}"

    def _on_disk(self, e: QueueEntry) -> int:
        from app.hub.download import downloaded_bytes

        folder = Path(e.folder)
        try:
            client = self._client()
            return sum(downloaded_bytes(folder, s)
                       for s in sources_for(client, e.repo_id, e.revision, _group(e)))
        except (HubError, OSError):
            return 0

    # -- commands ---------------------------------------------------------------------------

    def enqueue(self, details: RepoDetails, group: FileGroup) -> str:
        if group.kind is not FileKind.MODEL:
            raise HubError(f"{group.name} is not a chat model; download a model file instead.")
        repo = safe_relative_path(details.repo_id)  # owner/name, checked like any other name
        folder = self._models_dir().joinpath(*repo.parts)
        for f in group.files:
            safe_join(self._models_dir(), f"{details.repo_id}/{f.path}")
        entry = self._queue.add(details.repo_id, details.revision, group.name, group.files,
                                folder)
        self.changed.emit()
        self._pump()
        return entry.id

    def start(self) -> None:
        """At start-up: continue what was queued or running when the app last closed."""
        self._pump()

    def pause(self, id: str) -> None:
        if self._active is not None and self._active[0] == id:
            self._active[1].cancel()
            self._finish_active()
        self._queue.set_state(id, "paused")
        self.changed.emit()
        self._pump()

    def resume(self, id: str) -> None:
        self._queue.set_state(id, "queued", "")
        self.changed.emit()
        self._pump()

    def retry(self, id: str) -> None:
        self.resume(id)

    def cancel(self, id: str) -> None:
        entry = self._entry(id)
        if self._active is not None and self._active[0] == id:
            self._discard_after.add(id)  # the download thread deletes once it has stopped
            self._active[1].cancel()
            self._finish_active()
        if entry is not None:
            self._discard_files(entry)
        self._queue.remove(id)
        self._live.pop(id, None)
        self.changed.emit()
        self._pump()

    @staticmethod
    def _discard_files(entry: QueueEntry) -> None:
        for f in entry.files:
            try:
                discard(Path(entry.folder), f.path)
            except (OSError, HubError) as exc:
                log.warning("could not delete the partial %s: %s", f.path, exc)

    def shutdown(self) -> None:
        """The window closes: stop the transfer, keep its partial file (it resumes next start)."""
        if self._active is not None:
            self._active[1].cancel()
            self._active = None

    # -- running ----------------------------------------------------------------------------

    def _entry(self, id: str) -> QueueEntry | None:
        return self._queue.get(id)

    def _pump(self) -> None:
        if self._active is not None:
            return
        entry = self._queue.next_queued()
        if entry is None:
            return
        self._queue.set_state(entry.id, "downloading", "")
        client = self._client()
        relay, id = self._relay, entry.id

        def work(token: CancelToken) -> list[Path]:
            try:
                sources = sources_for(client, entry.repo_id, entry.revision, _group(entry))
                return self._download(sources, Path(entry.folder), cancel=token,
                                      progress=lambda p: relay.progress.emit(id, p))
            finally:
                # Cancelled (not paused) while running: the transfer has stopped only now, so
                # only now can no chunk being recorded write its journal back.
                if id in self._discard_after:
                    self._discard_after.discard(id)
                    self._discard_files(entry)

        token = self._tasks.start_job(work, lambda paths: self._on_done(id, paths),
                                      lambda exc: self._on_failed(id, exc),
                                      name="download", expected=(HubError, OSError))
        self._active = (id, token)
        self.changed.emit()

    def _finish_active(self) -> None:
        self._active = None

    def _on_progress(self, id: str, p: DownloadProgress) -> None:
        if self._active is None or self._active[0] != id:
            return  # a late report from a download that was paused meanwhile
        self._live[id] = p
        entry = self._entry(id)
        if entry is not None:
            self.progress.emit(self._row(entry))

    def _on_done(self, id: str, paths: list[Path]) -> None:
        entry = self._entry(id)
        self._finish_active()
        self._live.pop(id, None)
        self._queue.set_state(id, "done", "")
        if entry is not None and self._on_verified is not None:
            for path, f in zip(paths, entry.files, strict=False):
                if f.sha256:
                    try:
                        self._on_verified(path, f.sha256)
                    except OSError as exc:
                        log.info("could not record the checksum of %s: %s", path, exc)
        self.changed.emit()
        if paths:
            self.finished.emit(str(paths[0]))
        self._pump()

    def _on_failed(self, id: str, exc: Exception) -> None:
        self._finish_active()
        self._live.pop(id, None)
        # A full disk pauses (everything downloaded is kept; Resume continues); other problems
        # fail the entry with the sentence, and Retry starts it again from its partial file.
        state = "paused" if isinstance(exc, DiskFullError) else "failed"
        self._queue.set_state(id, state, str(exc))
        self.changed.emit()
        self.failed.emit(id, str(exc))
        self._pump()
