"""Locks between processes that the operating system holds, so a dead process never keeps one
(no Qt).

Two Hearths must not work on one file at once: the app and ``hearth download`` in a terminal on
the same model, or a second app start on the same data folder. A lock file with a pid in it goes
stale when its process dies and someone must decide whether that pid is still Hearth; an OS
lock does not: the kernel drops it with the process, however the process ended (a crash,
SIGKILL, a reboot). So the lock is ``flock`` on POSIX and ``msvcrt.locking`` on Windows, tried
without blocking; a caller that wants to wait polls with its own cancel token.

- ``flock`` belongs to the open file, not the process (unlike ``fcntl``/``lockf`` record locks):
  two :class:`FileLock` objects in one process exclude each other too, and closing one file does
  not drop another's lock. Python opens files non-inheritable, so a program Hearth starts (the
  runner) never carries the lock on after Hearth has died.
- The file also says who holds it (pid, host, what), so a message can name the other Hearth.
  Byte 0 is the locked byte and the details follow it: a Windows lock is mandatory, and nobody
  else could read a locked byte.
- The holder deletes the file as it lets go, so nothing is left beside a model. On POSIX it
  deletes while still holding, and whoever gets a lock checks that the path still names the file
  it locked (else it opened the old one just before the deletion, and tries again). Windows
  cannot delete an open file: there the holder closes first and deletes only if nobody else has
  the file open.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

_log = logging.getLogger(__name__)

_HOST = socket.gethostname()
# Windows opens files as text unless told otherwise.
_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0)
_MAX_DETAILS = 4096
# A file system without locks (some network mounts) must not stop Hearth: it runs unguarded there,
# as it did before locks existed, and says so in the log.
_UNSUPPORTED = {errno.ENOLCK, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP),
                errno.ENOSYS}

if sys.platform == "win32":
    import msvcrt

    def _try_lock(fd: int) -> bool:
        os.lseek(fd, 0, os.SEEK_SET)  # msvcrt locks from the current position
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EDEADLK):
                return False
            raise
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


@dataclass(frozen=True)
class LockHolder:
    """Who holds a lock, as the holder wrote it into the file."""

    pid: int | None
    host: str
    what: str  # "the Hearth app", "hearth download", ...

    def is_this_process(self) -> bool:
        return self.pid == os.getpid() and self.host == _HOST

    def __str__(self) -> str:
        parts = [self.what or "Hearth"]
        if self.pid is not None:
            parts.append(f"pid {self.pid}")
        if self.host and self.host != _HOST:
            parts.append(f"on {self.host}")
        return ", ".join(parts)


class FileLock:
    """An exclusive lock on ``path``, taken with :meth:`try_acquire` and given back with
    :meth:`release` (or when the process ends, however it ends). Not shared between threads:
    each user makes its own object."""

    def __init__(self, path: Path | str, what: str = "") -> None:
        self.path = Path(path)
        self.what = what
        self._fd: int | None = None
        self.enforced = True  # False: the file system has no locks; held only in name

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; False at once if somebody does."""
        if self._fd is not None:
            return True
        while True:
            fd = os.open(self.path, _FLAGS, 0o600)
            try:
                try:
                    got = _try_lock(fd)
                except OSError as exc:
                    if exc.errno not in _UNSUPPORTED:
                        raise
                    _log.warning("%s cannot be locked on this file system (%s); going on "
                                 "without the lock.", self.path, exc.strerror or exc)
                    got, self.enforced = True, False
                if not got:
                    os.close(fd)
                    return False
                if self.enforced and not _names(self.path, fd):
                    # The previous holder deleted this file as it let go: the path is another
                    # file now (or none), and only a lock on that one counts.
                    _unlock(fd)
                    os.close(fd)
                    continue
            except BaseException:
                with contextlib.suppress(OSError):
                    os.close(fd)
                raise
            self._fd = fd
            self._write_details(fd)
            return True

    def release(self) -> None:
        """Let go and delete the file (nothing is left beside the file it guarded)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        if sys.platform == "win32":
            with contextlib.suppress(OSError):
                _unlock(fd)
            os.close(fd)
            with contextlib.suppress(OSError):  # someone else has it open: it stays, harmless
                self.path.unlink()
            return
        # Deleted while still held: a process that opened it meanwhile sees that the path
        # names another file once it gets the lock (try_acquire), and tries again.
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            _unlock(fd)
        os.close(fd)

    def holder(self) -> LockHolder | None:
        """Who holds the lock as far as the file says (this process if it is ours); None when
        the file is missing or says nothing readable."""
        if self._fd is not None:
            return LockHolder(os.getpid(), _HOST, self.what)
        try:
            with self.path.open("rb") as f:
                f.seek(1)
                raw = json.loads(f.read(_MAX_DETAILS).decode("utf-8"))
            pid = raw.get("pid")
            return LockHolder(pid if isinstance(pid, int) else None, str(raw.get("host", "")),
                              str(raw.get("what", "")))
        except (OSError, ValueError, AttributeError):
            return None

    def __enter__(self) -> FileLock:
        if not self.try_acquire():
            raise BlockingIOError(errno.EWOULDBLOCK, f"{self.path} is locked by {self.holder()}")
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _write_details(self, fd: int) -> None:
        details = json.dumps({"pid": os.getpid(), "host": _HOST, "what": self.what}).encode()
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, b"\n" + details)
            os.ftruncate(fd, 1 + len(details))
        except OSError as exc:  # a full disk: the lock holds all the same, only unnamed
            _log.info("could not write who holds %s: %s", self.path, exc)


def _names(path: Path, fd: int) -> bool:
    """Whether ``path`` is still the file open as ``fd``."""
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino)
