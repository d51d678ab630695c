"""The fallback ladder: what to try next when a planned load still fails.

Each call returns the next, strictly smaller plan or None. Every step but "less context" is taken
at most once and the context only ever shrinks, so a retry loop built on this always ends.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Literal

from app.planner.memory import QUANTIZED_KV, predict
from app.planner.plan import LaunchPlan
from app.planner.types import DeviceBreakdown, Reason, Settings

log = logging.getLogger(__name__)

FailureKind = Literal["oom", "device", "worker_lost"]
CTX_FLOOR = 2048  # below this a chat is barely usable; the ladder goes to the CPU instead
LAYER_STEP = 0.25  # "fewer layers" drops a quarter of the offloaded ones


def next_fallback(plan: LaunchPlan, failure_kind: str = "oom") -> LaunchPlan | None:
    """The plan to retry with after ``plan`` failed, or None when nothing is left to try.

    ``failure_kind``: "oom" (out of memory anywhere) or "device" (a GPU error: go straight to the
    CPU).
    """
    s = plan.settings
    done = set(plan.fallback_steps)
    model = plan.model
    on_gpu = s.n_gpu_layers != 0 and bool(plan.gpus)
    pins = plan.wishes.pins

    if failure_kind == "worker_lost":
        return _without_workers(plan)
    if failure_kind == "device":
        if not on_gpu:
            return None
        return _step(plan, "cpu", replace(s, n_gpu_layers=0, n_cpu_moe=0, tensor_split=()),
                     Reason("fallback_cpu", {"cause": "device"}))

    if s.n_ctx > CTX_FLOOR and not pins.n_ctx:
        ctx = max(CTX_FLOOR, (s.n_ctx // 2) // 256 * 256)
        return _step(plan, f"ctx:{ctx}", replace(s, n_ctx=ctx),
                     Reason("fallback_ctx", {"n_ctx": ctx, "was": s.n_ctx}))
    if ("kv" not in done and s.cache_type_k not in QUANTIZED_KV and s.flash_attn == "on"
            and not pins.cache_type_k and not pins.cache_type_v):
        return _step(plan, "kv", replace(s, cache_type_k="q8_0", cache_type_v="q8_0"),
                     Reason("fallback_kv", {"cache_type": "q8_0"}))
    if "layers" not in done and on_gpu and not pins.n_gpu_layers:
        ngl = _resolved_ngl(s, model.n_layer)
        fewer = max(0, ngl - max(1, int(ngl * LAYER_STEP)))
        split = _scale_split(s.tensor_split, fewer)
        return _step(plan, "layers", replace(s, n_gpu_layers=fewer, tensor_split=split),
                     Reason("fallback_layers", {"n_gpu_layers": fewer, "was": ngl}))
    if ("experts" not in done and on_gpu and model.is_moe and s.n_cpu_moe < model.n_layer
            and pins.n_cpu_moe is None):
        return _step(plan, "experts", replace(s, n_cpu_moe=model.n_layer),
                     Reason("fallback_experts"))
    if on_gpu and not pins.n_gpu_layers:
        return _step(plan, "cpu", replace(s, n_gpu_layers=0, n_cpu_moe=0, tensor_split=()),
                     Reason("fallback_cpu", {"cause": "oom"}))
    return None


def _step(plan: LaunchPlan, name: str, s: Settings, reason: Reason) -> LaunchPlan:
    kind = name.split(":")[0]
    if kind in plan.fallback_steps and kind != "ctx":
        raise AssertionError(f"fallback step {kind} repeated")  # the ladder must never loop
    devices = [d.device for d in plan.devices]
    usages = predict(plan.model, s, devices)
    breakdown = tuple(DeviceBreakdown(d, u) for d, u in zip(devices, usages, strict=True))
    log.info("fallback: %s %s", reason.code, dict(reason.params))
    return replace(plan, settings=s, devices=breakdown, reasons=(*plan.reasons, reason),
                   fallback_steps=(*plan.fallback_steps, kind))


def _without_workers(plan: LaunchPlan) -> LaunchPlan | None:
    """The plan on this computer alone: the layers the workers held go to its RAM (if that does
    not fit, the next failure steps down as usual)."""
    if "local" in plan.fallback_steps:
        return None
    kept = [d for d in plan.devices if not d.device.worker]
    lost = [d for d in plan.devices if d.device.worker]
    if not lost:
        return None
    s = plan.settings
    gpus = [d for d in kept if d.device.kind == "gpu"]
    counts = [d.usage.layers for d in gpus]
    ngl = sum(counts)
    split = tuple(float(c) for c in counts) if len(counts) > 1 and ngl else ()
    s = replace(s, n_gpu_layers=ngl, tensor_split=split, n_cpu_moe=s.n_cpu_moe if ngl else 0)
    devices = [d.device for d in kept]
    usages = predict(plan.model, s, devices)
    breakdown = tuple(DeviceBreakdown(d, u) for d, u in zip(devices, usages, strict=True))
    workers = list(dict.fromkeys(d.device.worker for d in lost))
    reason = Reason("fallback_local", {"workers": workers})
    log.info("fallback: %s %s", reason.code, dict(reason.params))
    return replace(plan, settings=s, devices=breakdown, reasons=(*plan.reasons, reason),
                   fallback_steps=(*plan.fallback_steps, "local"))


def _resolved_ngl(s: Settings, n_layer: int) -> int:
    return n_layer + 1 if s.n_gpu_layers < 0 or s.n_gpu_layers > n_layer + 1 else s.n_gpu_layers


def _scale_split(split: tuple[float, ...], ngl: int) -> tuple[float, ...]:
    # Drop layers from the first GPUs (llama.cpp offloads from the back): keep the proportions
    # of the remaining count simple by recomputing from the end.
    if len(split) < 2:
        return split
    counts = [int(x) for x in split]
    excess = sum(counts) - ngl
    for i in range(len(counts)):
        take = min(excess, counts[i])
        counts[i] -= take
        excess -= take
    return tuple(float(c) for c in counts) if sum(counts) else ()
