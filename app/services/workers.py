"""Other machines' devices as a service: the worker list, its check, and this computer's own
worker when the user lends it.

The list and the check are pure (app/loading/workers.py); this owns the one copy the window
shows, saves changes on the pool (never on the GUI thread), checks workers there (a child
process that may wait seconds for a worker that does not answer), and runs
``hearth-runner rpc-worker`` as a QProcess when "Lend this computer" is on. That worker holds
its stdin open to us: when Hearth exits, it exits.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, QProcess, QTimer, Signal

from app.i18n import T_
from app.loading.workers import (
    DEFAULT_PORT,
    WorkerCheck,
    check_workers,
    load_workers,
    normalize,
    save_workers,
    worker_command,
)
from app.runner_client.command import NO_CONSOLE_WINDOW
from app.services.tasks import TaskRunner

log = logging.getLogger(__name__)

STOP_GRACE_MS = 2000


class WorkersService(QObject):
    changed = Signal(list)  # the endpoints, after an add or a remove
    checked = Signal(object)  # WorkerCheck
    message = Signal(object, bool)  # a sentence for the user, and whether it is an error
    lending_changed = Signal(str)  # this computer's worker endpoint ("" when it is not lent)

    def __init__(self, tasks: TaskRunner, *,
                 program: Callable[[], Sequence[str] | None] = lambda: None,
                 load: Callable[[], list[str]] = load_workers,
                 save: Callable[[Sequence[str]], None] = save_workers,
                 check: Callable[[Sequence[str], Sequence[str] | None], WorkerCheck] =
                 lambda eps, prog: check_workers(eps, prog),
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks = tasks
        self._program = program
        self._save = save
        self._check = check
        self._endpoints: list[str] = load()
        self._proc: QProcess | None = None
        self._lent = ""
        self._out = b""

    # ---- the list -------------------------------------------------------------------------------

    def endpoints(self) -> list[str]:
        """The workers a load splits over, in the order added (llama.cpp's device order)."""
        return list(self._endpoints)

    def add(self, typed: str) -> bool:
        try:
            endpoint = normalize(typed)
        except ValueError as exc:
            self.message.emit(str(exc), True)
            return False
        if endpoint in self._endpoints:
            self.message.emit(T_("{endpoint} is already in the list.", endpoint=endpoint), True)
            return False
        self._set([*self._endpoints, endpoint])
        self.message.emit(T_("Added {endpoint}: the next load may put layers on it. Checking it…",
                             endpoint=endpoint),
                          False)
        self.check([endpoint])
        return True

    def remove(self, endpoint: str) -> None:
        if endpoint in self._endpoints:
            self._set([e for e in self._endpoints if e != endpoint])

    def _set(self, endpoints: list[str]) -> None:
        self._endpoints = endpoints
        self.changed.emit(list(endpoints))
        save = self._save
        self._tasks.run(lambda: save(endpoints), lambda _r: None,
                        lambda e: self.message.emit(T_("The worker list could not be saved ({error}); it "
                                                       "applies until Hearth closes.", error=str(e)), True),
                        expected=(OSError,))

    def check(self, endpoints: Sequence[str] | None = None) -> None:
        """Ask the workers (all by default) for their devices; ``checked`` brings the answer."""
        eps = list(endpoints if endpoints is not None else self._endpoints)
        if not eps:
            return
        check, program = self._check, self._program
        # The program is found on the pool too: it reads the runtimes' manifests.
        self._tasks.run(lambda: check(eps, program()), self.checked.emit,
                        lambda e: self.message.emit(T_("The workers could not be checked: {error}",
                                                       error=str(e)), True))

    # ---- lending this computer ------------------------------------------------------------------

    @property
    def lent(self) -> str:
        return self._lent

    @property
    def lending(self) -> bool:
        """This computer's worker runs or is starting."""
        return self._proc is not None

    def lend(self, on: bool, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> None:
        """Start (or stop) this computer's worker; ``lending_changed`` says where it listens."""
        if not on:
            self.stop_lending()
            return
        if self._proc is not None:
            return
        cmd = worker_command(self._program(), host=host, port=port)
        proc = QProcess(self)
        proc.setProgram(cmd[0])
        proc.setArguments(cmd[1:])
        if NO_CONSOLE_WINDOW and hasattr(proc, "setCreateProcessArgumentsModifier"):
            # Windows only (PySide6 has the method there): no console window for the worker.
            def no_window(args: Any) -> None:
                args.flags |= NO_CONSOLE_WINDOW

            proc.setCreateProcessArgumentsModifier(no_window)
        proc.readyReadStandardOutput.connect(self._on_stdout)
        proc.finished.connect(lambda code, _s: self._on_finished(proc, code))
        proc.errorOccurred.connect(lambda _e: self._on_finished(proc, None))
        self._proc, self._out = proc, b""
        proc.start()

    def stop_lending(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.closeWriteChannel()  # the worker exits when its stdin closes
            # Not waited for on the GUI thread: killed later if it has not gone by then.
            QTimer.singleShot(STOP_GRACE_MS, lambda: _kill_if_running(proc))
        if proc is not None or self._lent:
            self._lent = ""
            self.lending_changed.emit("")

    def _on_stdout(self) -> None:
        proc = self._proc
        if proc is None:
            return
        self._out += bytes(proc.readAllStandardOutput().data())
        line, nl, _rest = self._out.partition(b"\n")
        if not nl or self._lent:
            return
        try:
            data = json.loads(line)
        except ValueError:
            return
        self._lent = str(data.get("endpoint", ""))
        self.lending_changed.emit(self._lent)

    def _on_finished(self, proc: QProcess, code: int | None) -> None:
        if proc is not self._proc:
            return  # stopped on purpose
        err = bytes(proc.readAllStandardError().data()).decode("utf-8", "replace")
        self._proc = None
        self._lent = ""
        self.lending_changed.emit("")
        self.message.emit(T_("This computer's worker stopped: {why}", why=_last_message(err, code)),
                          True)


def _kill_if_running(proc: QProcess) -> None:
    if proc.state() != QProcess.ProcessState.NotRunning:
        proc.kill()


def _last_message(stderr: str, code: int | None) -> str:
    for line in reversed(stderr.strip().splitlines()):
        try:
            msg = json.loads(line).get("msg")
        except (ValueError, AttributeError):
            continue
        if msg:
            return str(msg)
    return T_("it exited with code {code}", code=code) if code is not None else T_("it could not start")
