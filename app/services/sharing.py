"""Applying a sharing change now: the loaded model is loaded again with the new settings.

Who can connect, the port and the key are the runner's command line and environment, fixed
when it starts; a change otherwise waits for the next load. Settings offers "Apply now", which
calls :func:`apply_now`: the runner stops, and once it has stopped the loader starts the same
model with the plan it was running with (``ModelLoader.restart``: no new planning), under the
runner's new :attr:`~app.services.runner_process.RunnerProcess.host`, ``port`` and ``sharing``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QTimer

from app.services.runner_process import RunnerProcess, RunnerState

log = logging.getLogger(__name__)


def apply_now(runner: RunnerProcess, restart: Callable[[], bool]) -> bool:
    """Reload the model ``runner`` serves so the sharing settings apply now; ``restart`` starts
    it again (``ModelLoader.restart``). False, and nothing happens, unless a model is ready."""
    if runner.state != RunnerState.READY:
        return False

    def again() -> None:
        if not restart():
            log.warning("the model could not be started again after a sharing change")

    def on_state(state: RunnerState) -> None:
        if state not in (RunnerState.STOPPED, RunnerState.FAILED):
            return
        runner.state_changed.disconnect(on_state)
        # Once every handler has seen the stop (the loader is idle again), not from inside
        # the runner's own signal.
        QTimer.singleShot(0, again)

    runner.state_changed.connect(on_state)
    runner.stop()
    return True
