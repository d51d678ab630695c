"""The hardware report as a service: one owner, detected off the GUI thread, shared by the
Hardware tab and the loader (which plans with the same report the user sees).

Detection may call drivers and tools that take seconds. Given a way to ask the runner for its
devices (``hearth-runner devices`` imports llama.cpp and may take seconds more), the service
first publishes what the machine has, then the report merged with what this runner build can
use of it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.hardware.merge import merge_runner_devices
from app.hardware.report import HardwareReport, SourceStatus
from app.i18n import T_
from app.services.tasks import TaskRunner

log = logging.getLogger(__name__)


class HardwareService(QObject):
    """Owns the current :class:`HardwareReport`; ``refresh()`` detects a new one."""

    report_changed = Signal(HardwareReport)  # the machine's, then the merged one
    status_changed = Signal(object)  # "Detecting…", "Detected in 0.42 s", …
    busy_changed = Signal(bool)
    failed = Signal(object)  # a sentence for the user

    def __init__(self, tasks: TaskRunner, detect: Callable[[], HardwareReport], *,
                 runner_devices: Callable[[], dict[str, Any]] | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks = tasks
        self._detect = detect
        self._runner_devices = runner_devices
        self._report: HardwareReport | None = None
        self._busy = False
        self.status = ""

    @property
    def report(self) -> HardwareReport | None:
        return self._report

    @property
    def busy(self) -> bool:
        return self._busy

    def refresh(self) -> None:
        """Detect again in the background; ``report_changed`` says when it arrives."""
        if self._busy:
            return
        self._set_busy(True)
        self._set_status("Detecting…")
        self._tasks.run(self._detect, self._on_report, self._on_error)

    def set_report(self, report: HardwareReport) -> None:
        """Publish ``report`` (a recorded machine in tests, a merged report below)."""
        self._report = report
        self.report_changed.emit(report)

    # -- internals -----------------------------------------------------------------------------

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)

    def _set_status(self, text: str) -> None:
        self.status = text
        self.status_changed.emit(text)

    def _on_report(self, report: HardwareReport) -> None:
        if not isinstance(report, HardwareReport):
            self._on_error(TypeError(f"detection returned {type(report).__name__}"))
            return
        detected = T_("Detected in {seconds:.2f} s", seconds=report.elapsed_s)
        ask_runner = self._runner_devices
        if ask_runner is None:
            self._set_status(detected)
            self.set_report(report)
            self._set_busy(False)
            return
        self._set_status(T_("{detected} · asking the runner…", detected=detected))
        self.set_report(report)

        def merge() -> HardwareReport:
            return merge_runner_devices(report, ask_runner())

        self._tasks.run(merge, lambda merged: self._on_merged(merged, detected),
                        lambda exc: self._on_runner_error(report, exc, detected))

    def _on_merged(self, merged: HardwareReport, detected: str) -> None:
        self._set_status(detected)
        self.set_report(merged)
        self._set_busy(False)

    def _on_runner_error(self, report: HardwareReport, exc: Exception, detected: str) -> None:
        # The machine report stays; the reason the runner could not say is one more source line.
        log.warning("the runner could not list its devices: %s", exc)
        why = str(exc) or type(exc).__name__
        self._set_status(detected)
        self.set_report(dataclasses.replace(
            report, sources=[*report.sources, SourceStatus("runner", False, why)]))
        self._set_busy(False)

    def _on_error(self, exc: Exception) -> None:
        message = T_("Hardware detection failed: {error}", error=str(exc))
        log.warning("%s", message)
        self._set_status(T_("Detection failed"))
        self._set_busy(False)
        self.failed.emit(message)
