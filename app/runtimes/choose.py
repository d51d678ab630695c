"""Which runtime serves on this machine: ranked from the hardware report, tried in order.

CUDA for NVIDIA with a driver new enough for it, Metal on Apple Silicon, Vulkan for AMD and
Intel GPUs (and for NVIDIA when no CUDA runtime is usable), then the portable CPU runtime, then
the built-in one. A runtime whose self-test failed is skipped and the reason is kept for the
plan's reasons. The rules are the runner's too (:mod:`runner.wire.choose`: a runner started
without ``--runtime`` chooses by them from its own look at the machine); here the machine is
the hardware report's and the check is the self-test. Pure: the self-test results come in as a
lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.hardware.report import HardwareReport
from app.i18n import T_, Text
from app.planner.types import Reason
from app.runtimes.catalog import Runtime
from app.runtimes.selftest import SelftestResult
from runner.wire import choose as rules


@dataclass(frozen=True)
class RuntimeChoice:
    runtime: Runtime
    reasons: tuple[Reason, ...]  # why this one, and why each better one was skipped

    @property
    def args(self) -> tuple[str, ...]:
        return self.runtime.args()


def _cuda_major(report: HardwareReport) -> int:
    """The newest CUDA major every NVIDIA driver here supports (0: none known)."""
    majors = []
    for g in report.gpus:
        if g.vendor.lower() == "nvidia" and g.cuda_driver_version:
            try:
                majors.append(int(str(g.cuda_driver_version).split(".")[0]))
            except ValueError:
                continue
    return min(majors) if majors else 0


def machine_of(report: HardwareReport) -> rules.Machine:
    """The hardware report as the choice reads it."""
    vendors = frozenset(g.vendor.lower() for g in report.gpus)
    apple_silicon = report.os.name == "macOS" and any(g.unified and g.vendor.lower() == "apple"
                                                      for g in report.gpus)
    return rules.Machine(vendors, _cuda_major(report), apple_silicon,
                         tuple(g.name for g in report.gpus))


# The runner's rules (runner/wire/choose.py) say why in English; the fixed sentences among
# them, marked here so the window shows them translated.
_WHYS = {
    "the only runtime installed": T_("the only runtime installed"),
    "no better runtime passed its self-test": T_("no better runtime passed its self-test"),
    "your choice": T_("your choice"),
    "the best for Apple Silicon": T_("the best for Apple Silicon"),
    "the portable CPU build, tuned for this processor at run time":
        T_("the portable CPU build, tuned for this processor at run time"),
}


def _reasons(notes: Sequence[rules.Note]) -> tuple[Reason, ...]:
    out = []
    for n in notes:
        params = dict(n.params)
        why = params.get("why")
        if isinstance(why, str) and not isinstance(why, Text) and why in _WHYS:
            params["why"] = _WHYS[why]
        out.append(Reason(n.code, params))
    return tuple(out)


def ranked(report: HardwareReport, runtimes: Sequence[Runtime],
           ) -> tuple[list[Runtime], list[Reason]]:
    """The runtimes worth trying on this machine, best first, and why others were left out."""
    order, notes = rules.ranked(machine_of(report), runtimes)
    return order, list(_reasons(notes))


def choose(report: HardwareReport, runtimes: Sequence[Runtime],
           selftest: Callable[[Runtime], SelftestResult | None],
           wanted: str = "") -> RuntimeChoice:
    """The first ranked runtime that passes its self-test (``selftest`` None: not tested).

    ``wanted`` (the settings or ``--runtime``): that runtime first, whatever the hardware, but
    it is still skipped when its self-test fails. The built-in runtime is the last resort and
    is used untested: there is nothing left to fall back to.
    """
    def check(rt: Runtime) -> rules.Verdict | None:
        result = selftest(rt)
        if result is None:
            return None
        if not result.ok:
            return rules.Verdict(False, result.why_not())
        return rules.Verdict(True, f"its self-test passed ({result.summary()})")

    choice = rules.choose(machine_of(report), runtimes, check, wanted,
                          not_installed="Settings lists the runtimes",
                          checked_by="its self-test", asked="your choice")
    return RuntimeChoice(choice.runtime, _reasons(choice.notes))
