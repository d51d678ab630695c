"""A load's speed settings as this computer measured them (app/planner/speed.py keeps the
verdicts): the first load of a model asks the runner to measure (``--tune-speed``), later loads
plan from what it found, unless that would cost context or GPU layers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from app.planner.plan import LaunchPlan
from app.planner.speed import (
    SpeedMemory,
    Verdict,
    applied,
    describe,
    placement,
    speed_key,
    tune_spec,
)
from app.planner.types import Reason, Wishes


@dataclass(frozen=True)
class SpeedSense:
    """Where a load's speed settings come from: ``memory`` holds what earlier loads measured,
    ``computer`` names this machine (app/loading/drafts.py this_computer). ``measure``: a load
    with nothing measured asks its runner to measure (the model server does not: other models
    may hold the memory a trial context needs beside it)."""

    memory: SpeedMemory
    computer: str = ""
    measure: bool = True

    @classmethod
    def here(cls, measure: bool = True) -> SpeedSense:
        """This computer's verdicts, in the cache folder."""
        from app.loading.drafts import this_computer

        return cls(SpeedMemory(), this_computer(), measure)


def lookup(result: LaunchPlan, sense: SpeedSense, runtime: str) -> Verdict | None:
    return sense.memory.lookup(speed_key(result.model, runtime, sense.computer,
                                         placement(result)))


def with_tuned(result: LaunchPlan, verdict: Verdict | None, wishes: Wishes,
               plan_with: Callable[[Wishes], LaunchPlan]) -> tuple[Wishes, Reason | None]:
    """The wishes to plan with and the reason to give, for a plan ``result`` made without a
    measurement: the measured settings where they change the plan and cost it neither GPU
    layers nor context (``plan_with`` plans with other wishes), else the plan's own."""
    if verdict is None:
        return wishes, None
    if verdict.tuned is None:
        return wishes, Reason("speed_unmeasured", {"why": verdict.why})
    if not applied(result.settings, verdict.tuned):
        return wishes, Reason("speed_defaults", {})
    tuned = replace(wishes, tuned=verdict.tuned)
    other = plan_with(tuned)
    if other.fits and other.settings.n_gpu_layers >= result.settings.n_gpu_layers and \
            other.settings.n_ctx >= result.settings.n_ctx:
        return tuned, Reason("speed_tuned", describe(verdict.tuned))
    return wishes, Reason("speed_left_out", describe(verdict.tuned))


def to_measure(result: LaunchPlan) -> LaunchPlan:
    """``result`` asking the runner to measure its speed settings, with the reason; as it is
    when nothing fits to measure."""
    spec = tune_spec(result) if result.fits else ""
    if not spec:
        return result
    return replace(result, tune=spec).explained(Reason("speed_measuring", {}))


def record_speed(plan: LaunchPlan, sense: SpeedSense | None, runtime: str | None,
                 status: Mapping[str, Any]) -> Verdict | None:
    """Keep what the runner measured of ``plan``'s speed settings (``/runner/status``), once it
    has finished; None while it measures (or measured nothing)."""
    trial = status.get("speed_trial")
    if sense is None or runtime is None or not plan.tune or not isinstance(trial, dict):
        return None
    return sense.memory.record(speed_key(plan.model, runtime, sense.computer, placement(plan)),
                               trial)


def measuring(status: Mapping[str, Any]) -> bool:
    """Whether the runner is still measuring (or waiting to)."""
    trial = status.get("speed_trial")
    return isinstance(trial, dict) and trial.get("state") != "done"
