"""The runner's load settings and the command-line flags that set them.

`serve` and `probe` take the same flags (named as in llama-server where they mean the same), so the
app builds one command line for both, and a plan that the dry run confirmed is exactly what the
real load gets.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import asdict, dataclass
from typing import Any

from runner.limits import pos_int as _pos_int
from runner.speculative import SPEC_TYPES

# KV cache types accepted by --cache-type-k/-v, with their ggml_type ids.
CACHE_TYPES: dict[str, int] = {
    "f32": 0,
    "f16": 1,
    "q4_0": 2,
    "q4_1": 3,
    "q5_0": 6,
    "q5_1": 7,
    "q8_0": 8,
    "bf16": 30,
}

FLASH_ATTN = {"auto": -1, "off": 0, "on": 1}
# "": the model's own pooling, or mean when it names none (a chat model used for embeddings).
POOLING = {"": -1, "none": 0, "mean": 1, "cls": 2, "last": 3}


@dataclass(frozen=True)
class LoadSettings:
    """Everything that decides how a model is loaded; JSON-friendly for /runner/status."""

    model: str
    ctx_size: int = 4096
    n_gpu_layers: int = -1  # -1: all layers (llama.cpp's own convention)
    batch_size: int = 512
    ubatch_size: int = 512
    threads: int = 0  # 0: physical cores
    threads_batch: int = 0  # 0: same as threads
    flash_attn: str = "auto"
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    mmap: bool = True
    mlock: bool = False
    alias: str | None = None
    parallel: int = 1
    seed: int = -1
    n_cpu_moe: int = 0  # keep the expert tensors of the first N layers in RAM (MoE models)
    tensor_split: tuple[float, ...] = ()  # share of the layers per GPU
    embedding: bool = False  # an embeddings-only context (/v1/embeddings) instead of a chat one
    pooling: str = ""  # one of POOLING
    rpc: tuple[str, ...] = ()  # RPC workers (HOST:PORT) whose devices come before local GPUs
    # Measure at load and while generating which thread count is fastest now, up to
    # max_threads (runner/threads.py); ``threads`` is where it starts.
    adapt_threads: bool = False
    max_threads: int = 0
    # A vision projector (an mmproj GGUF) loaded beside the model: image input (runner/vision.py).
    mmproj: str | None = None
    # Speculative decoding (runner/speculative.py), llama-server's flags and defaults: "none",
    # "draft-simple" (a draft model, the default when one is given) or "ngram-simple".
    spec_type: str = "none"
    draft_model: str | None = None
    draft_n_max: int = 3
    draft_n_min: int = 0
    draft_ngl: int = -1  # the draft's layers on the GPU (-1: all when the model offloads any)
    draft_threads: int = 0  # 0: as --threads
    ngram_size_n: int = 12
    ngram_size_m: int = 48
    spec_measure: bool = False  # measure at load whether it pays; off when it does not
    # Speed settings to measure once the model is ready (runner/speed_trial.py): "fa=on,off;
    # kv=f16,q8_0;ub=256,512,1024", each part optional; "" measures nothing.
    tune_speed: str = ""
    tune_budget: float = 5.0
    # The whole model on the first GPU rather than split over all of them: a draft model, where
    # the app's plan counts it (app/planner/memory.py draft_bytes). No flag: load_draft sets it.
    first_gpu_only: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def add_load_flags(parser: argparse.ArgumentParser) -> None:
    """The flags shared by `serve` and `probe`."""
    parser.add_argument("--model", "-m", required=True, help="path to a .gguf file")
    parser.add_argument("--ctx-size", "-c", type=_nonneg_int, default=4096,
                        help="context size in tokens (0: the model's training context)")
    parser.add_argument("--n-gpu-layers", "-ngl", type=int, default=-1,
                        help="layers to offload to the GPU (-1: all)")
    parser.add_argument("--batch-size", "-b", type=_pos_int, default=512)
    parser.add_argument("--ubatch-size", "-ub", type=_pos_int, default=512)
    parser.add_argument("--threads", "-t", type=_nonneg_int, default=0,
                        help="generation threads (0: physical cores)")
    parser.add_argument("--threads-batch", "-tb", type=_nonneg_int, default=0,
                        help="prompt-processing threads (0: same as --threads)")
    parser.add_argument("--adapt-threads", action="store_true",
                        help="measure which thread count is fastest at load and while generating "
                             "(another program may be keeping a core busy); --threads is where "
                             "it starts")
    parser.add_argument("--max-threads", type=_nonneg_int, default=0,
                        help="the most threads --adapt-threads tries (0: physical cores)")
    parser.add_argument("--flash-attn", "-fa", choices=sorted(FLASH_ATTN), default="auto")
    parser.add_argument("--cache-type-k", "-ctk", choices=sorted(CACHE_TYPES), default="f16")
    parser.add_argument("--cache-type-v", "-ctv", choices=sorted(CACHE_TYPES), default="f16")
    parser.add_argument("--no-mmap", action="store_true", help="read the model into memory")
    parser.add_argument("--mlock", action="store_true", help="lock the model in RAM")
    parser.add_argument("--parallel", "-np", type=_pos_int, default=1,
                        help="number of parallel slots")
    parser.add_argument("--seed", type=int, default=-1, help="default sampling seed (-1: random)")
    parser.add_argument("--n-cpu-moe", "-ncmoe", type=_nonneg_int, default=0,
                        help="keep the MoE expert tensors of the first N layers on the CPU")
    parser.add_argument("--tensor-split", "-ts", type=_split, default=(),
                        help="fraction of the model per GPU, e.g. 3,1")
    parser.add_argument("--alias", "-a", default=None, help="model name reported by the API")
    parser.add_argument("--embedding", "--embeddings", action="store_true",
                        help="load for /v1/embeddings only (no text generation)")
    parser.add_argument("--pooling", choices=[p for p in POOLING if p], default="",
                        help="how token vectors become one embedding (default: the model's, else mean)")
    parser.add_argument("--mmproj", "-mm", default=None,
                        help="a vision projector (mmproj .gguf) for image input")
    parser.add_argument("--rpc", type=_endpoints, default=(), metavar="HOST:PORT[,HOST:PORT...]",
                        help="use the devices of these RPC workers ('hearth-runner rpc-worker'); "
                             "--tensor-split shares layers between them and local GPUs, workers "
                             "first")
    parser.add_argument("--spec-type", choices=SPEC_TYPES, default=None,
                        help="speculative decoding: a draft model (draft-simple, the default with "
                             "--spec-draft-model) or prompt lookup (ngram-simple)")
    parser.add_argument("--spec-draft-model", "-md", "--model-draft", dest="draft_model",
                        default=None, help="a small model with the same vocabulary that drafts")
    parser.add_argument("--spec-draft-n-max", type=_nonneg_int, default=3,
                        help="tokens the draft model proposes per step")
    parser.add_argument("--spec-draft-n-min", type=_nonneg_int, default=0,
                        help="fewer drafted tokens than this are not used")
    parser.add_argument("--spec-draft-ngl", "-ngld", type=int, default=-1,
                        help="draft layers on the GPU (-1: all when the model offloads any)")
    parser.add_argument("--spec-draft-threads", "-td", type=_nonneg_int, default=0,
                        help="the draft model's threads (0: as --threads)")
    parser.add_argument("--spec-ngram-simple-size-n", type=_pos_int, default=12,
                        help="n-gram looked up in the context (ngram-simple)")
    parser.add_argument("--spec-ngram-simple-size-m", type=_pos_int, default=48,
                        help="most tokens one lookup proposes (ngram-simple)")
    parser.add_argument("--spec-measure", action="store_true",
                        help="measure at load whether speculation is at least 10%% faster on this "
                             "computer, and turn it off when it is not")
    parser.add_argument("--tune-speed", type=_tune_spec, default="", metavar="SPEC",
                        help="once the model is ready and idle, measure these speed settings "
                             "beside the load's own (fa=on,off;kv=f16,q8_0;ub=256,512,1024) and "
                             "report the fastest in /runner/status speed_trial")
    parser.add_argument("--tune-budget", type=_pos_float, default=5.0, metavar="SECONDS",
                        help="seconds of measuring --tune-speed may spend in all (default 5)")


def settings_from_args(args: argparse.Namespace) -> LoadSettings:
    threads = args.threads or physical_cores()
    return LoadSettings(
        model=args.model,
        ctx_size=args.ctx_size,
        n_gpu_layers=args.n_gpu_layers,
        batch_size=args.batch_size,
        # An embedding sees its whole input at once: pooling and non-causal models need the
        # sequence in one micro-batch, as in llama-server.
        ubatch_size=args.batch_size if args.embedding else min(args.ubatch_size, args.batch_size),
        threads=threads,
        threads_batch=args.threads_batch or threads,
        flash_attn=args.flash_attn,
        cache_type_k=args.cache_type_k,
        cache_type_v=args.cache_type_v,
        mmap=not args.no_mmap,
        mlock=args.mlock,
        alias=args.alias,
        parallel=args.parallel,
        seed=args.seed,
        n_cpu_moe=args.n_cpu_moe,
        tensor_split=args.tensor_split,
        embedding=args.embedding,
        pooling=args.pooling,
        rpc=args.rpc,
        adapt_threads=args.adapt_threads,
        max_threads=max(threads, args.max_threads or physical_cores()) if args.adapt_threads else 0,
        mmproj=args.mmproj,
        spec_type=args.spec_type or ("draft-simple" if args.draft_model else "none"),
        draft_model=args.draft_model,
        draft_n_max=args.spec_draft_n_max,
        draft_n_min=args.spec_draft_n_min,
        draft_ngl=args.spec_draft_ngl,
        draft_threads=args.spec_draft_threads,
        ngram_size_n=args.spec_ngram_simple_size_n,
        ngram_size_m=args.spec_ngram_simple_size_m,
        spec_measure=args.spec_measure,
        tune_speed=args.tune_speed,
        tune_budget=args.tune_budget,
    )


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (serve and rpc-worker refuse any
    other without --allow-remote)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def physical_cores() -> int:
    """Physical cores: llama.cpp's decode is memory-bound and hyper-threads slow it down."""
    try:
        import psutil

        n = psutil.cpu_count(logical=False)
    except Exception:
        n = None
    return max(1, n or os.cpu_count() or 1)


