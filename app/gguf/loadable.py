"""What llama.cpp checks when it loads a model, beyond the GGUF container itself.

The container's rules (offsets, dimensions, types, names) are checked as the header is read
(:mod:`app.gguf.reader`, mirroring ggml/src/gguf.cpp). This module mirrors what llama.cpp checks
next, so that a file it will refuse is never planned as if it would load:

- the hyperparameters every architecture needs, each with the one GGUF type llama.cpp reads it
  as (``llama_model_base::load_hparams`` in src/llama-model.cpp, through the strict getters of
  src/llama-model-loader.cpp), and the ``GGML_ASSERT``\\ s there, which abort the whole process;
- the vocabulary's keys (``llama_vocab::impl::load`` in src/llama-vocab.cpp);
- for the architectures Hearth knows well (``llama``, which covers Llama, Mistral and Mixtral
  files, and ``gemma3``), every tensor the model creates with its expected shape
  (``check_tensor_dims``), and no tensor it would not use ("wrong number of tensors").

Line numbers are those of the llama.cpp that llama-cpp-python 0.3.36 vendors. For any other
architecture only the generic rules are checked: a newer runtime may know more than this table.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from app.gguf.errors import RefusedError
from app.gguf.reader import ArrayInfo, TensorInfo
from app.i18n import T_

# GGUF value types (the GGUF specification's numbering).
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
TYPE_NAMES = {U8: "uint8", I8: "int8", U16: "uint16", I16: "int16", U32: "uint32", I32: "int32",
              F32: "float32", BOOL: "bool", STR: "string", ARR: "array", U64: "uint64",
              I64: "int64", F64: "float64"}

MAX_LAYERS = 512  # LLAMA_MAX_LAYERS (src/llama-hparams.h:11)
MAX_EXPERTS = 1024  # LLAMA_MAX_EXPERTS (src/llama-hparams.h:12)
ROPE_SCALING_TYPES = ("none", "linear", "yarn", "longrope")  # llama-model.cpp:1034
NVFP4 = 40  # ggml type whose output head carries scale tensors (llama-model.cpp:1775)

Types = dict[str, tuple[int, int | None]]


def check_loadable(meta: dict[str, Any], types: Types, tensors: Sequence[TensorInfo],
                   source: str) -> None:
    """Raise :class:`RefusedError` when llama.cpp would refuse (or abort on) this model.

    ``meta`` and ``types`` are the first part's metadata and its value types
    (:attr:`~app.gguf.reader.GGUFHeader.types`), ``tensors`` the tensors of every part. A key
    whose type is unknown (a header built without ``types``) is not type-checked.
    """
    keys = _Keys(meta, types, source)
    keys.typed("general.architecture", STR)  # llama-model-loader.cpp:576 (get_key, strict)
    arch = meta.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        return  # model.py says "not a llama.cpp model"
    hp = _hparams(keys, arch)
    n_vocab = _vocab(keys)
    recipe = _RECIPES.get(arch)
    if recipe is not None:
        recipe(keys, hp, n_vocab, tensors)


# -- metadata ---------------------------------------------------------------------------------


class _Keys:
    """Reads keys as llama.cpp's loader does: one exact type, or the file is refused."""

    def __init__(self, meta: dict[str, Any], types: Types, source: str) -> None:
        self.meta = meta
        self.types = types
        self.source = source

    def refuse(self, check: str, what: str) -> RefusedError:
        return RefusedError(self.source, check, what, conversion=True)

    def typed(self, key: str, want: int, *, required: bool = False) -> Any:
        """``get_key``: llama-model-loader.cpp:281 (missing) and :168 (wrong type)."""
        if key not in self.meta:
            if required:
                raise self.refuse("kv_missing", T_("it lacks the metadata key {key}", key=key))
            return None
        have = self.types.get(key)
        if have is not None and have[0] != want:
            raise self.refuse("kv_type", T_("the metadata key {key} is stored as {type_name} "
                                            "where llama.cpp reads {wanted}", key=key,
                                            type_name=_type_name(have),
                                            wanted=TYPE_NAMES[want]))
        return self.meta[key]

    def per_layer(self, key: str, n_layer: int) -> list[int] | None:
        """``get_key_or_arr``: a u32, or an array of exactly ``n_layer`` u32 / i32 / bool
        (llama-model-loader.cpp:459-487; the array's item types at :366)."""
        if key not in self.meta:
            return None
        have = self.types.get(key)
        value = self.meta[key]
        if have is None or have[0] != ARR:
            scalar = self.typed(key, U32)
            return [int(scalar)] * n_layer if isinstance(scalar, int) else None
        count = value.count if isinstance(value, ArrayInfo) else len(value)
        if count != n_layer:
            raise self.refuse("kv_length", T_("the metadata key {key} has {count} entries for "
                                              "{n_layer} layers", key=key, count=count,
                                              n_layer=n_layer))
        if have[1] not in (U32, I32, BOOL):
            raise self.refuse("kv_type", T_("the metadata key {key} is stored as {type_name} "
                                            "where llama.cpp reads uint32", key=key,
                                            type_name=_type_name(have)))
        if isinstance(value, ArrayInfo):  # longer than any layer count: refused above
            return None
        return [int(v) for v in value]


