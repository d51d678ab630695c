"""HubClient against the fake Hub, through the real huggingface_hub client: results and errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.hub.client import HubClient, strip_front_matter
from app.hub.types import (
    AuthError,
    EntryNotFoundError,
    FileKind,
    HubError,
    HubUnreachableError,
    RepoNotFoundError,
    UnsafeNameError,
)
from tests.fixtures.fake_hub import FakeHub

CARD = "---\nlicense: mit\ntags: [gguf]\n---\n\n# Tiny Llama\n\nA small model.\n"


@pytest.fixture()
def hub() -> Iterator[FakeHub]:
    with FakeHub() as h:
        yield h


@pytest.fixture()
def client(hub: FakeHub) -> Iterator[HubClient]:
    with HubClient(endpoint=hub.url, timeout=2.0) as c:
        yield c


def _add_many(hub: FakeHub) -> None:
    for i in range(5):
        hub.add_repo(f"acme/llama-{i}-GGUF", {f"llama-{i}-Q4_K_M.gguf": b"GGUF"}, downloads=10 * i,
                     likes=50 - i, trending=i % 3, last_modified=f"2026-01-0{i + 1}T00:00:00.000Z")
    hub.add_repo("acme/llama-safetensors", {"model.safetensors": b"x"}, downloads=1000)


def test_search_sorts_filters_and_pages(hub: FakeHub, client: HubClient) -> None:
    _add_many(hub)
    page = client.search("llama", sort="downloads", limit=2)
    assert [s.repo_id for s in page.items] == ["acme/llama-4-GGUF", "acme/llama-3-GGUF"]
    assert page.items[0].downloads == 40 and page.items[0].author == "acme"
    assert page.items[0].name == "llama-4-GGUF" and page.items[0].last_modified is not None
    second = page.next_page()
    assert second is not None
    assert [s.repo_id for s in second.items] == ["acme/llama-2-GGUF", "acme/llama-1-GGUF"]
    third = second.next_page()
    assert third is not None and [s.repo_id for s in third.items] == ["acme/llama-0-GGUF"]
    assert third.next_page() is None  # the non-GGUF repository never appears
    first_query = next(p for m, p, _ in hub.requests if p.startswith("/api/models?"))
    assert "filter=gguf" in first_query and "sort=downloads" in first_query
    assert [s.repo_id for s in client.search("", sort="likes", limit=1).items] == ["acme/llama-0-GGUF"]
    assert client.search("", sort="modified", limit=1).items[0].repo_id == "acme/llama-4-GGUF"
    assert client.search("", sort="trending", limit=1).items[0].trending_score == 2
    assert client.search("nothing-matches").items == []
    with pytest.raises(ValueError):
        client.search("x", sort="random")


def test_details_groups_splits_and_labels(hub: FakeHub, client: HubClient) -> None:
    files: dict[str, bytes | Path] = {
        f"Big-Q4_K_M-0000{i}-of-00003.gguf": b"GGUF" + bytes(100 * i) for i in (1, 2, 3)}
    files.update({"Big-Q8_0.gguf": b"GGUF" * 10, "mmproj-Big-F16.gguf": b"GGUF",
                  "Big.imatrix.gguf": b"GGUF", "config.json": b"{}"})
    sha = hub.add_repo("acme/Big-GGUF", files, card=CARD, license="llama3.1", downloads=7, likes=3,
                       gguf={"architecture": "llama", "total": 8_030_261_248, "context_length": 131072})
    d = client.details("acme/Big-GGUF")
    assert d.revision == sha and d.repo_id == "acme/Big-GGUF"
    assert d.card.startswith("# Tiny Llama") and "license:" not in d.card
    assert d.license == "llama3.1" and d.gated is False
    assert (d.architecture, d.parameters, d.context_length) == ("llama", 8_030_261_248, 131072)
    assert (d.downloads, d.likes) == (7, 3)
    models = [g for g in d.groups if g.kind is FileKind.MODEL]
    split = next(g for g in models if g.split)
    assert split.name == "Big-Q4_K_M.gguf" and split.quant == "Q4_K_M"
    assert [f.path for f in split.files] == [f"Big-Q4_K_M-0000{i}-of-00003.gguf" for i in (1, 2, 3)]
    assert split.size == sum(4 + 100 * i for i in (1, 2, 3))
    assert all(f.sha256 and len(f.sha256) == 64 for f in split.files)
    kinds = {g.name: g.kind for g in d.groups}
    assert kinds["mmproj-Big-F16.gguf"] is FileKind.MMPROJ
    assert kinds["Big.imatrix.gguf"] is FileKind.IMATRIX
    assert "config.json" not in kinds and any(f.path == "config.json" for f in d.files)
    # Pinned to a commit, also when asked by commit.
    assert client.details("acme/Big-GGUF", revision=sha).revision == sha


def test_front_matter_only_at_start() -> None:
    assert strip_front_matter("# Title\n---\nx: y\n---\n") == "# Title\n---\nx: y\n---\n"
    assert strip_front_matter("---\na: 1\n---\nBody") == "Body"
    assert strip_front_matter("") == ""


def test_read_range_and_a_server_that_ignores_range(tmp_path: Path, hub: FakeHub,
                                                    client: HubClient) -> None:
    data = bytes(range(256)) * 64
    big = tmp_path / "big.gguf"
    with big.open("wb") as f:
        f.write(b"GGUF" + bytes(range(200)))
        f.seek(2**30 - 1)  # 1 GiB, a hole
        f.write(b"\0")
    sha = hub.add_repo("acme/r", {"a.gguf": data, "big.gguf": big}, sha256s={"big.gguf": "0" * 64})
    assert client.read_range("acme/r", sha, "a.gguf", 10, 19) == data[10:20]
    assert client.read_range("acme/r", sha, "a.gguf", len(data) - 4, len(data) + 100) == data[-4:]
    hub.no_range = True
    assert client.read_range("acme/r", sha, "a.gguf", 300, 309) == data[300:310]
    hub.clear_requests()
    assert client.read_range("acme/r", sha, "big.gguf", 4, 7) == bytes(range(4))
    assert hub.bytes_served < 64 * 2**20  # never the whole GiB


def test_file_url_and_headers(hub: FakeHub) -> None:
    with HubClient(endpoint=hub.url, token="hf_abc") as c:
        url = c.file_url("acme/r", "a" * 40, "sub/x y.gguf")
        assert url == f"{hub.url}/acme/r/resolve/{'a' * 40}/sub/x%20y.gguf"
        with pytest.raises(UnsafeNameError):
            c.file_url("acme/r", "main", "../../etc/passwd")
        headers = c.request_headers()
        assert headers["authorization"] == "Bearer hf_abc"
        assert "hearth" in headers["user-agent"]
    with HubClient(endpoint=hub.url) as anonymous:
        assert "authorization" not in {k.lower() for k in anonymous.request_headers()}


def test_gated_sentences(hub: FakeHub) -> None:
    sha = hub.add_repo("meta/Gated-GGUF", {"g.gguf": b"GGUF" * 4}, gated=True)
    hub.token = "hf_right"
    with HubClient(endpoint=hub.url) as c:
        assert c.details("meta/Gated-GGUF").gated is True  # the listing is public
        with pytest.raises(AuthError) as missing:
            c.read_range("meta/Gated-GGUF", sha, "g.gguf", 0, 3)
    assert missing.value.reason == "missing"
    assert "Token… on the Discover tab" in str(missing.value) and "hearth login" in str(missing.value)
    with HubClient(endpoint=hub.url, token="hf_wrong") as c, pytest.raises(AuthError) as invalid:
        c.read_range("meta/Gated-GGUF", sha, "g.gguf", 0, 3)
    assert invalid.value.reason == "invalid" and "wrong or has expired" in str(invalid.value)
    hub.accepted = False
    with HubClient(endpoint=hub.url, token="hf_right") as c:
        with pytest.raises(AuthError) as license_:
            c.read_range("meta/Gated-GGUF", sha, "g.gguf", 0, 3)
        assert license_.value.reason == "license"
        assert license_.value.url == f"{hub.url}/meta/Gated-GGUF"
        assert f"{hub.url}/meta/Gated-GGUF" in str(license_.value)
        hub.accepted = True
        assert c.read_range("meta/Gated-GGUF", sha, "g.gguf", 0, 3) == b"GGUF"


def test_not_found(hub: FakeHub, client: HubClient) -> None:
    sha = hub.add_repo("acme/r", {"a.gguf": b"GGUF"})
    with pytest.raises(RepoNotFoundError, match="no model acme/missing"):
        client.details("acme/missing")
    with pytest.raises(RepoNotFoundError, match="owner/model-name"):
        client.details("not a repo")
    with pytest.raises(EntryNotFoundError, match=r"b\.gguf"):
        client.read_range("acme/r", sha, "b.gguf", 0, 3)
    with pytest.raises(RepoNotFoundError, match="version"):
        client.details("acme/r", revision="f" * 40)


def test_unreachable(hub: FakeHub, client: HubClient, monkeypatch: pytest.MonkeyPatch) -> None:
    sha = hub.add_repo("acme/r", {"a.gguf": b"GGUF"})
    hub.fail_next(500)
    with pytest.raises(HubUnreachableError, match="Retry"):
        client.details("acme/r")
    hub.fail_next(502, path_contains="/resolve/")
    with pytest.raises(HubUnreachableError):
        client.read_range("acme/r", sha, "a.gguf", 0, 3)
    hub.down = True
    with pytest.raises(HubUnreachableError, match="models already on this computer keep working"):
        client.search("x")
    hub.down = False
    assert client.details("acme/r").revision == sha
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    before = len(hub.requests)
    with pytest.raises(HubUnreachableError, match="offline mode"):
        client.search("x")
    assert len(hub.requests) == before


def test_closed_port_and_endpoint_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # what tests/conftest.py sets
    with HubClient(timeout=2.0) as c:
        assert c.endpoint == "http://127.0.0.1:9"
        with pytest.raises(HubUnreachableError, match="cannot be reached"):
            c.search("llama")
        with pytest.raises(HubUnreachableError):
            c.read_range("acme/r", "main", "a.gguf", 0, 1)


def test_stalled_body_times_out(hub: FakeHub) -> None:
    sha = hub.add_repo("acme/r", {"a.gguf": bytes(100_000)})
    hub.stall_after = 10
    with HubClient(endpoint=hub.url, timeout=0.3) as c, pytest.raises(HubUnreachableError,
                                                                      match="no answer in time"):
        c.read_range("acme/r", sha, "a.gguf", 0, 99_999)


def test_errors_are_hub_errors(hub: FakeHub, client: HubClient) -> None:
    hub.fail_next(418)
    with pytest.raises(HubError, match="418"):
        client.search("x")
