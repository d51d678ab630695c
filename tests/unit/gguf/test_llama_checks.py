"""The GGUF reader refuses what llama.cpp refuses (issue 24, item 11).

``hearth plan`` said "Fits." for files llama.cpp will not load: a tensor dimension of 0, offsets
that do not follow each other, keys of the wrong type, tensors of the wrong shape. Each case here
is one check of llama.cpp's, run on header-only files (no weights, no llama.cpp): the rule, the
``check`` code of the :class:`RefusedError` and a sentence that names what is wrong. The same
cases against the real llama.cpp are in tests/hostile/test_plan_refuses.py.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import pytest

from app.gguf import GGUFError, ModelInfo, RefusedError, read_model_bytes
from tests.fixtures.gguf_mutants import (
    ARR,
    F32V,
    F64,
    I32,
    STR,
    U32,
    U64,
    RawGGUF,
    Tensor,
)
from tests.fixtures.header_only import Shape, header_bytes
from tests.fixtures.header_only import metadata as shape_metadata
from tests.fixtures.header_only import tensors as shape_tensors

# Small but real layouts: 2 layers, 256 wide (Q4_K rows), a 300-token vocabulary.
LLAMA = Shape("small", "llama", 2, 256, 4, 2, 512, 300, 2048)
MOE = Shape("small-moe", "llama", 2, 256, 4, 2, 256, 300, 2048, n_expert=4, n_expert_used=2,
            n_ff_exp=256)
GEMMA3 = Shape("small-gemma3", "gemma3", 2, 256, 4, 2, 512, 300, 2048, head_dim=64, tied=True,
               n_swa=128, swa_pattern=6)
QWEN2 = Shape("small-qwen2", "qwen2", 2, 256, 4, 2, 512, 300, 2048, qkv_bias=True)

Edit = Callable[[RawGGUF], None]


def _raw(shape: Shape = LLAMA) -> RawGGUF:
    head, size = header_bytes(shape_metadata(shape), shape_tensors(shape))
    return RawGGUF.parse(head + b"\0" * size)


def _read(g: RawGGUF) -> ModelInfo:
    data = g.build()
    return read_model_bytes(data, name="m.gguf", file_size=len(data))


def _edited(edit: Edit, shape: Shape = LLAMA, repack: bool = True) -> RawGGUF:
    g = _raw(shape)
    edit(g)
    if repack:
        g.repack()
    return g


def _refused(g: RawGGUF, check: str, *words: str) -> str:
    with pytest.raises(RefusedError) as info:
        _read(g)
    message = str(info.value)
    assert info.value.check == check, message
    assert message.startswith("m.gguf is damaged: ") and "llama.cpp will refuse it" in message
    for word in words:
        assert word in message, message
    return message


def _u32(v: int) -> bytes:
    return struct.pack("<I", v)


def _set_dim(name: str, j: int, value: int) -> Edit:
    def edit(g: RawGGUF) -> None:
        g.tensor(name).dims[j] = value
    return edit


# ---- what gguf.cpp checks as it reads the header ----------------------------------------------

def test_a_dimension_of_0_is_refused_with_a_sentence() -> None:
    message = _refused(_edited(_set_dim("blk.0.attn_q.weight", 1, 0)), "zero_dim")
    assert message == ("m.gguf is damaged: tensor 'blk.0.attn_q.weight' has a dimension of 0; "
                       "llama.cpp will refuse it. Download it again.")


@pytest.mark.parametrize("name", ["token_embd.weight", "blk.1.attn_norm.weight",
                                  "blk.1.ffn_down.weight", "output.weight"])
def test_every_tensor_with_a_dimension_of_0_is_refused(name: str) -> None:
    _refused(_edited(_set_dim(name, 0, 0)), "zero_dim", repr(name))


def test_a_negative_dimension_is_refused() -> None:
    _refused(_edited(_set_dim("blk.0.ffn_up.weight", 1, -1)), "negative_dim")


@pytest.mark.parametrize(("what", "delta", "words"), [
    ("misaligned", 1, ("not aligned",)),
    ("aligned, but not where the data packs it", 32, ("where", "was expected")),
    ("beyond the file", 1 << 40, ("was expected",)),
])
def test_offsets_must_follow_each_other(what: str, delta: int, words: tuple[str, ...]) -> None:
    def move(g: RawGGUF) -> None:
        g.tensor("blk.0.attn_k.weight").offset += delta
    _refused(_edited(move, repack=False), "offset", "blk.0.attn_k.weight", *words)


def test_two_offsets_swapped_are_refused_though_each_is_inside_the_file() -> None:
    def swap(g: RawGGUF) -> None:
        a, b = g.tensors[1], g.tensors[2]
        a.offset, b.offset = b.offset, a.offset
    _refused(_edited(swap, repack=False), "offset")


def test_names_dimensions_and_types() -> None:
    def long_name(g: RawGGUF) -> None:
        g.tensors.append(Tensor("x" * 64, [4], 0, 0))

    def five(g: RawGGUF) -> None:
        g.tensor("blk.0.ffn_norm.weight").dims += [1, 1, 1, 1]

    def dup(g: RawGGUF) -> None:
        g.tensor("blk.0.attn_q.weight").name = "blk.0.attn_k.weight"

    def removed(g: RawGGUF) -> None:
        g.tensor("blk.0.attn_q.weight").ggml_type = 31  # Q4_0_4_4: gone from ggml

    def rows(g: RawGGUF) -> None:
        g.tensor("blk.0.attn_q.weight").dims[0] = 200  # Q4_K packs 256 per block

    _refused(_edited(long_name), "long_name", "64 bytes")
    _refused(_edited(five), "n_dims", "5 dimensions")
    _refused(_edited(dup, repack=False), "duplicate_tensor", "appears twice")
    _refused(_edited(removed, repack=False), "type", "Q4_0_4_4", "no longer loads")
    _refused(_edited(rows), "block_size", "multiple of 256")


def test_metadata_entries() -> None:
    def empty(g: RawGGUF) -> None:
        g.kv.append(("", U32, _u32(1)))

    def dup(g: RawGGUF) -> None:
        g.kv.append(g.kv[g.key("general.name")])

    def nested(g: RawGGUF) -> None:
        g.kv.append(("x.nested", ARR, struct.pack("<IQ", ARR, 1) + struct.pack("<IQ", U32, 1)
                     + _u32(1)))

    def alignment_u64(g: RawGGUF) -> None:
        g.set_kv("general.alignment", U64, struct.pack("<Q", 32))

    _refused(_edited(empty), "empty_key")
    _refused(_edited(dup), "duplicate_key", "general.name")
    _refused(_edited(nested), "nested_array", "x.nested")
    _refused(_edited(alignment_u64), "kv_type", "general.alignment")


# ---- what llama.cpp checks as it reads the model ----------------------------------------------

@pytest.mark.parametrize("key", ["llama.context_length", "llama.embedding_length",
                                 "llama.block_count", "llama.attention.layer_norm_rms_epsilon",
                                 "tokenizer.ggml.model", "tokenizer.ggml.tokens"])
def test_required_keys(key: str) -> None:
    _refused(_edited(lambda g: g.drop_kv(key)), "kv_missing", key)


@pytest.mark.parametrize("key", ["general.name", "llama.rope.freq_base", "tokenizer.ggml.scores",
                                 "general.file_type", "tokenizer.chat_template"])
def test_optional_keys_may_be_missing(key: str) -> None:
    _read(_edited(lambda g: g.drop_kv(key)))


@pytest.mark.parametrize(("key", "vtype", "value", "stored"), [
    ("llama.block_count", I32, _u32(2), "int32"),
    ("llama.context_length", U64, struct.pack("<Q", 2048), "uint64"),
    ("llama.attention.layer_norm_rms_epsilon", F64, struct.pack("<d", 1e-5), "float64"),
    ("llama.attention.head_count", STR, struct.pack("<Q", 1) + b"4", "string"),
    ("llama.rope.freq_base", F64, struct.pack("<d", 1e4), "float64"),  # optional, still typed
    ("llama.attention.causal", U32, _u32(1), "uint32"),
])
def test_keys_have_exactly_the_type_llama_cpp_reads(key: str, vtype: int, value: bytes,
                                                     stored: str) -> None:
    _refused(_edited(lambda g: g.set_kv(key, vtype, value)), "kv_type", key, f"as {stored}")


def _u32_array(values: list[int]) -> bytes:
    return struct.pack("<IQ", U32, len(values)) + b"".join(_u32(v) for v in values)


def test_per_layer_keys_take_one_value_per_layer() -> None:
    ok = _read(_edited(lambda g: g.set_kv("llama.attention.head_count", ARR,
                                          _u32_array([4, 4]))))
    assert ok.n_head == 4
    _refused(_edited(lambda g: g.set_kv("llama.feed_forward_length", ARR,
                                        _u32_array([512] * 3))), "kv_length", "3 entries")
    _refused(_edited(lambda g: g.set_kv("llama.attention.head_count_kv", ARR,
                                        struct.pack("<IQ", F32V, 2) + b"\0" * 8)), "kv_type")


@pytest.mark.parametrize(("value", "check"), [(0, "n_layer"), (600, "n_layer"),
                                              (3, "missing_tensor")])
def test_layer_count(value: int, check: str) -> None:
    _refused(_edited(lambda g: g.set_kv("llama.block_count", U32, _u32(value))), check)


def test_expert_counts_that_abort_llama_cpp() -> None:
    _refused(_edited(lambda g: g.set_kv("llama.expert_used_count", U32, _u32(2))), "experts",
             "expert_used_count")
    _refused(_edited(lambda g: g.set_kv("llama.expert_used_count", U32, _u32(5)), MOE),
             "experts", "5 with 4 experts")
    _refused(_edited(lambda g: g.set_kv("llama.expert_count", U32, _u32(2000)), MOE), "experts")


def test_rope_settings() -> None:
    _refused(_edited(lambda g: g.set_kv("llama.rope.dimension_count", U32, _u32(16))), "n_rot",
             "16 where the heads are 64 wide")
    _refused(_edited(lambda g: g.set_kv("llama.rope.scaling.type", STR,
                                        struct.pack("<Q", 5) + b"bogus")), "rope_scaling")
    _read(_edited(lambda g: g.set_kv("llama.rope.dimension_count", U32, _u32(64))))


def test_vocabulary() -> None:
    n = 300
    _refused(_edited(lambda g: g.set_kv("tokenizer.ggml.scores", ARR,
                                        struct.pack("<IQ", F32V, 3) + b"\0" * 12)),
             "kv_length", "3 entries for 300 tokens")
    _refused(_edited(lambda g: g.set_kv("tokenizer.ggml.token_type", ARR, _u32_array([1] * n))),
             "kv_type", "tokenizer.ggml.token_type")
    _refused(_edited(lambda g: g.set_kv("tokenizer.ggml.tokens", ARR, _u32_array([1] * n))),
             "kv_type", "tokenizer.ggml.tokens")
    _refused(_edited(lambda g: g.set_kv("tokenizer.ggml.model", STR,
                                        struct.pack("<Q", 4) + b"gpt2")), "kv_missing", "merges")


# ---- tensors and shapes, for the architectures Hearth models -----------------------------------

def test_wrong_shapes() -> None:
    message = _refused(_edited(_set_dim("blk.1.ffn_gate.weight", 1, 1024)), "shape",
                       "'blk.1.ffn_gate.weight' has the shape 256 x 1024", "needs 256 x 512")
    assert message.endswith("Download it again.")

    def transpose(g: RawGGUF) -> None:
        g.tensor("blk.0.ffn_down.weight").dims.reverse()

    def rank3(g: RawGGUF) -> None:
        t = g.tensor("blk.0.attn_q.weight")
        t.dims = [t.dims[0], t.dims[1] // 2, 2]

    _refused(_edited(transpose), "shape")
    _refused(_edited(rank3), "shape", "256 x 128 x 2")
    _refused(_edited(_set_dim("blk.0.ffn_norm.weight", 0, 512)), "shape")


def test_missing_and_extra_tensors() -> None:
    def drop(name: str) -> Edit:
        return lambda g: g.tensors.remove(g.tensor(name))

    for name in ("output_norm.weight", "blk.1.attn_v.weight", "token_embd.weight"):
        _refused(_edited(drop(name)), "missing_tensor", repr(name))
    tied = _read(_edited(drop("output.weight")))  # llama.cpp ties the head to the embeddings
    assert tied.tied_embd_bytes > 0
    _read(_edited(drop("rope_freqs.weight")))  # optional

    def extra(g: RawGGUF) -> None:
        g.tensors.append(Tensor("blk.0.unknown.weight", [256], 0, 0))
    _refused(_edited(extra), "extra_tensor", "'blk.0.unknown.weight'")


def test_optional_tensors_llama_cpp_creates() -> None:
    def fused(g: RawGGUF) -> None:  # one attn_qkv instead of Q, K and V
        for part in ("q", "k", "v"):
            g.tensors.remove(g.tensor(f"blk.0.attn_{part}.weight"))
        g.tensors.insert(1, Tensor("blk.0.attn_qkv.weight", [256, 256 + 128 + 128], 0, 0))

    def extras(g: RawGGUF) -> None:  # biases and per-tensor scales (NVFP4 files carry them)
        g.tensors += [Tensor("blk.0.attn_output.bias", [256], 0, 0),
                      Tensor("blk.1.ffn_up.bias", [512], 0, 0),
                      Tensor("blk.0.attn_q.scale", [1], 0, 0),
                      Tensor("blk.1.ffn_down.input_scale", [1], 0, 0)]

    _read(_edited(fused))
    _read(_edited(extras))

    def fused_wrong(g: RawGGUF) -> None:
        fused(g)
        g.tensor("blk.0.attn_qkv.weight").dims[1] = 256 * 3  # as if K and V had every head
    _refused(_edited(fused_wrong), "shape", "attn_qkv")


def test_mixture_of_experts_shapes() -> None:
    _read(_raw(MOE))
    _refused(_edited(_set_dim("blk.0.ffn_up_exps.weight", 2, 8), MOE), "shape", "256 x 256 x 4")
    _refused(_edited(lambda g: g.tensors.remove(g.tensor("blk.1.ffn_gate_inp.weight")), MOE),
             "missing_tensor")
    _refused(_edited(lambda g: g.set_kv("llama.expert_count", U32, _u32(8)), MOE), "shape")


def test_gemma3_shapes() -> None:
    m = _read(_raw(GEMMA3))
    assert m.architecture == "gemma3"
    _refused(_edited(_set_dim("blk.0.attn_q_norm.weight", 0, 32), GEMMA3), "shape",
             "needs 64")
    _refused(_edited(lambda g: g.tensors.remove(g.tensor("blk.1.post_ffw_norm.weight")), GEMMA3),
             "missing_tensor")
    _refused(_edited(lambda g: g.drop_kv("gemma3.attention.layer_norm_rms_epsilon"), GEMMA3),
             "kv_missing")


def test_other_architectures_get_the_generic_checks_only() -> None:
    # qwen2 is not modelled tensor by tensor: a shape llama.cpp would refuse passes here (the
    # dry run still catches it), but the container's rules and the common keys hold.
    _read(_edited(_set_dim("blk.0.ffn_gate.weight", 1, 1024), QWEN2))
    _refused(_edited(_set_dim("blk.0.ffn_gate.weight", 1, 0), QWEN2), "zero_dim")
    _refused(_edited(lambda g: g.drop_kv("qwen2.context_length"), QWEN2), "kv_missing")


def test_refusals_are_gguf_errors_for_every_caller() -> None:
    # The loader, the library and the Discover tab catch GGUFError: a refusal is one.
    # (Real layouts, Mixtral's, Gemma 3's and gpt-oss' among them, pass: test_reader.py.)
    with pytest.raises(GGUFError):
        _read(_edited(_set_dim("blk.0.attn_q.weight", 1, 0)))
