"""app/storage/filelock.py: an OS lock between processes, with real processes holding it.

Every hand-over between processes is a handshake (the child prints a line once it holds the
lock, and lets go when its stdin closes or it is killed), never a sleep.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.storage.filelock import FileLock, LockHolder

ROOT = Path(__file__).resolve().parents[2]

# Holds the lock, says so, and keeps it until its stdin closes (or it is killed). With an
# argument it first starts a grandchild that inherits whatever this process lets it inherit
# (close_fds=False), and says the grandchild's pid too.
_HOLDER = r"""
import subprocess, sys
from app.storage.filelock import FileLock
lock = FileLock(sys.argv[1], "hearth download")
assert lock.try_acquire()
if len(sys.argv) > 2:
    grandchild = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                                  stdin=subprocess.PIPE, close_fds=False)
    print(grandchild.pid, flush=True)
print("held", flush=True)
sys.stdin.read()
lock.release()
"""


class Holder:
    def __init__(self, path: Path, spawn: bool = False) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path),
                                      *(["spawn"] if spawn else [])],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     cwd=ROOT)
        assert self.proc.stdout is not None
        self.grandchild: int | None = None
        line = self.proc.stdout.readline()
        if spawn:
            self.grandchild = int(line)
            line = self.proc.stdout.readline()
        assert line == "held\n", self.proc.communicate()

    def end(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def holders() -> Iterator[list[Holder]]:
    made: list[Holder] = []
    yield made
    for h in made:
        if h.proc.poll() is None:
            h.kill()
        if h.grandchild is not None:
            os.kill(h.grandchild, signal.SIGTERM)


def test_two_locks_in_one_process_exclude_each_other(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf.lock"
    first, second = FileLock(path, "one"), FileLock(path, "two")
    assert first.try_acquire() and first.held
    assert not second.try_acquire() and not second.held
    assert second.holder() == LockHolder(os.getpid(), first.holder().host, "one")  # type: ignore[union-attr]
    first.release()
    assert second.try_acquire()
    second.release()


def test_release_leaves_no_file_and_the_lock_can_be_taken_again(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf.lock"
    lock = FileLock(path, "the Hearth app")
    with lock:
        assert path.exists()
    assert not path.exists()  # nothing is left beside the model
    with FileLock(path), pytest.raises(BlockingIOError, match=r"locked by Hearth, pid \d+"):
        FileLock(path).__enter__()


@pytest.mark.timeout(60)
def test_another_process_holding_it_is_named_and_its_end_frees_the_lock(
        tmp_path: Path, holders: list[Holder]) -> None:
    path = tmp_path / "model.gguf.lock"
    holder = Holder(path)
    holders.append(holder)
    lock = FileLock(path, "the Hearth app")
    assert not lock.try_acquire()
    who = lock.holder()
    assert who is not None and who.pid == holder.proc.pid and who.what == "hearth download"
    assert str(who) == f"hearth download, pid {holder.proc.pid}"
    assert not who.is_this_process()
    holder.end()
    assert lock.try_acquire()
    lock.release()


@pytest.mark.timeout(60)
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_a_holder_killed_outright_blocks_nobody(tmp_path: Path, holders: list[Holder]) -> None:
    path = tmp_path / "model.gguf.lock"
    holder = Holder(path)
    holders.append(holder)
    holder.kill()  # no release, no clean-up: the file stays, with a dead pid in it
    assert path.exists()
    lock = FileLock(path, "the Hearth app")
    assert lock.try_acquire()  # the kernel let go with the process
    assert lock.holder() == LockHolder(os.getpid(), lock.holder().host, "the Hearth app")  # type: ignore[union-attr]
    lock.release()
    assert not path.exists()


@pytest.mark.timeout(60)
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_a_program_started_by_the_holder_does_not_keep_the_lock(
        tmp_path: Path, holders: list[Holder]) -> None:
    # The app starts the runner; if the app dies, the runner living on must not keep the file
    # locked (an inherited flock would).
    path = tmp_path / "model.gguf.lock"
    holder = Holder(path, spawn=True)
    holders.append(holder)
    holder.kill()
    assert holder.grandchild is not None
    os.kill(holder.grandchild, 0)  # still running
    lock = FileLock(path)
    assert lock.try_acquire()
    lock.release()


def test_a_lock_file_deleted_by_its_last_holder_is_not_a_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A waiter opens the file just before the holder deletes it on release: its lock on that
    # unlinked file would exclude nobody, so it must lock the file the path names now.
    import app.storage.filelock as filelock

    path = tmp_path / "model.gguf.lock"
    holder = FileLock(path, "first")
    assert holder.try_acquire()
    real = filelock._try_lock
    calls: list[int] = []

    def holder_lets_go_first(fd: int) -> bool:
        calls.append(fd)
        if len(calls) == 1:
            holder.release()  # deletes the file the waiter has just opened
        return real(fd)

    monkeypatch.setattr(filelock, "_try_lock", holder_lets_go_first)
    late = FileLock(path, "late")
    assert late.try_acquire()
    assert len(calls) == 2  # the first lock was on the deleted file: tried again
    monkeypatch.setattr(filelock, "_try_lock", real)
    assert path.exists()
    assert not FileLock(path, "other").try_acquire()  # the lock is on the path's file
    late.release()


def test_unreadable_details_say_nothing_rather_than_fail(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    path.write_bytes(b"\nnot json")
    assert FileLock(path).holder() is None
    assert FileLock(tmp_path / "missing.lock").holder() is None
    path.write_bytes(b"\n" + b'{"pid": "7", "host": "elsewhere", "what": "hearth download"}')
    who = FileLock(path).holder()
    assert who is not None and who.pid is None
    assert str(who) == "hearth download, on elsewhere"
