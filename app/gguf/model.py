"""What the planner needs to know about a model, read from its GGUF header.

``read_model(path)`` reads a local file (all shards of a split model), ``read_model_bytes(buf)``
the first megabytes of a remote one. Neither reads tensor data.
"""

from __future__ import annotations

import hashlib
import logging
import math
import mmap
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.gguf.errors import GGUFError, MissingPartError
from app.gguf.loadable import check_loadable
from app.gguf.quant import FILE_TYPES, type_name
from app.gguf.reader import ArrayInfo, GGUFHeader, TensorInfo, digested_tokens, parse_header
from app.i18n import T_
from runner.wire.splits import part_names, split_part

if TYPE_CHECKING:
    from app.gguf.projector import ProjectorInfo

log = logging.getLogger(__name__)

_LAYER_RE = re.compile(r"^blk\.(\d+)\.")
# The tensors llama.cpp's fit (and --n-cpu-moe) move to the CPU: routed experts, not shared ones.
_EXPERT_RE = re.compile(r"\.ffn_(up|down|gate_up|gate)_(ch|)exps")

# Architectures with sliding-window layers whose pattern llama.cpp hard-codes when the file does
# not say: arch -> (every n-th layer is global, default window, dense layer first).
_SWA_DEFAULTS: dict[str, tuple[int, int, bool]] = {
    "gemma2": (2, 4096, False),
    "gemma3": (6, 0, False),
    "gemma3n": (5, 0, False),
    "cohere2": (4, 0, False),
    "gpt-oss": (2, 0, False),
    "exaone4": (4, 4096, False),
    "olmo2": (4, 0, False),
    "afmoe": (4, 0, False),
    "plamo3": (8, 0, False),
}
# Architectures whose cache is not the plain K/V layout the planner models (latent attention,
# recurrent state): their estimate is flagged approximate and the dry run has the last word.
_APPROXIMATE_KV = {
    "deepseek2", "deepseek4", "mamba", "mamba2", "rwkv6", "rwkv7", "arwkv7", "jamba",
    "falcon-h1", "qwen3next", "lfm2", "granitehybrid", "nemotron_h", "plamo2", "minicpm3",
    "kimi-linear", "qwen35", "qwen35moe",
}


@dataclass(frozen=True)
class LayerInfo:
    """One repeating block: its weights and the attention shape its KV cache needs."""

    index: int
    weight_bytes: int  # every tensor of blk.<index>.*
    expert_bytes: int  # the routed-expert tensors among them (movable to the CPU)
    n_head_kv: int
    key_length: int
    value_length: int
    swa: bool  # a sliding-window layer: its cache holds n_swa + n_ubatch cells, not n_ctx


@dataclass(frozen=True)
class DraftInfo:
    """A draft model chosen for speculative decoding (app/planner/speculation.py), and what
    this computer measured of it with this model: None until the first load measures."""

    model: ModelInfo
    gain: float | None = None

    @property
    def path(self) -> str:
        return self.model.path or ""


@dataclass(frozen=True)
class ModelInfo:
    """A model's memory-relevant facts. Sizes are bytes."""

    architecture: str
    name: str
    n_layer: int
    n_embd: int
    n_head: int
    n_ff: int
    n_vocab: int
    n_ctx_train: int
    n_expert: int
    n_expert_used: int
    n_ff_exp: int  # feed-forward width of one expert (MoE)
    n_swa: int
    layers: tuple[LayerInfo, ...]
    input_bytes: int  # token embeddings (llama.cpp keeps them on the CPU)
    output_bytes: int  # output head + final norm (offloaded first)
    tied_embd_bytes: int  # no output.weight: the head re-uses token_embd (a copy on a GPU)
    total_bytes: int  # all tensor data in the file(s)
    quantization: str  # "Q4_K_M", "F16", ...
    file_type: int | None
    chat_template: str | None
    context_approximate: bool  # cache layout the planner only approximates (MLA, recurrent)
    paths: tuple[str, ...] = ()  # the shard files, in order (empty when read from bytes)
    tensor_types: dict[str, int] = field(default_factory=dict)  # type name -> bytes
    n_params: int = 0  # elements of every tensor in the file(s): the "8B" of an 8B model
    # The general.* text and number keys (type, finetune, basename, size label, sampling.*):
    # what the chat needs to know about the model beyond its shape. Strings are capped.
    general: dict[str, Any] = field(default_factory=dict)
    # A vision projector loaded beside it (app/gguf/projector.py): the planner counts it.
    projector: ProjectorInfo | None = None
    # The tokenizer's identity (its kind, size, special tokens and a digest of the tokens):
    # equal for models that can draft for each other; "" when unknown.
    vocab: str = ""
    # A draft model loaded beside it for speculative decoding: the planner counts it too.
    draft: DraftInfo | None = None

    @property
    def path(self) -> str | None:
        return self.paths[0] if self.paths else None

    @property
    def is_moe(self) -> bool:
        return self.n_expert > 0 and any(layer.expert_bytes for layer in self.layers)

    @property
    def layer_bytes(self) -> int:
        return sum(layer.weight_bytes for layer in self.layers)

    def summary(self) -> str:
        kind = f"MoE {self.n_expert}x{self.n_expert_used}" if self.is_moe else "dense"
        return (f"{self.name} ({self.architecture}, {kind}, {self.n_layer} layers, "
                f"{self.quantization}, {self.total_bytes / 2**30:.2f} GiB, "
                f"trained context {self.n_ctx_train})")