def _split(text: str) -> tuple[float, ...]:
    try:
        parts = tuple(float(p) for p in text.replace("/", ",").split(",") if p.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 3,1, got {text!r}") from None
    if not parts or any(p < 0 for p in parts):
        raise argparse.ArgumentTypeError(f"expected non-negative numbers like 3,1, got {text!r}")
    return parts


def _endpoints(text: str) -> tuple[str, ...]:
    from runner.rpc import parse_endpoints

    try:
        return tuple(parse_endpoints(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


MAX_UBATCH = 8192


def parse_tune_spec(text: str) -> dict[str, list[Any]]:
    """``--tune-speed``'s ``fa=on,off;kv=f16,q8_0;ub=256,512,1024`` (each part optional) as
    lists of values; ValueError names a part it does not take."""
    out: dict[str, list[Any]] = {"fa": [], "kv": [], "ub": []}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, _, values = part.partition("=")
        name = name.strip()
        if name not in out or not values.strip():
            raise ValueError(f"expected fa=…;kv=…;ub=…, got {part!r}")
        for v in filter(None, (v.strip() for v in values.split(","))):
            if name == "fa" and v in ("on", "off"):
                out[name].append(v)
            elif name == "kv" and v in CACHE_TYPES:
                out[name].append(v)
            elif name == "ub" and v.isdigit() and 1 <= int(v) <= MAX_UBATCH:
                out[name].append(int(v))
            else:
                raise ValueError(f"{name}: {v!r} is not a value it takes")
    return out


def _tune_spec(text: str) -> str:
    try:
        parse_tune_spec(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _pos_float(text: str) -> float:
    value = float(text)
    if not 0 < value <= 600:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 600, got {value}")
    return value


def _nonneg_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value
