"""Plan a load: read the header, plan for what the runner build drives with what earlier loads
measured, confirm with the dry run.

The one planning path: the window's loader (app/services/loader.py) runs it off the GUI thread and
``hearth plan`` (app/cli/plan.py) runs it on the terminal, so the two never disagree. It takes
the runner build explicitly (app/runner_client/build.py): the GPUs it plans for, the dry run's
program and the key of the stored measurements all come from that one value.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.gguf import GGUFError, ModelInfo, read_model
from app.gguf.projector import read_projector
from app.hardware.merge import merge_runner_info
from app.jobs import CancelToken
from app.library.projectors import ProjectorChoices
from app.loading.confirm import SLACK_BYTES, TOLERANCE, confirm, corrections_params
from app.loading.drafts import DraftSense, attach_draft
from app.loading.speed import SpeedSense, lookup, to_measure, with_tuned
from app.loading.workers import WorkerCheck, check_workers
from app.planner.corrections import CorrectionStore, model_key
from app.planner.memory import Correction
from app.planner.plan import LaunchPlan, plan
from app.planner.threads import CpuNow, ThreadMemory, shape_key
from app.planner.types import NO_DRY_RUN, Reason, Wishes, WorkerDevice
from app.runner_client.build import RunnerBuild

if TYPE_CHECKING:
    from app.hardware import HardwareReport

log = logging.getLogger(__name__)


class Probe(Protocol):
    """The dry run as prepare_load calls it (:func:`app.loading.confirm.run_probe`)."""

    def __call__(self, args: list[str], program: Sequence[str] | None = None, *,
                 token: CancelToken | None = None) -> dict[str, Any]: ...


class WorkerCheckFn(Protocol):
    """The workers' check as prepare_load calls it (:func:`app.loading.workers.check_workers`)."""

    def __call__(self, endpoints: Sequence[str], program: Sequence[str] | None = None, *,
                 token: CancelToken | None = None) -> WorkerCheck: ...


@dataclass(frozen=True)
class CpuSense:
    """Where the plan's thread count comes from besides the cores: ``busy()`` samples the cores
    other programs keep busy now (app/hardware/cpuload.py); ``memory`` is what earlier loads
    measured (app/planner/threads.py)."""

    busy: Callable[[], float | None]
    memory: ThreadMemory | None = None


def thread_shape(result: LaunchPlan) -> str:
    """The key under which a load's thread measurements are kept and looked up."""
    cpu = next((b.device.name for b in result.devices if b.device.kind == "cpu"), "")
    return shape_key(result.model, result.settings.n_gpu_layers, cpu)


@dataclass(frozen=True)
class Prepared:
    """A plan ready to start, and what it was made for."""

    plan: LaunchPlan
    hardware: HardwareReport  # the machine, merged with what the runner build drives
    detected: bool  # the report was detected for this plan (there was no cached one)
    stored: dict[str, Correction]  # the measured corrections the plan applied
    build: RunnerBuild  # the runner build it was planned for: launch and measure with it


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


def for_build(report: HardwareReport, build: RunnerBuild) -> HardwareReport:
    """``report`` merged with the devices ``build`` drives; as it is when the build is unknown
    (then any runner info it already carries still counts)."""
    if not build.known:
        return report
    return merge_runner_info(report, build.runner_info())


def stored_corrections(store: CorrectionStore | None, build: RunnerBuild,
                       model_path: str) -> dict[str, Correction]:
    """What earlier loads of this model on this build measured (none for an unknown build)."""
    if store is None or build.key is None:
        return {}
    return {k: v for k, v in store.corrections(model_key(model_path), build.key).items()
            if not v.is_identity()}


