"""The models on this computer, for the Library tab and the chat's model picker.

Scanning walks Hearth's folder and the other apps' folders (app/library/scan.py), reads each
header (cached by size and time, app/library/catalog.py) and plans each model for this machine
(the verdict), all off the GUI thread as one cancellable job. Models are used in place: this
service never copies, and deletes only inside Hearth's own folder.

A verdict is planned with the offload settings the user saved for that model on this machine
(``pins_for``, as the loader plans): the label says what the next load will do, not what an
automatic plan would, and :meth:`LocalModelsService.pins_changed` plans that model again when
they change.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.gguf import GGUFError, read_model
from app.hardware.report import HardwareReport
from app.hub.verdict import Verdict, verdict_for
from app.i18n import T_
from app.jobs import CancelToken
from app.library.catalog import (
    HeaderInfoCache,
    LibraryEntry,
    LibraryError,
    VerifyOutcome,
    VerifyResult,
    delete,
    describe,
    verify,
)
from app.library.folders import LibraryFolders, save_folders
from app.library.scan import FoundModel, ModelSource, default_sources, scan
from app.planner.types import Pins, PlannerError, Wishes
from app.services.protocols import LocalRow
from app.services.tasks import TaskRunner

if TYPE_CHECKING:
    from app.library.projectors import ProjectorChoices

log = logging.getLogger(__name__)

# The pins saved for a model on a machine (TuningService.saved_pins): called on the job's
# thread, None when the user pinned nothing.
PinsLookup = Callable[[str, HardwareReport], Pins | None]


def _verdict(entry: LibraryEntry, hw: HardwareReport | None,
             pins_for: PinsLookup | None = None,
             projectors: ProjectorChoices | None = None) -> Verdict | None:
    if hw is None or entry.error:
        return None
    path = str(entry.found.path)
    pins = None
    if pins_for is not None:
        try:
            pins = pins_for(path, hw)
        except Exception:  # unreadable saved settings: the automatic plan, as the loader does
            log.warning("could not read the saved settings of %s", path, exc_info=True)
    try:
        # With the projector that loads with it: the verdict is the load's own plan.
        from app.loading.prepare import attach_projector

        chosen = projectors.chosen_file(path) if projectors is not None else None
        model, _why = attach_projector(read_model(entry.found.path),
                                       chosen or entry.found.mmproj)
        return verdict_for(model, hw,
                           Wishes(pins=pins) if pins is not None else None, from_header=False)
    except (GGUFError, PlannerError, OSError) as exc:
        log.info("no verdict for %s: %s", entry.found.path, exc)
        return None


def _projector_choices() -> ProjectorChoices:
    # Imported by the job, not on the way to the window's first frame.
    from app.library.projectors import ProjectorChoices

    return ProjectorChoices()


def _row(entry: LibraryEntry, verdict: Verdict | None) -> LocalRow:
    f = entry.found
    return LocalRow(path=str(f.path), name=f.name, size=f.size, source=f.source, own=f.own,
                    quantization=entry.quantization, architecture=entry.architecture,
                    parameters=entry.parameters, context_length=entry.context_length,
                    verdict=verdict, error=entry.error)


class LocalModelsService(QObject):
    """Satisfies app/services/protocols.py's LocalModelsLike."""

    changed = Signal(object)  # list[LocalRow]
    busy_changed = Signal(bool)
    verified = Signal(str, object, object)  # path, True / False / None (nothing to compare), text
    failed = Signal(object)

    def __init__(self, tasks: TaskRunner, folders: LibraryFolders,
                 hardware: Callable[[], HardwareReport | None], cache: HeaderInfoCache, *,
                 save: Callable[[LibraryFolders], None] = save_folders,
                 detect_hardware: Callable[[], None] | None = None,
                 sources: Callable[[LibraryFolders], list[ModelSource]] | None = None,
                 pins_for: PinsLookup | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks = tasks
        self.folders = folders
        self._hardware = hardware
        self._cache = cache
        self._save = save
        self._detect_hardware = detect_hardware  # no report yet: verdicts come after it
        self._sources = sources or (lambda f: default_sources(models_dir=f.models_dir,
                                                              extra_folders=f.extra))
        self._pins_for = pins_for
        self._rows: list[LocalRow] = []
        self._found: dict[str, FoundModel] = {}
        self._entries: list[LibraryEntry] = []  # the last scan's, planned again per report
        self._job: CancelToken | None = None
        self._again = False  # folders changed mid-scan: scan once more
        self._replan = False  # the hardware changed mid-scan: plan the results again
        self._replan_only: set[str] | None = set()  # ...these paths (None: all of them)

    @property
    def busy(self) -> bool:
        return self._job is not None

    def rows(self) -> list[LocalRow]:
        return list(self._rows)

    def rescan(self) -> None:
        if self._job is not None:
            self._again = True  # a change arrived mid-scan: scan once more after this one
            return
        folders, hw, cache = self.folders, self._hardware(), self._cache
        if hw is None and self._detect_hardware is not None:
            self._detect_hardware()  # its report plans the entries (hardware_changed)
        sources = self._sources(folders)
        pins_for = self._pins_for

        def work(token: CancelToken) -> list[tuple[LibraryEntry, Verdict | None]]:
            out = []
            projectors = _projector_choices()
            for found in scan(sources, token):
                token.check()
                entry = describe(found, cache)
                out.append((entry, _verdict(entry, hw, pins_for, projectors)))
            cache.save()  # the next start reads no header that has not changed
            return out

        self._start(work, "library scan")

    def _plan_again(self, only: set[str] | None = None) -> None:
        """Verdicts for the entries already found, for a new report or new pins (``only``:
        these paths; the others keep theirs): no walk, no header cache."""
        entries, hw, pins_for = list(self._entries), self._hardware(), self._pins_for
        if not entries or hw is None:
            return
        kept = {r.path: r.verdict for r in self._rows}

        def work(token: CancelToken) -> list[tuple[LibraryEntry, Verdict | None]]:
            out = []
            projectors = _projector_choices()
            for entry in entries:
                token.check()
                path = str(entry.found.path)
                again = only is None or path in only or path not in kept
                out.append((entry, _verdict(entry, hw, pins_for, projectors) if again
                            else kept[path]))
            return out

        self._start(work, "library verdicts")

    def _start(self, work: Callable[[CancelToken], list[tuple[LibraryEntry, Verdict | None]]],
               name: str) -> None:
        self._job = self._tasks.start_job(work, self._on_scanned, self._on_scan_error, name=name)
        self.busy_changed.emit(True)

    def _on_scanned(self, results: list[tuple[LibraryEntry, Verdict | None]]) -> None:
        self._finish_scan()
        self._entries = [e for e, _ in results]
        self._found = {str(e.found.path): e.found for e in self._entries}
        self._rows = [_row(e, v) for e, v in results]
        self.changed.emit(self.rows())

    def _on_scan_error(self, exc: Exception) -> None:
        self._finish_scan()
        log.error("library scan failed: %s", exc)
        self.failed.emit(T_("Could not look for models: {error}", error=str(exc)))

    def _finish_scan(self) -> None:
        self._job = None
        self.busy_changed.emit(False)
        if self._again:
            self._again = self._replan = False
            self._replan_only = set()
            self.rescan()
        elif self._replan:
            only, self._replan, self._replan_only = self._replan_only, False, set()
            self._plan_again(only)

    def hardware_changed(self, _report: HardwareReport) -> None:
        """The verdicts depend on the machine: plan the models found again (the folders have
        not changed, so they are not walked again)."""
        self._plan_later(None)

    def pins_changed(self, path: str) -> None:
        """The offload settings saved for ``path`` changed (TuningService.saved): plan it again
        with them, so that its label says what its next load will do."""
        self._plan_later({path})

    def _plan_later(self, only: set[str] | None) -> None:
        if self._job is None:
            self._plan_again(only)
            return
        self._replan = True  # after the job under way; its paths add to those waiting
        waiting = self._replan_only
        self._replan_only = None if waiting is None or only is None else waiting | only

    def add_folder(self, folder: str) -> None:
        self.folders = self.folders.with_extra(Path(folder))
        try:
            self._save(self.folders)
        except OSError as exc:
            self.failed.emit(T_("Could not remember the folder {folder}: {error}", folder=folder,
                                error=str(exc)))
        self.rescan()

    def set_models_dir(self, folder: str) -> None:
        new = Path(folder)
        # The old folder stays listed (as an added folder): its models are still there.
        kept = self.folders.with_extra(self.folders.models_dir)
        self.folders = replace(kept, models_dir=new, extra=tuple(e for e in kept.extra
                                                                 if e != new))
        try:
            self._save(self.folders)
        except OSError as exc:
            self.failed.emit(T_("Could not remember the folder {folder}: {error}", folder=folder,
                                error=str(exc)))
        self.rescan()

    def _listed(self, path: str) -> FoundModel | None:
        found = self._found.get(path)
        if found is None:
            self.failed.emit(T_("{path} is no longer in the library; press Rescan.", path=path))
        return found

    def delete(self, path: str) -> None:
        found = self._listed(path)
        if found is None:
            return
        models_dir = self.folders.models_dir

        def work() -> None:
            delete(found, models_dir)

        self._tasks.run(work, lambda _: self.rescan(),
                        lambda exc: self.failed.emit(str(exc)), expected=(LibraryError, OSError))

    def verify(self, path: str) -> None:
        found = self._listed(path)
        if found is None:
            return

        def work(token: CancelToken) -> VerifyResult:
            return verify(found, token)

        def done(result: VerifyResult) -> None:
            ok = None if result.outcome is VerifyOutcome.UNCHECKED else result.ok
            self.verified.emit(path, ok, str(result))

        self._tasks.start_job(work, done, lambda exc: self.verified.emit(path, False, str(exc)),
                              name="verify", expected=(LibraryError, OSError))

    def shutdown(self) -> None:
        if self._job is not None:
            self._job.cancel()
