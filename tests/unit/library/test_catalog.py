"""Library entries: header facts (cached across starts), integrity checks, deleting own models."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from app.jobs import CancelledError, CancelToken
from app.library import catalog
from app.library.catalog import (
    HeaderInfoCache,
    LibraryError,
    ModelFileError,
    NotOwnedError,
    VerifyOutcome,
    delete,
    describe,
    record_sha256,
    recorded_sha256,
    verify,
)
from app.library.scan import FoundModel, SourceKind, scan
from tests.fixtures.header_only import tensors
from tests.fixtures.models import TINY as TINY_SPEC
from tests.fixtures.models import write_model
from tests.unit.library.test_scan import (
    TINY,
    TINY_B,
    gguf,
    hf_cache_repo,
    ollama_pull,
    sha256,
    source,
)


@pytest.fixture
def records(tmp_path: Path) -> Path:
    return tmp_path / "state" / "checksums.json"


def found_in(root: Path, kind: SourceKind = SourceKind.FOLDER, own: bool = False,
             ) -> list[FoundModel]:
    return scan([source(kind, root, own=own)])


def one(root: Path, kind: SourceKind = SourceKind.FOLDER, own: bool = False) -> FoundModel:
    (m,) = found_in(root, kind, own)
    return m


def flip_byte(path: Path, offset: int) -> None:
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0xFF]))
    # Bit rot does not touch the modification time; neither does this test.
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


# -- describe -----------------------------------------------------------------------------------


def test_describe_reads_the_header(tmp_path: Path) -> None:
    gguf(tmp_path / "f" / "tiny-Q4_K_M.gguf", TINY)
    entry = describe(one(tmp_path / "f"))
    assert entry.error is None
    assert entry.architecture == "llama"
    assert entry.n_layer == 2 and entry.context_length == 2048
    assert entry.quantization == "Q4_K_M"
    assert entry.parameters == sum(math.prod(shape) for _, shape, _ in tensors(TINY))


def test_describe_a_real_tiny_model(tmp_path: Path) -> None:
    path = tmp_path / "f" / "hearth-test-F32.gguf"
    path.parent.mkdir()
    write_model(path, TINY_SPEC)
    entry = describe(one(tmp_path / "f"))
    assert entry.error is None and entry.quantization == "F32"
    assert entry.n_layer == TINY_SPEC.n_layer and entry.context_length == TINY_SPEC.n_ctx_train
    assert entry.parameters is not None and entry.parameters * 4 < path.stat().st_size


def test_describe_explains_files_it_cannot_read(tmp_path: Path) -> None:
    root = tmp_path / "f"
    root.mkdir()
    (root / "notes.gguf").write_text("this is not a model\n")
    whole = gguf(tmp_path / "whole.gguf", TINY_B)
    data = whole.read_bytes()
    (root / "truncated.gguf").write_bytes(data[: len(data) // 2])
    (root / "empty.gguf").write_bytes(b"")
    entries = {m.name: describe(m) for m in found_in(root)}
    assert set(entries) == {"notes.gguf", "truncated.gguf", "empty.gguf"}
    for name, entry in entries.items():
        assert entry.error, name
        assert entry.error.endswith("."), entry.error  # a sentence
        assert entry.architecture is None and entry.parameters is None
    assert "GGUF" in str(entries["notes.gguf"].error)
    assert "incomplete" in str(entries["truncated.gguf"].error)
    assert "empty" in str(entries["empty.gguf"].error)


def test_describe_a_split_model_with_a_missing_part(tmp_path: Path) -> None:
    root = tmp_path / "f"
    gguf(root / "m-00001-of-00002.gguf")
    entry = describe(one(root))
    assert entry.error is not None and "1 of the 2 parts" in entry.error


def test_the_cache_answers_the_second_start_without_reading_headers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "f"
    for i in range(5):
        gguf(root / f"m{i}.gguf", TINY if i % 2 else TINY_B)
    (root / "bad.gguf").write_text("nope")
    cache_file = tmp_path / "cache" / "headers.json"
    first_cache = HeaderInfoCache(cache_file)
    first = [describe(m, first_cache) for m in found_in(root)]
    first_cache.save()
    assert cache_file.exists()

    def no_reads(path: object) -> None:
        raise AssertionError(f"read {path} again")

    monkeypatch.setattr(catalog, "read_model", no_reads)
    second_cache = HeaderInfoCache(cache_file)  # a new start
    second = [describe(m, second_cache) for m in found_in(root)]
    assert second == first
    assert sum(e.error is not None for e in second) == 1


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    root = tmp_path / "f"
    path = gguf(root / "m.gguf", TINY)
    cache = HeaderInfoCache(tmp_path / "headers.json")
    assert describe(one(root), cache).n_layer == 2
    gguf(path, TINY_B)  # replaced by a different model under the same name
    os.utime(path, ns=(1, 10**18))
    assert describe(one(root), cache).n_layer == 3


def test_a_damaged_cache_file_is_ignored(tmp_path: Path) -> None:
    cache_file = tmp_path / "headers.json"
    cache_file.write_text("{broken")
    gguf(tmp_path / "f" / "m.gguf")
    cache = HeaderInfoCache(cache_file)
    assert describe(one(tmp_path / "f"), cache).n_layer == 2
    cache.save()
    saved = json.loads(cache_file.read_text())
    assert saved["version"] == 1 and len(saved["entries"]) == 1


# -- verify -------------------------------------------------------------------------------------


def test_verify_against_the_hf_cache_blob_name_finds_a_flipped_byte(tmp_path: Path,
                                                                     records: Path) -> None:
    hub = tmp_path / "hub"
    src = gguf(tmp_path / "x.gguf")
    hf_cache_repo(hub, "org/repo-GGUF", {"m-Q4_K_M.gguf": src})
    model = one(hub, SourceKind.HF_CACHE)
    good = verify(model, records=records)
    assert good.outcome is VerifyOutcome.MATCH and good.ok
    assert good.actual == (model.expected_sha256,)
    flip_byte(model.path.resolve(), 100)
    bad = verify(model, records=records)
    assert bad.outcome is VerifyOutcome.MISMATCH and not bad.ok
    assert "damaged" in str(bad) and "download it again" in str(bad)


def test_verify_an_ollama_blob_against_its_digest(tmp_path: Path, records: Path) -> None:
    models = tmp_path / "ollama"
    ollama_pull(models, "tiny:1b", gguf(tmp_path / "t.gguf"))
    model = one(models, SourceKind.OLLAMA)
    assert verify(model, records=records).ok
    flip_byte(model.path, model.size - 1)  # in the (sparse) weights, far from the header
    assert verify(model, records=records).outcome is VerifyOutcome.MISMATCH


def test_verify_says_when_there_is_nothing_to_compare_with(tmp_path: Path,
                                                           records: Path) -> None:
    path = gguf(tmp_path / "f" / "m.gguf")
    result = verify(one(tmp_path / "f"), records=records)
    assert result.outcome is VerifyOutcome.UNCHECKED and not result.ok
    assert "no published checksum to compare with" in str(result)
    assert sha256(path) in str(result)


def test_hearths_recorded_checksum_is_used(tmp_path: Path, records: Path) -> None:
    own = tmp_path / "own"
    path = gguf(own / "org" / "repo" / "m.gguf")
    record_sha256(path, sha256(path).upper(), records=records)
    assert recorded_sha256(path, records=records) == sha256(path)
    model = one(own, SourceKind.HEARTH, own=True)
    assert verify(model, records=records).ok
    flip_byte(path, 64)
    assert verify(model, records=records).outcome is VerifyOutcome.MISMATCH
    # A file rewritten since (a new modification time) has no record any more.
    os.utime(path, ns=(1, 10**18))
    assert recorded_sha256(path, records=records) is None
    assert verify(model, records=records).outcome is VerifyOutcome.UNCHECKED


def test_verify_split_parts_each_against_their_blob(tmp_path: Path, records: Path) -> None:
    hub = tmp_path / "hub"
    parts = {f"m-{i:05d}-of-00002.gguf": gguf(tmp_path / f"p{i}.gguf", TINY if i == 1 else TINY_B)
             for i in (1, 2)}
    hf_cache_repo(hub, "org/split-GGUF", parts)
    model = one(hub, SourceKind.HF_CACHE)
    assert verify(model, records=records).ok
    flip_byte(model.paths[1].resolve(), 10)
    bad = verify(model, records=records)
    assert bad.outcome is VerifyOutcome.MISMATCH and "m-00002-of-00002.gguf" in str(bad)


def test_verify_reports_progress_and_can_be_cancelled(tmp_path: Path, records: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog, "BLOCK", 4096)
    gguf(tmp_path / "f" / "m.gguf")
    model = one(tmp_path / "f")
    seen: list[float | None] = []
    verify(model, progress=lambda frac, _text: seen.append(frac), records=records)
    assert len(seen) > 3 and seen[-1] == 1.0 and seen == sorted(seen)  # type: ignore[type-var]

    token = CancelToken()

    def cancel_soon(frac: float | None, _text: str) -> None:
        if frac is not None and frac > 0.2:
            token.cancel()

    with pytest.raises(CancelledError):
        verify(model, token, cancel_soon, records=records)


def test_verify_refuses_an_incomplete_split(tmp_path: Path, records: Path) -> None:
    gguf(tmp_path / "f" / "m-00002-of-00002.gguf")
    with pytest.raises(ModelFileError, match="missing parts"):
        verify(one(tmp_path / "f"), records=records)


# -- delete -------------------------------------------------------------------------------------


def test_delete_removes_every_part_and_empty_folders(tmp_path: Path, records: Path) -> None:
    own = tmp_path / "own"
    keep = gguf(own / "org" / "other" / "keep.gguf")
    for i in (1, 2):
        gguf(own / "org" / "repo" / f"m-{i:05d}-of-00002.gguf")
    record_sha256(own / "org" / "repo" / "m-00001-of-00002.gguf", "0" * 64, records=records)
    target = next(m for m in found_in(own, SourceKind.HEARTH, own=True) if m.name == "m.gguf")
    delete(target, own, records=records)
    assert not (own / "org" / "repo").exists()
    assert keep.exists() and own.is_dir()
    assert "m-00001" not in records.read_text()


def test_delete_refuses_models_of_other_apps(tmp_path: Path, records: Path) -> None:
    own = tmp_path / "own"
    own.mkdir()
    hub = tmp_path / "hub"
    hf_cache_repo(hub, "org/repo", {"m.gguf": gguf(tmp_path / "m.gguf")})
    model = one(hub, SourceKind.HF_CACHE)
    with pytest.raises(NotOwnedError) as err:
        delete(model, own, records=records)
    assert isinstance(err.value, LibraryError)
    assert "Hugging Face cache" in str(err.value) and str(err.value).endswith(".")
    assert model.path.exists() and model.path.resolve().exists()


def test_delete_refuses_a_link_in_the_own_folder_that_leads_out(tmp_path: Path,
                                                               records: Path) -> None:
    own = tmp_path / "own"
    outside = gguf(tmp_path / "elsewhere" / "precious.gguf")
    own.mkdir()
    (own / "precious.gguf").symlink_to(outside)
    model = one(own, SourceKind.HEARTH, own=True)
    with pytest.raises(NotOwnedError):
        delete(model, own, records=records)
    assert outside.exists()


def test_delete_refuses_a_path_that_climbs_out(tmp_path: Path, records: Path) -> None:
    own = tmp_path / "own"
    (own / "sub").mkdir(parents=True)
    outside = gguf(tmp_path / "x.gguf")
    sneaky = FoundModel(path=own / "sub" / ".." / ".." / "x.gguf",
                        paths=(own / "sub" / ".." / ".." / "x.gguf",), name="x.gguf",
                        size=outside.stat().st_size, source="Hearth", own=True, repo_id=None,
                        expected_sha256=None, complete=True)
    with pytest.raises(NotOwnedError):
        delete(sneaky, own, records=records)
    assert outside.exists()