def prepare_load(model_path: str, *, cached: HardwareReport | None,
                 detect: Callable[[], HardwareReport], wishes: Wishes,
                 store: CorrectionStore | None, build: RunnerBuild,
                 probe: Probe | None, token: CancelToken | None = None,
                 model: ModelInfo | None = None, workers: Sequence[str] = (),
                 check: WorkerCheckFn = check_workers, cpu: CpuSense | None = None,
                 drafts: DraftSense | None = None, speed: SpeedSense | None = None
                 ) -> Prepared:
    """Plan ``model_path`` for ``build``.

    ``model``: the model already read (a remote header, ``hf://`` in ``hearth plan``); it has no
    file here, so nothing measured applies and no dry run is possible: the reasons say so.

    ``cached``: this machine's last report (its RAM is measured again); None detects with
    ``detect``. ``store``: the measured corrections (None: plan from the file alone). ``probe``:
    the dry run (None: skip it). ``workers``: RPC workers (``host:port``) to split the model
    over; each is checked first (``check``, a child process), and one that does not answer is
    left out with a reason. ``cpu``: the load on the cores now and what earlier loads measured
    (None: one thread per physical core, as on an idle machine). ``drafts``: the models on
    this computer that may draft for it and what earlier loads measured (None: no draft,
    app/loading/drafts.py). ``speed``: the speed settings earlier loads measured (None: the
    defaults, and nothing measured; app/loading/speed.py). Raises GGUFError /
    PlannerError / OSError with a sentence to show, and CancelledError as soon as ``token`` is
    cancelled (the dry run is killed).
    """
    token = token or CancelToken()
    token.check()
    remote = model is not None
    projector_note = None
    draft_note = None
    if model is None:
        model, projector_note = attach_projector(read_model(model_path),
                                                 ProjectorChoices().for_model(model_path))
        token.check()
        model, draft_note = attach_draft(model, drafts, build.key)
    token.check()
    hardware = for_build(detect() if cached is None else with_fresh_memory(cached), build)
    token.check()
    stored = {} if remote else stored_corrections(store, build, model_path)

    notes: list[Reason] = list(build.notes)
    if projector_note is not None:
        notes.append(projector_note)
    if draft_note is not None:
        notes.append(draft_note)
    if not build.known and build.problem and hardware.runner is None:
        notes.append(Reason("runner_unknown", {"why": build.problem}))
    if stored:
        notes.append(Reason("stored_corrections", corrections_params(stored)))
    if remote:
        notes.append(NO_DRY_RUN)
        probe = None

    lent: tuple[WorkerDevice, ...] = ()
    if workers and not wishes.cpu_only:
        checked = check(list(workers), build.program, token=token)
        lent = checked.devices
        notes += checked.notes()
    token.check()

    busy = cpu.busy() if cpu is not None else None
    token.check()
    now = CpuNow(busy)
    memory = cpu.memory if cpu is not None else None
    planned: ModelInfo = model  # what is planned: the dry run may measure the projector

    def replan(extra: Mapping[str, Correction]) -> LaunchPlan:
        nonlocal now, memory
        token.check()
        result = plan(planned, hardware, wishes, combine(stored, extra), workers=lent, cpu=now)
        if memory is not None:
            # Looked up once, after the first plan: the shape includes the layers left on the
            # CPU, known once planned (the dry run's replans keep what was found).
            remembered = memory.lookup(thread_shape(result), busy)
            memory = None
            if remembered is not None:
                now = CpuNow(busy, remembered)
                result = plan(planned, hardware, wishes, combine(stored, extra), workers=lent,
                              cpu=now)
        return result.explained(*notes)

    result = replan({})
    if planned.draft is not None:
        # A draft is worth nothing against a layer of the model pushed off the GPU or a shorter
        # context: planned without it, the model keeping more of either leaves it out.
        bare = plan(replace(planned, draft=None), hardware, wishes, stored, workers=lent, cpu=now)
        lost = bare.settings.n_gpu_layers - result.settings.n_gpu_layers
        if bare.fits and (lost > 0 or bare.settings.n_ctx > result.settings.n_ctx
                          or not result.fits):
            notes.append(Reason("draft_no_room", {
                "file": os.path.basename(planned.draft.path), "layers": max(0, lost)}))
            planned = replace(planned, draft=None)
            result = replan({})
    verdict = None
    if speed is not None and build.key is not None and not remote and result.fits:
        verdict = lookup(result, speed, build.key)
        wishes, said = with_tuned(result, verdict, wishes, lambda w: plan(
            planned, hardware, w, stored, workers=lent, cpu=now))
        if said is not None:
            notes.append(said)
            result = replan({})
    if probe is not None and result.fits:
        def dry_run(args: list[str]) -> dict[str, Any]:
            token.check()
            return probe(args, build.program, token=token)

        confirmation = confirm(replan, result, dry_run)
        result = confirmation.plan
        measured = measured_projector(planned, confirmation.probe)
        if measured is not None:  # the plan counted the encoder wrong: count what it took
            planned, why = measured
            result = replan(confirmation.corrections).explained(confirmation.note, why)
    if speed is not None and speed.measure and build.key is not None and not remote and \
            verdict is None:
        result = to_measure(result)
    return Prepared(result, hardware, cached is None, stored, build)


def attach_projector(model: ModelInfo, path: Path | None) -> tuple[ModelInfo, Reason | None]:
    """``model`` with the projector at ``path`` to load beside it, and a reason where one lies
    beside it but will not be loaded (unreadable, or made for a model of another width)."""
    if path is None:
        return model, None
    try:
        info = read_projector(path)
    except GGUFError as exc:
        return model, Reason("projector_unreadable", {"file": path.name, "error": str(exc)})
    if info.projection_dim and info.projection_dim != model.n_embd:
        return model, Reason("projector_other_model", {
            "file": path.name, "width": info.projection_dim, "n_embd": model.n_embd})
    return replace(model, projector=info), None


def measured_projector(model: ModelInfo, probe: Mapping[str, Any] | None
                       ) -> tuple[ModelInfo, Reason] | None:
    """``model`` with its projector's encoder buffer as the dry run measured it, and the reason
    that says so, where the measurement differs from the estimate beyond the dry run's
    tolerance; None where it agrees (or there is no projector or measurement)."""
    p = model.projector
    found = (probe or {}).get("projector")
    compute = found.get("compute") if isinstance(found, dict) else None
    if p is None or not isinstance(compute, int) or compute <= 0:
        return None
    estimate = p.compute_bytes(False)
    if abs(compute - estimate) <= max(SLACK_BYTES, TOLERANCE * estimate):
        return None
    return (replace(model, projector=replace(p, measured_compute=compute)),
            Reason("projector_measured", {"compute": compute, "estimate": estimate}))
