"""Which runtime serves on this machine: ranked from the hardware report, tried in order.

CUDA for NVIDIA with a driver new enough for it, Metal on Apple Silicon, Vulkan for AMD and
Intel GPUs (and for NVIDIA when no CUDA runtime is usable), then the portable CPU runtime, then
the built-in one. A runtime whose self-test failed is skipped and the reason is kept for the
plan's reasons. Pure: the self-test results come in as a lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.hardware.report import HardwareReport
from app.planner.types import Reason
from app.runtimes.catalog import BUILTIN, Runtime, find
from app.runtimes.selftest import SelftestResult


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


def ranked(report: HardwareReport, runtimes: Sequence[Runtime],
           ) -> tuple[list[Runtime], list[Reason]]:
    """The runtimes worth trying on this machine, best first, and why others were left out."""
    vendors = {g.vendor.lower() for g in report.gpus}
    apple_silicon = report.os.name == "macOS" and any(g.unified and g.vendor.lower() == "apple"
                                                      for g in report.gpus)
    out: list[Runtime] = []
    notes: list[Reason] = []
    usable = [rt for rt in runtimes if not rt.problem]
    for rt in runtimes:
        if rt.problem:
            notes.append(Reason("runtime_skipped", {"runtime": rt.name, "why": rt.problem}))
    if "nvidia" in vendors:
        driver = _cuda_major(report)
        for rt in sorted((r for r in usable if r.backend == "cuda"), key=lambda r: -r.cuda_major):
            if driver and rt.cuda_major > driver:
                notes.append(Reason("runtime_skipped", {
                    "runtime": rt.name,
                    "why": f"it needs CUDA {rt.cuda_major} (NVIDIA driver {rt.min_driver} or "
                           f"newer) and the driver here supports CUDA {driver}: update the "
                           "NVIDIA driver to use it"}))
            else:
                out.append(rt)
    if apple_silicon:
        out += [r for r in usable if r.backend == "metal"]
    if vendors & {"nvidia", "amd", "intel"}:
        out += [r for r in usable if r.backend == "vulkan"]
    out += [r for r in usable if r.backend == "cpu"]
    out.append(BUILTIN)
    return out, notes


def choose(report: HardwareReport, runtimes: Sequence[Runtime],
           selftest: Callable[[Runtime], SelftestResult | None],
           wanted: str = "") -> RuntimeChoice:
    """The first ranked runtime that passes its self-test (``selftest`` None: not tested).

    ``wanted`` (the settings or ``--runtime``): that runtime first, whatever the hardware, but
    it is still skipped when its self-test fails. The built-in runtime is the last resort and
    is used untested: there is nothing left to fall back to.
    """
    order, notes = ranked(report, runtimes)
    pick = find(runtimes, wanted) if wanted else None
    if wanted and pick is None:
        notes.append(Reason("runtime_skipped", {
            "runtime": wanted, "why": "it is not installed (Settings lists the runtimes)"}))
    elif pick is not None and not pick.problem:  # a broken one is already in the notes
        order = [pick, *(r for r in order if r != pick)]
    for rt in order:
        if rt.builtin:
            why = "your choice" if rt == pick else (
                "the only runtime installed" if len(order) == 1 else "no better runtime passed "
                "its self-test")
            return RuntimeChoice(rt, (*notes, Reason("runtime_chosen", {
                "runtime": rt.label(), "why": why})))
        result = selftest(rt)
        if result is not None and not result.ok:
            notes.append(Reason("runtime_skipped", {"runtime": rt.name, "why": result.why_not()}))
            continue
        why = "your choice" if rt == pick else _why(rt, report)
        if result is not None:
            why += f"; its self-test passed ({result.summary()})"
        return RuntimeChoice(rt, (*notes, Reason("runtime_chosen", {"runtime": rt.label(),
                                                                    "why": why})))
    raise AssertionError("the built-in runtime ends every order")  # pragma: no cover


def _why(rt: Runtime, report: HardwareReport) -> str:
    names = ", ".join(g.name for g in report.gpus) or "no GPU"
    return {
        "cuda": f"the best for this machine's NVIDIA GPU ({names})",
        "metal": "the best for Apple Silicon",
        "vulkan": f"it drives this machine's GPU ({names})",
        "cpu": "the portable CPU build, tuned for this processor at run time",
    }.get(rt.backend, "")
