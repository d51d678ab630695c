"""Run work off the GUI thread and get its outcome back on the GUI thread.

Two kinds of work, kept apart so a slow one never stalls a quick one:

- ``run``: a short call (a health poll, a search, a save) on a small pool. Give each kind of
  poll its own :class:`TaskRunner` (its own lane): a 60-second dry run must never sit in front of
  the load-progress polls.
- ``start_job``: a long job (a plan with its dry run, soon a download) on a thread of its own,
  given a :class:`~app.jobs.CancelToken`. Cancelling drops its outcome; the job stops at its next
  safe point or when the token's callbacks kill what it waits on. Job threads are daemons, so
  closing the window during a plan exits at once instead of waiting for it.

Results arrive through queued signals, which Qt delivers in the receiver's (GUI) thread.

The pool is Python's threads, not a ``QThreadPool``: a ``QThreadPool`` destroyed with its owner
(garbage collection can do that at any moment) waits for its running jobs inside the C++
destructor, and a Python job needs the GIL to finish. That is the suspected cause of a test run
that hung in CI in native code (not reproduced here); Python threads take Qt out of it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import shiboken6
from PySide6.QtCore import QObject, Signal

from app.jobs import CancelledError, CancelToken

log = logging.getLogger(__name__)

T = TypeVar("T")


class _Relay(QObject):
    """The one QObject every outcome travels through, made by the first TaskRunner (in the GUI
    thread) and never freed. Not one per call: a QObject made per call was freed by the worker
    thread that dropped the last reference to it, and its destructor, disconnecting under Qt's
    signal-slot mutex, waited for the GIL while the GUI thread held the GIL and waited for that
    mutex (a journey hung so in a fresh-clone run). Nor one per runner: a runner's last
    reference may go on a worker thread too."""

    delivered = Signal(object)  # (_Outcome, succeeded: bool, result or exception)

    def __init__(self) -> None:
        super().__init__()
        self.delivered.connect(self._dispatch)

    def _dispatch(self, message: tuple[_Outcome[Any], bool, object]) -> None:
        outcome, succeeded, value = message
        if succeeded:
            outcome._ok(value)
        else:
            outcome._err(value)


_relay: list[_Relay] = []  # the one relay, once made (kept for the process's life)


def _the_relay() -> _Relay:
    if not _relay:
        _relay.append(_Relay())
    return _relay[0]


class _Outcome(Generic[T]):
    """Delivers one result on the GUI thread, through its runner's relay. Plain Python: whichever
    thread frees it, no Qt object goes with it."""

    def __init__(self, owner: TaskRunner, on_ok: Callable[[T], None],
                 on_err: Callable[[Exception], None] | None, what: str,
                 token: CancelToken | None = None) -> None:
        self._owner = owner
        self._relay = _the_relay()
        self._on_ok = on_ok
        self._on_err = on_err
        self._what = what
        self._token = token
        owner._live.add(self)

    def _ok(self, result: object) -> None:
        self._owner._live.discard(self)
        if (self._token is not None and self._token.cancelled) or self._orphaned():
            return
        self._on_ok(result)  # type: ignore[arg-type]

    def _err(self, exc: object) -> None:
        self._owner._live.discard(self)
        if isinstance(exc, CancelledError) or (self._token is not None and self._token.cancelled):
            return
        if self._orphaned():
            return
        if self._on_err is not None:
            self._on_err(exc)  # type: ignore[arg-type]
        else:
            log.error("%s failed: %s", self._what, exc)

    def _orphaned(self) -> bool:
        """The runner that started this was deleted (its window closed, or a test's composed
        window torn down) while the call ran: the services its callback would touch went with
        it, so the outcome is dropped instead of raising "Signal source has been deleted"."""
        return not shiboken6.isValid(self._owner)

    def _send(self, succeeded: bool, value: object) -> None:
        try:
            self._relay.delivered.emit((self, succeeded, value))
        except RuntimeError:
            pass  # the application is being torn down: nobody to tell

    def deliver(self, fn: Callable[[], T], expected: tuple[type[BaseException], ...]) -> None:
        """Run ``fn`` (in a worker thread) and send its outcome to the GUI thread."""
        try:
            result = fn()
        except CancelledError as exc:
            self._send(False, exc)
        except Exception as exc:  # delivered to the caller, who shows it
            if isinstance(exc, expected):
                log.info("%s failed: %s", self._what, exc)
            else:
                # Unexpected: the traceback goes to the log file, where a bug report needs it.
                log.error("%s failed", self._what, exc_info=True)
            self._send(False, exc)
        else:
            self._send(True, result)


class _Pool:
    """Up to ``size`` daemon threads taking calls from one queue; idle ones end after a while.

    Daemons: a call stuck on the network never keeps a closing app alive.
    """

    IDLE_S = 30.0

    def __init__(self, size: int, name: str) -> None:
        self._size = max(1, size)
        self._name = name
        self._queue: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Condition()
        self._threads = 0
        self._pending = 0  # queued or running

    def submit(self, call: Callable[[], None]) -> None:
        with self._lock:
            self._pending += 1
            # Under the lock, so a thread ending for idleness never misses it.
            self._queue.put(call)
            if self._pending <= self._threads or self._threads >= self._size:
                return  # a thread is free, or all are busy and one takes it when done
            self._threads += 1
            number = self._threads
        threading.Thread(target=self._work, name=f"{self._name}-{number}", daemon=True).start()

    def _work(self) -> None:
        while True:
            try:
                call = self._queue.get(timeout=self.IDLE_S)
            except queue.Empty:
                with self._lock:
                    if self._queue.empty():
                        self._threads -= 1
                        return
                continue
            try:
                call()
            except BaseException:  # deliver() catches; this only guards the pool itself
                log.exception("%s: a task escaped its handler", self._name)
            finally:
                with self._lock:
                    self._pending -= 1
                    self._lock.notify_all()

    def wait(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True


class TaskRunner(QObject):
    """Owns a thread pool (one lane of short calls) and the long jobs started through it."""

    def __init__(self, parent: QObject | None = None, max_threads: int = 4,
                 name: str = "tasks") -> None:
        super().__init__(parent)
        self.name = name
        self._pool = _Pool(max_threads, name)
        _the_relay()  # made here, in the GUI thread, before any worker needs it
        self._live: set[_Outcome[Any]] = set()
        self._jobs: set[CancelToken] = set()
        self._held: list[Callable[[], None]] | None = None  # starts waiting for release()

    def hold(self) -> None:
        """Keep what is asked until :meth:`release`: at start-up the window's first frame comes
        first, and Python threads importing and probing at the same time would share the GIL
        with it (on two cores the first frame came about a third later)."""
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """Start what was asked while held, in the order asked; later work starts at once."""
        held, self._held = self._held, None
        for start in held or ():
            start()

    def _start(self, start: Callable[[], None]) -> None:
        if self._held is not None:
            self._held.append(start)
        else:
            start()

    def run(
        self,
        fn: Callable[[], T],
        on_ok: Callable[[T], None],
        on_err: Callable[[Exception], None] | None = None,
        *,
        expected: tuple[type[BaseException], ...] = (),
    ) -> None:
        """Call ``fn()`` in the pool; ``on_ok(result)`` or ``on_err(exc)`` runs on this thread.

        ``expected``: exception types that are outcomes, not bugs (logged without a traceback).
        """
        outcome: _Outcome[T] = _Outcome(self, on_ok, on_err, self.name)
        self._start(lambda: self._pool.submit(lambda: outcome.deliver(fn, expected)))

    def start_job(
        self,
        fn: Callable[[CancelToken], T],
        on_ok: Callable[[T], None],
        on_err: Callable[[Exception], None] | None = None,
        *,
        name: str = "job",
        expected: tuple[type[BaseException], ...] = (),
    ) -> CancelToken:
        """Run ``fn(token)`` on a thread of its own; returns the token that cancels it.

        After ``token.cancel()`` neither callback runs, whatever the job still returns.
        """
        token = CancelToken()
        outcome: _Outcome[T] = _Outcome(self, on_ok, on_err, name, token)
        self._jobs.add(token)

        def body() -> None:
            try:
                outcome.deliver(lambda: fn(token), expected)
            finally:
                self._jobs.discard(token)

        self._start(threading.Thread(target=body, name=f"{self.name}:{name}", daemon=True).start)
        return token

    def cancel_jobs(self) -> None:
        """Cancel every long job still running (the window is closing)."""
        for token in list(self._jobs):
            token.cancel()

    def wait(self, msecs: int = 5000) -> bool:
        """Wait for the short calls in the pool (used on shutdown and in tests)."""
        return self._pool.wait(msecs / 1000)
