"""Two Hearths on one file at once: the app's download queue and `hearth download` in another
process, everything real (the fake Hub and the real huggingface_hub client, the real downloader,
DownloadManager on a TaskRunner thread, `python -m app download` as a subprocess).

Before, the second download wrote the same partial file alongside the first: one of them then
failed with "No such file or directory" and left its journal beside the verified model. Now the
later one waits, saying for whom, and then finds the file verified (or resumes it).

No test depends on timing: the download that holds the file is stopped at its first disk write
(the downloader's ``write`` boundary) until the test lets it go, in this process through an
event, in a child process through a line on its stdin.
"""

from __future__ import annotations

import functools
import hashlib
import os
import random
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import pytest
from PySide6.QtCore import QObject

from app.hub.client import HubClient
from app.hub.download import (
    DownloadOptions,
    DownloadProgress,
    download_group,
    part_paths,
    sources_for,
)
from app.hub.queue import DownloadQueue
from app.hub.types import FileGroup, RepoDetails
from app.jobs import CancelledError, CancelToken
from app.services.downloads import DownloadManager
from app.services.protocols import DownloadRow
from app.services.tasks import TaskRunner
from tests.fixtures.fake_hub import FakeHub

ROOT = Path(__file__).resolve().parents[2]
REPO = "acme/Rand-GGUF"
FILE = "rand-Q4_K_M.gguf"
SIZE = 2 << 20
CHUNK = 128 * 1024
OPT = DownloadOptions(connections=2, chunk_size=CHUNK, backoff=0.01, backoff_max=0.05,
                      reserve=0, progress_interval=0.02)

# `hearth download` exactly as a user runs it, except that its first disk write waits for a line
# on stdin (after saying "holding" on stdout): until then it holds the file mid-download.
_GATED_CLI = r"""
import functools, os, sys, threading
import app.hub.download as download
gate, held = threading.Lock(), []
def write(fd, data, offset):
    with gate:
        if not held:
            held.append(True)
            print("holding", flush=True)
            sys.stdin.readline()
    return os.pwrite(fd, data, offset)
download.DownloadOptions = functools.partial(download.DownloadOptions, write=write)
from app.__main__ import main
sys.exit(main(["download", *sys.argv[1:]]))
"""


def data_for(seed: int) -> bytes:
    return random.Random(seed).randbytes(SIZE)


@dataclass
class Env:
    hub: FakeHub
    tmp: Path
    qtbot: Any
    parent: QObject = field(default_factory=QObject)
    managers: list[DownloadManager] = field(default_factory=list)
    clients: list[HubClient] = field(default_factory=list)
    children: list[subprocess.Popen[str]] = field(default_factory=list)
    verified: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def models(self) -> Path:
        return self.tmp / "models"

    @property
    def target(self) -> Path:
        return self.models.joinpath(*REPO.split("/"), FILE)

    @property
    def lane(self) -> str:
        return f"test-download-lock-{id(self):x}"

    def client(self) -> HubClient:
        c = HubClient(endpoint=self.hub.url)
        self.clients.append(c)
        return c

    def group(self) -> tuple[RepoDetails, FileGroup]:
        details = self.client().details(REPO)
        (group,) = [g for g in details.groups if g.name == FILE]
        return details, group

    def manager(self, options: DownloadOptions = OPT) -> DownloadManager:
        """The app's download queue, as compose() makes it (its own queue file)."""
        client = self.client()
        m = DownloadManager(TaskRunner(self.parent, name=self.lane),
                            DownloadQueue(self.tmp / "downloads.json"), lambda: client,
                            lambda: self.models,
                            on_verified=lambda p, s: self.verified.append((p, s)),
                            download=functools.partial(download_group, options=options),
                            parent=self.parent)
        self.managers.append(m)
        return m

    def row(self, m: DownloadManager, id: str) -> DownloadRow:
        (row,) = [r for r in m.rows() if r.id == id]
        return row

    def settle(self) -> None:
        """Until the manager's download thread has ended (its clean-up included)."""
        self.qtbot.waitUntil(lambda: not any(t.name.startswith(self.lane + ":")
                                             for t in threading.enumerate()), timeout=20_000)

    def cli_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("HF_TOKEN", None)
        env.update(HF_ENDPOINT=self.hub.url, HEARTH_HOME=str(self.tmp / "home"),
                   HEARTH_MODELS_DIR=str(self.models),
                   PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
        return env

    def cli(self, *, gated: bool = False) -> subprocess.Popen[str]:
        """`hearth download REPO FILE` in a process of its own (gated: held at its first write,
        returned once it says so)."""
        args = ["-c", _GATED_CLI] if gated else ["-m", "app", "download"]
        proc = subprocess.Popen(
            [sys.executable, *args, REPO, FILE], cwd=ROOT, env=self.cli_env(), text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            if hasattr(signal, "SIGINT") and sys.platform != "win32" else None)
        self.children.append(proc)
        if gated:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line == "holding\n", proc.communicate(timeout=60)
        return proc


@pytest.fixture
def env(tmp_path: Path, qtbot: Any) -> Iterator[Env]:
    with FakeHub() as hub:
        e = Env(hub, tmp_path, qtbot)
        yield e
        for m in e.managers:
            m.shutdown()
        for proc in e.children:
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=30)
        for c in e.clients:
            c.close()