def _type_name(have: tuple[int, int | None]) -> str:
    vtype, item = have
    if vtype == ARR:
        return "an array of " + (TYPE_NAMES.get(item, f"type {item}") if item is not None
                                 else "unknown items")
    return TYPE_NAMES.get(vtype, f"type {vtype}")


@dataclass(frozen=True)
class _HParams:
    """The numbers tensor shapes are derived from (``LLAMA_LOAD_LOCALS``, llama-model.h:860)."""

    n_layer: int  # block_count less the next-token-prediction layers
    n_embd: int
    n_head: int
    n_head_kv: int
    n_ff: int
    n_embd_head_k: int
    n_embd_head_v: int
    n_rot: int
    n_expert: int
    rope_scaling: str


def _hparams(keys: _Keys, arch: str) -> _HParams:
    """``llama_model_base::load_hparams`` (llama-model.cpp:1298-1490), in its order."""
    def k(suffix: str) -> str:
        return f"{arch}.{suffix}"

    keys.typed(k("context_length"), U32, required=True)  # :1321
    n_embd = _or(keys.typed(k("embedding_length"), U32, required=True), 0)
    keys.typed(k("embedding_length_out"), U32)
    keys.typed(k("attention.causal"), BOOL)
    keys.typed(k("pooling_type"), U32)
    n_layer_all = _or(keys.typed(k("block_count"), U32, required=True), 0)
    if not 0 < n_layer_all <= MAX_LAYERS:  # GGML_ASSERT at :1328: llama.cpp aborts
        raise keys.refuse("n_layer", T_("{key} is {n_layer_all} (llama.cpp takes 1 to "
                                        "{most})", key=k("block_count"),
                                        n_layer_all=n_layer_all, most=MAX_LAYERS))
    n_nextn = _or(keys.typed(k("nextn_predict_layers"), U32), 0)
    if n_nextn > n_layer_all:  # GGML_ASSERT at :1330
        raise keys.refuse("n_layer", T_("{key} is {n_nextn}, more than the {n_layer_all} layers",
                                        key=k("nextn_predict_layers"), n_nextn=n_nextn,
                                        n_layer_all=n_layer_all))
    n_expert = _or(keys.typed(k("expert_count"), U32), 0)
    used = keys.per_layer(k("expert_used_count"), n_layer_all) or [0]
    groups = _or(keys.typed(k("expert_group_count"), U32), 0)
    group_used = _or(keys.typed(k("expert_group_used_count"), U32), 0)
    if arch in ("hunyuan-vl", "hunyuan-dense") and n_expert <= 1:  # :1337
        n_expert, used = 0, [0]
    _check_experts(keys, arch, n_expert, max(used), groups, group_used)

    ff = keys.per_layer(k("feed_forward_length"), n_layer_all) or [0]  # :1395
    head = keys.per_layer(k("attention.head_count"), n_layer_all) or [0]
    head_kv = keys.per_layer(k("attention.head_count_kv"), n_layer_all) or head  # :1404
    keys.typed(k("rope.scaling.finetuned"), BOOL)
    keys.typed(k("rope.scaling.original_context_length"), U32)
    keys.typed(k("rope.freq_base"), F32)
    scaling = keys.typed(k("rope.scaling.type"), STR)
    if scaling is not None and scaling not in ROPE_SCALING_TYPES:  # GGML_ASSERT at :1420
        raise keys.refuse("rope_scaling", T_("{key} is {scaling!r}, which llama.cpp does not know",
                                             key=k("rope.scaling.type"), scaling=scaling))
    if keys.typed(k("rope.scaling.factor"), F32) is None:
        keys.typed(k("rope.scale_linear"), F32)
    keys.typed(k("rope.scaling.attn_factor"), F32)
    keys.typed(k("rope.scaling.alpha"), F32)

    n_head = head[0]
    hd_k = hd_v = n_rot = 0
    if n_head > 0:  # :1435
        hd_k = _or(keys.typed(k("attention.key_length"), U32), n_embd // n_head)
        hd_v = _or(keys.typed(k("attention.value_length"), U32), n_embd // n_head)
        n_rot = _or(keys.typed(k("rope.dimension_count"), U32), hd_k)
        if arch in ("llama", "deci", "falcon", "llama-embed") and n_rot != hd_k:  # :1452
            raise keys.refuse("n_rot", T_("{key} is {n_rot} where the heads are {hd_k} wide",
                                          key=k("rope.dimension_count"), n_rot=n_rot, hd_k=hd_k))
    hd_k_swa = _or(keys.typed(k("attention.key_length_swa"), U32), hd_k)
    hd_v_swa = _or(keys.typed(k("attention.value_length_swa"), U32), hd_v)
    n_rot_swa = _or(keys.typed(k("rope.dimension_count_swa"), U32), n_rot)
    if _layer0_is_swa(keys, arch):
        # n_embd_head_k() and n_rot() answer for layer 0 (llama-hparams.cpp:110, :140).
        hd_k, hd_v, n_rot = hd_k_swa, hd_v_swa, n_rot_swa
    return _HParams(n_layer=n_layer_all - n_nextn, n_embd=n_embd, n_head=n_head,
                    n_head_kv=head_kv[0], n_ff=ff[0], n_embd_head_k=hd_k, n_embd_head_v=hd_v,
                    n_rot=n_rot, n_expert=n_expert, rope_scaling=scaling or "linear")


def _check_experts(keys: _Keys, arch: str, n_expert: int, used: int, groups: int,
                   group_used: int) -> None:
    """The GGML_ASSERTs of llama-model.cpp:1361-1373: each one aborts the process."""
    k = f"{arch}.expert"
    if n_expert > MAX_EXPERTS:
        problem = f"{k}_count is {n_expert} (llama.cpp takes at most {MAX_EXPERTS})"
    elif used > n_expert:
        problem = f"{k}_used_count is {used} with {n_expert} experts"
    elif n_expert and not used:
        problem = f"{k}_used_count is missing or 0 with {n_expert} experts"
    elif n_expert and groups >= n_expert:
        problem = f"{k}_group_count is {groups} with {n_expert} experts"
    elif n_expert and groups > 1 and (n_expert % groups or not 0 < group_used < groups):
        problem = f"the expert groups ({groups}, {group_used} used) do not divide {n_expert}"
    elif not n_expert and groups:
        problem = f"{k}_group_count is {groups} without experts"
    else:
        return
    raise keys.refuse("experts", problem)


def _layer0_is_swa(keys: _Keys, arch: str) -> bool:
    """Whether layer 0 uses the sliding window (only gemma3 is modelled here): its
    ``load_arch_hparams`` reads the window and the pattern (models/gemma3.cpp:4-10,
    ``load_swa_pattern`` llama-model.cpp:3434, ``set_swa_pattern`` with 6 by default)."""
    if arch != "gemma3":
        return False
    key = f"{arch}.attention.sliding_window"
    window = keys.typed(key, U32)
    if not window:
        return False
    pkey = f"{arch}.attention.sliding_window_pattern"
    pattern = keys.meta.get(pkey)
    ptype = keys.types.get(pkey)
    if pattern is not None and (ptype is None or ptype[0] == ARR):
        if ptype is not None and ptype[1] not in (BOOL, U32, I32):  # llama-model-loader.cpp:375
            raise keys.refuse("kv_type", T_("the metadata key {pkey} is stored as {type_name}",
                                            pkey=pkey, type_name=_type_name(ptype)))
        count = pattern.count if isinstance(pattern, ArrayInfo) else len(pattern)
        if count > MAX_LAYERS:  # llama-model-loader.cpp:382
            raise keys.refuse("kv_length", T_("the metadata key {pkey} has {count} entries",
                                              pkey=pkey, count=count))
        return bool(pattern[0]) if isinstance(pattern, list) and pattern else False
    # llama_hparams::set_swa_pattern: layer il is SWA when il % n < n - 1 (n == 0: all are)
    n_pattern = _or(keys.typed(pkey, U32), 6)
    return n_pattern != 1


def _vocab(keys: _Keys) -> int:
    """``llama_vocab::impl::load`` (llama-vocab.cpp:1939-2505): the token count."""
    model = keys.typed("tokenizer.ggml.model", STR, required=True)  # :1944
    pre = keys.typed("tokenizer.ggml.pre", STR)
    keys.typed("tokenizer.ggml.token_type_count", U32)
    if model in ("no_vocab", "none"):  # :1949
        return _or(keys.typed(f"{keys.meta['general.architecture']}.vocab_size", U32), 0)
    if model in ("gpt2", "hybriddna", "whitespace") and pre != "kimi-k2":
        if "tokenizer.ggml.merges" not in keys.meta:  # :2003
            raise keys.refuse("kv_missing", T_("it has a BPE vocabulary without "
                                               "tokenizer.ggml.merges"))
        _array_of(keys, "tokenizer.ggml.merges", (STR,))  # :2010
    if "tokenizer.ggml.tokens" not in keys.meta:  # :2462
        raise keys.refuse("kv_missing", T_("it lacks its vocabulary (tokenizer.ggml.tokens)"))
    n_tokens = _array_of(keys, "tokenizer.ggml.tokens", (STR,))  # :2466
    for key, items in (("tokenizer.ggml.scores", (I32, F32)),  # :2476-2485
                       ("tokenizer.ggml.token_type", (I32,))):  # :2496-2503
        if key in keys.meta:
            n = _array_of(keys, key, items)
            if n is not None and n_tokens is not None and n < n_tokens:
                raise keys.refuse("kv_length", T_("{key} has {n} entries for {n_tokens} tokens",
                                                  key=key, n=n, n_tokens=n_tokens))
    return n_tokens or 0


def _array_of(keys: _Keys, key: str, items: tuple[int, ...]) -> int | None:
    """The length of array ``key`` once its item type is checked (None: types unknown)."""
    have = keys.types.get(key)
    value = keys.meta[key]
    if have is not None and (have[0] != ARR or have[1] not in items):
        raise keys.refuse("kv_type", T_("the metadata key {key} is stored as {type_name} where "
                                        "llama.cpp reads an array of {wanted}", key=key,
                                        type_name=_type_name(have),
                                        wanted=" or ".join(TYPE_NAMES[i] for i in items)))
    if isinstance(value, ArrayInfo):
        return value.count
    return len(value) if isinstance(value, list) else None


def _or(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


# -- tensors ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Want:
    """One ``create_tensor`` call: the name, the shape (None: any) and whether it must exist."""

    name: str
    shape: tuple[int, ...] | None
    required: bool = True


def _check_tensors(keys: _Keys, wants: Iterator[_Want], tensors: Sequence[TensorInfo],
                   arch: str) -> None:
    """``check_tensor_dims`` for each wanted tensor, in creation order (llama-model-loader.cpp:
    880-922: "not found", "has wrong shape"), then ``done_getting_tensors``: every tensor in
    the file must be one the model uses (:1392-1398, "wrong number of tensors")."""
    have = {t.name: t for t in tensors}
    used: set[str] = set()
    for want in wants:
        t = have.get(want.name)
        if t is None:
            if want.required:
                raise RefusedError(keys.source, "missing_tensor",
                                   T_("the tensor {name!r}, which every {arch} model has, is "
                                      "missing", name=want.name, arch=arch))
            continue
        used.add(want.name)
        if want.shape is None:
            continue
        if _padded(t.shape) != _padded(want.shape):
            raise RefusedError(keys.source, "shape",
                               T_("tensor {name!r} has the shape {dims} where this {arch} model "
                                  "needs {wanted}", name=want.name, dims=_dims(t.shape), arch=arch,
                                  wanted=_dims(want.shape)))
    extra = [t.name for t in tensors if t.name not in used]
    if extra:
        raise RefusedError(keys.source, "extra_tensor",
                           T_("it holds {count} tensor(s) a {arch} model does not use ({names})",
                              count=len(extra), arch=arch,
                              names=", ".join(repr(n) for n in extra[:3])), conversion=True)


def _padded(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(shape) + (1,) * (4 - len(shape))


def _dims(shape: tuple[int, ...]) -> str:
    return " x ".join(str(d) for d in shape)


def _qkv(have: set[str], il: int, n_embd: int, q: int, k: int, v: int) -> Iterator[_Want]:
    """``create_tensor_qkv`` (llama-model.cpp:3396-3431): a fused QKV, or Q, K and V."""
    p = f"blk.{il}."
    if p + "attn_qkv.weight" in have:
        yield _Want(p + "attn_qkv.weight", (n_embd, q + k + v), False)
        if p + "attn_qkv.bias" in have:
            yield _Want(p + "attn_qkv.bias", (q + k + v,), False)
        else:
            yield from _biases(p, q, k, v)
        return
    yield _Want(p + "attn_q.weight", (n_embd, q))
    yield _Want(p + "attn_k.weight", (n_embd, k))
    yield _Want(p + "attn_v.weight", (n_embd, v))
    yield from _biases(p, q, k, v)


def _biases(p: str, q: int, k: int, v: int) -> Iterator[_Want]:
    yield _Want(p + "attn_q.bias", (q,), False)
    yield _Want(p + "attn_k.bias", (k,), False)
    yield _Want(p + "attn_v.bias", (v,), False)


def _scales(have: set[str], il: int, n_expert: int) -> Iterator[_Want]:
    """The optional per-tensor ``.scale`` / ``.input_scale`` tensors created for every weight
    a layer has (llama-model.cpp:1634-1773)."""
    p = f"blk.{il}."
    for base in ("attn_q", "attn_k", "attn_v", "attn_output", "attn_qkv", "attn_gate",
                 "ffn_gate", "ffn_down", "ffn_up", "ffn_gate_shexp", "ffn_down_shexp",
                 "ffn_up_shexp", "ffn_gate_exps", "ffn_down_exps", "ffn_up_exps"):
        if p + base + ".weight" not in have:
            continue
        shape = (n_expert,) if base.endswith("_exps") else (1,)
        yield _Want(f"{p}{base}.scale", shape, False)
        yield _Want(f"{p}{base}.input_scale", shape, False)


def _head(hp: _HParams, n_vocab: int) -> Iterator[_Want]:
    """Token embeddings, final norm and the (optional, else tied) output head."""
    yield _Want("token_embd.weight", (hp.n_embd, n_vocab))
    yield _Want("output_norm.weight", (hp.n_embd,))
    yield _Want("output.weight", (hp.n_embd, n_vocab), False)


def _output_scales(types: dict[str, int]) -> Iterator[_Want]:
    """An NVFP4 output head's scales (llama-model.cpp:1775-1785)."""
    if types.get("output.weight") == NVFP4:
        yield _Want("output.scale", (1,), False)
        yield _Want("output.input_scale", (1,), False)


def _llama(keys: _Keys, hp: _HParams, n_vocab: int, tensors: Sequence[TensorInfo]) -> None:
    """models/llama.cpp: ``load_arch_hparams`` (:3-31) and ``load_arch_tensors`` (:34-92)."""
    keys.typed("llama.attention.layer_norm_rms_epsilon", F32, required=True)
    keys.typed("llama.vocab_size", U32)
    have = {t.name for t in tensors}
    types = {t.name: t.ggml_type for t in tensors}
    e, ff, ne = hp.n_embd, hp.n_ff, hp.n_expert
    q = hp.n_embd_head_k * hp.n_head
    k_gqa = hp.n_embd_head_k * hp.n_head_kv
    v_gqa = hp.n_embd_head_v * hp.n_head_kv

    def wants() -> Iterator[_Want]:
        yield from _head(hp, n_vocab)
        for il in range(hp.n_layer):
            p = f"blk.{il}."
            yield _Want(p + "attn_norm.weight", (e,))
            yield from _qkv(have, il, e, q, k_gqa, v_gqa)
            yield _Want(p + "attn_output.weight", (q, e))
            yield _Want(p + "attn_output.bias", (e,), False)
            yield _Want(p + "ffn_norm.weight", (e,))
            if hp.rope_scaling == "longrope":
                yield _Want("rope_factors_long.weight", (hp.n_rot // 2,), False)
                yield _Want("rope_factors_short.weight", (hp.n_rot // 2,), False)
            else:
                yield _Want("rope_freqs.weight", (hp.n_rot // 2,), False)
            if ne == 0:
                yield _Want(p + "ffn_gate.weight", (e, ff))
                yield _Want(p + "ffn_down.weight", (ff, e))
                yield _Want(p + "ffn_up.weight", (e, ff))
                yield _Want(p + "ffn_gate.bias", (ff,), False)
                yield _Want(p + "ffn_down.bias", (e,), False)
                yield _Want(p + "ffn_up.bias", (ff,), False)
            else:
                yield _Want(p + "ffn_gate_inp.weight", (e, ne))
                yield _Want(p + "ffn_gate_exps.weight", (e, ff, ne), False)
                yield _Want(p + "ffn_down_exps.weight", (ff, e, ne))
                yield _Want(p + "ffn_up_exps.weight", (e, ff, ne))
        for il in range(hp.n_layer):
            yield from _scales(have, il, ne)
        yield from _output_scales(types)

    _check_tensors(keys, wants(), tensors, "llama")


def _gemma3(keys: _Keys, hp: _HParams, n_vocab: int, tensors: Sequence[TensorInfo]) -> None:
    """models/gemma3.cpp: ``load_arch_hparams`` (:3-32) and ``load_arch_tensors`` (:34-71)."""
    keys.typed("gemma3.rope.freq_base_swa", F32)
    keys.typed("gemma3.final_logit_softcapping", F32)
    keys.typed("gemma3.attention.layer_norm_rms_epsilon", F32, required=True)
    have = {t.name for t in tensors}
    types = {t.name: t.ggml_type for t in tensors}
    e, ff = hp.n_embd, hp.n_ff
    q = hp.n_embd_head_k * hp.n_head
    k_gqa = hp.n_embd_head_k * hp.n_head_kv
    v_gqa = hp.n_embd_head_v * hp.n_head_kv

    def wants() -> Iterator[_Want]:
        yield from _head(hp, n_vocab)
        # Sentence-embedding projections: shapes from keys gemma3 does not read; not checked.
        yield _Want("dense_2.weight", None, False)
        yield _Want("dense_3.weight", None, False)
        for il in range(hp.n_layer):
            p = f"blk.{il}."
            yield _Want(p + "attn_norm.weight", (e,))
            yield from _qkv(have, il, e, q, k_gqa, v_gqa)
            yield _Want(p + "attn_output.weight", (q, e))
            yield _Want(p + "post_attention_norm.weight", (e,))
            yield _Want(p + "attn_k_norm.weight", (hp.n_embd_head_k,))
            yield _Want(p + "attn_q_norm.weight", (hp.n_embd_head_k,))
            yield _Want(p + "ffn_norm.weight", (e,))
            yield _Want(p + "ffn_gate.weight", (e, ff))
            yield _Want(p + "ffn_up.weight", (e, ff))
            yield _Want(p + "ffn_down.weight", (ff, e))
            yield _Want(p + "post_ffw_norm.weight", (e,))
        for il in range(hp.n_layer):
            yield from _scales(have, il, 0)
        yield from _output_scales(types)

    _check_tensors(keys, wants(), tensors, "gemma3")


_RECIPES = {"llama": _llama, "gemma3": _gemma3}
