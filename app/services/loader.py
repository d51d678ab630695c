"""Loading a model with a plan, as a QObject: plan off the GUI thread, start the runner with the
plan's flags, step down the fallback ladder on out-of-memory, measure the load once it is ready.

Thin glue: the decisions live in app/loading (the ladder, the measurements, the planning
function); this object only moves them between the task runner and the runner process. Planning
(asking the runner build for its devices, the dry run) is a cancellable job: unloading or closing
the window kills the dry run instead of waiting up to a minute for it.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.gguf import GGUFError, NotGGUFError
from app.i18n import T_
from app.jobs import CancelToken
from app.loading.confirm import run_probe
from app.loading.drafts import DraftSense, record_trial
from app.loading.flags import plan_flags
from app.loading.ladder import LoadLadder, classify_failure, uses_gpu
from app.loading.measure import record_load
from app.loading.prepare import CpuSense, Prepared, Probe, prepare_load, thread_shape
from app.loading.speed import SpeedSense, measuring, record_speed
from app.loading.text import does_not_fit_text, gave_up_text
from app.loading.tuning import merge_pins
from app.planner import wording
from app.planner.corrections import CorrectionStore
from app.planner.fallback import next_fallback
from app.planner.memory import Correction
from app.planner.plan import LaunchPlan
from app.planner.types import Pins, PlannerError, Wishes
from app.runner_client import RunnerClient
from app.runner_client.build import RunnerBuild
from app.runtimes.select import RuntimeSelection
from app.services.runner_process import RunnerProcess, RunnerState
from app.services.tasks import TaskRunner

if TYPE_CHECKING:
    from app.hardware import HardwareReport

log = logging.getLogger(__name__)

RETRY_DELAY_MS = 0  # one turn of the event loop: the window shows the step before the retry
# How often the runner's speed trial is asked after, and for how long: it waits for idle
# moments, so a busy chat can hold it back; unfinished, the next load measures again.
SPEED_POLL_MS = 2000
SPEED_POLLS = 150


class LoadPhase(Enum):
    IDLE = "idle"
    PLANNING = "planning"
    LOADING = "loading"  # the runner is starting or loading, maybe on a fallback step
    READY = "ready"
    FAILED = "failed"  # planning or the whole ladder failed
    DIED = "died"  # the runner stopped after it was ready


def _store(store: CorrectionStore | None) -> CorrectionStore:
    # Made in the worker when not injected: its default path creates the cache directory, and
    # the GUI thread does not touch the disk.
    return store or CorrectionStore()


class _FileGone(GGUFError):
    """The model's file is not there (deleted, or on a drive that is away); same sentence."""


def _default_detect() -> HardwareReport:
    from app.hardware import detect_hardware

    return detect_hardware()


# The offload panel's saved pins for a model on a machine (TuningService.saved_pins); called on
# the planning thread, None when the user pinned nothing.
PinsLookup = Callable[[str, "HardwareReport"], Pins | None]


def _saved_pins(pins_for: PinsLookup, path: str, report: HardwareReport) -> Pins | None:
    try:
        return pins_for(path, report)
    except Exception:  # unreadable saved settings must not stop the load: plan automatically
        log.warning("could not read the saved settings of %s", path, exc_info=True)
        return None


