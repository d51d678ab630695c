"""Confirm a plan with the runner's dry run, and correct the plan when the two disagree.

``hearth-runner probe`` takes the plan's own flags and prints what llama.cpp would allocate.
When its KV or compute figure for a device differs from the prediction by more than the
tolerance, the ratio becomes a :class:`Correction` and the planner plans again with it (at most
twice: the dry run is deterministic, so a second disagreement means something else is wrong).

The dry run is a child process that may take a minute: it runs the same program that will serve
(the runner build's), and a cancel token kills it at once when the user unloads or closes.
"""

from __future__ import annotations

import json
import logging
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.i18n import T_, TextError
from app.jobs import CancelToken
from app.loading.flags import plan_args
from app.planner.memory import Correction
from app.planner.plan import LaunchPlan
from app.planner.types import Reason
from app.runner_client.build import run_runner
from app.runner_client.command import RunnerProgram

log = logging.getLogger(__name__)

TOLERANCE = 0.02  # 2 %
SLACK_BYTES = 1 << 20  # differences under 1 MiB are rounding in llama.cpp's MiB log lines
PROBE_TIMEOUT_S = 60.0

# What confirm() calls: the plan's flags in, the dry run's JSON out.
ProbeFn = Callable[[list[str]], dict[str, Any]]


class ProbeUnavailableError(TextError):
    """The runner could not be started or failed; planning continues without the dry run.

    Its message is a clause of the reason the plan shows (``probe_unavailable``): ``str()``
    keeps it an :class:`app.i18n.Text`."""


@dataclass(frozen=True)
class Confirmation:
    """The outcome of checking a plan against the dry run."""

    plan: LaunchPlan
    confirmed: bool
    probe: dict[str, Any] | None
    corrections: dict[str, Correction]
    note: Reason


def run_probe(args: list[str], program: RunnerProgram | Sequence[str] | None = None, *,
              token: CancelToken | None = None,
              timeout: float = PROBE_TIMEOUT_S) -> dict[str, Any]:
    """Run ``<program> probe <args>`` and return its JSON.

    ``program``: the runner build's program (default: the runner with no runtime named). A dry
    run by another llama.cpp build could allocate differently. Cancelling ``token`` kills the dry run
    and raises :class:`~app.jobs.CancelledError`.
    """
    cmd = RunnerProgram.of(program).probe(args)
    try:
        done = run_runner(cmd, timeout=timeout, token=token)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProbeUnavailableError(T_("the runner's dry run could not run ({error})",
                                        error=str(exc))) from exc
    lines = [ln for ln in done.stdout.splitlines() if ln.strip().startswith("{")]
    try:
        data: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    except ValueError:
        data = {}
    if done.returncode != 0 or not data or "error" in data:
        why = data.get("error") or (done.stderr.strip().splitlines()[-1:] or ["no output"])[0]
        raise ProbeUnavailableError(T_("the runner's dry run failed: {why}", why=why))
    return data


def disagreements(plan: LaunchPlan, probe: Mapping[str, Any]) -> dict[str, Correction]:
    """Per device, the correction the dry run asks for (empty when it agrees)."""
    measured = {str(d.get("device")): d for d in probe.get("devices", [])}
    out: dict[str, Correction] = {}
    for b in plan.devices:
        name = b.device.llama_name or b.device.name
        m = measured.get(name)
        if m is None:
            continue
        kv_f = _factor(int(m.get("kv", 0)), b.usage.kv)
        comp_f = _factor(int(m.get("compute", 0)), b.usage.compute)
        if kv_f != 1.0 or comp_f != 1.0:
            out[name] = Correction(kv=kv_f, compute=comp_f)
    return out


def _factor(measured: int, predicted: int) -> float:
    if predicted <= 0 or measured <= 0:
        return 1.0
    if abs(measured - predicted) <= max(SLACK_BYTES, TOLERANCE * predicted):
        return 1.0
    return measured / predicted


def corrections_params(corrections: Mapping[str, Correction]) -> dict[str, Any]:
    """Corrections as a reason's params: ``{"corrections": {device: {kv, compute}}}``."""
    return {"corrections": {dev: {"kv": c.kv, "compute": c.compute}
                            for dev, c in sorted(corrections.items())}}


def confirm(replan: Callable[[Mapping[str, Correction]], LaunchPlan], first: LaunchPlan,
            probe: ProbeFn = run_probe, max_rounds: int = 2) -> Confirmation:
    """Probe ``first``; while the dry run disagrees, re-plan with its corrections.

    A cancelled dry run's CancelledError passes through: there is no plan to go on with.
    """
    current = first
    corrections: dict[str, Correction] = {}
    result: dict[str, Any] | None = None
    for round_no in range(max_rounds + 1):
        try:
            result = probe(plan_args(current))
        except ProbeUnavailableError as exc:
            log.info("plan not confirmed: %s", exc)
            note = Reason("probe_unavailable", {"why": str(exc)})
            return Confirmation(current.explained(note), False, None, corrections, note)
        found = disagreements(current, result)
        if not found:
            note = Reason("probe_matches")
            if round_no:
                note = Reason("probe_corrected", corrections_params(corrections))
            return Confirmation(current.explained(note), True, result, corrections, note)
        for dev, c in found.items():
            old = corrections.get(dev, Correction())
            corrections[dev] = Correction(kv=old.kv * c.kv, compute=old.compute * c.compute)
        if round_no == max_rounds:
            break
        current = replan(corrections)
    note = Reason("probe_disagrees", corrections_params(corrections))
    return Confirmation(current.explained(note), False, result, corrections, note)