def split_paths(path: Path) -> list[Path]:
    """All shard paths of a split model (``x-00001-of-00003.gguf``), or ``[path]``.

    The names are llama.cpp's (runner/wire/splits.py), the files it opens for the first part.
    """
    part = split_part(path.name)
    if part is None:
        return [path]
    prefix, _, count = part
    if count > 9999:
        raise GGUFError(T_("{name} names an impossible number of parts ({count}).",
                           name=path.name, count=count))
    return [path.with_name(name) for name in part_names(prefix, count)]


def read_header_file(path: Path) -> GGUFHeader:
    """Parse the header of one local file without reading its tensor data."""
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                raise GGUFError(T_("{name} is empty. Download it again.", name=path.name))
            # A memory map reads only the pages the header touches (sparse files stay sparse).
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                header = parse_header(mm, source=path.name, file_size=size)
    except OSError as exc:
        raise GGUFError(T_("Cannot read {path}: {error}.", path=path,
                           error=exc.strerror or exc)) from exc
    end = header.data_offset + header.data_size
    if end > size:  # llama-model-loader.h:47 "data is not within the file bounds"
        raise GGUFError(T_("{name} is incomplete: its tensors need {end:,} bytes but the file "
                           "has {size:,}. Let the download finish, or download it again.",
                           name=path.name, end=end, size=size))
    return header


def read_model(path: str | os.PathLike[str]) -> ModelInfo:
    """Read a local model; for a split model pass any part (all parts must be present)."""
    p = Path(path)
    if not p.exists():
        raise GGUFError(T_("{path} does not exist.", path=p))
    parts = split_paths(p)
    headers: list[GGUFHeader] = []
    for part in parts:
        if not part.exists():
            raise MissingPartError(
                T_("{name} is missing: {first} is one of {count} parts and all of them must be "
                   "in the same folder.", name=part.name, first=p.name, count=len(parts))
            )
        headers.append(read_header_file(part))
    return model_from_headers(headers, name_hint=p.name, paths=tuple(str(x) for x in parts))


def read_model_bytes(buf: bytes | bytearray | memoryview, *, name: str = "the download",
                     file_size: int | None = None,
                     extra_parts: Sequence[bytes | bytearray | memoryview] = ()) -> ModelInfo:
    """Read a model from the first bytes of its file (and of its other parts, if split).

    Raises :class:`~app.gguf.errors.HeaderTruncatedError` (with ``needed``) when ``buf`` ends
    inside the header: fetch more and call again.
    """
    headers = [parse_header(buf, source=name, file_size=file_size)]
    for i, extra in enumerate(extra_parts, start=2):
        headers.append(parse_header(extra, source=f"{name} (part {i})"))
    return model_from_headers(headers, name_hint=name, paths=())


def model_from_headers(headers: Sequence[GGUFHeader], name_hint: str,
                       paths: tuple[str, ...]) -> ModelInfo:
    """Combine the shard headers into one :class:`ModelInfo`."""
    meta = headers[0].metadata
    expected = _int(meta.get("split.count"), 1)
    if expected > 1 and len(headers) != expected:
        raise MissingPartError(
            T_("{name_hint} is part of a model split into {expected} files; {count} were given. "
               "Download every part.", name_hint=name_hint, expected=expected, count=len(headers))
        )
    tensors: list[TensorInfo] = [t for h in headers for t in h.tensors]
    # What llama.cpp checks before it loads a model: refuse here what it would refuse there.
    check_loadable(meta, headers[0].types, tensors, name_hint)
    return _build(meta, tensors, name_hint, paths)


