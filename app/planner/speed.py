"""Speed settings tuned once per model and computer: what the first load measures and what later
loads use.

Flash attention, the KV cache's type and the micro-batch change how fast a model reads and
writes, not what it writes, and which is fastest depends on the backend, the processor and the
model's shapes (flash attention is a large win on most GPUs and can lose on a CPU). The plan's
defaults (on, f16, 512) are a guess; the runner measures the alternatives this plan has memory
for in the background once the model is ready (runner/speed_trial.py, ``--tune-speed``), and
:class:`SpeedMemory` keeps what it found per model, runtime, computer and placement. A later plan
starts from it (``Wishes.tuned``) unless the person pinned a setting, and leaves it out where it
would cost context or GPU layers (app/loading/prepare.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.gguf.model import ModelInfo
from app.planner.memory import QUANTIZED_KV, predict_counts
from app.planner.plan import LaunchPlan, within_budget
from app.planner.types import Settings, Tuned, Usage
from app.storage.atomic import keep_json_entries, read_json_entries

FILE_NAME = "speed-measurements.json"
SCHEMA = 1
MAX_ENTRIES = 200
# The runner's trial context: its longest prompt (2,048), the reply and one more, in 256s.
TRIAL_CTX = 2304
UBATCHES = (256, 512, 1024, 2048)  # micro-batches worth a measurement
CPU_MAX_UBATCH = 1024  # beyond it a CPU gains nothing and the compute buffer grows


@dataclass(frozen=True)
class Verdict:
    """What a past load measured: the settings it found fastest (None: it could not tell, and
    ``why`` says why)."""

    tuned: Tuned | None
    why: str = ""


def placement(result: LaunchPlan) -> str:
    """Where the layers run: the fastest settings on a GPU are not those on the CPU."""
    ngl, top = result.settings.n_gpu_layers, result.model.n_layer + 1
    return "gpu" if ngl >= top else "cpu" if ngl == 0 else "split"


def speed_key(model: ModelInfo, runtime: str, computer: str, where: str) -> str:
    """Which measurements compare: this file (by name and size), this runner build, this
    computer and where its layers run."""
    return f"{os.path.basename(model.path or model.name)}:{model.total_bytes}|{runtime}|" \
           f"{computer}|{where}"


class SpeedMemory:
    """The runner's speed trials, in ``<cache>/speed-measurements.json``; losing it costs only a
    measurement at the next load."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from app.paths import cache_dir

            path = cache_dir() / FILE_NAME
        self.path = path

    def lookup(self, key: str) -> Verdict | None:
        for e in reversed(read_json_entries(self.path, SCHEMA)):
            if e.get("key") != key:
                continue
            chosen = e.get("chosen")
            tuned = _tuned(chosen, e.get("gain")) if isinstance(chosen, dict) else None
            if tuned is None and not e.get("why"):
                continue  # unreadable: measure again
            return Verdict(tuned, str(e.get("why") or ""))
        return None

    def record(self, key: str, trial: Mapping[str, Any]) -> Verdict | None:
        """Keep what ``/runner/status`` ``speed_trial`` says once its state is done."""
        if trial.get("state") != "done":
            return None
        chosen = trial.get("chosen")
        tuned = _tuned(chosen, trial.get("gain")) if isinstance(chosen, dict) else None
        why = str(trial.get("why") or "")[:200]
        if tuned is None and not why:
            return None
        entries = [e for e in read_json_entries(self.path, SCHEMA) if e.get("key") != key]
        entries.append({"key": key, "chosen": chosen if tuned else None,
                        "gain": tuned.gain if tuned else None, "why": why, "at": time.time()})
        keep_json_entries(self.path, SCHEMA, entries, MAX_ENTRIES, "speed measurement")
        return Verdict(tuned, why)


