"""Run a short pure function off the GUI thread and get its outcome back on the GUI thread.

Used for everything that may touch the network, the disk or a subprocess (hardware detection,
health polls, plans), so the window never freezes. Results arrive through queued signals, which Qt
delivers in the receiver's thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

log = logging.getLogger(__name__)


class _Relay(QObject):
    succeeded = Signal(object)
    failed = Signal(object)


class _Job(QRunnable):
    def __init__(self, fn: Callable[[], Any], relay: _Relay) -> None:
        super().__init__()
        self._fn = fn
        self._relay = relay

    def run(self) -> None:
        try:
            result = self._fn()
        except Exception as exc:  # delivered to the caller, who shows it
            log.debug("task failed", exc_info=True)
            self._relay.failed.emit(exc)
        else:
            self._relay.succeeded.emit(result)


class TaskRunner(QObject):
    """Owns a thread pool and keeps relays alive until their job reports back."""

    def __init__(self, parent: QObject | None = None, max_threads: int = 4) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)
        self._live: set[_Relay] = set()

    def run(
        self,
        fn: Callable[[], Any],
        on_ok: Callable[[Any], None],
        on_err: Callable[[Exception], None] | None = None,
    ) -> None:
        """Call ``fn()`` in the pool; ``on_ok(result)`` or ``on_err(exc)`` runs on this thread."""
        relay = _Relay()  # created here, so it lives in the caller's (GUI) thread
        self._live.add(relay)

        def done_ok(result: object) -> None:
            self._live.discard(relay)
            on_ok(result)

        def done_err(exc: object) -> None:
            self._live.discard(relay)
            if on_err is not None:
                on_err(exc)  # type: ignore[arg-type]
            else:
                log.error("background task failed: %s", exc)

        relay.succeeded.connect(done_ok)
        relay.failed.connect(done_err)
        self._pool.start(_Job(fn, relay))

    def wait(self, msecs: int = 5000) -> bool:
        """Wait for running jobs (used on shutdown and in tests)."""
        return bool(self._pool.waitForDone(msecs))
