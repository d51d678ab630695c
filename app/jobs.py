"""Cancel tokens and progress callbacks for long pure jobs (no Qt).

Pure code that may run for seconds or minutes (the dry run, soon downloads) takes a
:class:`CancelToken` and an optional :data:`ProgressFn`. The GUI's job runner
(app/services/tasks.py) makes the token, hands it to the job and cancels it when the user
unloads or closes the window; the job checks it at its own safe points, or registers a callback
that interrupts what it is waiting on (a child process is killed, a socket closed).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

# (fraction done 0..1 or None when unknown, a short sentence for the user)
ProgressFn = Callable[[float | None, str], None]


class CancelledError(Exception):
    """The job was cancelled; not a failure to show the user."""

    def __init__(self, message: str = "Cancelled.") -> None:
        super().__init__(message)


class CancelToken:
    """Set once, from any thread; callbacks run once, on the cancelling thread."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            try:
                cb()
            except Exception:  # a callback that fails must not stop the others
                import logging

                logging.getLogger(__name__).exception("cancel callback failed")

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` when cancelled (at once if already); returns an unregister function."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)

                def remove() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return remove
        callback()
        return lambda: None

    def check(self) -> None:
        """Raise :class:`CancelledError` if cancelled: call at the job's safe points."""
        if self._event.is_set():
            raise CancelledError()

    def wait(self, timeout: float | None = None) -> bool:
        """Sleep up to ``timeout`` seconds, waking early on cancel; True if cancelled."""
        return self._event.wait(timeout)


def never_cancelled() -> CancelToken:
    """A token nobody cancels, for callers that have none (the command line)."""
    return CancelToken()