def _tuned(chosen: Mapping[str, Any], gain: Any) -> Tuned | None:
    fa, kv = chosen.get("flash_attn"), chosen.get("cache_type")
    ub, nb = chosen.get("n_ubatch"), chosen.get("n_batch")
    if fa not in ("on", "off") or kv not in ("f16", *QUANTIZED_KV) or \
            not isinstance(gain, (int, float)) or isinstance(gain, bool) or gain <= 0 or \
            (kv in QUANTIZED_KV and fa != "on"):  # llama.cpp needs flash attention for it
        return None
    if not (isinstance(ub, int) and isinstance(nb, int)) or isinstance(ub, bool) or \
            isinstance(nb, bool) or not 1 <= ub <= nb <= 8192:
        return None
    return Tuned(flash_attn=fa, cache_type=kv, n_ubatch=ub, n_batch=nb, gain=float(gain))


def tune_spec(result: LaunchPlan) -> str:
    """The ``--tune-speed`` candidates for ``result``: each setting the person did not pin, at
    the values this plan has memory for, both to load with later and to measure now in a small
    context beside the model; "" when there is nothing to measure."""
    s, pins = result.settings, result.wishes.pins
    if not _room(result, s):  # no trial context fits beside the model at all
        return ""
    fa: list[str] = []
    kv: list[str] = []
    ub: list[int] = []
    if not pins.flash_attn:
        other = "off" if s.flash_attn == "on" else "on"
        if other == "on" or s.cache_type_v not in QUANTIZED_KV:
            cand = replace(s, flash_attn=other)
            if _room(result, cand):
                fa.append(other)
    if not (pins.cache_type_k or pins.cache_type_v) and s.cache_type_k == s.cache_type_v \
            and result.wishes.allow_quantized_kv and s.flash_attn == "on":
        other = "q8_0" if s.cache_type_k == "f16" else "f16"
        if _room(result, replace(s, cache_type_k=other, cache_type_v=other)):
            kv.append(other)
    if not (pins.n_ubatch or pins.n_batch):
        most = UBATCHES[-1] if result.gpus and s.n_gpu_layers else CPU_MAX_UBATCH
        for x in UBATCHES:
            if x != s.n_ubatch and x <= most and \
                    _room(result, replace(s, n_ubatch=x, n_batch=max(s.n_batch, x))):
                ub.append(x)
    if not (fa or kv or ub):
        return ""
    parts = [f"{name}={','.join(str(v) for v in values)}"
             for name, values in (("fa", fa), ("kv", kv), ("ub", ub)) if values]
    return ";".join(parts)


def _room(result: LaunchPlan, cand: Settings) -> bool:
    """Whether the plan's devices hold ``cand`` for good (its memory over the plan's, by the
    same prediction) and, while the model serves with the plan's settings, a trial context of
    ``cand`` beside it."""
    m, s = result.model, result.settings
    devices = [b.device for b in result.devices]
    counts = [b.usage.layers for b in result.gpus]
    base = predict_counts(m, s, devices, counts)
    later = predict_counts(m, cand, devices, counts)
    trial = predict_counts(m, replace(cand, n_ctx=TRIAL_CTX, parallel=1), devices, counts)
    planned = [b.usage for b in result.devices]
    grown = [_plus(u, a.total - b.total) for u, a, b in zip(planned, later, base, strict=True)]
    beside = [_plus(u, t.kv + t.compute) for u, t in zip(planned, trial, strict=True)]
    return within_budget(devices, grown) and within_budget(devices, beside)


def _plus(u: Usage, extra: int) -> Usage:
    return replace(u, overhead=u.overhead + max(0, extra))


def applied(base: Settings, tuned: Tuned) -> bool:
    """Whether ``tuned`` changes anything of ``base``."""
    return (base.flash_attn, base.cache_type_k, base.cache_type_v, base.n_ubatch) != \
        (tuned.flash_attn, tuned.cache_type, tuned.cache_type, tuned.n_ubatch)


def describe(tuned: Tuned) -> dict[str, Any]:
    """A reason's parameters for ``tuned``."""
    return {"flash_attn": tuned.flash_attn, "cache_type": tuned.cache_type,
            "n_ubatch": tuned.n_ubatch, "gain": round(tuned.gain, 2)}

