"""Plan a model for the server the way the window plans it (no Qt, no server stack).

The one planning path (app/loading/prepare.py): the runtime chosen for this machine, the
measured corrections of earlier loads, the person's saved offload pins for the model on this
machine, the dry run. One difference: the server plans each model *as if it were alone*. The
resident models' memory is added back to what detection sees free (a GPU's free memory already
excludes what their runners hold), so the plan is the one an empty machine gets; the residency
decision (server/residency.py) then makes room for it.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from app.hardware import HardwareReport, detect_hardware
from app.jobs import CancelToken
from app.loading.confirm import run_probe
from app.loading.drafts import DraftSense
from app.loading.flags import plan_flags
from app.loading.prepare import prepare_load
from app.loading.speed import SpeedSense
from app.loading.tuning import machine_key, model_settings_key, pins_from_json, settings_key
from app.planner.corrections import CorrectionStore
from app.planner.plan import LaunchPlan
from app.planner.types import DeviceBreakdown, Pins, Wishes
from app.runner_client.build import RunnerBuild
from app.runtimes.select import RuntimeSelection

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Planned:
    plan: LaunchPlan
    build: RunnerBuild
    flags: list[str]  # the runner's load flags, without --model
    need: dict[str, int]  # bytes by device key
    capacity: dict[str, int]  # each device's budget with nothing resident
    remembered: bool = False  # its dry run was one an earlier load of the same plan made


def device_key(d: DeviceBreakdown) -> str:
    dev = d.device
    return "cpu" if dev.kind == "cpu" else f"{dev.backend}:{dev.worker or ''}{dev.index}"


# What a resident holds in RAM that detection does not already count as available: its KV cache,
# compute buffers and overhead. Its weights are mapped from the file (mmap) and sit in the page
# cache, which the kernel counts as available memory anyway.
def _ram_anonymous(d: DeviceBreakdown) -> int:
    u = d.usage
    return u.kv + u.compute + u.overhead


def held_by(plan: LaunchPlan) -> dict[str, int]:
    """What a loaded model holds, by device key: its plan's prediction."""
    return {device_key(d): d.usage.total for d in plan.devices if d.usage.total > 0}


def measured_held(plan: LaunchPlan, memory: object) -> dict[str, int]:
    """What a loaded model holds by device key, from its runner's ``/runner/status`` ``memory``
    (llama.cpp's own buffer sizes per device: weights, copies of them it repacked, KV, compute,
    output); empty when the runner said nothing usable. A device the plan does not name is left
    out (the plan's prediction stands for it)."""
    keys = {d.device.llama_name: device_key(d) for d in plan.devices if d.device.llama_name}
    keys.setdefault("CPU", "cpu")
    held: dict[str, int] = {}
    for device, total in _buffers(memory):
        if device in keys:
            held[keys[device]] = held.get(keys[device], 0) + total
    return held


def held_by_device(memory: object) -> dict[str, int]:
    """The same by llama.cpp's device names ("cpu" for its CPU), for a runner loaded without a
    plan of this server's (the window's)."""
    held: dict[str, int] = {}
    for device, total in _buffers(memory):
        key = "cpu" if device == "CPU" else device
        held[key] = held.get(key, 0) + total
    return held


def _buffers(memory: object) -> Iterator[tuple[str, int]]:
    for row in memory if isinstance(memory, list) else []:
        device = row.get("device") if isinstance(row, dict) else None
        if not isinstance(device, str):
            continue
        assert isinstance(row, dict)
        yield device, sum(v for k in ("weights", "kv", "compute", "output", "draft")
                          if isinstance(v := row.get(k), int) and not isinstance(v, bool)
                          and v >= 0)


def added_back(report: HardwareReport, residents: Sequence[LaunchPlan]) -> HardwareReport:
    """``report`` as it would read with none of ``residents`` loaded."""
    if not residents:
        return report
    gpus = []
    for gpu in report.gpus:
        back = sum(d.usage.total for plan in residents for d in plan.gpus
                   if d.device.backend == gpu.backend and d.device.index == gpu.index
                   and not d.device.worker)
        if back:
            gpu = dataclasses.replace(gpu, free=min(gpu.total, gpu.free + back),
                                      used_by_others=max(0, gpu.used_by_others - back))
        gpus.append(gpu)
    ram_back = sum(_ram_anonymous(plan.cpu) for plan in residents)
    memory = dataclasses.replace(report.memory, available=min(
        report.memory.total, report.memory.available + ram_back))
    return dataclasses.replace(report, gpus=gpus, memory=memory)


PinsLookup = Callable[[str, HardwareReport], Pins | None]


