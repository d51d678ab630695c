"""The download queue service (app/services/downloads.py) with everything real: a TaskRunner
thread, a DownloadQueue file in tmp_path, the real HubClient and downloader against the fake Hub
serving random bytes. Faults come from the fake Hub's switches and, for a full disk, from the
downloader's free-space boundary injected through ``download``."""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject

from app.hub.client import HubClient
from app.hub.download import DownloadOptions, download_group, part_paths
from app.hub.queue import DownloadQueue
from app.hub.types import FileGroup, HubError, HubFile, RepoDetails
from app.services.downloads import DownloadManager
from app.services.protocols import DownloadRow
from app.services.tasks import TaskRunner
from tests.fixtures.fake_hub import FakeHub

REPO = "acme/Rand-GGUF"
FILE = "rand-Q4_K_M.gguf"
SIZE = 2 << 20
CHUNK = 128 * 1024
# Small chunks over two connections: a pause leaves a journal with whole chunks in it and some
# missing, so "fetches only the missing bytes" means something. Retries are quick.
OPT = DownloadOptions(connections=2, chunk_size=CHUNK, backoff=0.01, backoff_max=0.05,
                      reserve=0, progress_interval=0.02)
SLOW = 1_000_000  # bytes/s per connection: the 2 MiB file takes about a second


def data_for(seed: int, size: int = SIZE) -> bytes:
    return random.Random(seed).randbytes(size)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Env:
    hub: FakeHub
    tmp: Path
    qtbot: Any
    parent: QObject = field(default_factory=QObject)
    client: HubClient | None = None
    verified: list[tuple[Path, str]] = field(default_factory=list)
    managers: list[DownloadManager] = field(default_factory=list)
    clients: list[HubClient] = field(default_factory=list)

    @property
    def models(self) -> Path:
        return self.tmp / "models"

    @property
    def queue_file(self) -> Path:
        return self.tmp / "downloads.json"

    def set_client(self, token: str | None = None) -> HubClient:
        self.client = HubClient(endpoint=self.hub.url, token=token)
        self.clients.append(self.client)
        return self.client

    def manager(self, download: Callable[..., list[Path]] | None = None) -> DownloadManager:
        """A manager on a NEW DownloadQueue read from the queue file (as at an app start)."""
        if self.client is None:
            self.set_client()
        m = DownloadManager(TaskRunner(self.parent, name=self.lane), DownloadQueue(self.queue_file),
                            lambda: self.client, lambda: self.models,
                            on_verified=lambda p, s: self.verified.append((p, s)),
                            download=download or functools.partial(download_group, options=OPT),
                            parent=self.parent)
        self.managers.append(m)
        return m

    def group(self, repo: str = REPO, name: str = FILE) -> tuple[RepoDetails, FileGroup]:
        assert self.client is not None
        details = self.client.details(repo)
        (group,) = [g for g in details.groups if g.name == name]
        return details, group

    def row(self, m: DownloadManager, id: str) -> DownloadRow:
        (row,) = [r for r in m.rows() if r.id == id]
        return row

    @property
    def lane(self) -> str:
        """The TaskRunner name of this test's managers: their job threads are "<lane>:download"."""
        return f"test-downloads-{id(self):x}"

    def settle(self) -> None:
        """Wait until a stopped download's thread has ended (its last journal write and, after
        Cancel, its clean-up are done) and the fake Hub has sent what was left in flight."""
        self.qtbot.waitUntil(lambda: not any(t.name.startswith(self.lane + ":")
                                             for t in threading.enumerate()), timeout=10_000)
        last = -1
        while self.hub.bytes_served != last:
            last = self.hub.bytes_served
            self.qtbot.wait(150)


@pytest.fixture
def env(tmp_path: Path, qtbot: Any) -> Iterator[Env]:
    with FakeHub() as hub:
        e = Env(hub, tmp_path, qtbot)
        yield e
        for m in e.managers:
            m.shutdown()
        for c in e.clients:
            c.close()


def target(env: Env, repo: str = REPO, name: str = FILE) -> Path:
    return env.models.joinpath(*repo.split("/"), name)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith((".part", ".part.json")))


# -- the normal path -------------------------------------------------------------------------------


