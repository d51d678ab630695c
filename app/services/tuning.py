"""The offload settings panel's service: opens a model for tuning off the GUI thread, plans for
the panel's pins on the GUI thread (the planner alone takes milliseconds), and keeps the pins per
model and machine in the store.

Opening reads the GGUF header, the hardware report (detecting it when there is none yet), the
runner build's devices and the corrections earlier loads measured: disk and child processes, so it
is a job on the task runner, through the same ``prepare_load`` the loader plans with (without the
dry run). The result is a :class:`MeasuredContext`: a :class:`~app.loading.tuning.TuningContext`
with what the newest load of the model measured, which the panel shows beside its prediction
(the loader's ``measured`` signal of a load made before the panel existed reached no panel).
Every recompute after that is pure and synchronous.

The loader reads the saved pins with :meth:`TuningService.saved_pins` from its planning thread, so
the next load of a model uses them whoever starts it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.gguf import GGUFError
from app.i18n import T_
from app.jobs import CancelToken
from app.library.model_settings import ModelSettingsStore
from app.loading.drafts import DraftSense
from app.loading.prepare import prepare_load
from app.loading.speed import SpeedSense
from app.loading.tuning import (
    TuningContext,
    machine_key,
    model_settings_key,
    notes_of,
    pins_from_json,
    pins_to_json,
    settings_key,
)
from app.planner.corrections import CorrectionStore, Measurement, model_key
from app.planner.plan import LaunchPlan
from app.planner.types import Pins, PlannerError, Wishes
from app.runner_client.build import RunnerBuild
from app.runtimes.select import RuntimeSelection
from app.services.storage import StoreService
from app.services.tasks import TaskRunner
from app.storage.db import Database

if TYPE_CHECKING:
    from app.hardware import HardwareReport

log = logging.getLogger(__name__)

STORE_TIMEOUT_S = 10.0  # the planning thread waits this long for the store, then plans without


@dataclass(frozen=True)
class MeasuredContext(TuningContext):
    """A model opened for tuning, with what the newest load of it on this runner build measured
    per device (empty: not loaded yet, or its settings were not the plan's)."""

    measured: tuple[Measurement, ...] = ()


def _default_detect() -> HardwareReport:
    from app.hardware import detect_hardware

    return detect_hardware()


class TuningService(QObject):
    """Opens models for the offload panel, plans their pins and saves them."""

    opened = Signal(object)  # MeasuredContext: the model is ready to tune
    failed = Signal(object)  # the model could not be opened, or the pins not saved: a sentence
    saved = Signal(str)  # the path whose pins were saved (or reset)

    def __init__(self, tasks: TaskRunner, store: StoreService, *,
                 cached_hardware: Callable[[], HardwareReport | None] | None = None,
                 detect: Callable[[], HardwareReport] = _default_detect,
                 wishes: Wishes | None = None,
                 corrections: CorrectionStore | None = None,
                 find_build: Callable[[CancelToken], RunnerBuild] | None = None,
                 runtime: RuntimeSelection | None = None,
                 parent: QObject | None = None) -> None:
        """``runtime``: the app's runtime selection, the loader's too (None: one of its own,
        as the environment asks); ``find_build`` replaces it in tests."""
        super().__init__(parent)
        self._tasks = tasks
        self._store = store
        self._cached_hardware = cached_hardware
        self._detect = detect
        self.wishes = wishes or Wishes()  # the loader's: the panel plans as the load will
        self.drafts: DraftSense | None = None  # the loader's too: its draft and its memory
        self.speed: SpeedSense | None = None  # the loader's too: the measured speed settings
        self._corrections = corrections
        # Default: the chosen runtime's build, as the loader asks for it (the same selection,
        # so the panel plans for the build the next load serves with).
        selection = runtime if runtime is not None else RuntimeSelection()
        self._find_build = find_build or (
            lambda token: selection.chosen_build(token, self._machine))
        self._job: CancelToken | None = None
        self._gui_thread = threading.get_ident()

    def _machine(self) -> HardwareReport:
        cached = self._cached_hardware() if self._cached_hardware is not None else None
        return cached or self._detect()

    # -- the panel's calls ---------------------------------------------------------------------

    def open(self, path: str) -> None:
        """Read ``path`` for tuning in the background; ``opened`` or ``failed`` follows. Opening
        another model first drops this one's outcome."""
        self.cancel()
        cached = self._cached_hardware() if self._cached_hardware is not None else None
        detect, wishes, find_build = self._detect, self.wishes, self._find_build
        store_in, read_saved, drafts = self._corrections, self._read_saved, self.drafts
        speed = self.speed

        def work(token: CancelToken) -> MeasuredContext:
            build = find_build(token)
            store = store_in or CorrectionStore()
            # The machine key comes from the report as the loader sees it (before the runner
            # build's devices are merged in and RAM is measured again), so the two agree.
            report = cached if cached is not None else detect()
            key = settings_key(model_settings_key(path), machine_key(report))
            # The loader's planning path without the dry run: the same hardware, build merge and
            # measured corrections, so the panel's first plan is the one a load would start from.
            prepared = prepare_load(path, cached=cached, detect=lambda: report, wishes=wishes,
                                    store=store, build=build, probe=None, token=token,
                                    drafts=drafts, speed=speed)
            token.check()
            # Under the keys the loader recorded it with (app/loading/measure.py).
            measured = tuple(store.last_load(model_key(path), build.key)) if build.key else ()
            return MeasuredContext(
                path=path, model=prepared.plan.model, hardware=prepared.hardware,
                corrections=prepared.stored, notes=notes_of(prepared.plan),
                # with the measured speed settings where the plan took them
                wishes=prepared.plan.wishes,
                key=key, saved=read_saved(key), measured=measured)

        self._job = self._tasks.start_job(work, self._on_opened, self._on_error, name="tune",
                                          expected=(GGUFError, PlannerError, OSError))

    def cancel(self) -> None:
        job, self._job = self._job, None
        if job is not None:
            job.cancel()

    def plan(self, ctx: TuningContext, pins: Pins) -> LaunchPlan:
        """The plan for ``pins`` without the dry run: synchronous, a few milliseconds."""
        return ctx.plan(pins)

    def save(self, ctx: TuningContext, pins: Pins) -> None:
        """Keep ``pins`` for this model on this machine (no pins: forget them); ``saved``
        follows."""
        key, path = ctx.key, ctx.path
        value = pins_to_json(pins)

        def write(db: Database) -> None:
            store = ModelSettingsStore(db)
            if pins.pinned():
                store.put(key, value)
            else:
                store.delete(key)

        self._store.call(write, lambda _none: self.saved.emit(path),
                         lambda exc: self.failed.emit(T_("The settings were not saved: {error}",
                                                         error=str(exc))))

    # -- the loader's call ---------------------------------------------------------------------

    def saved_pins(self, path: str, report: HardwareReport) -> Pins | None:
        """The pins saved for ``path`` on the machine of ``report`` (None: none saved).

        Blocks on the store: call it from a worker thread (the loader's planning job), never
        from the GUI thread, which must not wait on the disk.
        """
        if threading.get_ident() == self._gui_thread:
            raise RuntimeError("saved_pins reads the store and must not run on the GUI thread")
        pins = self._read_saved(settings_key(model_settings_key(path), machine_key(report)))
        return pins if pins.pinned() else None

    # -- internals -----------------------------------------------------------------------------

    def _read_saved(self, key: str) -> Pins:
        try:
            data = self._store.call(lambda db: ModelSettingsStore(db).get(key)).result(
                timeout=STORE_TIMEOUT_S)
        except Exception as exc:  # the model still opens and loads with automatic settings
            log.warning("could not read the saved offload settings: %s", exc)
            return Pins()
        return pins_from_json(data)

    def _on_opened(self, ctx: TuningContext) -> None:
        self._job = None
        self.opened.emit(ctx)

    def _on_error(self, exc: Exception) -> None:
        self._job = None
        self.failed.emit(T_("Could not open the model for tuning: {error}", error=str(exc)))

