"""The GGUF header reader: real shapes, partial buffers, split files, damaged and hostile input."""

from __future__ import annotations

import contextlib
import struct
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.gguf import (
    GGUFError,
    HeaderTruncatedError,
    MissingPartError,
    NotGGUFError,
    parse_header,
    read_model,
    read_model_bytes,
)
from app.gguf.quant import GGML_TYPES
from tests.fixtures.header_only import (
    ALIGN,
    GEMMA3_27B,
    GPT_OSS_20B,
    LLAMA31_8B,
    MIXTRAL_8X7B,
    REAL_SHAPES,
    Shape,
    expected_weight_bytes,
    header_bytes,
    metadata,
    tensors,
    write_header_only,
)

SMALL = Shape("small", "llama", 2, 256, 4, 2, 512, 300, 2048)


@pytest.fixture(scope="module")
def shape_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("shapes")


def test_type_table_matches_gguf_package() -> None:
    from gguf.constants import GGML_QUANT_SIZES

    ours = {tid: (block, size) for tid, (_, block, size) in GGML_TYPES.items()}
    theirs = {int(t): (b, s) for t, (b, s) in GGML_QUANT_SIZES.items()}
    assert ours == theirs


@pytest.mark.parametrize("shape", REAL_SHAPES, ids=lambda s: s.name)
def test_real_shapes_read_back(shape: Shape, shape_dir: Path) -> None:
    path = write_header_only(shape_dir / f"{shape.name}.gguf", shape)
    m = read_model(path)
    assert m.architecture == shape.arch
    assert m.n_layer == shape.n_layer and len(m.layers) == shape.n_layer
    assert m.n_embd == shape.n_embd
    assert m.n_head == shape.n_head
    assert all(layer.n_head_kv == shape.n_head_kv for layer in m.layers)
    assert m.n_vocab == shape.n_vocab
    assert m.n_ctx_train == shape.n_ctx_train
    assert m.total_bytes == expected_weight_bytes(shape)
    assert m.input_bytes + m.output_bytes + m.layer_bytes == m.total_bytes
    assert m.layers[0].key_length == shape.hd
    assert m.chat_template
    assert m.is_moe == bool(shape.n_expert)
    if shape.n_expert:
        assert all(0 < layer.expert_bytes < layer.weight_bytes for layer in m.layers)
    assert (m.tied_embd_bytes > 0) == shape.tied


def test_quantization_and_sizes_of_llama_8b(shape_dir: Path) -> None:
    m = read_model(write_header_only(shape_dir / "l8.gguf", LLAMA31_8B))
    assert m.quantization == "Q4_K_M"
    # The real Q4_K_M download is 4.92 GB: the recipe must land within a few percent.
    assert abs(m.total_bytes - 4.92e9) / 4.92e9 < 0.03
    assert set(m.tensor_types) >= {"Q4_K", "Q6_K", "F32"}


def test_sliding_window_layers(shape_dir: Path) -> None:
    g = read_model(write_header_only(shape_dir / "g.gguf", GEMMA3_27B))
    assert g.n_swa == 1024
    # gemma3: every sixth layer is global
    assert [layer.swa for layer in g.layers[:7]] == [True] * 5 + [False, True]
    o = read_model(write_header_only(shape_dir / "o.gguf", GPT_OSS_20B))
    assert [layer.swa for layer in o.layers[:4]] == [True, False, True, False]
    assert o.quantization == "MXFP4_MOE"


def test_explicit_swa_pattern_array(tmp_path: Path) -> None:
    shape = Shape("p", "gemma3", 4, 256, 4, 2, 512, 300, 2048, n_swa=256, tied=True,
                  extra_kv={"gemma3.attention.sliding_window_pattern": [True, False, False, True]})
    m = read_model(write_header_only(tmp_path / "p.gguf", shape))
    assert [layer.swa for layer in m.layers] == [True, False, False, True]