def release(proc: subprocess.Popen[str]) -> None:
    """Let a gated `hearth download` go on writing."""
    assert proc.stdin is not None
    proc.stdin.write("\n")
    proc.stdin.flush()


def read_until(stream: IO[str] | None, words: str) -> tuple[bool, str]:
    """Lines from ``stream`` until one holds ``words`` (True) or the stream ends (False)."""
    assert stream is not None
    seen = ""
    for line in stream:
        seen += line
        if words in line:
            return True, seen
    return False, seen


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith((".part", ".part.json", ".lock")))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- `hearth download` while the app downloads the same file ---------------------------------------


@pytest.mark.timeout(120)
def test_hearth_download_waits_for_the_app_and_then_finds_the_file_verified(env: Env) -> None:
    data = data_for(1)
    env.hub.add_repo(REPO, {FILE: data})
    holding, go_on = threading.Event(), threading.Event()

    def gate(fd: int, chunk: bytes | memoryview, offset: int) -> int:
        if not holding.is_set():
            holding.set()
            go_on.wait(60)
        return os.pwrite(fd, chunk, offset)

    m = env.manager(replace(OPT, connections=1, write=gate))
    finished: list[str] = []
    m.finished.connect(finished.append)
    details, group = env.group()
    id = m.enqueue(details, group)
    env.qtbot.waitUntil(holding.is_set, timeout=20_000)  # the app is mid-download
    proc = env.cli()
    try:
        waited, said = read_until(proc.stderr, "being downloaded by another Hearth")
    finally:
        go_on.set()
    assert waited, f"`hearth download` did not wait for the app's download; it said:\n{said}"
    assert "the Hearth app" in said and f"pid {os.getpid()}" in said
    assert "Ctrl+C" in said

    env.qtbot.waitUntil(lambda: bool(finished), timeout=30_000)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, said + err
    assert out == f"{env.target}\n"
    assert "Verified" in err and "Traceback" not in said + err
    assert env.target.read_bytes() == data
    assert env.hub.bytes_served == SIZE  # fetched once, by the app; the command fetched nothing
    assert leftovers(env.models) == []  # no journal beside the model, no lock either
    assert env.row(m, id).state == "done"


@pytest.mark.timeout(120)
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_while_waiting_leaves_the_apps_download_alone(env: Env) -> None:
    data = data_for(2)
    env.hub.add_repo(REPO, {FILE: data})
    holding, go_on = threading.Event(), threading.Event()

    def gate(fd: int, chunk: bytes | memoryview, offset: int) -> int:
        if not holding.is_set():
            holding.set()
            go_on.wait(60)
        return os.pwrite(fd, chunk, offset)

    m = env.manager(replace(OPT, connections=1, write=gate))
    finished: list[str] = []
    m.finished.connect(finished.append)
    m.enqueue(*env.group())
    env.qtbot.waitUntil(holding.is_set, timeout=20_000)
    proc = env.cli()
    try:
        waited, said = read_until(proc.stderr, "being downloaded by another Hearth")
        assert waited, f"`hearth download` did not wait for the app's download; it said:\n{said}"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        go_on.set()
    assert proc.returncode == 130
    assert "Stopped waiting" in err and "the Hearth app" in err and "Traceback" not in err
    env.qtbot.waitUntil(lambda: bool(finished), timeout=30_000)
    assert env.target.read_bytes() == data and leftovers(env.models) == []