def _build(meta: dict[str, Any], tensors: list[TensorInfo], name_hint: str,
           paths: tuple[str, ...]) -> ModelInfo:
    arch = meta.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise GGUFError(T_("{name_hint} has no general.architecture; it is not a llama.cpp model.",
                           name_hint=name_hint))

    def key(suffix: str) -> Any:
        return meta.get(f"{arch}.{suffix}")

    n_layer = _int(key("block_count"), 0)
    if not 0 < n_layer <= 4096:
        raise GGUFError(T_("{name_hint} has {n_layer} layers ({arch}.block_count); it is damaged "
                           "or not a text model.", name_hint=name_hint, n_layer=n_layer,
                           arch=arch))
    n_embd = _int(key("embedding_length"), 0)
    if n_embd <= 0:
        raise GGUFError(T_("{name_hint} lacks {arch}.embedding_length; it is damaged.",
                           name_hint=name_hint, arch=arch))
    head = _per_layer(key("attention.head_count"), n_layer, 0, "attention.head_count",
                      name_hint) or [0] * n_layer
    n_head = max(head) if head else 0
    head_kv = _per_layer(key("attention.head_count_kv"), n_layer, None, "head_count_kv", name_hint)
    if head_kv is None:
        head_kv = list(head)
    ff = _per_layer(key("feed_forward_length"), n_layer, 0, "feed_forward_length", name_hint)
    n_embd_head = n_embd // n_head if n_head else 0
    k_len = _int(key("attention.key_length"), n_embd_head)
    v_len = _int(key("attention.value_length"), n_embd_head)
    k_len_swa = _int(key("attention.key_length_swa"), k_len)
    v_len_swa = _int(key("attention.value_length_swa"), v_len)

    n_expert = _int(key("expert_count"), 0)
    n_expert_used = _int(key("expert_used_count"), 0)
    n_ctx_train = _int(key("context_length"), 0)

    swa_flags, n_swa = _swa_layers(arch, meta, n_layer)

    tokens = meta.get("tokenizer.ggml.tokens")
    n_vocab = _int(key("vocab_size"), 0) or _count(tokens)

    per_layer = [0] * n_layer
    per_layer_exp = [0] * n_layer
    input_bytes = output_bytes = 0
    has_output = False
    token_embd = 0
    types: dict[str, int] = {}
    for t in tensors:
        types[type_name(t.ggml_type)] = types.get(type_name(t.ggml_type), 0) + t.nbytes
        m = _LAYER_RE.match(t.name)
        if m:
            il = int(m.group(1))
            if il >= n_layer:
                # MTP / next-token-prediction layers beyond block_count are not loaded by default.
                continue
            per_layer[il] += t.nbytes
            if _EXPERT_RE.search(t.name):
                per_layer_exp[il] += t.nbytes
        elif t.name.startswith(("token_embd", "token_types", "position_embd")):
            input_bytes += t.nbytes
            if t.name == "token_embd.weight":
                token_embd = t.nbytes
                if not n_vocab and len(t.shape) > 1:
                    n_vocab = t.shape[1]
        else:
            if t.name == "output.weight":
                has_output = True
            output_bytes += t.nbytes

    layers = tuple(
        LayerInfo(
            index=i,
            weight_bytes=per_layer[i],
            expert_bytes=per_layer_exp[i],
            n_head_kv=head_kv[i],
            key_length=k_len_swa if swa_flags[i] else k_len,
            value_length=v_len_swa if swa_flags[i] else v_len,
            swa=swa_flags[i],
        )
        for i in range(n_layer)
    )
    file_type = meta.get("general.file_type")
    file_type = file_type if isinstance(file_type, int) else None
    quant = FILE_TYPES.get(file_type) if file_type is not None else None
    if quant is None:
        # Guess from the type holding most bytes (the file type key is optional).
        quant = max(types, key=lambda k: types[k]) if types else "unknown"
    template = meta.get("tokenizer.chat_template")
    name = meta.get("general.name")
    vocab = _vocab_identity(meta, tokens, n_vocab)
    return ModelInfo(
        architecture=arch,
        name=name if isinstance(name, str) and name else name_hint,
        n_layer=n_layer,
        n_embd=n_embd,
        n_head=n_head,
        n_ff=max(ff) if ff else 0,
        n_vocab=n_vocab,
        n_ctx_train=n_ctx_train,
        n_expert=n_expert,
        n_expert_used=n_expert_used,
        n_ff_exp=_int(key("expert_feed_forward_length"), 0) or (max(ff) if ff else 0),
        n_swa=n_swa,
        layers=layers,
        input_bytes=input_bytes,
        output_bytes=output_bytes,
        tied_embd_bytes=0 if has_output else token_embd,
        total_bytes=sum(t.nbytes for t in tensors),
        quantization=quant,
        file_type=file_type,
        chat_template=template if isinstance(template, str) else None,
        context_approximate=arch in _APPROXIMATE_KV,
        paths=paths,
        tensor_types=types,
        n_params=sum(math.prod(t.shape) for t in tensors),
        general=_general(meta),
        vocab=vocab,
    )


