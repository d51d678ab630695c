"""Hearth's own resumable HTTP Range downloader (no Qt).

huggingface_hub's downloader deletes its partial file on failure and cannot pause, so Hearth
fetches model files itself:

- Each file is cut into chunks, fetched over several connections (Range requests, 206). A file
  grows as ``<name>.part`` beside its final name, with a journal ``<name>.part.json`` recording
  which chunks are on disk and a CRC-32 of each as written. A chunk is recorded only after its
  bytes are flushed to the disk (fdatasync), so a crash or a power cut loses at most the chunks
  in flight: one per connection. Calling :func:`download_group` again resumes.
- A server that ignores Range (200) is read as one plain stream; such a file cannot resume, and
  its journal says so.
- Connection errors, timeouts, 5xx and 429 are retried with exponential backoff; a connection
  that sends nothing for ``stall_timeout`` seconds is dropped and reopened where it stopped.
- When all chunks are in, the whole file's sha256 is compared with the Hub's. On a mismatch the
  chunks on disk are hashed against the journal to find damaged ones, which alone are fetched
  again; if none is damaged (the bytes were wrong on the wire) the whole file is fetched once
  more. Only a verified file is renamed to its final name: a model in the library is complete.
- Cancelling (the user's "pause") keeps the partial file and its journal; :func:`discard` is
  "cancel and delete".
- One Hearth at a time per file: a download holds ``<name>.lock`` beside each file of its group
  (app/storage/filelock.py, an OS lock the kernel drops when the process dies). The app and
  ``hearth download`` in a terminal, started on the same file, used to write one partial file
  together: the later one then failed ("No such file or directory") and its journal stayed
  beside the verified model. Now the later one waits, saying for whom (``phase`` "waiting: …",
  ``waiting_for``), and then goes on: usually to find the file complete and verified, or, if the
  other stopped half way, to resume from its partial file.

Everything is given as plain URLs and headers (:class:`DownloadSource`), so this module does
not depend on how :class:`app.hub.client.HubClient` makes them; :func:`sources_for` bridges.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import math
import os
import random
import re
import shutil
import socket
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.hub.names import safe_join
from app.hub.types import (
    AuthError,
    DiskFullError,
    DownloadError,
    FileGroup,
    HubUnreachableError,
    IntegrityError,
)
from app.i18n import T_, Text, TextError
from app.jobs import CancelledError, CancelToken
from app.storage.atomic import write_json_atomic
from app.storage.filelock import FileLock

if TYPE_CHECKING:  # imported where it is used: the window's start need not wait for it
    import httpx2

_log = logging.getLogger(__name__)

MiB = 1024 * 1024
JOURNAL_VERSION = 2  # 2: chunks carry a CRC-32 (1 had a sha256 each)
_CONTENT_RANGE_RE = re.compile(r"^\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*$")
_HASH_BLOCK = 8 * MiB  # reading back for verification: large reads, few Python calls
_DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
# Windows opens files as text unless told otherwise.
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0)
# macOS has no fdatasync; fsync is the same promise there, at a little more cost.
_datasync: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)


# -- public values ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DownloadSource:
    """One file to fetch: where from, how, and what it must turn out to be."""

    url: str
    name: str  # the path under the target folder (the repository path); checked by safe_join
    size: int  # bytes, as the Hub lists them; the server must agree
    sha256: str | None  # lowercase hex; None: only the size can be checked
    headers: Mapping[str, str] = field(default_factory=dict)  # auth and user agent
    revision: str | None = None  # the commit the URL is pinned to (recorded in the journal)


@dataclass(frozen=True)
class DownloadProgress:
    """A snapshot for the UI, sent at most every ``progress_interval`` seconds."""

    done: int  # bytes on disk for the whole group
    total: int
    rate: float  # bytes per second, smoothed over a few seconds
    eta: float | None  # seconds, None while the rate is unknown
    files: tuple[int, ...]  # bytes on disk per file, in the order of the sources
    phase: str  # "downloading", "verifying", "retrying in 4s: <why>", "paused: <why>", ...
    current: str = ""  # the file being worked on
    waiting_for: str = ""  # while another Hearth downloads a file of the group: who (pid, what)


def _free_space(folder: Path) -> int:
    return shutil.disk_usage(folder).free


def _pwrite_locked_factory() -> Callable[[int, bytes | memoryview, int], int]:
    """A positional write for systems without os.pwrite (Windows): seek and write, one at a time."""
    lock = threading.Lock()

    def pwrite(fd: int, data: bytes | memoryview, offset: int) -> int:
        with lock:
            os.lseek(fd, offset, os.SEEK_SET)
            return os.write(fd, data)

    return pwrite


_pwrite: Callable[[int, bytes | memoryview, int], int] = getattr(os, "pwrite", None) \
    or _pwrite_locked_factory()


@dataclass(frozen=True)
class DownloadOptions:
    """How hard to try. The two last fields are the disk boundaries, replaceable in tests."""

    # per file, when the server accepts Range. Two: on a fast link (loopback, LAN) more only
    # contend for the CPU (measured: 1-2 connections 370 MB/s, 4 connections 250 MB/s here);
    # on a slow one the second connection already hides most of a request's latency.
    connections: int = 2
    chunk_size: int | None = None  # None: chosen from the file size (see chunk_size_for)
    retries: int = 6  # attempts in a row without a byte of progress before giving up
    backoff: float = 1.0  # seconds before the first retry; doubled each time
    backoff_max: float = 30.0
    stall_timeout: float = 20.0  # seconds without a byte before a connection is dropped
    connect_timeout: float = 20.0
    reserve: int = 256 * MiB  # free space left over after the download, for everything else
    progress_interval: float = 0.1  # at most ten progress callbacks a second
    lock_poll: float = 0.5  # seconds between looks at a file another Hearth is downloading
    write: Callable[[int, bytes | memoryview, int], int] = _pwrite  # (fd, data, offset) -> written
    free_space: Callable[[Path], int] = _free_space  # bytes free on the drive holding a folder


class DownloadUnavailableError(DownloadError, HubUnreachableError):
    """The server could not be reached or kept failing for every retry; the partial is kept."""


ProgressCallback = Callable[[DownloadProgress], None]


class FileUrls(Protocol):
    """What :func:`sources_for` needs from a Hub client (app.hub.client.HubClient has it)."""

    def file_url(self, repo_id: str, revision: str, path: str) -> str: ...

    def request_headers(self) -> dict[str, str]: ...


def sources_for(client: FileUrls, repo_id: str, revision: str, group: FileGroup) -> list[DownloadSource]:
    """The download sources of every part of ``group`` at ``revision`` (a commit sha)."""
    headers = client.request_headers()
    out: list[DownloadSource] = []
    for f in group.files:
        if f.size is None:
            raise DownloadError(T_("The Hub does not list the size of {path}, so Hearth cannot check "
                                   "the download. Reload the repository and try again.", path=f.path))
        out.append(DownloadSource(client.file_url(repo_id, revision, f.path), f.path, f.size,
                                  f.sha256.lower() if f.sha256 else None, dict(headers), revision))
    return out


def chunk_size_for(size: int, connections: int) -> int:
    """Chunks: big enough that requests and disk flushes cost little (loopback measured 16 MiB
    and up as good as one stream), small enough that a crash loses little and every connection
    has work: about eight chunks per connection, 1-64 MiB, whole MiB."""
    if size <= MiB:
        return max(size, 1)
    target = size // (max(1, connections) * 8)
    return max(MiB, min(64 * MiB, target // MiB * MiB))


def part_paths(folder: Path, name: str) -> tuple[Path, Path, Path]:
    """(final file, ``.part`` file, journal) for ``name`` under ``folder``; the name is checked."""
    target = safe_join(folder, name)
    return target, target.with_name(target.name + ".part"), target.with_name(target.name + ".part.json")


def lock_path(folder: Path, name: str) -> Path:
    """The lock file that whoever downloads ``name`` under ``folder`` holds (checked name)."""
    target = safe_join(folder, name)
    return target.with_name(target.name + ".lock")


def discard(folder: Path, name: str) -> bool:
    """Delete a paused download's partial file and journal ("cancel and delete").

    Returns False, deleting nothing, when another Hearth is downloading that file now: the bytes
    are its work. A transfer of this process may be stopping still (the caller deletes again
    once it has stopped); its files go at once.
    """
    _, part, journal = part_paths(folder, name)
    if not part.parent.is_dir():
        return True
    lock = FileLock(lock_path(folder, name))
    got = lock.try_acquire()
    try:
        if not got:
            holder = lock.holder()
            if holder is None or not holder.is_this_process():
                _log.info("kept the partial download of %s: %s is downloading it", name,
                          holder or "another Hearth")
                return False
        _remove_partial(part, journal)
        return True
    finally:
        lock.release()


def _remove_partial(part: Path, journal: Path) -> None:
    for p in (part, journal):
        p.unlink(missing_ok=True)


def downloaded_bytes(folder: Path, source: DownloadSource) -> int:
    """Bytes of ``source`` already safe on disk (a finished file counts whole)."""
    target, part, jpath = part_paths(folder, source.name)
    if target.is_file() and not part.exists() and target.stat().st_size == source.size:
        return source.size
    journal = _Journal.load(jpath)
    if journal is None or not journal.matches(source) or not part.is_file():
        return 0
    return journal.done_bytes()


# -- the journal -----------------------------------------------------------------------------------


@dataclass
class _Journal:
    url: str
    revision: str | None
    etag: str | None
    size: int
    sha256: str | None
    chunk_size: int
    ranges: bool | None  # None: not known yet; False: the server ignores Range
    done: dict[int, str]  # chunk index -> CRC-32 of its bytes as written (hex)
    note: str = ""

    @property
    def chunks(self) -> int:
        return max(1, math.ceil(self.size / self.chunk_size))

    def span(self, index: int) -> tuple[int, int]:
        """[start, end) of a chunk."""
        start = index * self.chunk_size
        return start, min(self.size, start + self.chunk_size)

    def done_bytes(self) -> int:
        return sum(self.span(i)[1] - self.span(i)[0] for i in self.done)

    def matches(self, source: DownloadSource) -> bool:
        if self.size != source.size or self.sha256 != source.sha256:
            return False
        # Without a hash only the address says it is the same file.
        return source.sha256 is not None or (self.url == source.url and self.revision == source.revision)

    def to_json(self) -> dict[str, Any]:
        return {"version": JOURNAL_VERSION, "url": self.url, "revision": self.revision, "etag": self.etag,
                "size": self.size, "sha256": self.sha256, "chunk_size": self.chunk_size,
                "ranges": self.ranges, "note": self.note,
                "done": {str(i): h for i, h in sorted(self.done.items())}}

    @classmethod
    def load(cls, path: Path) -> _Journal | None:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if raw.get("version") != JOURNAL_VERSION:
                return None
            j = cls(url=str(raw["url"]), revision=raw.get("revision"), etag=raw.get("etag"),
                    size=int(raw["size"]), sha256=raw.get("sha256"), chunk_size=int(raw["chunk_size"]),
                    ranges=raw.get("ranges"), done={int(k): str(v) for k, v in raw["done"].items()},
                    note=str(raw.get("note", "")))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        if j.chunk_size <= 0 or any(not 0 <= i < j.chunks for i in j.done):
            return None
        return j


# -- errors inside a transfer ----------------------------------------------------------------------


class _Retry(TextError):
    """A failure worth another try (the sentence says why; ``str()`` keeps it a ``Text``)."""


    def __init__(self, why: str, after: float | None = None) -> None:
        super().__init__(why)
        self.after = after


class _Stop(Exception):
    """Another connection failed or the user paused: leave quietly."""


def _etag(resp: httpx2.Response) -> str | None:
    # The Hub names the LFS object in X-Linked-Etag; a CDN's own ETag may differ per node.
    raw = resp.headers.get("x-linked-etag") or resp.headers.get("etag")
    if not raw:
        return None
    return raw.removeprefix("W/").strip('"') or None


def _repo_page(url: str) -> str:
    return url.split("/resolve/", 1)[0]


def _gb(n: int) -> Text:
    return T_("{size:.1f} GB", size=n / 1e9) if n >= 1e8 else T_("{size:.1f} MB", size=n / 1e6)


def _drive(folder: Path) -> str:
    """The mount point (or drive) holding ``folder``, for messages."""
    p = folder.resolve()
    while not os.path.ismount(p) and p.parent != p:
        p = p.parent
    return str(p)


# -- one file --------------------------------------------------------------------------------------


class _FileJob:
    """The state of one file while its chunks are fetched; shared by its connections."""

    def __init__(self, index: int, source: DownloadSource, target: Path, part: Path, jpath: Path,
                 journal: _Journal) -> None:
        self.index = index
        self.source = source
        self.target = target
        self.part = part
        self.jpath = jpath
        self.journal = journal
        self.fd = -1
        self.lock = threading.Lock()
        self.todo: deque[int] = deque()
        self.trailer: _Trailer | None = None
        self.syncer: _Syncer | None = None

    def take(self) -> int | None:
        with self.lock:
            return self.todo.popleft() if self.todo else None

    def record(self, index: int, digest: str) -> None:
        """The chunk's bytes are on the disk (synced): write it into the journal."""
        self.record_many({index: digest})

    def record_many(self, chunks: dict[int, str]) -> None:
        with self.lock:
            self.journal.done.update(chunks)
            write_json_atomic(self.jpath, self.journal.to_json(), indent=None)
        if self.trailer is not None:
            self.trailer.poke()

    def save(self) -> None:
        with self.lock:
            write_json_atomic(self.jpath, self.journal.to_json(), indent=None)


