"""Hearth's resumable downloader against a local fake Hub (app/hub/download.py).

Real HTTP on loopback, real files; faults come from the fake Hub's switches and, for a full
disk, from the downloader's own write and free-space boundaries.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from app.hub.client import HubClient
from app.hub.download import (
    DownloadOptions,
    DownloadProgress,
    DownloadSource,
    DownloadUnavailableError,
    discard,
    download_group,
    downloaded_bytes,
    part_paths,
    sources_for,
)
from app.hub.types import (
    AuthError,
    DiskFullError,
    DownloadError,
    HubUnreachableError,
    IntegrityError,
    UnsafeNameError,
)
from app.i18n import Text
from app.jobs import CancelledError, CancelToken
from tests.fixtures.fake_hub import FakeHub

ROOT = Path(__file__).resolve().parents[3]
CHUNK = 64 * 1024
OPT = DownloadOptions(connections=4, chunk_size=CHUNK, backoff=0.01, backoff_max=0.05, stall_timeout=0.5,
                      reserve=0, progress_interval=0.02)
REPO = "acme/tiny-GGUF"


@pytest.fixture()
def hub() -> Iterator[FakeHub]:
    with FakeHub() as h:
        yield h


def make(hub: FakeHub, size: int = 1 << 20, name: str = "tiny-Q4_K_M.gguf", repo: str = REPO,
         seed: int = 1) -> tuple[DownloadSource, bytes]:
    data = random.Random(seed).randbytes(size)
    sha = hub.add_repo(repo, {name: data})
    url = f"{hub.url}/{repo}/resolve/{sha}/{name}"
    return DownloadSource(url, name, size, hashlib.sha256(data).hexdigest(), revision=sha), data


def gets(hub: FakeHub) -> list[str | None]:
    return [rng for method, path, rng in hub.requests if method == "GET" and "/resolve/" in path]


def pause_at(token: CancelToken, fraction: float, seen: list[DownloadProgress] | None = None) -> Any:
    def progress(p: DownloadProgress) -> None:
        if seen is not None:
            seen.append(p)
        if p.done >= fraction * p.total:
            token.cancel()
    return progress


def journal(folder: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(part_paths(folder, name)[2].read_text())
    return data


def pause_half(hub: FakeHub, src: DownloadSource, folder: Path, fraction: float = 0.5) -> int:
    """Download until about ``fraction``, pause; returns the bytes the journal holds."""
    hub.throttle_bps = 1_000_000
    token = CancelToken()
    with pytest.raises(CancelledError):
        download_group([src], folder, cancel=token, progress=pause_at(token, fraction), options=OPT)
    hub.throttle_bps = None
    settle(hub)
    return downloaded_bytes(folder, src)


def settle(hub: FakeHub) -> None:
    """Wait until the fake Hub has sent what a paused download left in flight: no file body
    open and the count still (30 s at most: a hang guard)."""
    deadline = time.monotonic() + 30
    last = -1
    while hub.open_bodies or hub.bytes_served != last:
        assert time.monotonic() < deadline, "the fake Hub still sends 30 s after a pause"
        last = hub.bytes_served
        time.sleep(0.05)


# -- the normal path -------------------------------------------------------------------------------


def test_full_download_over_several_connections(hub: FakeHub, tmp_path: Path) -> None:
    src, data = make(hub)
    seen: list[DownloadProgress] = []
    paths = download_group([src], tmp_path, cancel=CancelToken(), progress=seen.append, options=OPT)
    assert paths == [tmp_path / src.name]
    assert paths[0].read_bytes() == data
    assert not part_paths(tmp_path, src.name)[1].exists()
    assert not part_paths(tmp_path, src.name)[2].exists()
    ranges = gets(hub)
    # One request per chunk, each for its own range: the file came in 16 pieces.
    assert sorted(ranges, key=lambda r: int(r.split("=")[1].split("-")[0]) if r else 0) == [
        f"bytes={i}-{i + CHUNK - 1}" for i in range(0, len(data), CHUNK)]
    assert hub.bytes_served == len(data)
    assert seen[-1].done == seen[-1].total == len(data)
    assert seen[-1].phase == "done"
    assert seen[-1].files == (len(data),)


def test_connections_run_at_the_same_time(hub: FakeHub, tmp_path: Path) -> None:
    src, data = make(hub, size=8 * CHUNK)
    # The Hub holds each body until four are open at once (a downloader that fetched one chunk
    # after another would be held for the hub's 30 s, then be seen with one open).
    hub.hold_bodies = 4
    held = DownloadOptions(connections=4, chunk_size=CHUNK, backoff=0.01, backoff_max=0.05,
                           stall_timeout=60, reserve=0, progress_interval=0.02)
    download_group([src], tmp_path, cancel=CancelToken(), options=held)
    assert hub.peak_bodies >= 4  # four at a time
    assert (tmp_path / src.name).read_bytes() == data


def test_split_group_and_sources_from_hub_client(hub: FakeHub, tmp_path: Path) -> None:
    parts = {f"big/m-Q4_K_M-0000{i}-of-00003.gguf": random.Random(i).randbytes(100_000 + i)
             for i in (1, 2, 3)}
    hub.add_repo(REPO, parts)
    with HubClient(endpoint=hub.url) as client:
        details = client.details(REPO)
        (group,) = [g for g in details.groups if g.split]
        sources = sources_for(client, REPO, details.revision, group)
    paths = download_group(sources, tmp_path, cancel=CancelToken(), options=OPT)
    assert [p.relative_to(tmp_path).as_posix() for p in paths] == list(parts)
    assert [p.read_bytes() for p in paths] == list(parts.values())


def test_same_call_again_after_success_fetches_nothing(hub: FakeHub, tmp_path: Path) -> None:
    src, data = make(hub, size=200_000)
    download_group([src], tmp_path, cancel=CancelToken(), options=OPT)
    hub.clear_requests()
    download_group([src], tmp_path, cancel=CancelToken(), options=OPT)
    assert hub.bytes_served == 0
    assert (tmp_path / src.name).read_bytes() == data


# -- pause, resume, crash ----------------------------------------------------------------------------


def test_resume_after_pause_fetches_only_the_missing_part(hub: FakeHub, tmp_path: Path) -> None:
    src, data = make(hub)
    kept = pause_half(hub, src, tmp_path)
    assert 0 < kept < len(data)
    part = part_paths(tmp_path, src.name)[1]
    assert part.exists() and not (tmp_path / src.name).exists()
    j = journal(tmp_path, src.name)
    assert j["sha256"] == src.sha256 and j["size"] == len(data) and j["chunk_size"] == CHUNK
    assert j["etag"] and j["ranges"] is True
    assert all(len(h) == 8 for h in j["done"].values())  # a CRC-32 per chunk
    hub.clear_requests()
    download_group([src], tmp_path, cancel=CancelToken(), options=OPT)
    assert (tmp_path / src.name).read_bytes() == data
    assert hub.bytes_served == len(data) - kept


@pytest.mark.timeout(120)  # a hang guard: only the pause can end this download
def test_pause_is_prompt_even_on_a_stalled_connection(hub: FakeHub, tmp_path: Path) -> None:
    src, _ = make(hub)
    hub.stall_after = 1000
    token = CancelToken()
    # Every response stalls after 1,000 bytes and the stall time-out is an hour: what ends the
    # download is the pause, sent once the first connection has stalled.
    opt = DownloadOptions(chunk_size=CHUNK, stall_timeout=3600, reserve=0)

    def pause_once_stalled() -> None:
        deadline = time.monotonic() + 60
        while hub.bytes_served < 1000 and time.monotonic() < deadline:
            time.sleep(0.01)
        token.cancel()

    pauser = threading.Thread(target=pause_once_stalled, daemon=True)
    pauser.start()
    with pytest.raises(CancelledError):
        download_group([src], tmp_path, cancel=token, options=opt)
    pauser.join()
    assert part_paths(tmp_path, src.name)[2].exists()  # paused, not deleted


def test_discard_deletes_the_partial(hub: FakeHub, tmp_path: Path) -> None:
    src, _ = make(hub)
    pause_half(hub, src, tmp_path)
    discard(tmp_path, src.name)
    assert not part_paths(tmp_path, src.name)[1].exists()
    assert not part_paths(tmp_path, src.name)[2].exists()
    assert downloaded_bytes(tmp_path, src) == 0


_CHILD = """
import sys
from pathlib import Path
from app.hub.download import DownloadOptions, DownloadSource, download_group
from app.jobs import CancelToken
url, name, size, sha, folder, chunk = sys.argv[1:7]
src = DownloadSource(url, name, int(size), sha)
def show(p):
    print(p.done, flush=True)
