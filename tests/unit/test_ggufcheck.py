"""runner.ggufcheck: good files pass, every kind of damage is refused with a sentence that names
the file, and nothing ever allocates what a hostile header claims."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from runner.ggufcheck import GGUFError, check_gguf
from tests.fixtures import bad_models as bad
from tests.fixtures.models import TINY, model_path


def _refused(path: Path, *words: str) -> str:
    with pytest.raises(GGUFError) as info:
        check_gguf(str(path))
    message = str(info.value)
    assert str(path) in message, message
    for word in words:
        assert word in message.lower(), message
    return message


def test_real_model_passes() -> None:
    path = model_path(TINY)
    facts = check_gguf(str(path))
    assert facts["version"] == 3
    assert facts["tensors"] == 1 + 9 * TINY.n_layer + 2  # embd, blocks, norm + output
    assert facts["general.architecture"] == "llama"
    assert facts["general.name"] == TINY.name
    assert isinstance(facts["metadata"], int) and facts["metadata"] > 10


def test_minimal_handmade_file_passes(tmp_path: Path) -> None:
    # Guards the writer the other tests rely on: without damage, its files are accepted.
    path = bad.write(tmp_path / "ok.gguf", bad.minimal_gguf())
    assert check_gguf(str(path)) == {"version": 3, "tensors": 1, "metadata": 1,
                                     "general.architecture": "llama"}


def test_missing_file(tmp_path: Path) -> None:
    _refused(tmp_path / "nope.gguf", "no such file")


def test_directory(tmp_path: Path) -> None:
    _refused(tmp_path, "not a file")


def test_empty_file(tmp_path: Path) -> None:
    _refused(bad.write(tmp_path / "empty.gguf", b""), "not a gguf")


@pytest.mark.parametrize("writer", [bad.write_text_file, bad.write_random_bytes])
def test_wrong_magic(tmp_path: Path, writer: object) -> None:
    path = writer(tmp_path / "x.gguf")  # type: ignore[operator]
    _refused(path, "not a gguf")


def test_unsupported_version(tmp_path: Path) -> None:
    path = bad.write(tmp_path / "v9.gguf", bad.raw_gguf(version=9))
    _refused(path, "version 9")


@pytest.mark.parametrize("fraction", [0.5, 0.99, 0.001])
def test_truncated_real_model(tmp_path: Path, fraction: float) -> None:
    path = bad.write_truncated(model_path(TINY), tmp_path / "cut.gguf", fraction)
    _refused(path, "truncated")


def test_truncated_inside_fixed_header(tmp_path: Path) -> None:
    path = bad.write(tmp_path / "cut.gguf", bad.minimal_gguf()[:10])
    _refused(path, "truncated")


def test_one_byte_short(tmp_path: Path) -> None:
    data = bad.minimal_gguf()
    path = bad.write(tmp_path / "short.gguf", data[:-1])
    _refused(path, "truncated")


def test_tensor_data_past_the_end(tmp_path: Path) -> None:
    message = _refused(bad.write_tensor_past_end(tmp_path / "t.gguf"), "truncated")
    assert "bytes" in message


@pytest.mark.parametrize("writer", [bad.write_huge_tensor_count, bad.write_huge_kv_count])
def test_huge_counts(tmp_path: Path, writer: object) -> None:
    path = writer(tmp_path / "huge.gguf")  # type: ignore[operator]
    _refused(path, "damaged")


def test_huge_string_length(tmp_path: Path) -> None:
    message = _refused(bad.write_huge_string_length(tmp_path / "s.gguf"), "string")
    assert str(2**62) in message


def test_string_longer_than_file_but_under_limit(tmp_path: Path) -> None:
    # 1 MiB claimed in a 60-byte file: below MAX_STRING, so it must be the "ends early" check.
    out = bytearray(b"GGUF") + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1 << 20) + b"k"
    _refused(bad.write(tmp_path / "s.gguf", bytes(out)), "truncated")


def test_huge_array(tmp_path: Path) -> None:
    _refused(bad.write_huge_array(tmp_path / "a.gguf"), "array")


def test_huge_string_array(tmp_path: Path) -> None:
    value = struct.pack("<IQ", bad.T_STRING, 2**61)
    path = bad.write(tmp_path / "a.gguf", bad.raw_gguf(kv=[("tokenizer.ggml.tokens", bad.T_ARRAY,
                                                             value)]))
    _refused(path, "array")


def test_unknown_value_type(tmp_path: Path) -> None:
    path = bad.write(tmp_path / "t.gguf", bad.raw_gguf(kv=[("x", 99, b"")]))
    _refused(path, "unknown type 99")


@pytest.mark.parametrize("n_dims", [0, 5, 9, 2**31])
def test_bad_dimension_count(tmp_path: Path, n_dims: int) -> None:
    path = bad.write_bad_dims(tmp_path / "d.gguf", n_dims)
    _refused(path, "dimensions")


def test_zero_dimension(tmp_path: Path) -> None:
    _refused(bad.write_zero_dim(tmp_path / "z.gguf"), "dimension 0")


def test_absurd_dimension(tmp_path: Path) -> None:
    tensor = bad.RawTensor("t.weight", [2**50, 1])
    path = bad.write(tmp_path / "d.gguf", bad.raw_gguf(tensors=[tensor], data=b""))
    _refused(path, "dimension")


def test_unknown_tensor_type(tmp_path: Path) -> None:
    tensor = bad.RawTensor("t.weight", [8, 4], ggml_type=1000)
    _refused(bad.write(tmp_path / "t.gguf", bad.raw_gguf(tensors=[tensor])), "unknown type")


def test_block_size_mismatch(tmp_path: Path) -> None:
    # Q4_0 (type 2) packs 32 values per block; 33 columns cannot be stored.
    tensor = bad.RawTensor("t.weight", [33, 1], ggml_type=2)
    path = bad.write(tmp_path / "t.gguf", bad.raw_gguf(tensors=[tensor], data=b"\0" * 64))
    _refused(path, "block size")


@pytest.mark.parametrize("alignment", [0, 3, 48])
def test_bad_alignment(tmp_path: Path, alignment: int) -> None:
    kv = [("general.alignment", bad.T_UINT32, bad.u32(alignment))]
    _refused(bad.write(tmp_path / "al.gguf", bad.raw_gguf(kv=kv)), "alignment")


def test_never_reads_much_of_a_hostile_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    """Whatever a header claims, the checker reads only a few bytes at a time."""
    import builtins

    largest = [0]
    real_open = builtins.open

    class Spy:
        def __init__(self, f: object) -> None:
            self.f = f

        def read(self, n: int = -1) -> bytes:
            assert n >= 0, "read() without a size"
            largest[0] = max(largest[0], n)
            return self.f.read(n)  # type: ignore[attr-defined,no-any-return]

        def __getattr__(self, name: str) -> object:
            return getattr(self.f, name)

        def __enter__(self) -> Spy:
            return self

        def __exit__(self, *exc: object) -> None:
            self.f.close()  # type: ignore[attr-defined]

    monkeypatch.setattr("runner.ggufcheck.open", lambda *a, **k: Spy(real_open(*a, **k)),
                        raising=False)
    for writer in (bad.write_huge_tensor_count, bad.write_huge_string_length,
                   bad.write_huge_array):
        with pytest.raises(GGUFError):
            check_gguf(str(writer(tmp_path / f"{writer.__name__}.gguf")))
    assert 0 < largest[0] <= 64