class _Syncer(threading.Thread):
    """Makes written chunks durable off the connections' path: one fdatasync covers every chunk
    written before it began, then they enter the journal together. A connection hands its chunk
    over and goes on to the next; waiting for the disk there cost a third of the throughput."""

    def __init__(self, job: _FileJob) -> None:
        super().__init__(name="hearth-download-sync", daemon=True)
        self.job = job
        self.cond = threading.Condition()
        self.pending: dict[int, str] = {}
        self.busy = False
        self.ending = False
        self.error: OSError | None = None

    def written(self, index: int, digest: str) -> None:
        with self.cond:
            if self.error is not None:
                raise self.error
            self.pending[index] = digest
            self.cond.notify_all()

    def finish(self) -> None:
        """Sync and record what is pending, then end (also on pause: less to fetch again)."""
        with self.cond:
            self.ending = True
            self.cond.notify_all()
        self.join()
        if self.error is not None:
            raise self.error

    def run(self) -> None:
        while True:
            with self.cond:
                while not self.pending and not self.ending:
                    self.cond.wait()
                if not self.pending:
                    return
                batch, self.pending = self.pending, {}
            try:
                _datasync(self.job.fd)
                self.job.record_many(batch)
            except OSError as exc:  # the disk went away or filled up: the chunks stay unrecorded
                with self.cond:
                    self.error = exc
                return