download_group([src], Path(folder), cancel=CancelToken(), progress=show,
               options=DownloadOptions(connections=4, chunk_size=int(chunk), reserve=0,
                                       progress_interval=0.01))
"""


def kill_at_half(src: DownloadSource, folder: Path, chunk: int) -> int:
    """Run a download in another process and SIGKILL it at about half; returns its last report."""
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, src.url, src.name, str(src.size),
                             str(src.sha256), str(folder), str(chunk)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    last = 0
    try:
        for line in proc.stdout:
            last = int(line)
            if last >= src.size // 2:
                os.kill(proc.pid, signal.SIGKILL)
                break
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    return last


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_sigkill_loses_at_most_one_chunk_per_connection(hub: FakeHub, tmp_path: Path) -> None:
    src, data = make(hub, size=4 << 20)
    chunk = 128 * 1024
    hub.throttle_bps = 1_000_000  # per connection: the kill lands mid-download
    reported = kill_at_half(src, tmp_path, chunk)
    assert reported < len(data)
    hub.throttle_bps = None
    before = hub.bytes_served
    download_group([src], tmp_path, cancel=CancelToken(), options=OPT)
    assert (tmp_path / src.name).read_bytes() == data
    fetched_again = before + (hub.bytes_served - before) - len(data)
    assert 0 <= fetched_again <= 4 * chunk


# -- integrity ---------------------------------------------------------------------------------------


def test_bytes_damaged_in_transit_are_fetched_again(hub: FakeHub, tmp_path: Path) -> None:
    src, data = make(hub)
    hub.corrupt(REPO, src.name, offset=300_000, data=b"\x00garbage\x00", times=1)
    seen: list[DownloadProgress] = []
    download_group([src], tmp_path, cancel=CancelToken(), progress=seen.append, options=OPT)
    assert (tmp_path / src.name).read_bytes() == data
    assert hub.bytes_served == 2 * len(data)  # nothing on disk could be blamed: all again, once
    assert "fetched again whole" in seen[-1].phase


def test_damage_in_transit_every_time_is_an_integrity_error(hub: FakeHub, tmp_path: Path) -> None:
    src, _ = make(hub, size=200_000)
    hub.corrupt(REPO, src.name, offset=10, data=b"bad", times=2)
    with pytest.raises(IntegrityError, match="does not match"):
        download_group([src], tmp_path, cancel=CancelToken(), options=OPT)
    assert not (tmp_path / src.name).exists()
    assert not part_paths(tmp_path, src.name)[1].exists()


def test_a_chunk_damaged_on_disk_between_runs_is_the_only_one_fetched_again(hub: FakeHub,
                                                                            tmp_path: Path) -> None:
    src, data = make(hub)
    kept = pause_half(hub, src, tmp_path)
    done = sorted(int(k) for k in journal(tmp_path, src.name)["done"])
    victim = done[len(done) // 2]
    part = part_paths(tmp_path, src.name)[1]
    with part.open("r+b") as f:
        f.seek(victim * CHUNK + 123)
        f.write(b"bit rot")
    hub.clear_requests()
    seen: list[DownloadProgress] = []
    download_group([src], tmp_path, cancel=CancelToken(), progress=seen.append, options=OPT)
    assert (tmp_path / src.name).read_bytes() == data
    assert hub.bytes_served == len(data) - kept + CHUNK
    assert f"bytes={victim * CHUNK}-{victim * CHUNK + CHUNK - 1}" in gets(hub)
    assert "1 damaged part fetched again" in seen[-1].phase


def test_a_journal_for_another_file_restarts_clean(hub: FakeHub, tmp_path: Path) -> None:
    src, _ = make(hub)
    pause_half(hub, src, tmp_path)
    new, new_data = make(hub, seed=2)  # a new commit: same name, other bytes
    hub.clear_requests()
    download_group([new], tmp_path, cancel=CancelToken(), options=OPT)
    assert (tmp_path / src.name).read_bytes() == new_data
    assert hub.bytes_served == len(new_data)


# -- servers that do not play along ------------------------------------------------------------------


def test_server_without_range_gets_one_stream_and_restarts(hub: FakeHub, tmp_path: Path) -> None:
    src, data = make(hub)
    hub.no_range = True
    pause_half(hub, src, tmp_path)
    j = journal(tmp_path, src.name)
    assert j["ranges"] is False and "cannot resume" in j["note"]
    hub.clear_requests()
    download_group([src], tmp_path, cancel=CancelToken(), options=OPT)
    assert (tmp_path / src.name).read_bytes() == data
    assert hub.bytes_served == len(data)  # from the start: nothing could be reused
    assert len(gets(hub)) == 1


def test_404_is_a_sentence(hub: FakeHub, tmp_path: Path) -> None:
    src, _ = make(hub)
    gone = DownloadSource(src.url.replace(src.name, "gone.gguf"), "gone.gguf", src.size, src.sha256)
    with pytest.raises(DownloadError, match="no longer on Hugging Face") as raised:
        download_group([gone], tmp_path, cancel=CancelToken(), options=OPT)
    # One whole sentence per case: never an English word ("file") put into a template.
    message = str(raised.value)
    assert message.startswith("The file for gone.gguf is no longer on Hugging Face")
    assert isinstance(message, Text) and "what" not in message.args


@pytest.mark.parametrize(("token", "accepted", "reason"), [
    (None, True, "missing"), ("wrong", True, "invalid"), ("secret", False, "license")])
def test_gated_repository(hub: FakeHub, tmp_path: Path, token: str | None, accepted: bool,
                          reason: str) -> None:
    data = b"x" * 50_000
    sha = hub.add_repo("acme/gated-GGUF", {"g.gguf": data}, gated=True)
    hub.token, hub.accepted = "secret", accepted
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    src = DownloadSource(f"{hub.url}/acme/gated-GGUF/resolve/{sha}/g.gguf", "g.gguf", len(data),
                         hashlib.sha256(data).hexdigest(), headers)
    with pytest.raises(AuthError) as info:
        download_group([src], tmp_path, cancel=CancelToken(), options=OPT)
    assert info.value.reason == reason
    assert info.value.url == f"{hub.url}/acme/gated-GGUF"
    assert str(info.value).endswith(".")


def test_server_errors_are_retried(hub: FakeHub, tmp_path: Path) -> None:
    src, data = make(hub)
    hub.fail_next(500, count=2, path_contains=src.name)
    hub.fail_next(429, count=1, path_contains=src.name)
    seen: list[DownloadProgress] = []
    download_group([src], tmp_path, cancel=CancelToken(), progress=seen.append,
                   options=DownloadOptions(chunk_size=CHUNK, backoff=0.05, reserve=0,
                                           progress_interval=0.0))
    assert (tmp_path / src.name).read_bytes() == data
    assert any(p.phase.startswith("retrying in 1s: the server answered 500") for p in seen)


def test_hub_down_longer_than_the_retries(hub: FakeHub, tmp_path: Path) -> None:
    src, _ = make(hub)
    hub.down = True
    with pytest.raises(DownloadUnavailableError, match="503") as info:
        download_group([src], tmp_path, cancel=CancelToken(),
                       options=DownloadOptions(chunk_size=CHUNK, retries=2, backoff=0.01, reserve=0))
    assert isinstance(info.value, HubUnreachableError) and isinstance(info.value, DownloadError)
    assert "resume" in str(info.value)


def test_hub_down_mid_download_keeps_the_partial(hub: FakeHub, tmp_path: Path) -> None:
    src, data = make(hub)
    hub.throttle_bps = 1_000_000
    token = CancelToken()

    def go_down(p: DownloadProgress) -> None:
        if p.done > p.total // 3:
            hub.down = True
    with pytest.raises(DownloadUnavailableError):
        download_group([src], tmp_path, cancel=token, progress=go_down,
                       options=DownloadOptions(chunk_size=CHUNK, retries=2, backoff=0.01, reserve=0,
                                               progress_interval=0.01, stall_timeout=0.5))
    kept = downloaded_bytes(tmp_path, src)
    assert kept > 0
    hub.down, hub.throttle_bps = False, None
    settle(hub)  # what the failed download left in flight, before counting afresh
    hub.clear_requests()
    download_group([src], tmp_path, cancel=CancelToken(), options=OPT)
    assert (tmp_path / src.name).read_bytes() == data
    assert hub.bytes_served == len(data) - kept


def test_a_stalled_response_is_dropped_and_reopened(hub: FakeHub, tmp_path: Path) -> None:
    src, data = make(hub, size=4 * CHUNK)
    hub.stall_after = 40_000  # every response hangs after 40 kB
    seen: list[DownloadProgress] = []
    download_group([src], tmp_path, cancel=CancelToken(), progress=seen.append,
                   options=DownloadOptions(chunk_size=CHUNK, stall_timeout=0.3, backoff=0.01, reserve=0,
                                           progress_interval=0.0))
    assert (tmp_path / src.name).read_bytes() == data
    ranges = gets(hub)
    assert f"bytes=40000-{CHUNK - 1}" in ranges  # reopened where it stopped, not from the start
    # Each of the 4 chunks stalls once and is reopened (on a busy machine a reopened response
    # can itself miss the 0.3 s stall limit and be reopened again, never from the start).
    assert len(ranges) >= 8
    starts = {int(r.split("=")[1].split("-")[0]) for r in ranges}
    assert all(start % CHUNK in (0, 40_000) for start in starts)
    assert sum(1 for r in ranges if r.startswith("bytes=0-")) == 1


# -- the disk ----------------------------------------------------------------------------------------


def test_not_enough_space_before_starting(hub: FakeHub, tmp_path: Path) -> None:
    src, data = make(hub)
    kept = pause_half(hub, src, tmp_path)
    part = part_paths(tmp_path, src.name)[1]
    before = part.read_bytes()
    hub.clear_requests()
    tiny = DownloadOptions(chunk_size=CHUNK, reserve=1000, free_space=lambda _p: 5000)
    with pytest.raises(DiskFullError) as info:
        download_group([src], tmp_path, cancel=CancelToken(), options=tiny)
    assert info.value.needed == len(data) - kept + 1000 and info.value.free == 5000
    assert "free" in str(info.value) and str(tmp_path.anchor) in str(info.value)
    assert hub.requests == [] and part.read_bytes() == before  # nothing fetched, nothing deleted
    download_group([src], tmp_path, cancel=CancelToken(), options=OPT)
    assert (tmp_path / src.name).read_bytes() == data


def test_disk_fills_up_while_writing(hub: FakeHub, tmp_path: Path) -> None:
    src, data = make(hub)
    written = [0]
    lock = threading.Lock()

    def filling_write(fd: int, buf: bytes | memoryview, offset: int) -> int:
        with lock:
            if written[0] > 300_000:
                raise OSError(errno.ENOSPC, "No space left on device")
            written[0] += len(buf)
        return os.pwrite(fd, buf, offset)

    opt = DownloadOptions(chunk_size=CHUNK, reserve=0, write=filling_write)
    with pytest.raises(DiskFullError, match="filled up"):
        download_group([src], tmp_path, cancel=CancelToken(), options=opt)
    kept = downloaded_bytes(tmp_path, src)
    assert kept >= CHUNK and part_paths(tmp_path, src.name)[1].exists()
    settle(hub)  # what the failed download left in flight, before counting afresh
    hub.clear_requests()
    download_group([src], tmp_path, cancel=CancelToken(), options=OPT)
    assert (tmp_path / src.name).read_bytes() == data
    assert hub.bytes_served == len(data) - kept


# -- untrusted input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../evil.gguf", "/etc/evil.gguf", "a/../../evil.gguf", "C:evil.gguf"])
def test_unsafe_names_are_refused_before_anything_is_written(hub: FakeHub, tmp_path: Path,
                                                             name: str) -> None:
    good, _ = make(hub)
    folder = tmp_path / "models"
    folder.mkdir()
    bad = DownloadSource(good.url, name, good.size, good.sha256)
    with pytest.raises(UnsafeNameError):
        download_group([good, bad], folder, cancel=CancelToken(), options=OPT)
    assert hub.requests == []
    assert list(tmp_path.rglob("*")) == [folder]


def test_server_disagreeing_on_the_size_is_refused(hub: FakeHub, tmp_path: Path) -> None:
    src, _data = make(hub, size=200_000)
    lying = DownloadSource(src.url, src.name, 150_000, src.sha256)
    with pytest.raises(DownloadError, match="listed 150,000"):
        download_group([lying], tmp_path, cancel=CancelToken(), options=OPT)
    assert not (tmp_path / src.name).exists()


class _TooMuch(BaseHTTPRequestHandler):
    """Answers any Range with the right 206 headers, then streams far more than announced."""

    protocol_version = "HTTP/1.1"
    size = 100_000

    def do_GET(self) -> None:
        start, end = (int(x) for x in self.headers["Range"].split("=")[1].split("-"))
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{self.size}")
        self.send_header("Transfer-Encoding", "chunked")  # no Content-Length to hold it to
        self.end_headers()
        try:
            for _ in range(50):
                block = b"A" * 8192
                self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_server_sending_more_than_announced_is_cut_off(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _TooMuch)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        src = DownloadSource(f"http://127.0.0.1:{server.server_address[1]}/x.gguf", "x.gguf",
                             _TooMuch.size, "0" * 64)
        with pytest.raises(DownloadError, match="more bytes"):
            download_group([src], tmp_path, cancel=CancelToken(),
                           options=DownloadOptions(chunk_size=50_000, reserve=0))
    finally:
        server.shutdown()
        server.server_close()
    part = part_paths(tmp_path, "x.gguf")[1]
    assert part.stat().st_size == _TooMuch.size  # never written past the size
    assert not (tmp_path / "x.gguf").exists()
