"""The fit verdict's model facts from a remote header: little is fetched, nothing twice."""

from __future__ import annotations

import itertools
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.gguf import read_model
from app.hub import remote_header
from app.hub.client import HubClient
from app.hub.remote_header import HeaderCache, RemoteHeaderError, remote_model
from app.hub.types import FileGroup, FileKind, HubFile
from app.jobs import CancelledError, CancelToken
from tests.fixtures.fake_hub import FakeHub
from tests.fixtures.header_only import LLAMA31_8B, header_bytes, metadata, tensors

REPO = "acme/Llama-3.1-8B-Instruct-GGUF"
NAME = "Llama-3.1-8B-Instruct-Q4_K_M.gguf"
FAKE_SHA = "ab" * 32  # a precomputed sha256: hashing a sparse 5 GB file would take seconds


def _write(path: Path, meta: dict[str, Any], tl: list[tuple[str, tuple[int, ...], int]]) -> Path:
    head, data = header_bytes(meta, tl)
    with path.open("wb") as f:
        f.write(head)
        if data:
            f.seek(len(head) + data - 1)
            f.write(b"\0")
    return path


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write(tmp_path_factory.mktemp("m") / NAME, metadata(LLAMA31_8B), tensors(LLAMA31_8B))


@pytest.fixture(scope="module")
def split_parts(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("split")
    tl = tensors(LLAMA31_8B)
    thirds = [tl[: len(tl) // 3], tl[len(tl) // 3: 2 * len(tl) // 3], tl[2 * len(tl) // 3:]]
    paths = []
    for i, part in enumerate(thirds):
        split_kv = {"split.no": i, "split.count": 3, "split.tensors.count": len(tl)}
        meta = {**metadata(LLAMA31_8B), **split_kv} if i == 0 else split_kv
        paths.append(_write(folder / f"Llama-Q4_K_M-0000{i + 1}-of-00003.gguf", meta, part))
    return paths


@pytest.fixture()
def hub() -> Iterator[FakeHub]:
    with FakeHub() as h:
        yield h


def _group(*paths: Path) -> FileGroup:
    files = tuple(HubFile(p.name, p.stat().st_size, FAKE_SHA) for p in paths)
    return FileGroup(paths[0].name, FileKind.MODEL, "Q4_K_M", files)


def test_a_128k_vocabulary_header_without_the_weights(hub: FakeHub, llama: Path, tmp_path: Path) -> None:
    sha = hub.add_repo(REPO, {NAME: llama}, sha256s={NAME: FAKE_SHA})
    cache = HeaderCache(tmp_path / "headers")
    with HubClient(endpoint=hub.url) as client:
        info = remote_model(client, REPO, sha, _group(llama), cache=cache)
    local = read_model(llama)
    assert info.n_vocab == 128256 and info.architecture == "llama" and info.n_layer == 32
    assert info.total_bytes == local.total_bytes and info.layers == local.layers
    ranges = [r for _, p, r in hub.requests if "/resolve/" in p]
    # Append-only: each request starts where the last one ended.
    spans = [tuple(int(x) for x in r.removeprefix("bytes=").split("-")) for r in ranges if r]
    assert len(spans) == len(ranges) and spans[0][0] == 0
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(spans))
    assert len(spans) <= 6
    assert hub.bytes_served < 8 * 2**20 < llama.stat().st_size // 500
    cached = list((tmp_path / "headers").iterdir())
    assert len(cached) == 1 and cached[0].stat().st_size <= 3_300_000  # the header, not more

    hub.clear_requests()
    with HubClient(endpoint=hub.url) as client:
        again = remote_model(client, REPO, sha, _group(llama), cache=cache)
    assert again == info
    assert hub.requests == []


def test_a_bad_cache_file_is_fetched_again(hub: FakeHub, llama: Path, tmp_path: Path) -> None:
    sha = hub.add_repo(REPO, {NAME: llama}, sha256s={NAME: FAKE_SHA})
    cache = HeaderCache(tmp_path)
    with HubClient(endpoint=hub.url) as client:
        remote_model(client, REPO, sha, _group(llama), cache=cache)
        (cached,) = tmp_path.iterdir()
        cached.write_bytes(cached.read_bytes()[:1000])  # truncated by a crash, say
        hub.clear_requests()
        info = remote_model(client, REPO, sha, _group(llama), cache=cache)
    assert info.n_vocab == 128256 and hub.requests != []
    # A branch name can move: nothing is cached for it.
    assert cache.get(REPO, "main", NAME, llama.stat().st_size) is None


def test_split_model_reads_every_part(hub: FakeHub, split_parts: list[Path], llama: Path) -> None:
    files: dict[str, bytes | Path] = {p.name: p for p in split_parts}
    sha = hub.add_repo(REPO, files, sha256s=dict.fromkeys(files, FAKE_SHA))
    with HubClient(endpoint=hub.url) as client:
        info = remote_model(client, REPO, sha, _group(*split_parts), cache=None)
        whole = read_model(llama)
        assert info.total_bytes == whole.total_bytes and info.n_layer == 32
        assert len({p for _, p, _ in hub.requests if "/resolve/" in p}) == 3
        with pytest.raises(RemoteHeaderError, match="split into 3 parts"):
            remote_model(client, REPO, sha, _group(*split_parts[:2]), cache=None)


def test_not_gguf_and_corrupted_headers_are_refused(hub: FakeHub, llama: Path) -> None:
    sha = hub.add_repo(REPO, {NAME: llama, "README.gguf": b"# not a model" * 10},
                       sha256s={NAME: FAKE_SHA})
    text = HubFile("README.gguf", 130, None)
    with HubClient(endpoint=hub.url) as client:
        with pytest.raises(RemoteHeaderError, match="not a GGUF"):
            remote_model(client, REPO, sha, FileGroup("README.gguf", FileKind.MODEL, None, (text,)))
        # The tensor count bytes (offset 8) corrupted in transit: a hostile-looking header.
        hub.corrupt(REPO, NAME, 8, struct.pack("<Q", 2**40))
        with pytest.raises(RemoteHeaderError, match="damaged"):
            remote_model(client, REPO, sha, _group(llama))


def test_an_absurd_header_size_fails_fast(hub: FakeHub, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # A string of 12 MiB (the parser allows 16): beyond the (lowered) cap, so no download of it.
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 3) + b"k.x" + struct.pack("<I", 8)
    head += struct.pack("<Q", 12 * 2**20)
    path = tmp_path / "evil.gguf"
    with path.open("wb") as f:
        f.write(head)
        f.seek(20 * 2**20)
        f.write(b"\0")
    sha = hub.add_repo(REPO, {"evil.gguf": path}, sha256s={"evil.gguf": FAKE_SHA})
    monkeypatch.setattr(remote_header, "MAX_HEADER", 4 * 2**20)
    with HubClient(endpoint=hub.url) as client, pytest.raises(RemoteHeaderError, match="MiB"):
        remote_model(client, REPO, sha, _group(path))
    assert hub.bytes_served <= 256 * 1024


def test_a_file_that_ends_inside_its_header(hub: FakeHub, llama: Path) -> None:
    with llama.open("rb") as f:
        data = f.read(300_000)
    sha = hub.add_repo(REPO, {"cut.gguf": data})
    group = FileGroup("cut.gguf", FileKind.MODEL, None, (HubFile("cut.gguf", len(data), None),))
    with HubClient(endpoint=hub.url) as client, pytest.raises(RemoteHeaderError, match="damaged"):
        remote_model(client, REPO, sha, group)


def test_cancel_before_any_request(hub: FakeHub, llama: Path) -> None:
    sha = hub.add_repo(REPO, {NAME: llama}, sha256s={NAME: FAKE_SHA})
    token = CancelToken()
    token.cancel()
    with HubClient(endpoint=hub.url) as client, pytest.raises(CancelledError):
        remote_model(client, REPO, sha, _group(llama), cancel=token)
    assert not [p for _, p, _ in hub.requests if "/resolve/" in p]