def _vocab_identity(meta: dict[str, Any], tokens: Any, n_vocab: int) -> str:
    """The tokenizer's kind, its special tokens and a digest of its tokens up to a size that
    models of one family share (app/gguf/reader.py digested_tokens); "" when unknown."""
    if isinstance(tokens, ArrayInfo):
        digest, covered = tokens.digest, tokens.digested
    elif isinstance(tokens, list) and tokens:
        covered = digested_tokens(len(tokens)) or len(tokens)
        digest = hashlib.blake2b("\0".join(map(str, tokens[:covered])).encode(),
                                 digest_size=12).hexdigest()
    else:
        return ""
    if not digest:
        return ""
    special = (meta.get(f"tokenizer.ggml.{k}_token_id") for k in ("bos", "eos"))
    return ":".join(str(x) for x in (meta.get("tokenizer.ggml.model"), covered, digest,
                                     *special))


GENERAL_TEXT_CAP = 200  # a general.* string longer than this is cut (the keys are short names)


def _general(meta: dict[str, Any]) -> dict[str, Any]:
    """The short general.* values (no licence texts, no lists): untrusted, so kept small."""
    out: dict[str, Any] = {}
    for k, v in meta.items():
        if not k.startswith("general.") or k in ("general.license", "general.description"):
            continue
        if isinstance(v, str):
            out[k] = v[:GENERAL_TEXT_CAP]
        elif isinstance(v, int | float) and not isinstance(v, bool):
            out[k] = v
    return out


def _swa_layers(arch: str, meta: dict[str, Any], n_layer: int) -> tuple[list[bool], int]:
    n_swa = _int(meta.get(f"{arch}.attention.sliding_window"), 0)
    default = _SWA_DEFAULTS.get(arch)
    if default is None:
        return [False] * n_layer, 0
    n_pattern, default_window, dense_first = default
    if not n_swa:
        n_swa = default_window
    if not n_swa:
        return [False] * n_layer, 0
    pattern = meta.get(f"{arch}.attention.sliding_window_pattern")
    if isinstance(pattern, list) and len(pattern) >= n_layer:
        return [bool(x) for x in pattern[:n_layer]], n_swa
    if isinstance(pattern, int) and not isinstance(pattern, bool):
        n_pattern = pattern
    # llama_hparams::set_swa_pattern
    if dense_first:
        flags = [n_pattern == 0 or il % n_pattern != 0 for il in range(n_layer)]
    else:
        flags = [n_pattern == 0 or il % n_pattern < n_pattern - 1 for il in range(n_layer)]
    return flags, n_swa


def _per_layer(value: Any, n_layer: int, default: int | None, what: str,
               name_hint: str) -> list[int] | None:
    if value is None:
        return None if default is None else [default] * n_layer
    if isinstance(value, list):
        if len(value) < n_layer or not all(isinstance(v, int) for v in value):
            raise GGUFError(T_("{name_hint} is damaged: {what} has {count} entries for {n_layer} "
                               "layers.", name_hint=name_hint, what=what, count=len(value),
                               n_layer=n_layer))
        return [int(v) for v in value[:n_layer]]
    if isinstance(value, ArrayInfo):
        raise GGUFError(T_("{name_hint} is damaged: {what} is an array of {count} items.",
                           name_hint=name_hint, what=what, count=value.count))
    return [_int(value, 0)] * n_layer


def _int(value: Any, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value


def _count(value: Any) -> int:
    if isinstance(value, ArrayInfo):
        return value.count
    if isinstance(value, list):
        return len(value)
    return 0
