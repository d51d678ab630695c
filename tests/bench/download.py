"""What Hearth's downloader costs, against a plain download, on loopback from the fake Hub.

(a) Throughput: ``download_group`` (DownloadOptions' connections, per-chunk fdatasync and CRC-32, the whole
    file's sha256 checked before the rename) against a plain single-stream httpx2 download of the
    same file written to the same folder (no hashing, no fsync). The fake Hub serves from a child
    process, as the real Hub is not in ours; the two take turns, run after run, and the figure is
    the median. Target: >= 0.95x.
(b) Crash loss: a downloading child process is killed with SIGKILL at about half; the download
    then resumes here. The bytes fetched twice (served in all minus the file size) must stay
    within one chunk per connection.
(c) Fit verdict before download: a header-only Qwen2.5-32B (152k-token vocabulary) served by the
    fake Hub; the time of ``remote_model`` (Range reads of the header) plus ``plan`` on an RTX
    4090 report. Target <= 1 s.

    .venv/bin/python -m tests.bench.download              # prints the figures
    .venv/bin/python -m tests.bench.download --strict     # exit 1 when a target is missed
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 0.95
TARGET_VERDICT_S = 1.0
ROOT = Path(__file__).resolve().parents[2]
REPO = "bench/tiny-GGUF"
NAME = "bench-Q4_K_M.gguf"


# -- child processes -------------------------------------------------------------------------------


def _serve(size: int) -> None:
    """Child: a fake Hub with one random file; prints its URL and sha256, serves until stdin ends."""
    from tests.fixtures.fake_hub import FakeHub

    data = os.urandom(size)
    with FakeHub() as hub:
        sha = hub.add_repo(REPO, {NAME: data})
        print(json.dumps({"url": f"{hub.url}/{REPO}/resolve/{sha}/{NAME}",
                          "sha256": hashlib.sha256(data).hexdigest()}), flush=True)
        sys.stdin.read()


def _child_download(url: str, size: int, sha: str, folder: str) -> None:
    """Child: download and print the bytes done at each report (the parent kills it)."""
    from app.hub.download import DownloadOptions, DownloadSource, download_group
    from app.jobs import CancelToken

    src = DownloadSource(url, NAME, size, sha)
    download_group([src], Path(folder), cancel=CancelToken(), progress=lambda p: print(p.done, flush=True),
                   options=DownloadOptions(progress_interval=0.01))


# -- (a) throughput --------------------------------------------------------------------------------


def throughput(size: int, runs: int, folder: Path) -> tuple[float, float, float]:
    """(median MB/s of download_group, of a plain single-stream download, of the plain download
    followed by the checks Hearth makes: the file's sha256 and an fdatasync)."""
    import httpx2

    from app.hub.download import DownloadSource, download_group
    from app.jobs import CancelToken

    server = subprocess.Popen([sys.executable, "-m", "tests.bench.download", "--serve", str(size)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert server.stdout is not None and server.stdin is not None
    try:
        info = json.loads(server.stdout.readline())
        src = DownloadSource(info["url"], NAME, size, info["sha256"])
        ours: list[float] = []
        plain: list[float] = []
        checked: list[float] = []
        for _ in range(runs):
            work = Path(tempfile.mkdtemp(dir=folder))
            try:
                start = time.perf_counter()
                with httpx2.Client() as client, (work / "plain").open("wb") as f, \
                        client.stream("GET", src.url) as resp:
                    for block in resp.iter_raw():
                        f.write(block)
                plain.append(size / (time.perf_counter() - start) / 1e6)
                # The same work as Hearth's: the plain download, then hashed and synced.
                with (work / "plain").open("rb") as f:
                    digest = hashlib.file_digest(f, "sha256").hexdigest()
                    os.fsync(f.fileno())
                checked.append(size / (time.perf_counter() - start) / 1e6)
                assert digest == src.sha256
                start = time.perf_counter()
                download_group([src], work, cancel=CancelToken())
                ours.append(size / (time.perf_counter() - start) / 1e6)
            finally:
                shutil.rmtree(work, ignore_errors=True)
        return statistics.median(ours), statistics.median(plain), statistics.median(checked)
    finally:
        server.stdin.close()
        server.wait(timeout=10)


# -- (b) loss at a crash ---------------------------------------------------------------------------


def crash_loss(size: int, folder: Path) -> tuple[int, int, int]:
    """(bytes fetched twice, chunk size, connections) for a SIGKILL at about half."""
    from app.hub.download import DownloadOptions, DownloadSource, chunk_size_for, download_group
    from app.jobs import CancelToken
    from tests.fixtures.fake_hub import FakeHub

    data = os.urandom(size)
    connections = DownloadOptions().connections
    chunk = chunk_size_for(size, connections)
    work = Path(tempfile.mkdtemp(dir=folder))
    try:
        with FakeHub() as hub:
            sha = hub.add_repo(REPO, {NAME: data})
            src = DownloadSource(f"{hub.url}/{REPO}/resolve/{sha}/{NAME}", NAME, size,
                                 hashlib.sha256(data).hexdigest())
            # Slow enough per connection that the kill lands mid-chunk, as it would on a real line.
            hub.throttle_bps = max(1, size // 8)
            child = subprocess.Popen([sys.executable, "-m", "tests.bench.download", "--child", src.url,
                                      str(size), str(src.sha256), str(work)],
                                     stdout=subprocess.PIPE, text=True, cwd=ROOT)
            assert child.stdout is not None
            for line in child.stdout:
                if int(line) >= size // 2:
                    os.kill(child.pid, signal.SIGKILL)
                    break
            child.kill()
            child.wait()
            hub.throttle_bps = None
            download_group([src], work, cancel=CancelToken())
            if (work / NAME).read_bytes() != data:
                raise SystemExit("the resumed download does not match the file")
            return hub.bytes_served - size, chunk, connections
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- (c) fit verdict from the header -----------------------------------------------------------------


def verdict_time(folder: Path, runs: int = 3) -> float:
    """Median seconds for remote_model + plan of a header-only Qwen2.5-32B Q4_K_M."""
    from app.hardware.report import HardwareReport
    from app.hub import remote_header
    from app.hub.client import HubClient
    from app.hub.names import group_files
    from app.hub.types import HubFile
    from app.planner.plan import plan
    from tests.fixtures.fake_hub import FakeHub
    from tests.fixtures.header_only import QWEN25_32B, write_header_only

    name = "Qwen2.5-32B-Instruct-Q4_K_M.gguf"
    work = Path(tempfile.mkdtemp(dir=folder))
    try:
        path = write_header_only(work / name, QWEN25_32B)
        size = path.stat().st_size
        fake_sha = "0" * 64  # the hole is never read whole: no real hash needed
        report_path = ROOT / "tests/fixtures/hardware/reports/rtx4090_24gb.json"
        hardware = HardwareReport.from_json(json.loads(report_path.read_text()))
        times = []
        with FakeHub() as hub:
            rev = hub.add_repo("bench/Qwen2.5-32B-GGUF", {name: path}, sha256s={name: fake_sha})
            (group,) = group_files([HubFile(name, size, fake_sha)])
            with HubClient(endpoint=hub.url) as client:
                for _ in range(runs):
                    start = time.perf_counter()
                    model = remote_header.remote_model(client, "bench/Qwen2.5-32B-GGUF", rev, group,
                                                       cache=None)
                    plan(model, hardware)
                    times.append(time.perf_counter() - start)
        return statistics.median(times)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.download", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--size-mb", type=int, default=256, help="file size for (a), MB")
    parser.add_argument("--runs", type=int, default=3, help="runs of (a); the median is shown")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()),
                        help="where files are written (the drive matters: fdatasync waits for it)")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        _serve(args.serve)
        return 0
    if args.child:
        url, size, sha, folder = args.child
        _child_download(url, int(size), sha, folder)
        return 0

    ok = True
    size = args.size_mb * 1_000_000
    ours, plain, checked = throughput(size, args.runs, args.dir)
    ratio = ours / plain
    met = ratio >= TARGET_RATIO
    ok &= met
    print(f"(a) {args.size_mb} MB on loopback, median of {args.runs}, in {args.dir}:")
    print(f"    download_group {ours:8.0f} MB/s   plain single stream {plain:8.0f} MB/s   "
          f"ratio {ratio:.2f} (target >= {TARGET_RATIO}: {'met' if met else 'MISSED'})")
    print(f"    for reference, the plain download then hashed and synced as Hearth does: "
          f"{checked:.0f} MB/s; download_group / that = {ours / checked:.2f}")

    again, chunk, connections = crash_loss(64_000_000, args.dir)
    met = 0 <= again <= chunk * connections
    ok &= met
    print(f"(b) SIGKILL at ~50% of 64 MB: {again / 2**20:.1f} MiB fetched twice; bound {connections} "
          f"connections x {chunk / 2**20:.0f} MiB chunks = {chunk * connections / 2**20:.0f} MiB "
          f"({'met' if met else 'MISSED'})")

    seconds = verdict_time(args.dir)
    met = seconds <= TARGET_VERDICT_S
    ok &= met
    print(f"(c) fit verdict from a remote header (Qwen2.5-32B, 152k vocab, RTX 4090): "
          f"{seconds * 1000:.0f} ms (target <= {TARGET_VERDICT_S * 1000:.0f} ms: "
          f"{'met' if met else 'MISSED'})")
    return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    sys.exit(main())
