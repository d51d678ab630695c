"""Measure, then remember: after a load, what llama.cpp allocated against what the plan predicted.

The runner's ``/runner/status`` reports the bytes per device of the real load. They go into the
planner's :class:`~app.planner.corrections.CorrectionStore`, keyed by model, runner build and
device, so the next plan for the same model on the same build starts from measured figures. The
build's key is the :class:`~app.runner_client.build.RunnerBuild`'s, known before the load from
``hearth-runner devices``: the plan that reads the store and the load that writes it agree on it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from app.planner.corrections import CorrectionStore, Measurement, model_key
from app.planner.memory import predict
from app.planner.plan import LaunchPlan
from app.planner.types import Settings
from app.runner_client import build as runner_build
from app.runner_client.build import RunnerBuild

log = logging.getLogger(__name__)


def build_key(build: Mapping[str, Any]) -> str:
    """The build key of ``/runner/status``'s ``build`` (the same as the devices list gives)."""
    return runner_build.build_key(str(build.get("llama_cpp_python", "") or ""),
                                  bool(build.get("gpu_offload")),
                                  str(build.get("system_info", "")))


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


def record_load(store: CorrectionStore, build: RunnerBuild, model_path: str,
                plan: LaunchPlan, status: Mapping[str, Any]) -> list[Measurement]:
    """Remember what this load measured, under ``build``'s key; returns what was recorded.

    A build that could not be asked before the load is named by what the runner reports now.
    """
    key = build.key
    reported_key = build_key(status.get("build") or {})
    if key is None:
        key = reported_key
    elif key != reported_key:
        # Two views of one build (devices before the load, status after) that disagree mean the
        # runner changed under us; the plan was made for ``build``, so its key stays.
        log.info("runner build %s reported itself as %s", key, reported_key)
    reported = status.get("settings") or {}
    if not settings_match(plan.settings, reported):
        log.info("not recording measurements: the runner's settings differ from the plan's")
        return []
    found = measurements(plan, status.get("memory") or [])
    if found:
        store.record(model_key(model_path), key, plan.settings.to_json(), found)
    return found
