"""`hearth download` as a user runs it: a real subprocess (`python -m app download ...`) against
the fake Hub, with its own HEARTH_HOME and models folder. Exit codes, what goes to stdout and
stderr, Ctrl+C and continuing with the same command."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.hub.download import part_paths
from app.library.catalog import recorded_sha256
from tests.fixtures.fake_hub import FakeHub

ROOT = Path(__file__).resolve().parents[3]
REPO = "acme/Rand-GGUF"
Q4 = "rand-Q4_K_M.gguf"
Q8 = "rand-Q8_0.gguf"
MiB = 1024 * 1024


def data_for(seed: int, size: int) -> bytes:
    return random.Random(seed).randbytes(size)


@pytest.fixture()
def hub() -> Iterator[FakeHub]:
    with FakeHub() as h:
        yield h


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # This process reads the checksum records the child writes: the same HEARTH_HOME.
    monkeypatch.setenv("HEARTH_HOME", str(tmp_path / "home"))
    return tmp_path


def env_for(hub: FakeHub, home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("HF_TOKEN", None)
    env.update(HF_ENDPOINT=hub.url, HEARTH_HOME=str(home / "home"),
               HEARTH_MODELS_DIR=str(home / "models"),
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    return env


def hearth(hub: FakeHub, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", "download", *args], cwd=ROOT,
                          env=env_for(hub, home), capture_output=True, text=True, timeout=60)


def folder(home: Path, repo: str = REPO) -> Path:
    return home.joinpath("models", *repo.split("/"))


# -- choosing and fetching -------------------------------------------------------------------------


@pytest.mark.parametrize("how", [["--quant", "q4_k_m"], [Q4]], ids=["by-quant", "by-file"])
def test_download_prints_the_verified_path_and_exits_0(hub: FakeHub, home: Path,
                                                       how: list[str]) -> None:
    q4, q8 = data_for(1, 3 * MiB), data_for(2, 1000)
    hub.add_repo(REPO, {Q4: q4, Q8: q8, "mmproj-F16.gguf": b"GGUF"})
    got = hearth(hub, home, REPO, *how)
    assert got.returncode == 0, got.stderr
    path = folder(home) / Q4
    assert got.stdout == f"{path}\n"  # the path alone: scripts can use it
    assert path.read_bytes() == q4
    assert sorted(p.name for p in folder(home).iterdir()) == [Q4]  # only the one asked for
    assert recorded_sha256(path) == hashlib.sha256(q4).hexdigest()
    assert "Verified" in got.stderr


def test_several_quants_and_no_choice_exits_2_naming_the_files(hub: FakeHub, home: Path) -> None:
    hub.add_repo(REPO, {Q4: b"GGUF" * 100, Q8: b"GGUF" * 200})
    got = hearth(hub, home, REPO)
    assert got.returncode == 2
    assert got.stdout == ""
    assert Q4 in got.stderr and Q8 in got.stderr and "--quant" in got.stderr
    assert got.stderr.count("\n") == 1  # one sentence, no traceback
    assert not (home / "models").exists() or not any((home / "models").rglob("*.gguf*"))
    assert not [r for r in hub.requests if "/resolve/" in r[1] and r[1].endswith(".gguf")]


def test_a_split_model_downloads_every_part_as_one(hub: FakeHub, home: Path) -> None:
    one, two = data_for(3, MiB + 17), data_for(4, MiB // 2)
    first, second = "big-Q4_K_M-00001-of-00002.gguf", "big-Q4_K_M-00002-of-00002.gguf"
    hub.add_repo(REPO, {first: one, second: two})
    got = hearth(hub, home, REPO, second)  # any part names the whole model
    assert got.returncode == 0, got.stderr
    assert got.stdout == f"{folder(home) / first}\n"  # the first part is what a loader opens
    assert (folder(home) / first).read_bytes() == one
    assert (folder(home) / second).read_bytes() == two
    assert sorted(p.name for p in folder(home).iterdir()) == [first, second]
    assert hub.bytes_served == len(one) + len(two)


# -- problems --------------------------------------------------------------------------------------


def test_a_gated_repo_without_token_exits_4_with_the_sentence(hub: FakeHub, home: Path) -> None:
    hub.token = "hf_right"  # the fake Hub gates only when it knows a token
    hub.add_repo(REPO, {Q4: data_for(5, 1000)}, gated=True)
    got = hearth(hub, home, REPO, Q4)
    assert got.returncode == 4
    assert got.stdout == ""
    assert "gated repository" in got.stderr and "Token…" in got.stderr
    assert "Traceback" not in got.stderr
    assert not (folder(home) / Q4).exists()


def test_the_hub_down_exits_3(hub: FakeHub, home: Path) -> None:
    hub.add_repo(REPO, {Q4: data_for(6, 1000)})
    hub.down = True
    got = hearth(hub, home, REPO, Q4)
    assert got.returncode == 3
    assert got.stdout == ""
    assert "cannot be reached" in got.stderr and "Traceback" not in got.stderr


# -- Ctrl+C and the same command again -------------------------------------------------------------


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or sys.platform == "win32",
                    reason="POSIX signals")
def test_ctrl_c_exits_130_and_the_same_command_continues(hub: FakeHub, home: Path) -> None:
    size, connections = 12 * MiB, 2  # 1 MiB chunks (chunk_size_for), six rounds of two
    data = data_for(7, size)
    hub.add_repo(REPO, {Q4: data})
    args = [sys.executable, "-m", "app", "download", REPO, Q4, "--connections", str(connections)]
    _, part, jpath = part_paths(folder(home), Q4)

    hub.throttle_bps = 4_000_000  # per connection: about 1.6 s in all
    # A test run started in the background by a shell ignores SIGINT, and a child inherits that:
    # the child gets the default back, as from a terminal.
    proc = subprocess.Popen(args, cwd=ROOT, env=env_for(hub, home), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 30
        while True:  # interrupt at about half, with more on the way
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            try:
                if len(json.loads(jpath.read_text())["done"]) >= 6:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert out == ""
    assert "Interrupted" in err and "run the same command to continue" in err
    assert "Traceback" not in err
    assert part.is_file() and not (folder(home) / Q4).exists()
    # It stopped before exiting: no journal write was cut off half way.
    assert sorted(p.name for p in folder(home).iterdir()) == sorted([part.name, jpath.name])
    journal = json.loads(jpath.read_text())
    on_disk = len(journal["done"]) * journal["chunk_size"]
    # Enough on disk that fetching it all again would break the bound below.
    assert connections * journal["chunk_size"] < on_disk < size

    hub.throttle_bps = None
    last = -1
    while hub.bytes_served != last:  # the stopped connections have finished sending
        last = hub.bytes_served
        time.sleep(0.15)
    before = hub.bytes_served
    again = subprocess.run(args, cwd=ROOT, env=env_for(hub, home), capture_output=True,
                           text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert again.stdout == f"{folder(home) / Q4}\n"
    assert (folder(home) / Q4).read_bytes() == data
    assert not part.exists() and not jpath.exists()
    served = hub.bytes_served - before
    assert size - on_disk <= served <= size - on_disk + connections * journal["chunk_size"]