class ModelLoader(QObject):
    planned = Signal(object)  # LaunchPlan: about to start the runner with it
    retrying = Signal(object)  # a fallback step's reason; the retry starts next
    loaded = Signal(object)  # LaunchPlan the runner is ready with
    failed = Signal(object)  # final: planning failed, the plan does not fit, or the ladder ended
    died = Signal(object)  # the runner stopped after it was ready
    measured = Signal(object)  # list[Measurement] recorded after a load (may be empty)
    speed_measured = Signal(object)  # app.planner.speed.Verdict the runner's trial came to
    hardware_detected = Signal(object)  # HardwareReport detected for a plan
    # str path: planning found no file there, or a file that is not a GGUF model (a script
    # opened by path): nothing to offer in the model list again. Emitted before ``failed``.
    unusable = Signal(object)

    def __init__(self, runner: RunnerProcess, tasks: TaskRunner, *,
                 cached_hardware: Callable[[], HardwareReport | None] | None = None,
                 detect: Callable[[], HardwareReport] = _default_detect,
                 wishes: Wishes | None = None,
                 store: CorrectionStore | None = None,
                 find_build: Callable[[CancelToken], RunnerBuild] | None = None,
                 probe: Probe | None = run_probe,
                 pins_for: PinsLookup | None = None,
                 workers: Callable[[], Sequence[str]] = lambda: (),
                 cpu: CpuSense | None = None,
                 runtime: RuntimeSelection | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self._tasks = tasks
        self._cached_hardware = cached_hardware
        self._detect = detect
        self.wishes = wishes or Wishes()
        self._store = store
        # Default: the build of the runtime ``runtime`` chooses (the app's selection; None: one
        # of its own, as the environment asks), asked once per install.
        selection = runtime if runtime is not None else RuntimeSelection()
        self._find_build = find_build or (
            lambda token: selection.chosen_build(token, self._machine))
        self._probe = probe
        # The models that may draft for the one loaded, and what was measured of each pair
        # (app/loading/drafts.py); set once the library exists. None: no draft.
        self.drafts: DraftSense | None = None
        # The speed settings earlier loads measured (app/loading/speed.py); None: the defaults.
        self.speed: SpeedSense | None = None
        self._pins_for = pins_for
        self._workers = workers  # the RPC workers a plan may split over (app/services/workers)
        self._cpu = cpu  # the load on the cores, and the thread counts earlier loads measured
        self._job: CancelToken | None = None  # the plan being made
        self._report: HardwareReport | None = None
        self._generation = 0  # bumps on every load, restart and cancel: stale results drop
        self._flags: list[str] = []
        self.phase = LoadPhase.IDLE
        self.path = ""
        self.ladder: LoadLadder | None = None
        self.good_plan: LaunchPlan | None = None  # the last plan the runner was ready with
        self.applied: dict[str, Correction] = {}  # measured corrections the last plan used
        # The runner build the current plan was made for: the measurements are recorded under
        # its key. (The runner is started with its program, so the two cannot differ.)
        self.build: RunnerBuild | None = None
        runner.ready.connect(self._on_ready)
        runner.failed.connect(self._on_failed)
        runner.state_changed.connect(self._on_state)

    def _machine(self) -> HardwareReport:
        """The report the runtime is chosen for (on the planning thread)."""
        cached = self._cached_hardware() if self._cached_hardware is not None else None
        return cached or self._report or self._detect()

    # ---- public ------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.phase in (LoadPhase.PLANNING, LoadPhase.LOADING)

    @property
    def planning(self) -> bool:
        """A plan is being made (no runner yet): the window shows a busy bar."""
        return self.phase is LoadPhase.PLANNING

    @property
    def plan(self) -> LaunchPlan | None:
        """The plan being tried or running (None before the first plan)."""
        return self.ladder.plan if self.ladder is not None else None

    @property
    def steps(self) -> list[str]:
        return list(self.ladder.steps) if self.ladder is not None else []

    def load(self, path: str, flags: list[str] | None = None, pins: Pins | None = None) -> bool:
        """Plan ``path`` off the GUI thread, then start it. False when a load is under way.

        ``pins``: the settings the user fixed for this load (the offload panel's Apply), on top
        of ``self.wishes``; None: the pins saved for this model on this machine, if any.
        """
        if self.busy or self.runner.state not in (RunnerState.STOPPED, RunnerState.FAILED):
            return False
        self._generation += 1
        gen = self._generation
        self.path = path
        self._flags = list(flags or [])
        self.ladder = None
        self.phase = LoadPhase.PLANNING
        cached = self._cached_hardware() if self._cached_hardware is not None else None
        cached = cached or self._report
        store_in, find_build = self._store, self._find_build
        detect, probe, wishes = self._detect, self._probe, self.wishes
        pins_for = self._pins_for
        workers = list(self._workers())
        cpu, drafts, speed = self._cpu, self.drafts, self.speed

        def work(token: CancelToken) -> Prepared:
            build = find_build(token)
            chosen, detect_once = pins, detect
            if chosen is None and pins_for is not None:
                # The saved pins are per machine, which the report names: detected here when
                # there is none yet, and handed to prepare_load so that it is detected once.
                report = cached
                if report is None:
                    found = report = detect()
                    detect_once = lambda: found  # noqa: E731
                chosen = _saved_pins(pins_for, path, report)
            use = wishes if chosen is None else \
                dataclasses.replace(wishes, pins=merge_pins(wishes.pins, chosen))
            try:
                return prepare_load(path, cached=cached, detect=detect_once, wishes=use,
                                    store=_store(store_in), build=build, probe=probe,
                                    token=token, workers=workers, cpu=cpu, drafts=drafts,
                                    speed=speed)
            except GGUFError as exc:
                # Told apart here, off the GUI thread: the disk may be slow to answer.
                if not isinstance(exc, NotGGUFError) and not os.path.lexists(path):
                    raise _FileGone(str(exc)) from exc
                raise

        self._job = self._tasks.start_job(
            work, lambda r: self._on_prepared(gen, r), lambda e: self._on_prepare_error(gen, e),
            name="plan", expected=(GGUFError, PlannerError, OSError))
        return True

    def restart(self) -> bool:
        """Start the same model again with the last plan it loaded with (no new planning)."""
        if self.good_plan is None or not self.path or self.busy or \
                self.runner.state not in (RunnerState.STOPPED, RunnerState.FAILED):
            return False
        self._generation += 1
        self._begin(self.good_plan)
        return True

    def cancel(self) -> None:
        """The user unloads: end a plan in the making (its dry run is killed, its outcome
        dropped) and stop stepping down the ladder."""
        self._generation += 1
        job, self._job = self._job, None
        if job is not None:
            job.cancel()
        if self.ladder is not None:
            self.ladder.cancel()
        if self.phase in (LoadPhase.PLANNING, LoadPhase.LOADING, LoadPhase.READY):
            self.phase = LoadPhase.IDLE

    def shutdown(self) -> None:
        """The window is closing: cancel whatever is under way; no signal follows. (Stopping
        the runner process is the window's, through RunnerProcess.stop_and_wait.)"""
        self.cancel()

    # ---- internals ---------------------------------------------------------------------------

    def _on_prepared(self, gen: int, result: object) -> None:
        if gen != self._generation or not isinstance(result, Prepared):
            return
        self._job = None
        self.applied = dict(result.stored)
        self.build = result.build
        if result.detected:
            self._report = result.hardware
            self.hardware_detected.emit(result.hardware)
        if not result.plan.fits:
            self.phase = LoadPhase.FAILED
            self.failed.emit(does_not_fit_text(result.plan))
            return
        self._begin(result.plan)

    def _on_prepare_error(self, gen: int, exc: Exception) -> None:
        if gen != self._generation:
            return
        self._job = None
        log.info("planning %s failed: %s", self.path, exc)
        self.phase = LoadPhase.FAILED
        if isinstance(exc, (NotGGUFError, _FileGone, IsADirectoryError)):
            self.unusable.emit(self.path)
        self.failed.emit(T_("Not loaded: {error}", error=str(exc)))

    def _begin(self, first: LaunchPlan) -> None:
        self.ladder = LoadLadder(first)
        self.phase = LoadPhase.LOADING
        self.planned.emit(first)
        self._start(first)

    def _start(self, plan: LaunchPlan) -> None:
        try:
            flags = plan_flags(plan, self.path)
        except Exception as exc:  # a plan made from a partial download has no path
            self._give_up(str(exc))
            return
        build = self.build
        self.runner.start(self.path, [*flags, *self._flags],
                          program=build.program if build is not None else None)

    def _retry(self, gen: int) -> None:
        ladder = self.ladder
        if gen != self._generation or ladder is None or not ladder.active:
            return
        if self.runner.state not in (RunnerState.STOPPED, RunnerState.FAILED):
            return
        self._start(ladder.plan)

    def _on_ready(self) -> None:
        ladder = self.ladder
        if self.phase != LoadPhase.LOADING or ladder is None:
            return
        ladder.loaded()
        self.phase = LoadPhase.READY
        self.good_plan = ladder.plan
        self.loaded.emit(ladder.plan)
        self._measure(ladder.plan)

    def _measure(self, plan: LaunchPlan) -> None:
        url, key = self.runner.url, self.runner.key
        store_in, build = self._store, self.build
        path = self.path
        if build is None:  # a runner this loader did not plan for: no build to key it by
            return

        memory = self._cpu.memory if self._cpu is not None else None
        drafts = self.drafts

        def work() -> Any:
            with RunnerClient(url, key, timeout=5.0) as client:
                status = client.status()
            if memory is not None and isinstance(status.get("threads"), dict):
                memory.record(thread_shape(plan), status["threads"])
            record_trial(plan.model, drafts, build.key, status)
            return record_load(_store(store_in), build, path, plan, status)

        self._tasks.run(work, self.measured.emit,
                        lambda e: log.info("could not record the load's memory: %s", e))
        if plan.tune and self.speed is not None:
            self._follow_speed(plan, self._generation, SPEED_POLLS)

    def _follow_speed(self, plan: LaunchPlan, gen: int, left: int) -> None:
        """Ask the runner how its speed trial went until it has finished, then keep it."""
        if gen != self._generation or self.phase != LoadPhase.READY or left <= 0 or \
                self.build is None:
            return
        url, key, sense, runtime = self.runner.url, self.runner.key, self.speed, self.build.key

        def work() -> Any:
            with RunnerClient(url, key, timeout=5.0) as client:
                status = client.status()
            return None if measuring(status) else record_speed(plan, sense, runtime, status)

        def done(verdict: Any) -> None:
            if verdict is None:
                QTimer.singleShot(SPEED_POLL_MS, lambda: self._follow_speed(plan, gen, left - 1))
            else:
                self.speed_measured.emit(verdict)

        self._tasks.run(work, done, lambda e: log.info("could not read the speed trial: %s", e))

    def _on_failed(self, message: str) -> None:
        ex = self.runner.last_exit
        if self.phase == LoadPhase.READY:
            lost = self._without_lost_worker(ex.code if ex else None, message)
            self.phase = LoadPhase.DIED
            self.died.emit(message)
            if lost is not None:
                # A worker died under a loaded model: load again on this computer alone
                # rather than leave the user with nothing (the runner already said which).
                self._generation += 1
                gen = self._generation
                self.retrying.emit(wording.text(lost.reasons[-1]))
                QTimer.singleShot(RETRY_DELAY_MS, lambda: self._begin_if(gen, lost))
            return
        ladder = self.ladder
        if self.phase != LoadPhase.LOADING or ladder is None or not ladder.active:
            if self.phase == LoadPhase.IDLE:
                self.failed.emit(message)  # a runner someone else started; still say why
            return
        kind = classify_failure(ex.code if ex else None, ex.crashed if ex else False, message,
                                uses_gpu(ladder.plan), self.path)
        nxt = ladder.failed(kind)
        if nxt is None:
            self._give_up(message)
            return
        log.info("load failed (%s); %s", kind, ladder.steps[-1])
        self.retrying.emit(ladder.steps[-1])
        gen = self._generation
        QTimer.singleShot(RETRY_DELAY_MS, lambda: self._retry(gen))

    def _without_lost_worker(self, code: int | None, message: str) -> LaunchPlan | None:
        plan = self.good_plan
        if plan is None or classify_failure(code, False, message, False) != "worker_lost":
            return None
        return next_fallback(plan, "worker_lost")

    def _begin_if(self, gen: int, plan: LaunchPlan) -> None:
        if gen == self._generation and self.phase == LoadPhase.DIED and \
                self.runner.state in (RunnerState.STOPPED, RunnerState.FAILED):
            self._begin(plan)

    def _give_up(self, message: str) -> None:
        ladder = self.ladder
        self.phase = LoadPhase.FAILED
        if ladder is None:
            self.failed.emit(message)
            return
        self.failed.emit(gave_up_text(message, ladder.plan, len(ladder.steps), ladder.exhausted))

    def _on_state(self, state: RunnerState) -> None:
        if state == RunnerState.STOPPED and self.phase in (LoadPhase.READY, LoadPhase.DIED):
            self.phase = LoadPhase.IDLE
