"""Measure, then remember: after a load, what llama.cpp allocated against what the plan predicted.

The runner's ``/runner/status`` reports the bytes per device of the real load and which build it
is. Both go into the planner's :class:`~app.planner.corrections.CorrectionStore`, keyed by model,
build and device, so the next plan for the same model on the same build starts from measured
figures. The build is only known once a runner has answered, so the last one seen per runner
program is remembered too: the next plan needs it *before* it starts a runner.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from app.planner.corrections import CorrectionStore, Measurement, model_key
from app.planner.memory import predict
from app.planner.plan import LaunchPlan
from app.planner.types import Settings

log = logging.getLogger(__name__)

BUILDS_FILE = "runner-builds.json"


def build_key(build: Mapping[str, Any]) -> str:
    """A short, stable name for a runner build from ``/runner/status``'s ``build``.

    The version and the GPU support tell builds apart; the system info (compiled CPU features,
    backends) is hashed so two CPU builds with different SIMD sets stay apart without a long key.
    """
    version = str(build.get("llama_cpp_python", "unknown"))
    kind = "gpu" if build.get("gpu_offload") else "cpu"
    info = str(build.get("system_info", ""))
    digest = hashlib.sha256(info.encode("utf-8")).hexdigest()[:10]
    return f"llama-cpp-python-{version}-{kind}-{digest}"


def program_key(program: Sequence[str]) -> str:
    """Which runner a build belongs to: the command that starts it."""
    return " ".join(program)


class BuildMemo:
    """The last build key each runner program reported, in ``<cache>/runner-builds.json``."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from app.paths import cache_dir

            path = cache_dir() / BUILDS_FILE
        self.path = path

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("runner build memo unreadable, starting afresh: %s", exc)
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}

    def get(self, program: str) -> str | None:
        return self._load().get(program)

    def put(self, program: str, build: str) -> None:
        data = self._load()
        if data.get(program) == build:
            return
        data[program] = build
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1), "utf-8")
        os.replace(tmp, self.path)  # a crash never leaves half a file


def settings_match(settings: Settings, reported: Mapping[str, Any]) -> bool:
    """Did the runner load with the plan's settings? (The user's own runner flags come last on
    the command line and can override the plan; a measurement of other settings than the ones
    predicted would teach the planner a wrong factor.)"""
    pairs = (
        ("ctx_size", settings.n_ctx),
        ("n_gpu_layers", settings.n_gpu_layers),
        ("ubatch_size", settings.n_ubatch),
        ("flash_attn", settings.flash_attn),
        ("cache_type_k", settings.cache_type_k),
        ("cache_type_v", settings.cache_type_v),
        ("n_cpu_moe", settings.n_cpu_moe),
    )
    return all(key in reported and reported[key] == want for key, want in pairs)


def measurements(plan: LaunchPlan, memory: Sequence[Mapping[str, Any]]) -> list[Measurement]:
    """Measured against predicted bytes per device, for the devices the plan has.

    The prediction is made again *without* corrections: the store keeps measured ÷ raw
    prediction, and the planner multiplies the raw prediction by it. Comparing with an already
    corrected figure would store a factor near 1 and undo the correction on the next plan.
    """
    devices = [b.device for b in plan.devices]
    raw = predict(plan.model, plan.settings, devices)
    by_name = {(d.llama_name or d.name): u for d, u in zip(devices, raw, strict=True)}
    out: list[Measurement] = []
    for entry in memory:
        name = str(entry.get("device", ""))
        usage = by_name.get(name)
        if usage is None:
            continue
        out.append(Measurement(
            device=name,
            predicted_kv=usage.kv,
            predicted_compute=usage.compute,
            measured_kv=int(entry.get("kv", 0) or 0),
            measured_compute=int(entry.get("compute", 0) or 0),
        ))
    return out


def record_load(store: CorrectionStore, memo: BuildMemo, program: str, model_path: str,
                plan: LaunchPlan, status: Mapping[str, Any]) -> list[Measurement]:
    """Remember the runner's build and what this load measured; returns what was recorded."""
    build = build_key(status.get("build") or {})
    memo.put(program, build)
    reported = status.get("settings") or {}
    if not settings_match(plan.settings, reported):
        log.info("not recording measurements: the runner's settings differ from the plan's")
        return []
    found = measurements(plan, status.get("memory") or [])
    if found:
        store.record(model_key(model_path), build, plan.settings.to_json(), found)
    return found
