"""Loading a model with a plan, as a QObject: plan off the GUI thread, start the runner with the
plan's flags, step down the fallback ladder on out-of-memory, measure the load once it is ready.

Thin glue: the decisions live in app/loading (the ladder, the measurements, the planning
function); this object only moves them between the task runner and the runner process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.loading.ladder import LoadLadder, classify_failure, uses_gpu
from app.loading.measure import BuildMemo, program_key, record_load
from app.loading.prepare import Prepared, plan_flags, prepare_load
from app.loading.text import does_not_fit_text, gave_up_text
from app.planner.confirm import ProbeFn, run_probe
from app.planner.corrections import CorrectionStore
from app.planner.memory import Correction
from app.planner.plan import LaunchPlan
from app.planner.types import Wishes
from app.runner_client import RunnerClient
from app.runner_client.command import runner_program
from app.services.runner_process import RunnerProcess, RunnerState
from app.services.tasks import TaskRunner

if TYPE_CHECKING:
    from app.hardware import HardwareReport

log = logging.getLogger(__name__)

RETRY_DELAY_MS = 0  # one turn of the event loop: the window shows the step before the retry


class LoadPhase(Enum):
    IDLE = "idle"
    PLANNING = "planning"
    LOADING = "loading"  # the runner is starting or loading, maybe on a fallback step
    READY = "ready"
    FAILED = "failed"  # planning or the whole ladder failed
    DIED = "died"  # the runner stopped after it was ready


def _stores(store: CorrectionStore | None,
            memo: BuildMemo | None) -> tuple[CorrectionStore, BuildMemo]:
    # Made in the worker when not injected: their default paths create the cache directory,
    # and the GUI thread does not touch the disk.
    return store or CorrectionStore(), memo or BuildMemo()


def _default_detect() -> HardwareReport:
    from app.hardware import detect_hardware

    return detect_hardware()


class ModelLoader(QObject):
    planned = Signal(object)  # LaunchPlan: about to start the runner with it
    retrying = Signal(str)  # a fallback step's reason; the retry starts next
    loaded = Signal(object)  # LaunchPlan the runner is ready with
    failed = Signal(str)  # final: planning failed, the plan does not fit, or the ladder ended
    died = Signal(str)  # the runner stopped after it was ready
    measured = Signal(object)  # list[Measurement] recorded after a load (may be empty)
    hardware_detected = Signal(object)  # HardwareReport detected for a plan

    def __init__(self, runner: RunnerProcess, tasks: TaskRunner, *,
                 cached_hardware: Callable[[], HardwareReport | None] | None = None,
                 detect: Callable[[], HardwareReport] = _default_detect,
                 wishes: Wishes | None = None,
                 store: CorrectionStore | None = None,
                 memo: BuildMemo | None = None,
                 probe: ProbeFn | None = run_probe,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self._tasks = tasks
        self._cached_hardware = cached_hardware
        self._detect = detect
        self.wishes = wishes or Wishes()
        self._store = store
        self._memo = memo
        self._probe = probe
        self._report: HardwareReport | None = None
        self._generation = 0  # bumps on every load, restart and cancel: stale results drop
        self._flags: list[str] = []
        self.phase = LoadPhase.IDLE
        self.path = ""
        self.ladder: LoadLadder | None = None
        self.good_plan: LaunchPlan | None = None  # the last plan the runner was ready with
        self.applied: dict[str, Correction] = {}  # measured corrections the last plan used
        runner.ready.connect(self._on_ready)
        runner.failed.connect(self._on_failed)
        runner.state_changed.connect(self._on_state)

    # ---- public ------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.phase in (LoadPhase.PLANNING, LoadPhase.LOADING)

    @property
    def planning(self) -> bool:
        return self.phase == LoadPhase.PLANNING

    @property
    def plan(self) -> LaunchPlan | None:
        """The plan being tried or running (None before the first plan)."""
        return self.ladder.plan if self.ladder is not None else None

    @property
    def steps(self) -> list[str]:
        return list(self.ladder.steps) if self.ladder is not None else []

    def load(self, path: str, flags: list[str] | None = None) -> bool:
        """Plan ``path`` off the GUI thread, then start it. False when a load is under way."""
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
        program = program_key(runner_program())
        store_in, memo_in = self._store, self._memo
        detect, probe, wishes = self._detect, self._probe, self.wishes

        def work() -> Prepared:
            store, memo = _stores(store_in, memo_in)
            return prepare_load(path, cached=cached, detect=detect, wishes=wishes,
                                store=store, memo=memo, program=program, probe=probe)

        self._tasks.run(work, lambda r: self._on_prepared(gen, r),
                        lambda e: self._on_prepare_error(gen, e))
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
        """The user unloads: drop a plan in the making and stop stepping down the ladder."""
        self._generation += 1
        if self.ladder is not None:
            self.ladder.cancel()
        if self.phase in (LoadPhase.PLANNING, LoadPhase.LOADING, LoadPhase.READY):
            self.phase = LoadPhase.IDLE

    def shutdown(self) -> None:
        """The window closes: drop whatever is under way."""
        self.cancel()

    # ---- internals ---------------------------------------------------------------------------

    def _on_prepared(self, gen: int, result: object) -> None:
        if gen != self._generation or not isinstance(result, Prepared):
            return
        self.applied = dict(result.stored)
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
        log.info("planning %s failed: %s", self.path, exc)
        self.phase = LoadPhase.FAILED
        self.failed.emit(f"Not loaded: {exc}")

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
        self.runner.start(self.path, [*flags, *self._flags])

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
        store_in, memo_in = self._store, self._memo
        program = program_key(runner_program())
        path = self.path

        def work() -> Any:
            with RunnerClient(url, key, timeout=5.0) as client:
                status = client.status()
            store, memo = _stores(store_in, memo_in)
            return record_load(store, memo, program, path, plan, status)

        self._tasks.run(work, self.measured.emit,
                        lambda e: log.info("could not record the load's memory: %s", e))

    def _on_failed(self, message: str) -> None:
        ex = self.runner.last_exit
        if self.phase == LoadPhase.READY:
            self.phase = LoadPhase.DIED
            self.died.emit(message)
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
