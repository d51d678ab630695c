"""The fake Hub behaves like the real one where Hearth depends on it (Range, HEAD, faults)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.fixtures.fake_hub import FakeHub

DATA = bytes(range(256)) * 40  # 10,240 bytes


@pytest.fixture()
def hub() -> Iterator[FakeHub]:
    with FakeHub() as h:
        h.add_repo("acme/tiny-GGUF", {"tiny-Q4_K_M.gguf": DATA, "notes.txt": b"hello"})
        yield h


def _url(hub: FakeHub, name: str = "tiny-Q4_K_M.gguf") -> str:
    return f"{hub.url}/acme/tiny-GGUF/resolve/main/{name}"


def test_range_head_and_etag(hub: FakeHub) -> None:
    r = httpx2.get(_url(hub), headers={"Range": "bytes=10-19"})
    assert r.status_code == 206
    assert r.content == DATA[10:20]
    assert r.headers["Content-Range"] == f"bytes 10-19/{len(DATA)}"
    h = httpx2.head(_url(hub))
    assert h.status_code == 200 and h.content == b""
    assert int(h.headers["Content-Length"]) == len(DATA)
    assert h.headers["Accept-Ranges"] == "bytes"
    assert len(h.headers["X-Repo-Commit"]) == 40
    assert h.headers["ETag"].strip('"') != ""  # the LFS sha256
    assert "X-Xet-Hash" not in h.headers
    assert httpx2.get(_url(hub), headers={"Range": f"bytes={len(DATA)}-"}).status_code == 416
    assert httpx2.get(_url(hub), headers={"Range": "bytes=-5"}).content == DATA[-5:]
    assert hub.requests[0] == ("GET", "/acme/tiny-GGUF/resolve/main/tiny-Q4_K_M.gguf", "bytes=10-19")


def test_keep_alive_and_errors(hub: FakeHub) -> None:
    with httpx2.Client() as c:
        assert c.get(_url(hub, "notes.txt")).content == b"hello"
        miss = c.get(_url(hub, "nope.gguf"))
        assert miss.status_code == 404 and miss.headers["X-Error-Code"] == "EntryNotFound"
        repo = c.get(f"{hub.url}/api/models/acme/missing")
        assert repo.status_code == 404 and repo.headers["X-Error-Code"] == "RepoNotFound"


def test_faults(hub: FakeHub, tmp_path: Path) -> None:
    hub.fail_next(500, count=2, path_contains="notes")
    assert httpx2.get(_url(hub)).status_code == 200  # not matching
    assert [httpx2.get(_url(hub, "notes.txt")).status_code for _ in range(3)] == [500, 500, 200]
    hub.down = True
    assert httpx2.get(f"{hub.url}/api/models").status_code == 503
    hub.down = False
    hub.no_range = True
    r = httpx2.get(_url(hub), headers={"Range": "bytes=0-3"})
    assert r.status_code == 200 and r.content == DATA and "Accept-Ranges" not in r.headers
    hub.no_range = False
    hub.corrupt("acme/tiny-GGUF", "tiny-Q4_K_M.gguf", 100, b"XYZ")
    assert httpx2.get(_url(hub)).content[100:103] == b"XYZ"
    assert httpx2.get(_url(hub)).content == DATA  # only once
    hub.clear_requests()
    assert httpx2.get(_url(hub), headers={"Range": "bytes=0-99"}).status_code == 206
    assert hub.bytes_served == 100


def test_gated_and_token(hub: FakeHub) -> None:
    hub.add_repo("meta/gated-GGUF", {"g.gguf": b"GGUF"}, gated=True)
    hub.token = "hf_good"
    url = f"{hub.url}/meta/gated-GGUF/resolve/main/g.gguf"
    assert httpx2.get(url).status_code == 401
    assert httpx2.get(url).headers["X-Error-Code"] == "GatedRepo"
    assert httpx2.get(url, headers={"Authorization": "Bearer hf_bad"}).status_code == 401
    hub.accepted = False
    assert httpx2.get(url, headers={"Authorization": "Bearer hf_good"}).status_code == 403
    hub.accepted = True
    assert httpx2.get(url, headers={"Authorization": "Bearer hf_good"}).content == b"GGUF"
    who = httpx2.get(f"{hub.url}/api/whoami-v2", headers={"Authorization": "Bearer hf_good"})
    assert who.json()["name"] == hub.user


def test_stall_and_prompt_close(tmp_path: Path) -> None:
    hub = FakeHub()
    hub.add_repo("acme/r", {"a.gguf": DATA})
    hub.stall_after = 1000
    got: list[int] = []

    def read() -> None:
        try:
            # No read time-out of the client's own: only the hub's close can end this read.
            with httpx2.stream("GET", f"{hub.url}/acme/r/resolve/main/a.gguf",
                               timeout=httpx2.Timeout(10.0, read=None)) as r:
                for chunk in r.iter_bytes():
                    got.append(len(chunk))
        except httpx2.HTTPError:
            pass

    t = threading.Thread(target=read, daemon=True)
    t.start()
    deadline = time.monotonic() + 30  # hang guards, here and below
    while hub.bytes_served < 1000 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert hub.bytes_served == 1000
    hub.close()
    t.join(timeout=30)
    assert not t.is_alive()
    assert sum(got) == 1000


def test_throttle(hub: FakeHub) -> None:
    hub.throttle_bps = 20_000
    resp = httpx2.get(_url(hub), headers={"Range": "bytes=0-3999"})
    assert resp.status_code == 206 and len(resp.content) == 4000
    # Sent in writes of a twentieth of the rate, each followed by its share of a second.
    assert hub.throttled_s == pytest.approx(4000 / 20_000)


def test_sparse_file_served_by_range(tmp_path: Path) -> None:
    big = tmp_path / "big.gguf"
    with big.open("wb") as f:
        f.write(b"GGUF")
        f.seek(8 * 2**30 - 1)  # 8 GiB, a hole
        f.write(b"\0")
    with FakeHub() as hub:
        hub.add_repo("acme/big", {"big.gguf": big}, sha256s={"big.gguf": "ab" * 32})
        r = httpx2.get(f"{hub.url}/acme/big/resolve/main/big.gguf", headers={"Range": "bytes=0-3"})
        assert r.content == b"GGUF"
        info = httpx2.get(f"{hub.url}/api/models/acme/big?blobs=true").json()
        lfs = info["siblings"][0]["lfs"]
        assert (lfs["sha256"], lfs["size"]) == ("ab" * 32, 8 * 2**30)
