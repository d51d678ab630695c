"""The runner child process, as a QObject with signals.

No thread: QProcess delivers output through the event loop. The runner's stdout carries one
"listening" line; stderr carries JSON log lines, kept so a failure can be explained in the
runner's own words. Health is polled off the GUI thread through the task runner.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from app.i18n import T_
from app.remote.share import LOOPBACK, SHARED_KEY, SharedKey, local_url
from app.runner_client import RunnerClient, RunnerError
from app.runner_client.command import (
    NO_CONSOLE_WINDOW,
    RunnerLaunch,
    RunnerProgram,
    build_launch,
)
from app.runner_client.limits import limit_flags, output_line_bytes
from app.runner_client.lines import Line, LineBuffer
from app.services.tasks import TaskRunner
from app.storage.secrets import SecretStoreError

log = logging.getLogger(__name__)

POLL_MS = 150
STOP_GRACE_MS = 2500  # the runner promises to exit within 2 s of stdin closing
# The longest line of the runner's output kept (the rest is dropped, the line marked "…(cut)"):
# its log lines are a few hundred bytes, but llama.cpp once wrote a 1.8 GB grammar as one line.
# The settings' runner_limits may change it (max_output_line_kib).
MAX_OUTPUT_LINE_BYTES = output_line_bytes({})


class RunnerState(Enum):
    STOPPED = "stopped"
    STARTING = "starting"  # process started, not yet listening
    LOADING = "loading"
    READY = "ready"
    STOPPING = "stopping"
    FAILED = "failed"


@dataclass(frozen=True)
class RunnerExit:
    """How the last runner process ended, read by whoever handles ``failed``.

    The exit code (``runner.wire.exits.ExitCode``) tells "out of memory" from "cannot load": the
    loader retries smaller settings only for the first. ``code`` is None when the process never
    started.
    """

    code: int | None
    crashed: bool  # killed by a signal or crashed: ``code`` means nothing then
    state: RunnerState  # the state it was in when it ended (LOADING, READY, ...)
    message: str


class RunnerProcess(QObject):
    state_changed = Signal(object)  # RunnerState
    progress = Signal(float)  # 0..1, llama.cpp's real load progress
    ready = Signal()
    failed = Signal(object)  # a sentence for the user
    log_event = Signal(dict)  # each JSON log line from the runner

    def __init__(self, tasks: TaskRunner, parent: QObject | None = None, *, port: int = 0,
                 host: str = LOOPBACK, limits: Mapping[str, float] | None = None,
                 sharing: bool = False, shared_key: SharedKey | None = None,
                 image_links: bool = False) -> None:
        """``port``: where the next runner listens (0: any free port; the app settings'
        ``launch_port``); ``host``: the interface (the settings' ``launch_host``); ``limits``:
        the settings' ``runner_limits``, passed as the runner's flags; ``sharing``: other apps
        use the model (the settings' ``share_runner``), so the runner is started with the kept
        ``shared_key`` (default: the process's one, app/remote/share.py) rather than a new key
        per start; ``image_links``: the runner fetches images from links in requests (the
        settings' ``image_links``). :meth:`configure` changes them (the Settings dialog's
        changes) from the next start on."""
        super().__init__(parent)
        self._tasks = tasks
        self.port = port
        self.host = host
        self.sharing = sharing
        self.shared_key = shared_key if shared_key is not None else SHARED_KEY
        self.limits: Mapping[str, float] = dict(limits or {})
        self.image_links = image_links
        self.listen_url = ""  # what the runner reported (0.0.0.0 when it listens everywhere)
        self._proc: QProcess | None = None
        self._launch: RunnerLaunch | None = None
        self._client: RunnerClient | None = None
        self._state = RunnerState.STOPPED
        self._stdout = LineBuffer(MAX_OUTPUT_LINE_BYTES)
        self._stderr = LineBuffer(MAX_OUTPUT_LINE_BYTES)
        self._last_error = ""
        self._generation = 0  # bumps on each start so stale poll results are dropped
        self.last_exit: RunnerExit | None = None
        self.url = ""
        self.model = ""

    @property
    def state(self) -> RunnerState:
        return self._state

    @property
    def key(self) -> str | None:
        return self._launch.key if self._launch else None

    def configure(self, *, port: int, host: str, limits: Mapping[str, float],
                  sharing: bool, image_links: bool = False) -> None:
        """Where the next runner listens, its limits, whether other apps use it and whether it
        fetches image links (the settings' ``launch_port``, ``launch_host``,
        ``runner_limits``, ``share_runner``, ``image_links``): a runner already started keeps
        its own until it is started again."""
        self.port = port
        self.host = host
        self.limits = dict(limits)
        self.sharing = sharing  # the kept key, not a new one per load
        self.image_links = image_links

    def start(self, model: str, flags: list[str] | None = None,
              program: RunnerProgram | Sequence[str] | None = None) -> None:
        """Serve ``model`` with ``program`` (the plan's build's: the runtime the app chose;
        None: the runner with no runtime named)."""
        if self._proc is not None:
            raise RuntimeError("stop the running model first")
        self._generation += 1
        self.model = model
        self._launch = launch = build_launch(model, [*(flags or []), *limit_flags(self.limits)],
                                             program=program, port=self.port, host=self.host,
                                             key=self._next_key(),
                                             image_links=self.image_links)
        self._stdout = LineBuffer(output_line_bytes(self.limits))
        self._stderr = LineBuffer(output_line_bytes(self.limits))
        self._last_error = ""
        self.last_exit = None
        self.url = self.listen_url = ""
        proc = QProcess(self)
        env = QProcessEnvironment()
        for k, v in launch.env.items():
            env.insert(k, v)
        proc.setProcessEnvironment(env)
        if NO_CONSOLE_WINDOW and hasattr(proc, "setCreateProcessArgumentsModifier"):
            # Windows only (PySide6 has the method there): no console window for the runner.
            def no_window(args: Any) -> None:
                args.flags |= NO_CONSOLE_WINDOW

            proc.setCreateProcessArgumentsModifier(no_window)
        proc.readyReadStandardOutput.connect(self._on_stdout)
        proc.readyReadStandardError.connect(self._on_stderr)
        proc.finished.connect(self._on_finished)
        proc.errorOccurred.connect(self._on_error)
        self._proc = proc
        self._set_state(RunnerState.STARTING)
        log.info("starting runner for %s", model)
        proc.start(launch.program, launch.args)  # stdin stays open: closing it stops the runner

    def _next_key(self) -> str | None:
        """The kept shared key while sharing (read once per process, then from memory: see
        SharedKey); None, a new key for this start, otherwise or when the store fails (the
        model still loads; other apps then need the key shown in Settings)."""
        if not self.sharing:
            return None
        try:
            return self.shared_key.get()
        except SecretStoreError as exc:
            log.warning("the shared key could not be read; this load has a key of its own: %s",
                        exc)
            return None

    def stop(self) -> None:
        """Ask politely (close stdin), then terminate, then kill; never blocks."""
        proc = self._proc
        if proc is None or self._state == RunnerState.STOPPING:
            return
        self._set_state(RunnerState.STOPPING)
        proc.closeWriteChannel()
        QTimer.singleShot(STOP_GRACE_MS, lambda p=proc: self._escalate(p, kill=False))

    def stop_and_wait(self, msecs: int = 3000) -> None:
        """For application exit only: the window is closing, a short wait is expected."""
        proc = self._proc
        if proc is None:
            return
        self._set_state(RunnerState.STOPPING)
        proc.closeWriteChannel()
        if not proc.waitForFinished(msecs):
            proc.kill()
            proc.waitForFinished(1000)

    def client(self) -> RunnerClient:
        """A new client for the current runner (callers own and close it)."""
        if not self.url or self._launch is None:
            raise RunnerError(T_("No model is loaded."))
        return RunnerClient(self.url, self._launch.key)

    # ---- process events ------------------------------------------------------------------

    def _escalate(self, proc: QProcess, kill: bool) -> None:
        if proc is not self._proc or proc.state() == QProcess.ProcessState.NotRunning:
            return
        if kill:
            log.warning("runner did not stop; killing it")
            proc.kill()
        else:
            proc.terminate()
            QTimer.singleShot(1000, lambda: self._escalate(proc, kill=True))

    def _on_stdout(self) -> None:
        assert self._proc is not None
        for line in self._stdout.feed(bytes(self._proc.readAllStandardOutput().data())):
            if self.url or line.cut:
                continue  # only the first "listening" line means anything
            try:
                event = json.loads(line.data)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("event") == "listening" and \
                    isinstance(event.get("url"), str):
                self.listen_url = event["url"]
                self.url = local_url(self.listen_url)  # Hearth's own way in: loopback
                self._client = RunnerClient(self.url, self.key, timeout=2.0)
                self._set_state(RunnerState.LOADING)
                self._poll(self._generation)

    def _on_stderr(self) -> None:
        assert self._proc is not None
        self._log_lines(self._stderr.feed(bytes(self._proc.readAllStandardError().data())))

    def _log_lines(self, lines: list[Line]) -> None:
        for line in lines:
            if not line.data.strip():
                continue
            try:
                event = {"level": "info", "msg": line.text()} if line.cut else json.loads(line.data)
            except ValueError:
                event = {"level": "info", "msg": line.text()}
            if not isinstance(event, dict):
                continue
            if event.get("level") in ("error", "critical"):
                self._last_error = str(event.get("msg", ""))
            self.log_event.emit(event)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            program = self._launch.program if self._launch else "?"
            message = T_("The model runner could not be started ({program}). Reinstall Hearth.",
                         program=program)
            self.last_exit = RunnerExit(None, False, self._state, message)
            self._cleanup()
            self._fail(message)

    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        self._on_stderr()
        self._log_lines(self._stderr.finish())  # a last line without its newline
        was = self._state
        self._cleanup()
        if was == RunnerState.STOPPING:
            self._set_state(RunnerState.STOPPED)
            return
        crashed = status == QProcess.ExitStatus.CrashExit
        if crashed:
            # The runner's own last error line stays English (it is the runner's word).
            reason = self._last_error or T_("it crashed")
            message: str = T_("The model runner stopped unexpectedly: {reason}.", reason=reason)
        else:
            message = self._last_error or T_("The model runner exited (code {code}).", code=code)
        self.last_exit = RunnerExit(None if crashed else code, crashed, was, message)
        self._fail(message)

    def _cleanup(self) -> None:
        if self._client is not None:
            client = self._client
            self._client = None
            self._tasks.run(client.close, lambda _r: None)
        if self._proc is not None:
            self._proc.deleteLater()
            self._proc = None
        self.url = self.listen_url = ""

    def _fail(self, message: str) -> None:
        self._set_state(RunnerState.FAILED)
        self.failed.emit(message)

    def _set_state(self, state: RunnerState) -> None:
        if state != self._state:
            self._state = state
            self.state_changed.emit(state)

    # ---- health polling (off the GUI thread) --------------------------------------------

    def _poll(self, generation: int) -> None:
        client = self._client
        if client is None or generation != self._generation:
            return
        self._tasks.run(client.health, lambda h: self._on_health(generation, h),
                        lambda e: self._on_health_error(generation, e))

    def _on_health(self, generation: int, health: object) -> None:
        if generation != self._generation or self._state != RunnerState.LOADING:
            return
        status = getattr(health, "status", "error")
        if status == "ok":
            self.progress.emit(1.0)
            self._set_state(RunnerState.READY)
            self.ready.emit()
            return
        if status == "error":
            self._last_error = getattr(health, "message", "") or self._last_error
            return  # the runner exits next; _on_finished reports it with the message
        self.progress.emit(float(getattr(health, "progress", 0.0)))
        QTimer.singleShot(POLL_MS, lambda: self._poll(generation))

    def _on_health_error(self, generation: int, exc: Exception) -> None:
        if generation != self._generation or self._state != RunnerState.LOADING:
            return
        log.debug("health poll failed: %s", exc)
        QTimer.singleShot(POLL_MS, lambda: self._poll(generation))
