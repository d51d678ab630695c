"""Plan a load for the window: read the header, plan with what earlier loads measured, confirm.

Runs off the GUI thread (it reads the file, may detect hardware and runs the dry run). It is
``hearth plan`` without the printing, plus the stored corrections of this model on this runner
build.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from app.gguf import read_model
from app.loading.measure import BuildMemo
from app.planner.confirm import ProbeFn, confirm
from app.planner.corrections import CorrectionStore, model_key
from app.planner.memory import Correction
from app.planner.plan import LaunchPlan, plan
from app.planner.types import Wishes

if TYPE_CHECKING:
    from app.hardware import HardwareReport

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prepared:
    """A plan ready to start, and the hardware report it was made for."""

    plan: LaunchPlan
    hardware: HardwareReport
    detected: bool  # the report was detected for this plan (there was no cached one)
    stored: dict[str, Correction]  # the measured corrections the plan applied


def combine(base: Mapping[str, Correction],
            extra: Mapping[str, Correction]) -> dict[str, Correction]:
    """``extra`` on top of ``base``: the dry run's factors are relative to a prediction that
    already had the stored ones applied, so per device they multiply."""
    out = dict(base)
    for dev, c in extra.items():
        b = out.get(dev, Correction())
        out[dev] = Correction(kv=b.kv * c.kv, compute=b.compute * c.compute,
                              compute_extra=b.compute_extra + c.compute_extra)
    return out


def plan_flags(p: LaunchPlan, model_path: str) -> list[str]:
    """The plan's runner flags without ``--model``: the launch command names the model itself."""
    args = p.runner_args(model_path)
    out: list[str] = []
    i = 0
    while i < len(args):
        if args[i] in ("--model", "-m"):
            i += 2
            continue
        out.append(args[i])
        i += 1
    return out


def with_fresh_memory(report: HardwareReport) -> HardwareReport:
    """The cached report with RAM measured now: free RAM changes by gigabytes as programs run,
    and it is cheap to read (GPU memory would need the drivers again: the Hardware tab's
    Refresh does that)."""
    from app.hardware.memory import detect_memory

    try:
        return replace(report, memory=detect_memory())
    except Exception as exc:  # the cached figure is still a fair estimate
        log.info("could not refresh the memory figures: %s", exc)
        return report


def _describe(stored: Mapping[str, Correction]) -> str:
    return "; ".join(f"{dev}: KV ×{c.kv:.2f}, compute ×{c.compute:.2f}"
                     for dev, c in sorted(stored.items()))


def prepare_load(model_path: str, *, cached: HardwareReport | None,
                 detect: Callable[[], HardwareReport], wishes: Wishes,
                 store: CorrectionStore | None, memo: BuildMemo | None, program: str,
                 probe: ProbeFn | None) -> Prepared:
    """Plan ``model_path``. Raises GGUFError / PlannerError / OSError with a sentence to show."""
    model = read_model(model_path)
    build = memo.get(program) if memo is not None else None
    stored: dict[str, Correction] = {}
    if store is not None and build is not None:
        stored = {k: v for k, v in store.corrections(model_key(model_path), build).items()
                  if not v.is_identity()}
    hardware = detect() if cached is None else with_fresh_memory(cached)

    note = ""
    if stored:
        note = ("Memory figures corrected by what an earlier load of this model measured "
                f"({_describe(stored)}).")

    def replan(extra: Mapping[str, Correction]) -> LaunchPlan:
        p = plan(model, hardware, wishes, combine(stored, extra))
        return replace(p, reasons=[*p.reasons, note]) if note else p

    result = replan({})
    if probe is not None and result.fits:
        result = confirm(replan, result, probe).plan
    return Prepared(result, hardware, cached is None, stored)