# -- the app while `hearth download` downloads the same file ---------------------------------------


@pytest.mark.timeout(120)
def test_the_app_queue_shows_waiting_for_hearth_download_and_then_finishes(env: Env) -> None:
    data = data_for(3)
    env.hub.add_repo(REPO, {FILE: data})
    proc = env.cli(gated=True)  # holds the file mid-download
    m = env.manager()
    finished: list[str] = []
    m.finished.connect(finished.append)
    id = m.enqueue(*env.group())
    env.qtbot.waitUntil(lambda: env.row(m, id).phase.startswith("waiting")
                        or env.row(m, id).state in ("done", "failed"), timeout=30_000)
    row = env.row(m, id)
    assert row.phase.startswith("waiting"), f"the app did not wait for `hearth download`: {row}"
    assert row.state == "downloading"  # its turn in the queue; the line says what it waits for
    assert "another Hearth" in row.phase and "hearth download" in row.phase
    assert f"pid {proc.pid}" in row.phase

    release(proc)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.splitlines()[-1] == str(env.target)
    env.qtbot.waitUntil(lambda: bool(finished), timeout=30_000)
    assert finished == [str(env.target)]
    assert env.target.read_bytes() == data
    assert env.hub.bytes_served == SIZE  # fetched once, by `hearth download`
    assert env.verified == [(env.target, sha(data))]
    assert env.row(m, id).state == "done"
    assert leftovers(env.models) == []


@pytest.mark.timeout(120)
def test_cancelling_the_wait_in_the_app_keeps_the_other_hearths_partial_file(env: Env) -> None:
    data = data_for(4)
    env.hub.add_repo(REPO, {FILE: data})
    proc = env.cli(gated=True)
    _, part, journal = part_paths(env.target.parent, FILE)
    assert part.is_file() and journal.is_file()  # the command's work so far
    m = env.manager()
    id = m.enqueue(*env.group())
    env.qtbot.waitUntil(lambda: env.row(m, id).phase.startswith("waiting")
                        or env.row(m, id).state in ("done", "failed"), timeout=30_000)
    assert env.row(m, id).phase.startswith("waiting"), env.row(m, id)

    m.cancel(id)  # "cancel and delete" of the app's own download: the command's is not the app's
    env.settle()
    assert m.rows() == []
    assert part.is_file() and journal.is_file()

    release(proc)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert env.target.read_bytes() == data and leftovers(env.models) == []


@pytest.mark.timeout(120)
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_a_download_killed_while_holding_the_file_blocks_nobody(env: Env) -> None:
    # A regression guard: the lock is the kernel's, so it dies with the process that held it.
    data = data_for(5)
    env.hub.add_repo(REPO, {FILE: data})
    holder = env.cli(gated=True)
    holder.kill()
    holder.communicate(timeout=30)
    again = env.cli()
    out, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    assert "another Hearth" not in err
    assert out == f"{env.target}\n" and env.target.read_bytes() == data
    assert leftovers(env.models) == []  # the killed one's lock file went with the next download


# -- what the old race left behind -----------------------------------------------------------------


def test_a_stale_journal_beside_a_verified_model_goes_without_fetching_again(env: Env) -> None:
    data = data_for(6)
    env.hub.add_repo(REPO, {FILE: data})
    details, group = env.group()
    sources = sources_for(env.client(), REPO, details.revision, group)
    folder = env.target.parent
    token = CancelToken()

    def pause_at_half(p: DownloadProgress) -> None:
        if p.done >= SIZE // 2:
            token.cancel()

    with pytest.raises(CancelledError):
        download_group(sources, folder, cancel=token, progress=pause_at_half, options=OPT)
    _, _, journal = part_paths(folder, FILE)
    left = journal.read_bytes()  # a journal as a download still running writes it
    download_group(sources, folder, cancel=CancelToken(), options=OPT)
    journal.write_bytes(left)  # what the second of two racing downloads left beside the model

    env.hub.clear_requests()
    paths = download_group(sources, folder, cancel=CancelToken(), options=OPT)
    assert paths == [env.target] and env.target.read_bytes() == data
    assert env.hub.bytes_served == 0  # the verified model was kept, not fetched again
    assert not journal.exists()
    assert leftovers(env.models) == []