def test_enqueue_downloads_verifies_and_reports(env: Env) -> None:
    data = data_for(1)
    env.hub.add_repo(REPO, {FILE: data})
    env.hub.throttle_bps = 4 * SLOW  # long enough for several progress reports
    m = env.manager()
    details, group = env.group()
    rows: list[DownloadRow] = []
    m.progress.connect(rows.append)
    with env.qtbot.waitSignal(m.finished, timeout=20_000) as done:
        id = m.enqueue(details, group)
        assert env.row(m, id).state == "downloading"  # started at once: nothing else queued
    path = Path(done.args[0])
    assert path == target(env)
    assert path.read_bytes() == data
    assert leftovers(env.models) == []
    assert env.verified == [(path, sha(data))]
    row = env.row(m, id)
    assert (row.state, row.done, row.total, row.speed) == ("done", SIZE, SIZE, 0.0)
    assert json.loads(env.queue_file.read_text())["entries"][0]["state"] == "done"
    # Progress rows carry live numbers: bytes on disk of the whole, a speed, growing.
    live = [r for r in rows if r.state == "downloading"]
    assert live and all(r.id == id and r.total == SIZE for r in live)
    assert any(0 < r.done < SIZE and r.speed > 0 for r in live)
    dones = [r.done for r in live]
    assert dones == sorted(dones)
    assert env.hub.bytes_served == SIZE  # each byte once


def test_two_downloads_run_one_after_the_other(env: Env) -> None:
    first, second = data_for(1), data_for(2)
    env.hub.add_repo(REPO, {FILE: first, "rand-Q8_0.gguf": second})
    env.hub.throttle_bps = 4 * SLOW
    m = env.manager()
    details, g1 = env.group()
    _, g2 = env.group(name="rand-Q8_0.gguf")
    states: list[tuple[str, ...]] = []
    m.changed.connect(lambda: states.append(tuple(r.state for r in m.rows())))
    finished: list[str] = []
    m.finished.connect(finished.append)
    active: list[str] = []
    m.progress.connect(lambda r: active.append(r.id) if not active or active[-1] != r.id else None)
    id1 = m.enqueue(details, g1)
    id2 = m.enqueue(details, g2)
    assert [r.state for r in m.rows()] == ["downloading", "queued"]
    env.qtbot.waitUntil(lambda: len(finished) == 2, timeout=20_000)
    assert finished == [str(target(env)), str(target(env, name="rand-Q8_0.gguf"))]
    assert target(env).read_bytes() == first
    assert target(env, name="rand-Q8_0.gguf").read_bytes() == second
    assert active == [id1, id2]  # progress of the second only after the first's last report
    assert ("downloading", "downloading") not in states
    assert states.index(("done", "downloading")) > states.index(("downloading", "queued"))
    assert [r.state for r in m.rows()] == ["done", "done"]
    assert env.verified == [(target(env), sha(first)),
                            (target(env, name="rand-Q8_0.gguf"), sha(second))]


