"""llama.cpp model and context parameters from :class:`LoadSettings`.

One builder for both the real load (engine) and the dry run (probe): the probe only confirms the
plan if it measures exactly the parameters `serve` will load with.
"""

from __future__ import annotations

import ctypes
from typing import Any

import llama_cpp

from runner.settings import CACHE_TYPES, FLASH_ATTN, POOLING, LoadSettings


class ParamsError(Exception):
    """These settings cannot be expressed for this runner build; ``str()`` says why."""


def model_params(settings: LoadSettings, keep: list[Any]) -> Any:
    """Model params for ``settings``. Arrays they point into are appended to ``keep``: the
    caller holds that list until the load returns."""
    mp = llama_cpp.llama_model_default_params()
    mp.n_gpu_layers = settings.n_gpu_layers if settings.n_gpu_layers >= 0 else 2**30
    # 0.3.36 has no use_mmap/use_mlock fields (ctypes would accept them silently): load_mode.
    mp.load_mode = (1 if settings.mmap else 0) + (2 if settings.mlock else 0)
    if settings.first_gpu_only:
        mp.split_mode = llama_cpp.LLAMA_SPLIT_MODE_NONE
        mp.main_gpu = 0
    elif settings.tensor_split:
        n = llama_cpp.llama_max_devices()
        arr = (ctypes.c_float * n)(*settings.tensor_split[:n])
        keep.append(arr)
        mp.tensor_split = arr
    if settings.n_cpu_moe:
        set_cpu_moe(mp, settings.n_cpu_moe, keep)
    return mp


def context_params(settings: LoadSettings, n_ctx: int, model: Any = None) -> Any:
    """The context parameters; ``model`` (the loaded llama_model) decides embedding pooling."""
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx = n_ctx
    cp.n_batch = settings.batch_size
    cp.n_ubatch = settings.ubatch_size
    cp.n_seq_max = settings.parallel
    cp.n_threads = settings.threads
    cp.n_threads_batch = settings.threads_batch
    cp.flash_attn_type = FLASH_ATTN[settings.flash_attn]
    cp.type_k = CACHE_TYPES[settings.cache_type_k]
    cp.type_v = CACHE_TYPES[settings.cache_type_v]
    cp.no_perf = True
    # llama.cpp's C default gives sliding-window layers a full-size cache (4x the memory for
    # Gemma 3); llama-server and Hearth's planner use the window-sized cache.
    cp.swa_full = False
    if settings.embedding:
        cp.embeddings = True
        cp.pooling_type = pooling_for(settings, model)
    return cp


def pooling_for(settings: LoadSettings, model: Any) -> int:
    """The pooling an embedding context uses: the user's, the model's, else mean.

    OpenAI's embeddings are one vector per input, so "none" (a vector per token, what chat models
    declare) becomes mean pooling unless the user asked for another.
    """
    if settings.pooling:
        return POOLING[settings.pooling]
    declared = -1
    if model is not None:
        buf = ctypes.create_string_buffer(256)
        if llama_cpp.llama_model_meta_val_str(model, b"general.architecture", buf, 256) > 0:
            key = buf.value + b".pooling_type"
            if llama_cpp.llama_model_meta_val_str(model, key, buf, 256) > 0 and buf.value.isdigit():
                declared = int(buf.value)
    return declared if declared in (POOLING["cls"], POOLING["last"], POOLING["mean"]) \
        else POOLING["mean"]


class _BuftOverride(ctypes.Structure):
    # struct llama_model_tensor_buft_override (llama_cpp.py 0.3.36 declares it only in a comment)
    _fields_ = [("pattern", ctypes.c_char_p), ("buft", ctypes.c_void_p)]


def set_cpu_moe(mp: Any, n_cpu_moe: int, keep: list[Any]) -> None:
    """Keep the expert tensors of layers 0..n-1 in CPU memory (llama-server's --n-cpu-moe)."""
    from runner import runtime

    try:
        buft = runtime.cpu_buffer_type()
    except (OSError, AttributeError, runtime.RuntimeUnusable) as exc:
        raise ParamsError("this runner build cannot keep expert tensors on the CPU "
                          f"({exc}).") from exc
    n = min(n_cpu_moe, llama_cpp.llama_max_tensor_buft_overrides() - 1) \
        if hasattr(llama_cpp, "llama_max_tensor_buft_overrides") else n_cpu_moe
    overrides = (_BuftOverride * (n + 1))()
    patterns = [f"blk\\.{il}\\.ffn_(up|down|gate_up|gate)_(ch|)exps".encode() for il in range(n)]
    keep += [overrides, patterns]
    for i, pat in enumerate(patterns):
        overrides[i].pattern = pat
        overrides[i].buft = buft
    overrides[n].pattern = None
    overrides[n].buft = None
    mp.tensor_buft_overrides = ctypes.cast(overrides, ctypes.c_void_p)