class _ChunkCheck:
    """What each chunk is recorded with: a CRC-32, not a sha256. It only has to notice bytes
    damaged on this disk between runs (the whole file's sha256 is what proves the download), and
    at 3.5 GB/s against sha256's 1.4 it keeps each byte from being hashed twice at sha256 cost."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def update(self, data: bytes | memoryview) -> None:
        self.value = zlib.crc32(data, self.value)

    def hexdigest(self) -> str:
        return f"{self.value:08x}"


class _Trailer(threading.Thread):
    """Hashes the file in order right behind the connections (from the page cache), so the
    whole-file check is done almost as soon as the last chunk is in."""

    def __init__(self, job: _FileJob) -> None:
        super().__init__(name="hearth-download-hash", daemon=True)
        self.job = job
        self.h = hashlib.sha256()
        self.next = 0
        self.cond = threading.Condition()
        self.ending = False
        self.aborted = False
        self.failed = False

    def poke(self) -> None:
        with self.cond:
            self.cond.notify()

    def stop(self, abort: bool) -> None:
        """No more chunks will come; ``abort``: stop at once, the digest is not wanted."""
        with self.cond:
            self.ending = True
            self.aborted = self.aborted or abort
            self.cond.notify()

    def run(self) -> None:
        j = self.job.journal
        try:
            with self.job.part.open("rb", buffering=0) as f:
                while self.next < j.chunks:
                    with self.cond:
                        while self.next not in j.done and not self.ending:
                            self.cond.wait()
                    if self.aborted or self.next not in j.done:
                        return
                    start, end = j.span(self.next)
                    f.seek(start)
                    left = end - start
                    while left > 0:
                        block = f.read(min(_HASH_BLOCK, left))
                        if not block or self.aborted:
                            self.failed = True
                            return
                        self.h.update(block)
                        left -= len(block)
                    self.next += 1
        except OSError:
            self.failed = True

    def digest(self) -> str | None:
        done = self.next == self.job.journal.chunks and not self.failed and not self.aborted
        return self.h.hexdigest() if done else None


class _Group:
    """One call of :func:`download_group`: connections, counters, progress, stopping."""

    def __init__(self, sources: Sequence[DownloadSource], folder: Path, cancel: CancelToken,
                 progress: ProgressCallback | None, options: DownloadOptions, http: httpx2.Client,
                 who: str = "Hearth") -> None:
        import httpx2

        self.sources = list(sources)
        self.folder = folder
        self.who = who
        self.waiting_for = ""
        self.cancel = cancel
        self.progress_cb = progress
        self.opt = options
        self.http = http
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.err_lock = threading.Lock()
        self.open_lock = threading.Lock()
        self.open: set[httpx2.Response] = set()
        # Bytes on disk per file: a base (journaled before this pass) plus one counter per
        # connection, so the hot loop adds to a list slot of its own without a lock.
        self.base = [0] * len(self.sources)
        self.counters: list[list[int]] = [[0] for _ in self.sources]
        self.phase: str = T_("downloading")
        self.current = ""
        self.notes: list[str] = []  # what had to be repaired, for the last progress report
        self.total = sum(s.size for s in self.sources)
        self._rate = 0.0
        self._last: tuple[float, int] | None = None
        self._last_emit = 0.0
        timeout = options.stall_timeout
        self.timeout = httpx2.Timeout(timeout, connect=options.connect_timeout)

    # -- progress --------------------------------------------------------------------------------

    def done(self) -> int:
        return sum(self.file_done(i) for i in range(len(self.sources)))

    def file_done(self, i: int) -> int:
        return self.base[i] + sum(self.counters[i])

    def emit(self, force: bool = False, phase: str | None = None) -> None:
        now = time.monotonic()
        if phase is not None:
            self.phase = phase
        if not force and now - self._last_emit < self.opt.progress_interval:
            return
        done = self.done()
        if self._last is not None and now > self._last[0]:
            dt = now - self._last[0]
            inst = max(0.0, (done - self._last[1]) / dt)
            # An exponential average over about three seconds: steady enough to read.
            alpha = 1.0 - math.exp(-dt / 3.0)
            self._rate = inst if self._rate == 0.0 else self._rate + alpha * (inst - self._rate)
        self._last = (now, done)
        self._last_emit = now
        if self.progress_cb is None:
            return
        eta = (self.total - done) / self._rate if self._rate > 0 else None
        files = tuple(self.file_done(i) for i in range(len(self.sources)))
        self.progress_cb(DownloadProgress(done, self.total, self._rate, eta, files, self.phase,
                                          self.current, self.waiting_for))

    # -- stopping --------------------------------------------------------------------------------

    def fail(self, exc: BaseException) -> None:
        """The first failure wins; every connection is told to stop."""
        with self.err_lock:
            if self.error is None:
                self.error = exc
        self.halt()

    def halt(self) -> None:
        self.stop.set()
        with self.open_lock:
            responses = list(self.open)
        for resp in responses:
            _shutdown(resp)

    def check(self) -> None:
        if self.stop.is_set():
            raise _Stop()

    # -- the work --------------------------------------------------------------------------------

    def run(self) -> list[Path]:
        self.cancel.check()
        locks = self.lock_all()
        try:
            jobs = [self.prepare(i, s) for i, s in enumerate(self.sources)]
            self.check_space(jobs)
            paths: list[Path] = []
            for i, job in enumerate(jobs):
                if job is None:  # already complete and verified
                    paths.append(part_paths(self.folder, self.sources[i].name)[0])
                    continue
                paths.append(self.fetch_file(i, job))
        finally:
            for lock in locks:
                lock.release()
        done: str = T_("done")
        for note in self.notes:
            done = T_("{first}; {then}", first=done, then=note)
        self.emit(force=True, phase=done)
        return paths

    def lock_all(self) -> list[FileLock]:
        """The lock of every file of the group, all or none, waiting while another Hearth holds
        one. All or none, never holding some while waiting for the rest: two groups sharing
        files can then never wait for each other."""
        names = {lock_path(self.folder, s.name): s.name for s in self.sources}
        locks = [FileLock(path, self.who) for path in names]
        told = ""
        while True:
            busy: FileLock | None = None
            for lock in locks:
                lock.path.parent.mkdir(parents=True, exist_ok=True)
                if not lock.try_acquire():
                    busy = lock
                    break
            if busy is None:
                if told:
                    _log.info("the other download has let go; going on")
                self.waiting_for = ""
                return locks
            for lock in locks:
                lock.release()
            holder = str(busy.holder() or "") or T_("another process")
            phase = T_("waiting: {name} is being downloaded by another Hearth ({holder})",
                       name=names[busy.path], holder=holder)
            if phase != told:
                told = phase
                _log.info("%s", phase)
                self.waiting_for = holder
                self.current = names[busy.path]
                # What is on disk so far, so the wait shows where the file stands.
                for i, s in enumerate(self.sources):
                    with contextlib.suppress(OSError, DownloadError):
                        self.base[i] = downloaded_bytes(self.folder, s)
                self.emit(force=True, phase=phase)
            if self.cancel.wait(self.opt.lock_poll):
                raise CancelledError(T_("Download paused."))

    def prepare(self, i: int, source: DownloadSource) -> _FileJob | None:
        target, part, jpath = part_paths(self.folder, source.name)
        if source.size < 0:
            raise DownloadError(T_("The Hub lists a negative size for {name}.", name=source.name))
        journal = _Journal.load(jpath) if jpath.exists() else None
        if target.is_file() and not part.exists():
            if target.stat().st_size == source.size and self.verify_final(i, target, source):
                # A journal beside a verified file is a leftover (a crash between the rename and
                # its deletion, or an older Hearth that downloaded alongside another): it goes.
                jpath.unlink(missing_ok=True)
                self.base[i] = source.size
                return None
        if journal is not None and not (journal.matches(source) and part.is_file()
                                        and part.stat().st_size == source.size):
            _log.info("restarting %s: its partial download is of another file", source.name)
            journal = None
        if journal is not None and journal.ranges is False:
            # Nothing of a file from a server without Range can be reused: start it again.
            journal = None
        if journal is None:
            cs = self.opt.chunk_size or chunk_size_for(source.size, self.opt.connections)
            journal = _Journal(source.url, source.revision, None, source.size, source.sha256, cs, None, {})
        else:
            journal.url = source.url  # a new signed or mirrored address for the same bytes
        self.base[i] = journal.done_bytes()
        return _FileJob(i, source, target, part, jpath, journal)

    def verify_final(self, i: int, target: Path, source: DownloadSource) -> bool:
        if source.sha256 is None:
            return True
        self.current = source.name
        return _hash_file(target, self, phase=T_("verifying")) == source.sha256

    def check_space(self, jobs: list[_FileJob | None]) -> None:
        missing = sum(j.source.size - j.journal.done_bytes() for j in jobs if j is not None)
        if missing == 0:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        free = self.opt.free_space(self.folder)
        needed = missing + self.opt.reserve
        if free < needed:
            raise DiskFullError(
                T_("This download needs {needed} more free space (with a small reserve) but only {free} is "
                   "free on {drive}. Free some space or choose another models folder, then start it "
                   "again; nothing was deleted.", needed=_gb(needed), free=_gb(free),
                   drive=_drive(self.folder)), needed, free)

    def fetch_file(self, i: int, job: _FileJob) -> Path:
        src = job.source
        self.current = src.name
        job.target.parent.mkdir(parents=True, exist_ok=True)
        fresh = not job.part.exists()
        job.fd = os.open(job.part, _OPEN_FLAGS, 0o600)
        try:
            if fresh or os.fstat(job.fd).st_size != src.size:
                os.ftruncate(job.fd, src.size)  # sparse: chunks land at their offsets
            if fresh or not job.jpath.exists():
                job.save()
            whole_again = False
            repaired = False
            while True:
                digest = self.transfer(i, job)
                if src.sha256 is None:
                    break
                if digest is None:
                    digest = _hash_file(job.part, self, phase=T_("verifying"))
                if digest == src.sha256:
                    break
                if not repaired and job.journal.ranges:
                    damaged = self.find_damaged(job)
                    if damaged:
                        repaired = True
                        for idx in damaged:
                            job.journal.done.pop(idx, None)
                        job.save()
                        self.reset_counters(i, job)
                        self.notes.append(T_("%n damaged part(s) fetched again", None,
                                             len(damaged)))
                        self.emit(force=True, phase=T_("fetching %n damaged part(s) again", None,
                                                       len(damaged)))
                        continue
                if whole_again:
                    self.close_fd(job)
                    _remove_partial(job.part, job.jpath)
                    raise IntegrityError(
                        T_("{name} still does not match the Hub's checksum after it was fetched again "
                           "whole; the damaged download was deleted. Try again later; if it keeps "
                           "happening the file on the Hub or a proxy on the way may be at fault.",
                           name=src.name))
                whole_again = True
                job.journal.done.clear()
                job.journal.note = T_("the whole file did not match its checksum and is fetched again")
                job.save()
                self.reset_counters(i, job)
                self.notes.append(T_("{name} arrived damaged and was fetched again whole",
                                     name=src.name))
                self.emit(force=True,
                          phase=T_("the file did not match its checksum: fetching it again"))
            self.close_fd(job)
            os.replace(job.part, job.target)
            job.jpath.unlink(missing_ok=True)
            return job.target
        finally:
            self.close_fd(job)

    def close_fd(self, job: _FileJob) -> None:
        if job.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(job.fd)
            job.fd = -1

    def reset_counters(self, i: int, job: _FileJob) -> None:
        self.base[i] = job.journal.done_bytes()
        self.counters[i] = [0] * len(self.counters[i])

    def find_damaged(self, job: _FileJob) -> list[int]:
        """Chunks whose bytes on disk differ from the hash recorded when they were written."""
        self.emit(force=True, phase=T_("verifying: looking for damaged parts"))
        damaged = []
        with job.part.open("rb") as f:
            for idx, recorded in sorted(job.journal.done.items()):
                self.cancel.check()
                start, end = job.journal.span(idx)
                f.seek(start)
                h = _ChunkCheck()
                left = end - start
                while left > 0:
                    block = f.read(min(_HASH_BLOCK, left))
                    if not block:
                        break
                    h.update(block)
                    left -= len(block)
                if h.hexdigest() != recorded:
                    damaged.append(idx)
        return damaged

    def transfer(self, i: int, job: _FileJob) -> str | None:
        """Fetch every chunk not yet in the journal, over the file's connections. Returns the
        whole file's sha256 when it could be computed on the way (else the caller reads it)."""
        j = job.journal
        job.todo = deque(k for k in range(j.chunks) if k not in j.done)
        if not job.todo or j.size == 0:
            return None
        self.stop.clear()
        self.error = None
        self.phase = T_("downloading")
        self.emit(force=True)
        first = job.take()
        assert first is not None
        # The first request decides: 206 -> Range works and the other connections join in;
        # 200 -> one plain stream for the whole file.
        start, end = j.span(first)
        resp = self.open_probe(job, start, end)
        if resp.status_code == 200:
            return self.single_stream(i, job, resp)
        n = max(1, min(self.opt.connections, len(job.todo) + 1))
        self.counters[i] = [0] * n
        threads = [threading.Thread(target=self.worker,
                                    args=(i, job, slot, first if slot == 0 else None,
                                          resp if slot == 0 else None),
                                    name=f"hearth-download-{slot}", daemon=True) for slot in range(n)]
        trailer = _Trailer(job) if job.source.sha256 is not None else None
        job.trailer = trailer
        if trailer is not None:
            trailer.start()
        job.syncer = _Syncer(job)
        job.syncer.start()
        try:
            try:
                self.wait_for(threads)
            finally:
                syncer, job.syncer = job.syncer, None
                try:
                    syncer.finish()
                except OSError as exc:
                    raise self.write_error(job, exc) from exc
        except BaseException:
            if trailer is not None:
                trailer.stop(abort=True)
            raise
        finally:
            job.trailer = None
        if trailer is None:
            return None
        # Usually only the last chunks are left to hash: verification ends with the download.
        self.phase = T_("verifying")
        trailer.stop(abort=False)
        while trailer.is_alive():
            trailer.join(self.opt.progress_interval)
            self.emit()
            if self.cancel.cancelled:
                trailer.stop(abort=True)
                trailer.join()
                raise CancelledError(T_("Download paused."))
        return trailer.digest()

    def open_probe(self, job: _FileJob, start: int, end: int) -> httpx2.Response:
        """The first request of a file, on the calling thread, retried like any other."""
        import httpx2

        attempt = 0
        unregister = self.cancel.on_cancel(self.halt)
        try:
            while True:
                self.check()
                try:
                    return self.request(job, start, end, probe=True)
                except (_Retry, httpx2.TransportError) as exc:
                    attempt += 1
                    self.backoff(attempt, _why(exc, self.opt.stall_timeout), _after(exc), job.source.name,
                                 emit=True)
        except _Stop:
            raise CancelledError(T_("Download paused.")) from None
        finally:
            unregister()

    def wait_for(self, threads: list[threading.Thread]) -> None:
        unregister = self.cancel.on_cancel(self.halt)
        try:
            for t in threads:
                t.start()
            for t in threads:
                while t.is_alive():
                    t.join(self.opt.progress_interval)
                    self.emit()
        except BaseException as exc:  # the progress callback failed, or Ctrl+C
            self.fail(exc)
            for t in threads:
                t.join()
            raise
        finally:
            unregister()
        self.emit(force=True)
        if self.error is not None:
            raise self.error
        if self.cancel.cancelled:
            raise CancelledError(T_("Download paused."))

    def worker(self, i: int, job: _FileJob, slot: int, index: int | None,
               resp: httpx2.Response | None) -> None:
        try:
            while not self.stop.is_set():
                if index is None:
                    index = job.take()
                    if index is None:
                        return
                current, resp = resp, None
                self.fetch_chunk(i, job, slot, index, current)
                index = None
        except _Stop:
            pass
        except BaseException as exc:
            self.fail(exc)
        finally:
            if resp is not None:
                self.forget(resp)

    def fetch_chunk(self, i: int, job: _FileJob, slot: int, index: int,
                    resp: httpx2.Response | None) -> None:
        import httpx2

        start, end = job.journal.span(index)
        cur = _Cursor(start)
        h = _ChunkCheck()
        attempt = 0
        while cur.pos < end:
            before = cur.pos
            try:
                if resp is None:
                    resp = self.request(job, cur.pos, end)
                try:
                    self.pump(job, resp, cur, end, h, self.counters[i], slot)
                finally:
                    self.forget(resp)
                    resp = None
                if cur.pos < end:
                    raise _Retry(T_("the connection closed early"))
            except (_Retry, httpx2.TransportError) as exc:
                self.check()
                attempt = 0 if cur.pos > before else attempt + 1
                self.backoff(attempt, _why(exc, self.opt.stall_timeout), _after(exc), job.source.name)
        self.check()
        # The bytes reach the disk before the journal says so (the syncer): a power cut can then
        # only lose chunks that were never recorded.
        if job.syncer is not None:
            try:
                job.syncer.written(index, h.hexdigest())
            except OSError as exc:
                raise self.write_error(job, exc) from exc
        else:
            _datasync(job.fd)
            job.record(index, h.hexdigest())

    def backoff(self, attempt: int, why: str, after: float | None, name: str, emit: bool = False) -> None:
        if attempt > self.opt.retries:
            raise DownloadUnavailableError(
                T_("Hearth could not download {name}: {why} ({tries} tries in a row). What was "
                   "downloaded so far is kept; resume when the connection is back.", name=name, why=why,
                   tries=self.opt.retries + 1))
        if attempt == 0:
            return  # progress was made since the last failure: reconnect at once
        delay = min(self.opt.backoff_max, self.opt.backoff * 2 ** (attempt - 1))
        if after is not None:
            delay = min(self.opt.backoff_max, max(delay, after))
        delay *= random.uniform(0.8, 1.0)  # connections that failed together do not retry in step
        label = T_("retrying in {seconds}s: {why}", seconds=math.ceil(delay), why=why)
        self.phase = label
        if emit:
            self.emit(force=True)
        self.stop.wait(delay)
        if self.phase == label:
            self.phase = T_("downloading")
        self.check()

    def request(self, job: _FileJob, start: int, end: int, probe: bool = False) -> httpx2.Response:
        """An open response for bytes [start, end) that passed every check, or an exception."""
        src = job.source
        headers = dict(src.headers)
        headers["Accept-Encoding"] = "identity"  # sizes and offsets are of the real bytes
        headers["Range"] = f"bytes={start}-{end - 1}"
        req = self.http.build_request("GET", src.url, headers=headers, timeout=self.timeout)
        resp = self.http.send(req, stream=True, follow_redirects=True)
        self.remember(resp)
        try:
            self.check_response(job, resp, start, end, probe)
        except BaseException:
            self.forget(resp)
            raise
        return resp

    def check_response(self, job: _FileJob, resp: httpx2.Response, start: int, end: int,
                       probe: bool) -> None:
        src = job.source
        status = resp.status_code
        if status not in (200, 206):
            _raise_for_status(resp, src)
        length = resp.headers.get("content-length")
        if status == 200:
            if not probe:
                raise _Retry(T_("the server stopped honouring byte ranges"))
            if length is not None and _int(length) != src.size:
                raise _changed(src, _int(length))
            return
        m = _CONTENT_RANGE_RE.match(resp.headers.get("content-range", ""))
        if m is None or int(m[1]) != start or int(m[2]) != end - 1:
            raise _Retry(T_("the server sent other bytes than asked ({range})",
                            range=resp.headers.get("content-range")))
        if m[3] != "*" and int(m[3]) != src.size:
            raise _changed(src, int(m[3]))
        if length is not None and _int(length) != end - start:
            raise _Retry(T_("the server announced a length that does not match the range"))
        if probe:
            j = job.journal
            etag = _etag(resp)
            if j.etag and etag and j.etag != etag:
                _log.info("restarting %s: the file changed on the server (ETag)", src.name)
                j.done.clear()
                job.todo = deque(k for k in range(j.chunks) if k != start // j.chunk_size)
                self.base[job.index] = 0
            j.etag = etag or j.etag
            j.ranges = True
            j.note = ""
            job.save()

    def pump(self, job: _FileJob, resp: httpx2.Response, cur: _Cursor, end: int, h: Any,
             counter: list[int], slot: int) -> None:
        """The hot loop: body bytes to the file at their offset, hashed as written."""
        import httpx2

        write = self.opt.write
        fd = job.fd
        stop = self.stop
        pos = cur.pos
        try:
            for data in resp.iter_raw():
                n = len(data)
                if pos + n > end:
                    raise DownloadError(
                        T_("The server sent more bytes for {name} than it announced; Hearth stopped "
                           "reading and kept what it had. Try again later.", name=job.source.name))
                written = write(fd, data, pos)
                if written < n:  # a short write: rare, but allowed
                    view = memoryview(data)
                    while written < n:
                        written += write(fd, view[written:], pos + written)
                h.update(data)
                pos += n
                counter[slot] += n
                if stop.is_set():
                    break
        except OSError as exc:
            raise self.write_error(job, exc) from exc
        except httpx2.TransportError:
            if stop.is_set():
                raise _Stop() from None
            raise
        finally:
            cur.pos = pos
        if stop.is_set():
            raise _Stop()

    def write_error(self, job: _FileJob, exc: OSError) -> DownloadError:
        if exc.errno in _DISK_FULL:
            return self.disk_full(job)
        return DownloadError(T_("Hearth could not write {part}: {error}. What was downloaded so far "
                                "is kept.", part=job.part, error=exc.strerror or str(exc)))

    def disk_full(self, job: _FileJob) -> DiskFullError:
        missing = job.source.size - job.journal.done_bytes()
        try:
            free = self.opt.free_space(self.folder)
        except OSError:
            free = 0
        return DiskFullError(
            T_("The disk {drive} filled up while downloading {name} ({free} free, {missing} still to come). "
               "The download is paused and keeps what it has: free some space, then resume.",
               drive=_drive(self.folder), name=job.source.name, free=_gb(free), missing=_gb(missing)),
            missing + self.opt.reserve, free)

    def single_stream(self, i: int, job: _FileJob, resp: httpx2.Response) -> str:
        """A server that ignores Range: the whole file in one stream, started again on failure."""
        j = job.journal
        j.ranges = False
        j.done.clear()
        j.note = T_("The server does not accept Range requests: this file cannot resume and is "
                    "fetched from the start after any interruption.")
        job.save()
        self.base[i] = 0
        self.counters[i] = [0]
        digest: list[str] = []

        def run() -> None:
            try:
                digest.append(self.stream_whole(i, job, resp))
            except _Stop:
                pass
            except BaseException as exc:
                self.fail(exc)

        # On a thread like the ranged connections, so this thread reports progress and pauses.
        self.wait_for([threading.Thread(target=run, name="hearth-download-0", daemon=True)])
        return digest[0]

    def stream_whole(self, i: int, job: _FileJob, resp: httpx2.Response | None) -> str:
        import httpx2

        src = job.source
        attempt = 0
        while True:
            self.counters[i][0] = 0
            self.check()
            cur = _Cursor(0)
            h = hashlib.sha256()  # in order: the whole file's hash, no second pass
            try:
                if resp is None:
                    resp = self.request(job, 0, src.size, probe=True)
                try:
                    self.pump(job, resp, cur, src.size, h, self.counters[i], 0)
                finally:
                    self.forget(resp)
                    resp = None
                if cur.pos == src.size:
                    break
                raise _Retry(T_("the connection closed early"))
            except (_Retry, httpx2.TransportError) as exc:
                self.check()
                attempt = 1 if cur.pos > 0 else attempt + 1
                self.backoff(attempt, T_("{why}; this server cannot resume, so the file starts over",
                                         why=_why(exc, self.opt.stall_timeout)), _after(exc), src.name)
        _datasync(job.fd)
        return h.hexdigest()

    # -- open responses (so a pause can cut them) ----------------------------------------------------

    def remember(self, resp: httpx2.Response) -> None:
        with self.open_lock:
            self.open.add(resp)
        if self.stop.is_set():
            _shutdown(resp)

    def forget(self, resp: httpx2.Response) -> None:
        with self.open_lock:
            self.open.discard(resp)
        with contextlib.suppress(Exception):
            resp.close()


@dataclass
class _Cursor:
    pos: int


# -- helpers ---------------------------------------------------------------------------------------


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise _Retry(T_("the server sent a broken length ({value!r})", value=value)) from None


def _changed(src: DownloadSource, size: int) -> DownloadError:
    return DownloadError(T_("The server says {name} is {size:,} bytes, but the Hub listed {listed:,}. "
                            "The repository may have changed: reload it and start the download again.",
                            name=src.name, size=size, listed=src.size))


def _why(exc: BaseException, stall_timeout: float) -> str:
    import httpx2

    if isinstance(exc, httpx2.ReadTimeout):
        return T_("no data for {seconds:g} s", seconds=stall_timeout)
    if isinstance(exc, httpx2.TimeoutException):
        return T_("the server did not answer in time")
    if isinstance(exc, httpx2.ConnectError):
        return T_("the server cannot be reached")
    if isinstance(exc, httpx2.TransportError):
        return T_("the connection broke off")
    return str(exc)


def _after(exc: BaseException) -> float | None:
    return exc.after if isinstance(exc, _Retry) else None


def _raise_for_status(resp: httpx2.Response, src: DownloadSource) -> None:
    """Map an answer other than 200/206: raise _Retry for passing trouble, a typed error else."""
    status = resp.status_code
    code = resp.headers.get("x-error-code", "")
    page = _repo_page(src.url)
    if status in (408, 429) or status >= 500:
        after = resp.headers.get("retry-after")
        wait = float(after) if after and after.strip().isdigit() else None
        raise _Retry(T_("the server answered {status}", status=status), wait)
    if status in (401, 403):
        sent_token = any(k.lower() == "authorization" for k in src.headers)
        if code == "GatedRepo" and status == 403:
            raise AuthError(T_("{name} is in a gated repository: accept its license on {page} with "
                               "your Hugging Face account, then press Retry.", name=src.name, page=page),
                            "license", page)
        if code == "GatedRepo" and not sent_token:
            raise AuthError(T_("{name} is in a gated repository: add a Hugging Face token with Token… "
                               "on the Discover tab and accept the license on {page}, then press Retry.",
                               name=src.name, page=page), "missing", page)
        raise AuthError(T_("Hugging Face refused the token for {name} ({status}): it is wrong, has "
                           "expired or may not read this repository. Save a new one with Token… on the "
                           "Discover tab, then press Retry.", name=src.name, status=status),
                        "invalid", page)
    if status == 404:
        # One sentence per case: a translator words "repository" and "file" differently.
        if code == "RepoNotFound":
            raise DownloadError(T_("The repository for {name} is no longer on Hugging Face at this "
                                   "revision (404, {page}). Reload the repository and start a new "
                                   "download.", name=src.name, page=page))
        raise DownloadError(T_("The file for {name} is no longer on Hugging Face at this revision "
                               "(404, {page}). Reload the repository and start a new download.",
                               name=src.name, page=page))
    if status == 416:
        raise DownloadError(T_("Hugging Face no longer has the bytes Hearth asked for in {name} (416): "
                               "the file may have changed. Reload the repository and start again.",
                               name=src.name))
    raise DownloadError(T_("Hugging Face answered {status} for {name}; Hearth expected the file's "
                           "bytes. Try again later.", status=status, name=src.name))


def _shutdown(resp: httpx2.Response) -> None:
    """Cut a response from another thread: a blocked read returns at once (close alone may not
    wake it on Linux)."""
    stream = resp.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _hash_file(path: Path, group: _Group, phase: str) -> str:
    h = hashlib.sha256()
    group.emit(force=True, phase=phase)
    with path.open("rb", buffering=0) as f:
        while block := f.read(_HASH_BLOCK):
            group.cancel.check()
            h.update(block)
    return h.hexdigest()


# -- the entry point -------------------------------------------------------------------------------


def download_group(sources: Sequence[DownloadSource], folder: Path, *, cancel: CancelToken,
                   progress: ProgressCallback | None = None, options: DownloadOptions | None = None,
                   http: httpx2.Client | None = None, who: str = "Hearth") -> list[Path]:
    """Download every file of a group into ``folder``; returns their final paths, in order.

    Resumes from partial files left by an earlier call. While another Hearth (another process,
    or another call) downloads one of the files, waits for it, then goes on from what it left
    (``who`` names this download in its locks, for the other's messages). Raises
    :class:`CancelledError` when ``cancel`` fires (the partial files stay: that is a pause),
    :class:`DiskFullError`, :class:`AuthError`, :class:`IntegrityError`,
    :class:`DownloadUnavailableError` or :class:`DownloadError`, each with a sentence for the
    user.
    """
    import httpx2

    opt = options or DownloadOptions()
    for s in sources:
        part_paths(folder, s.name)  # every name is checked before anything touches the disk
    cancel.check()
    own = http is None
    client = http or httpx2.Client(
        follow_redirects=True,
        limits=httpx2.Limits(max_connections=max(opt.connections, 1) + 2,
                             max_keepalive_connections=max(opt.connections, 1) + 2))
    group = _Group(sources, folder, cancel, progress, opt, client, who)
    try:
        return group.run()
    except CancelledError:
        with contextlib.suppress(Exception):
            group.emit(force=True, phase=T_("paused: by you"))
        raise
    except DiskFullError:
        with contextlib.suppress(Exception):
            group.emit(force=True, phase=T_("paused: the disk is full"))
        raise
    finally:
        if own:
            client.close()