def test_a_split_model_is_one_entry_and_finishes_with_its_first_part(env: Env) -> None:
    one, two = data_for(12, SIZE // 2 + 17), data_for(13, SIZE // 4)
    first, second = "big-Q4_K_M-00001-of-00002.gguf", "big-Q4_K_M-00002-of-00002.gguf"
    env.hub.add_repo(REPO, {first: one, second: two})
    m = env.manager()
    details, group = env.group(name="big-Q4_K_M.gguf")
    with env.qtbot.waitSignal(m.finished, timeout=20_000) as done:
        id = m.enqueue(details, group)
    assert done.args == [str(target(env, name=first))]  # what a loader opens
    assert target(env, name=first).read_bytes() == one
    assert target(env, name=second).read_bytes() == two
    (row,) = m.rows()
    assert row.id == id and "(2 parts)" in row.title
    assert (row.state, row.done, row.total) == ("done", len(one) + len(two), len(one) + len(two))
    assert env.verified == [(target(env, name=first), sha(one)),
                            (target(env, name=second), sha(two))]


# -- pause, resume, cancel -------------------------------------------------------------------------


def start_slow(env: Env, m: DownloadManager, at: int = SIZE // 4) -> str:
    """Enqueue the throttled download and wait until at least ``at`` bytes are on disk."""
    env.hub.throttle_bps = SLOW
    details, group = env.group()
    seen: list[DownloadRow] = []
    m.progress.connect(seen.append)
    id = m.enqueue(details, group)
    env.qtbot.waitUntil(lambda: any(r.done >= at for r in seen), timeout=20_000)
    m.progress.disconnect(seen.append)
    return id


def test_pause_keeps_the_partial_and_resume_fetches_only_the_rest(env: Env) -> None:
    data = data_for(3)
    env.hub.add_repo(REPO, {FILE: data})
    m = env.manager()
    finished: list[str] = []
    m.finished.connect(finished.append)
    id = start_slow(env, m)
    m.pause(id)
    assert env.row(m, id).state == "paused"
    env.settle()
    _, part, journal = part_paths(target(env).parent, FILE)
    assert part.is_file() and journal.is_file() and not target(env).exists()
    row = env.row(m, id)
    assert (row.state, row.total, row.speed) == ("paused", SIZE, 0.0)
    assert 0 < row.done < SIZE and row.done % CHUNK == 0  # whole chunks, from the journal
    assert json.loads(env.queue_file.read_text())["entries"][0]["state"] == "paused"
    env.qtbot.wait(300)
    assert finished == [] and env.row(m, id).state == "paused"  # the paused job stays stopped

    env.hub.throttle_bps = None
    before = env.hub.bytes_served
    with env.qtbot.waitSignal(m.finished, timeout=20_000):
        m.resume(id)
    assert target(env).read_bytes() == data
    assert env.hub.bytes_served - before == SIZE - row.done  # only what was missing
    assert leftovers(env.models) == []
    assert env.row(m, id).state == "done"
    assert env.verified == [(target(env), sha(data))]


def test_cancel_deletes_the_partial_and_the_row(env: Env) -> None:
    env.hub.add_repo(REPO, {FILE: data_for(4)})
    m = env.manager()
    id = start_slow(env, m)
    assert leftovers(env.models) == [f"{FILE}.part", f"{FILE}.part.json"]
    with env.qtbot.waitSignal(m.changed, timeout=10_000):
        m.cancel(id)
    assert m.rows() == []
    assert json.loads(env.queue_file.read_text())["entries"] == []
    assert not part_paths(target(env).parent, FILE)[1].exists()  # the bytes go at once
    env.settle()  # the journal goes once the download thread has stopped
    assert leftovers(env.models) == []
    assert not target(env).exists()


def test_cancel_while_a_chunk_is_being_recorded_leaves_no_journal(
        env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.hub.download as dl

    env.hub.add_repo(REPO, {FILE: data_for(11)})
    real = dl.write_json_atomic
    recording, cancelled = threading.Event(), threading.Event()

    def slow_journal(path: Any, obj: Any, **kw: Any) -> None:
        # A chunk is being recorded (on a real disk: the fsyncs of write_json_atomic) just as
        # the user presses Cancel.
        if obj.get("done") and not recording.is_set():
            recording.set()
            cancelled.wait(10)
        real(path, obj, **kw)

    monkeypatch.setattr(dl, "write_json_atomic", slow_journal)
    m = env.manager()
    env.hub.throttle_bps = SLOW
    details, group = env.group()
    id = m.enqueue(details, group)
    env.qtbot.waitUntil(recording.is_set, timeout=20_000)
    m.cancel(id)
    cancelled.set()
    env.settle()
    assert leftovers(env.models) == []  # the journal written meanwhile is gone too


def test_crash_mid_download_continues_at_the_next_start(env: Env) -> None:
    data = data_for(5)
    env.hub.add_repo(REPO, {FILE: data})
    first = env.manager()
    start_slow(env, first, at=SIZE // 2)
    first.shutdown()  # the app goes away: the queue file still says "downloading"
    env.settle()
    raw = json.loads(env.queue_file.read_text())["entries"]
    assert [e["state"] for e in raw] == ["downloading"]

    env.hub.throttle_bps = None
    before = env.hub.bytes_served
    second = env.manager()  # a new DownloadQueue on the same file, a new manager
    (row,) = second.rows()
    assert (row.id, row.state) == (raw[0]["id"], "queued")
    on_disk = row.done  # whole chunks in the journal
    assert 0 < on_disk < SIZE
    with env.qtbot.waitSignal(second.finished, timeout=20_000) as done:
        second.start()
    assert Path(done.args[0]).read_bytes() == data
    assert env.hub.bytes_served - before == SIZE - on_disk
    assert [r.state for r in second.rows()] == ["done"]
    assert leftovers(env.models) == []


def test_crash_with_nothing_on_disk_yet_starts_from_a_queue_file(env: Env) -> None:
    data = data_for(6)
    env.hub.add_repo(REPO, {FILE: data})
    env.set_client()
    details, group = env.group()
    writer = DownloadQueue(env.queue_file)
    entry = writer.add(details.repo_id, details.revision, group.name, group.files,
                       target(env).parent)
    writer.set_state(entry.id, "downloading")
    m = env.manager()
    assert [(r.id, r.state) for r in m.rows()] == [(entry.id, "queued")]
    with env.qtbot.waitSignal(m.finished, timeout=20_000) as done:
        m.start()
    assert Path(done.args[0]) == target(env) and target(env).read_bytes() == data
    assert DownloadQueue(env.queue_file).get(entry.id).state == "done"  # type: ignore[union-attr]


# -- problems --------------------------------------------------------------------------------------


def test_gated_without_token_fails_with_the_sentence_and_retry_with_one_succeeds(
        env: Env) -> None:
    data = data_for(7)
    env.hub.token = "hf_right"  # the fake Hub gates only when it knows a token
    env.hub.add_repo(REPO, {FILE: data}, gated=True)
    m = env.manager()
    details, group = env.group()
    with env.qtbot.waitSignal(m.failed, timeout=20_000) as failed:
        id = m.enqueue(details, group)
    fid, sentence = failed.args
    assert fid == id
    assert "gated repository" in sentence and "Token…" in sentence and REPO in sentence
    row = env.row(m, id)
    assert (row.state, row.error) == ("failed", sentence)
    assert not target(env).exists()

    env.set_client(token="hf_right")  # what saving a token does: the next client carries it
    m.retry(id)
    assert (env.row(m, id).state, env.row(m, id).error) == ("downloading", "")
    env.qtbot.waitUntil(lambda: env.row(m, id).state != "downloading", timeout=20_000)
    assert target(env).read_bytes() == data
    assert (env.row(m, id).state, env.row(m, id).error) == ("done", "")


def test_a_full_disk_pauses_with_the_sentence_and_resume_continues(env: Env) -> None:
    data = data_for(8)
    env.hub.add_repo(REPO, {FILE: data})
    free = [0]
    m = env.manager(download=functools.partial(
        download_group, options=DownloadOptions(chunk_size=CHUNK, reserve=0,
                                                free_space=lambda _p: free[0])))
    details, group = env.group()
    id = m.enqueue(details, group)
    env.qtbot.waitUntil(lambda: env.row(m, id).state != "downloading", timeout=20_000)
    row = env.row(m, id)
    assert row.state == "paused"
    assert "needs" in row.error and "free space" in row.error and "nothing was deleted" in row.error
    assert env.hub.bytes_served == 0 and not target(env).exists()

    free[0] = 1 << 40
    with env.qtbot.waitSignal(m.finished, timeout=20_000):
        m.resume(id)
        assert (env.row(m, id).state, env.row(m, id).error) == ("downloading", "")
    assert target(env).read_bytes() == data
    assert env.row(m, id).state == "done"


def test_a_disk_that_fills_mid_download_pauses_and_keeps_what_it_has(env: Env) -> None:
    data = data_for(9)
    env.hub.add_repo(REPO, {FILE: data})
    written = [0]
    limit = [SIZE // 2]

    def write(fd: int, chunk: bytes | memoryview, offset: int) -> int:
        if written[0] + len(chunk) > limit[0]:
            raise OSError(errno.ENOSPC, "No space left on device")
        written[0] += len(chunk)
        return os.pwrite(fd, chunk, offset)

    m = env.manager(download=functools.partial(
        download_group, options=DownloadOptions(connections=1, chunk_size=CHUNK, reserve=0,
                                                write=write, free_space=lambda _p: 1 << 40)))
    details, group = env.group()
    id = m.enqueue(details, group)
    env.qtbot.waitUntil(lambda: env.row(m, id).state != "downloading", timeout=20_000)
    row = env.row(m, id)
    assert row.state == "paused" and "filled up" in row.error and "resume" in row.error
    assert 0 < row.done <= SIZE // 2  # the chunks written before are kept
    kept = row.done

    limit[0] = 1 << 40
    env.settle()
    before = env.hub.bytes_served
    with env.qtbot.waitSignal(m.finished, timeout=20_000):
        m.resume(id)
    assert target(env).read_bytes() == data
    assert env.hub.bytes_served - before == SIZE - kept


def test_names_from_the_hub_are_checked_before_anything_is_queued(env: Env) -> None:
    env.hub.add_repo(REPO, {FILE: data_for(10, 1000)})
    m = env.manager()
    details, group = env.group()
    evil = replace(group, files=(HubFile("../../escape-Q4_K_M.gguf", 1000, None),))
    with pytest.raises(HubError):
        m.enqueue(details, evil)
    assert m.rows() == [] and not env.queue_file.exists()
    assert env.hub.bytes_served == 0


def test_a_model_deleted_after_its_download_can_be_downloaded_again(env: Env) -> None:
    data = data_for(21)
    env.hub.add_repo(REPO, {FILE: data})
    m = env.manager()
    details, group = env.group()
    with env.qtbot.waitSignal(m.finished, timeout=20_000):
        first = m.enqueue(details, group)
    target(env).unlink()  # deleted from the Models tab
    with env.qtbot.waitSignal(m.finished, timeout=20_000):
        again = m.enqueue(details, group)
    assert again != first and target(env).read_bytes() == data
    assert [r.state for r in m.rows()] == ["done"]


def test_resume_right_after_pause_waits_for_the_old_transfer_to_stop(env: Env) -> None:
    data = data_for(22)
    env.hub.add_repo(REPO, {FILE: data})
    m = env.manager()
    id = start_slow(env, m)
    m.pause(id)
    m.resume(id)  # at once: the paused thread may still be stopping
    # Never two threads on one partial file: the entry waits until the first has ended.
    assert env.row(m, id).state in ("queued", "downloading")
    env.hub.throttle_bps = None
    with env.qtbot.waitSignal(m.finished, timeout=20_000):
        pass
    assert target(env).read_bytes() == data and leftovers(env.models) == []