def saved_pins(path: str, report: HardwareReport) -> Pins | None:
    """The offload pins the person saved for the model on this machine (the window's offload
    panel), read from the library; None when none (or the library cannot be read)."""
    from app.library.model_settings import ModelSettingsStore
    from app.storage.db import open_database

    try:
        db = open_database()
        try:
            data = ModelSettingsStore(db).get(settings_key(model_settings_key(path),
                                                           machine_key(report)))
        finally:
            db.close()
    except Exception as exc:  # a model still loads with automatic settings
        log.warning("could not read the saved offload settings: %s", exc)
        return None
    pins = pins_from_json(data)
    return pins if pins.pinned() else None


# Plans confirmed by a dry run, by what they were made from: (file, its size and time, the
# plan made without the dry run, as flags). A model loaded again (after an idle unload, say)
# whose plan comes out the same needs no second dry run (0.7-0.9 s of a cold request here).
ProbeMemo = dict[tuple[str, int, float, tuple[str, ...]], "Planned"]


def plan_alone(path: str, residents: Sequence[LaunchPlan], selection: RuntimeSelection, *,
               token: CancelToken, memory_budget: int = 0, context: int | None = None,
               detect: Callable[[], HardwareReport] = detect_hardware,
               pins_for: PinsLookup = saved_pins, probe: bool = True,
               memo: ProbeMemo | None = None, drafts: DraftSense | None = None,
               speed: SpeedSense | None = None) -> Planned:
    """The plan ``path`` gets on this machine with nothing else loaded; raises GGUFError,
    PlannerError, OSError or CancelledError with a sentence to show.

    ``memory_budget`` (bytes, 0: none): what all resident models together may hold in RAM, as
    the person set it in server.json; it lowers the RAM capacity, never raises it.
    ``context``: at least this many tokens (a prompt was longer than the last load's context),
    in place of the planner's choice and any context the person pinned. ``memo``: dry-run
    plans kept between calls (:data:`ProbeMemo`); a plan taken from it keeps the capacity
    measured now. ``drafts``: the models that may draft for it and what was measured of each
    pair (app/loading/drafts.py), as the window's loads use them. ``speed``: the speed
    settings the window's loads measured (app/loading/speed.py)."""
    report = added_back(detect(), residents)
    build = selection.chosen_build(token, lambda: report)
    pins = pins_for(path, report)
    wishes = Wishes(pins=pins) if pins is not None else Wishes()
    if context is not None:
        wishes = dataclasses.replace(wishes, context=context,
                                     pins=dataclasses.replace(wishes.pins, n_ctx=None))

    def planned(with_probe: bool) -> Planned:
        prepared = prepare_load(path, cached=None, detect=lambda: report, wishes=wishes,
                                store=CorrectionStore(), build=build,
                                probe=run_probe if with_probe else None, token=token,
                                drafts=drafts, speed=speed)
        plan = prepared.plan
        capacity = {device_key(d): d.device.budget for d in plan.devices}
        if memory_budget:
            capacity["cpu"] = min(capacity.get("cpu", memory_budget), memory_budget)
        return Planned(plan, prepared.build, plan_flags(plan, path), held_by(plan), capacity)

    if not probe or memo is None:
        return planned(probe)
    quick = planned(False)
    stat = os.stat(path)
    key = (path, stat.st_size, stat.st_mtime, tuple(quick.flags))
    known = memo.get(key)
    if known is not None and known.plan.fits:
        return dataclasses.replace(known, capacity=quick.capacity, remembered=True)
    confirmed = planned(True)
    if confirmed.plan.fits:
        memo[key] = confirmed
    return confirmed


def context_needed(message: str) -> int | None:
    """The prompt's length in tokens from the runner's "too long" sentence
    (runner/engine.py ContextLengthExceeded, tests/unit/test_server_planning.py keeps the two in
    step); None when the sentence says none."""
    match = _PROMPT_LENGTH.search(message)
    return int(match.group(1)) if match else None


_PROMPT_LENGTH = re.compile(r"The prompt is (?:at least )?(\d+) tokens long")


def refusal(plan: LaunchPlan, need: Mapping[str, int], capacity: Mapping[str, int]) -> str:
    """Why the model cannot be loaded even alone: the planner's reasons, or the budget's."""
    if not plan.fits:
        return " ".join(t for t in plan.reason_texts() if t) or "The model does not fit."
    over = [k for k, v in need.items() if v > capacity.get(k, 0)]
    return (f"The model needs {need.get(over[0], 0) / 2**20:.0f} MiB on {over[0]}, more than the "
            f"{capacity.get(over[0], 0) / 2**20:.0f} MiB the server may use there "
            "(memory_budget_mib in server.json).") if over else ""
