"""The download queue as a service: one download at a time, on its own thread, resumable.

The queue itself is a crash-safe file (app/hub/queue.py): a download the app was in the middle
of when it closed or crashed is queued again at the next start and continues from its partial
file and journal (app/hub/download.py). Pause is a cancel that keeps the partial file; Cancel
also deletes it. Progress comes from the download thread through a relay and reaches the view
at most ten times a second.

A file that ``hearth download`` (or any other Hearth process) is downloading already is not
fetched twice: the downloader waits for the other's lock, and the row says so ("waiting: … is
being downloaded by another Hearth (hearth download, pid N)"); then it finds the file verified,
or resumes where the other stopped. Cancelling such a wait deletes nothing of the other's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.hub.download import DownloadProgress, discard, download_group, sources_for
from app.hub.names import repo_folder, safe_join
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

    progress = Signal(str, DownloadProgress)  # id, what its thread reported
    ended = Signal(str)  # the download thread of that id has stopped (after any clean-up)


def _group(entry: QueueEntry) -> FileGroup:
    return FileGroup(entry.group, FileKind.MODEL, None, entry.files)


class DownloadManager(QObject):
    """Satisfies app/services/protocols.py's DownloadsLike."""

    changed = Signal()
    progress = Signal(DownloadRow)
    finished = Signal(str)  # the path of the model's first file
    failed = Signal(str, object)  # id, sentence

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
        self._relay.ended.connect(self._on_thread_ended)
        # Ids whose download thread has not stopped yet (a pause or cancel takes a moment): no
        # second thread may start on the same files meanwhile. GUI thread only.
        self._running: set[str] = set()
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

    @staticmethod
    def _on_disk(e: QueueEntry) -> int:
        """What the journals say is safe on disk (the address plays no part when the hash is
        known, so no Hub client is needed here: the GUI thread never touches the keyring)."""
        from app.hub.download import DownloadSource, downloaded_bytes

        folder = Path(e.folder)
        try:
            return sum(downloaded_bytes(folder, DownloadSource("", f.path, f.size or 0, f.sha256))
                       for f in e.files)
        except (HubError, OSError):
            return 0

    # -- commands ---------------------------------------------------------------------------

    def enqueue(self, details: RepoDetails, group: FileGroup) -> str:
        if group.kind is not FileKind.MODEL:
            raise HubError(f"{group.name} is not a chat model; download a model file instead.")
        folder = repo_folder(self._models_dir(), details.repo_id)
        for f in group.files:
            safe_join(self._models_dir(), f"{details.repo_id}/{f.path}")
        for old in self._queue.entries():
            # Done before, deleted since: a new download, not a "done" row pointing at nothing.
            if (old.repo_id, old.revision, old.group) == (details.repo_id, details.revision,
                                                          group.name) and old.state == "done" \
                    and not all((Path(old.folder) / f.path).is_file() for f in old.files):
                self._queue.remove(old.id)
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
            self._active = None
        self._set(id, "paused")
        self.changed.emit()
        self._pump()

    def resume(self, id: str) -> None:
        self._set(id, "queued")
        self.changed.emit()
        self._pump()

    def retry(self, id: str) -> None:
        self.resume(id)

    def cancel(self, id: str) -> None:
        entry = self._entry(id)
        if self._active is not None and self._active[0] == id:
            self._active[1].cancel()
            self._active = None
        if id in self._running:
            self._discard_after.add(id)  # its thread deletes again once it has stopped
        if entry is not None:
            self._discard_files(entry)  # the bytes go now (a journal written meanwhile, later)
        try:
            self._queue.remove(id)
        except OSError as exc:
            log.error("could not save the download queue: %s", exc)
        self._live.pop(id, None)
        self.changed.emit()
        self._pump()

    @staticmethod
    def _discard_files(entry: QueueEntry) -> None:
        # discard() leaves the files of a download another Hearth is running now: they are its.
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

    def _set(self, id: str, state: str, error: str = "") -> None:
        """Change an entry's state; the queue file failing to save (a full disk holds it too)
        must not leave the manager half-updated, so it is logged and the change stays in memory."""
        try:
            self._queue.set_state(id, state, error)
        except KeyError:
            pass  # cancelled meanwhile
        except OSError as exc:
            log.error("could not save the download queue: %s", exc)

    def _on_thread_ended(self, id: str) -> None:
        self._running.discard(id)
        self._pump()

    def _pump(self) -> None:
        if self._active is not None:
            return
        entry = next((e for e in self._queue.entries()
                      if e.state == "queued" and e.id not in self._running), None)
        if entry is None:
            return
        self._set(entry.id, "downloading")
        make_client, relay, id = self._client, self._relay, entry.id

        def work(token: CancelToken) -> list[Path]:
            try:
                # The client is made here, not on the GUI thread: making it reads the keyring.
                sources = sources_for(make_client(), entry.repo_id, entry.revision, _group(entry))
                return self._download(sources, Path(entry.folder), cancel=token,
                                      progress=lambda p: relay.progress.emit(id, p),
                                      who="the Hearth app")
            finally:
                # Cancelled (not paused) while running: the transfer has stopped only now, so
                # only now can no chunk being recorded write its journal back.
                if id in self._discard_after:
                    self._discard_after.discard(id)
                    self._discard_files(entry)
                relay.ended.emit(id)

        token = self._tasks.start_job(work, lambda paths: self._on_done(id, paths),
                                      lambda exc: self._on_failed(id, exc),
                                      name="download", expected=(HubError, OSError))
        self._active = (id, token)
        self._running.add(id)
        self.changed.emit()

    def _on_progress(self, id: str, p: DownloadProgress) -> None:
        if self._active is None or self._active[0] != id:
            return  # a late report from a download that was paused meanwhile
        self._live[id] = p
        entry = self._entry(id)
        if entry is not None:
            self.progress.emit(self._row(entry))

    def _on_done(self, id: str, paths: list[Path]) -> None:
        entry = self._entry(id)
        self._active = None
        self._live.pop(id, None)
        self._set(id, "done")
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
        self._active = None
        self._live.pop(id, None)
        # A full disk pauses (everything downloaded is kept; Resume continues); other problems
        # fail the entry with the sentence, and Retry starts it again from its partial file.
        state = "paused" if isinstance(exc, DiskFullError) else "failed"
        self._set(id, state, str(exc))
        self.changed.emit()
        self.failed.emit(id, str(exc))
        self._pump()