def test_partial_buffer_asks_for_more(shape_dir: Path) -> None:
    path = write_header_only(shape_dir / "mix.gguf", MIXTRAL_8X7B)
    with path.open("rb") as f:
        data = f.read(4 << 20)
    full = read_model(path)
    head, _ = header_bytes(metadata(MIXTRAL_8X7B), tensors(MIXTRAL_8X7B))
    with pytest.raises(HeaderTruncatedError) as err:
        read_model_bytes(data[: len(head) // 2], name="Mixtral.gguf")
    assert len(head) // 2 < err.value.needed <= len(head)
    assert "Mixtral.gguf" in str(err.value)
    m = read_model_bytes(data[: len(head)], name="Mixtral.gguf")
    assert m.total_bytes == full.total_bytes
    assert m.path is None


def test_every_truncation_is_a_clean_error() -> None:
    head, _ = header_bytes(metadata(SMALL), tensors(SMALL))
    # The last ALIGN bytes may be the padding before the data, which the header does not need.
    for cut in range(0, len(head) - ALIGN, max(1, len(head) // 200)):
        with pytest.raises(GGUFError):
            read_model_bytes(head[:cut])


def test_not_gguf_and_versions() -> None:
    with pytest.raises(NotGGUFError, match="not a GGUF"):
        read_model_bytes(b"PK\x03\x04" + b"\0" * 64)
    with pytest.raises(GGUFError, match="version 1"):
        read_model_bytes(b"GGUF" + struct.pack("<IQQ", 1, 0, 0))
    with pytest.raises(GGUFError, match="big-endian"):
        read_model_bytes(b"GGUF" + struct.pack(">IQQ", 3, 0, 0))


@contextlib.contextmanager
def _peak_allocation() -> Iterator[list[int]]:
    """Yields [peak bytes of Python (and numpy) memory allocated in the block], set at its end."""
    peak = [0]
    tracemalloc.start()
    try:
        yield peak
    finally:
        peak[0] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


def _kv_header(key: bytes, vtype: int, body: bytes, n_tensors: int = 0) -> bytes:
    return (b"GGUF" + struct.pack("<IQQ", 3, n_tensors, 1) + struct.pack("<Q", len(key)) + key
            + struct.pack("<I", vtype) + body)


@pytest.mark.parametrize("blob", [
    # a string that claims 2^60 bytes
    _kv_header(b"general.name", 8, struct.pack("<Q", 1 << 60)),
    # an array that claims 2^40 strings
    _kv_header(b"tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 1 << 40)),
    # an array of 2^30 uint32 in a tiny buffer
    _kv_header(b"x", 9, struct.pack("<IQ", 4, 1 << 30)),
    # nested arrays too deep
    _kv_header(b"x", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 9, 1)
               + struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 4, 0)),
    # unknown value type
    _kv_header(b"x", 77, b""),
    # absurd counts
    b"GGUF" + struct.pack("<IQQ", 3, 1 << 62, 1 << 62),
])
@pytest.mark.timeout(60)  # a hang guard: a loop over a claimed count would never end
def test_hostile_headers_fail_fast(blob: bytes) -> None:
    # Refused from the claims, before any work in their size: what it allocates on the way is
    # a fraction of the 4 KiB it was given, not the gigabytes it was told.
    with _peak_allocation() as peak, pytest.raises(GGUFError):
        parse_header(blob + b"\0" * 4096, file_size=len(blob) + 4096)
    assert peak[0] < 1 << 20, f"{peak[0]} bytes allocated"


def _tensor_header(name: bytes, dims: list[int], ttype: int, offset: int = 0) -> bytes:
    return (b"GGUF" + struct.pack("<IQQ", 3, 1, 0) + struct.pack("<Q", len(name)) + name
            + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
            + struct.pack("<IQ", ttype, offset))


@pytest.mark.parametrize(("blob", "match"), [
    (_tensor_header(b"t", [1, 1, 1, 1, 1], 0), "dimensions"),
    (_tensor_header(b"t", [1 << 40, 1 << 40], 0), "impossible shape"),
    (_tensor_header(b"t", [32], 999), "does not know"),
    (_tensor_header(b"t", [33], 2), "multiple of 32"),
    (_tensor_header(b"t", [32], 0, offset=3), "aligned"),
])
def test_damaged_tensor_directory(blob: bytes, match: str) -> None:
    with pytest.raises(GGUFError, match=match):
        parse_header(blob + b"\0" * 64)


def test_file_shorter_than_its_tensors(tmp_path: Path) -> None:
    path = write_header_only(tmp_path / "cut.gguf", SMALL)
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.truncate(size - 100)
    with pytest.raises(GGUFError, match="incomplete"):
        read_model(path)


def test_empty_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "empty.gguf").write_bytes(b"")
    with pytest.raises(GGUFError, match="empty"):
        read_model(tmp_path / "empty.gguf")
    with pytest.raises(GGUFError, match="does not exist"):
        read_model(tmp_path / "nope.gguf")


def test_split_models_are_summed(tmp_path: Path) -> None:
    all_tensors = tensors(SMALL)
    half = len(all_tensors) // 2
    meta = metadata(SMALL)
    parts = [(all_tensors[:half], 1), (all_tensors[half:], 2)]
    for chunk, no in parts:
        kv = dict(meta) if no == 1 else {}
        kv["split.no"] = no - 1
        kv["split.count"] = 2
        head, data = header_bytes(kv, chunk)
        p = tmp_path / f"small-{no:05d}-of-00002.gguf"
        with p.open("wb") as f:
            f.write(head)
            f.seek(len(head) + data - 1)
            f.write(b"\0")
    m = read_model(tmp_path / "small-00002-of-00002.gguf")
    assert m.total_bytes == expected_weight_bytes(SMALL)
    assert len(m.paths) == 2 and m.path and m.path.endswith("00001-of-00002.gguf")
    (tmp_path / "small-00002-of-00002.gguf").unlink()
    with pytest.raises(MissingPartError, match="00002-of-00002"):
        read_model(tmp_path / "small-00001-of-00002.gguf")


def test_matches_gguf_package_on_a_real_model() -> None:
    import gguf

    from tests.fixtures.models import TINY, model_path

    try:
        path = model_path(TINY)
    except Exception as exc:  # building needs only numpy + gguf for F32
        pytest.skip(f"cannot build the tiny model: {exc}")
    ref = gguf.GGUFReader(str(path))
    m = read_model(path)
    assert m.total_bytes == sum(int(t.n_bytes) for t in ref.tensors)
    assert m.n_vocab == TINY.n_vocab


@pytest.mark.timeout(300)  # a hang guard for all the examples
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_headers_never_crash_or_hang(data: st.DataObject) -> None:
    head, _ = header_bytes(metadata(SMALL), tensors(SMALL))
    buf = bytearray(head)
    for _ in range(data.draw(st.integers(1, 8))):
        pos = data.draw(st.integers(0, len(buf) - 1))
        buf[pos] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(buf)))
    blob = bytes(buf[:cut])
    # Whatever a mutation claims, the work stays in the size of the bytes given (a header of a few
    # KiB here), not of the sizes claimed: no allocation of a claimed length, no loop over a
    # claimed count (that would never end: the hang guard above).
    with _peak_allocation() as peak:
        try:
            read_model_bytes(blob)
        except GGUFError:
            pass
    assert peak[0] < (1 << 20) + 64 * len(blob), f"{peak[0]} bytes allocated for {len(blob)}"
