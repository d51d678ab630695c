"""Which runtime serves on a machine: ranked from what the machine has, tried in order.

CUDA for NVIDIA with a driver new enough for it, Metal on Apple Silicon, Vulkan for AMD and
Intel GPUs (and for NVIDIA when no CUDA runtime is usable), then the portable CPU runtime, then
the built-in one. A runtime that fails the caller's check is skipped, and the reason is kept.

The same rules serve two callers that see the machine differently: the app (its hardware
report; the check is ``hearth-runner selftest``) and the runner started without ``--runtime``
(a plain look at the machine; the check is the NVIDIA driver, the Vulkan loader and the
bindings' version). Both describe the machine as a :class:`Machine`. Pure: no I/O here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from runner.wire.runtimes import BUILTIN, Runtime, find

CHOSEN = "runtime_chosen"
SKIPPED = "runtime_skipped"
VULKAN_VENDORS = frozenset({"nvidia", "amd", "intel"})


@dataclass(frozen=True)
class Machine:
    """What the choice needs to know about a machine."""

    gpu_vendors: frozenset[str] = frozenset()  # nvidia, amd, intel, apple
    cuda_major: int = 0  # the newest CUDA major every NVIDIA driver here supports; 0: unknown
    apple_silicon: bool = False
    gpu_names: tuple[str, ...] = field(default=(), compare=False)  # only for the reasons' words


@dataclass(frozen=True)
class Note:
    """Why a runtime was chosen or skipped: ``code`` is CHOSEN or SKIPPED, ``params`` hold the
    runtime's name and the why (the app turns them into its plan's reasons)."""

    code: str
    params: dict[str, str]

    def text(self) -> str:
        why = self.params.get("why", "").rstrip(".")
        if self.code == CHOSEN:
            return f"runtime chosen: {self.params['runtime']}" + (f" because {why}" if why else "")
        return f"runtime {self.params['runtime']} not used: {why}"


@dataclass(frozen=True)
class Verdict:
    """A check's answer for one runtime: ``ok`` False skips it, ``why`` saying why; ``ok`` True
    with a ``why`` says what proved it (added to the reason it was chosen)."""

    ok: bool
    why: str = ""


Check = Callable[[Runtime], Verdict | None]  # None: not checked


@dataclass(frozen=True)
class Choice:
    runtime: Runtime
    notes: tuple[Note, ...]  # why each better one was skipped, then why this one (last)

    @property
    def why(self) -> str:
        return self.notes[-1].params.get("why", "") if self.notes else ""


def ranked(machine: Machine, runtimes: Sequence[Runtime]) -> tuple[list[Runtime], list[Note]]:
    """The runtimes worth trying on this machine, best first, and why others were left out."""
    vendors = machine.gpu_vendors
    out: list[Runtime] = []
    notes: list[Note] = []
    usable = [rt for rt in runtimes if not rt.problem]
    for rt in runtimes:
        if rt.problem:
            notes.append(Note(SKIPPED, {"runtime": rt.name, "why": rt.problem}))
    if "nvidia" in vendors:
        driver = machine.cuda_major
        for rt in sorted((r for r in usable if r.backend == "cuda"), key=lambda r: -r.cuda_major):
            if driver and rt.cuda_major > driver:
                notes.append(Note(SKIPPED, {
                    "runtime": rt.name,
                    "why": f"it needs CUDA {rt.cuda_major} (NVIDIA driver {rt.min_driver} or "
                           f"newer) and the driver here supports CUDA {driver}: update the "
                           "NVIDIA driver to use it"}))
            else:
                out.append(rt)
    if machine.apple_silicon:
        out += [r for r in usable if r.backend == "metal"]
    if vendors & VULKAN_VENDORS:
        out += [r for r in usable if r.backend == "vulkan"]
    out += [r for r in usable if r.backend == "cpu"]
    out.append(BUILTIN)
    return out, notes


def choose(machine: Machine, runtimes: Sequence[Runtime], check: Check | None = None,
           wanted: str = "", *, not_installed: str = "", checked_by: str = "its check",
           asked: str = "your choice") -> Choice:
    """The first ranked runtime that passes ``check``.

    ``wanted`` (a name or folder; "" chooses): that runtime first, whatever the machine, but it
    is still skipped when its check fails. The built-in runtime is the last resort and is not
    checked: there is nothing left to fall back to. The words: ``not_installed`` says where to
    look when the wanted one is not installed, ``checked_by`` names the check ("no better
    runtime passed its self-test"), ``asked`` is why the wanted one was chosen.
    """
    order, notes = ranked(machine, runtimes)
    pick = find(runtimes, wanted) if wanted else None
    if wanted and pick is None:
        notes.append(Note(SKIPPED, {"runtime": wanted, "why": "it is not installed" + (
            f" ({not_installed})" if not_installed else "")}))
    elif pick is not None and not pick.problem:  # a broken one is already in the notes
        order = [pick, *(r for r in order if r != pick)]
    for rt in order:
        if rt.builtin:
            why = asked if rt == pick else (
                "the only runtime installed" if len(order) == 1 else
                f"no better runtime passed {checked_by}")
            return Choice(rt, (*notes, Note(CHOSEN, {"runtime": rt.label(), "why": why})))
        verdict = check(rt) if check is not None else None
        if verdict is not None and not verdict.ok:
            notes.append(Note(SKIPPED, {"runtime": rt.name, "why": verdict.why}))
            continue
        why = asked if rt == pick else why_chosen(rt, machine)
        if verdict is not None and verdict.why:
            why += f"; {verdict.why}"
        return Choice(rt, (*notes, Note(CHOSEN, {"runtime": rt.label(), "why": why})))
    raise AssertionError("the built-in runtime ends every order")  # pragma: no cover


def why_chosen(rt: Runtime, machine: Machine) -> str:
    """Why a runtime suits this machine, in words."""
    names = f" ({', '.join(machine.gpu_names)})" if machine.gpu_names else ""
    return {
        "cuda": f"the best for this machine's NVIDIA GPU{names}",
        "metal": "the best for Apple Silicon",
        "vulkan": f"it drives this machine's GPU{names}",
        "cpu": "the portable CPU build, tuned for this processor at run time",
    }.get(rt.backend, "")
