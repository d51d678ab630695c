"""This computer's model server as the window sees it: running or not, what it holds, and the
window's asks (start it, unload or pin a model), off the GUI thread.

The window attaches to a server that runs (started at login, or by `hearth serve` in a
terminal) and leaves it running when it closes; one it started itself it stops when it closes.
The model the window loads is handed over to a running server (:func:`serve_window_model`), so
other programs reach it at the server's one address with its one key, and no second copy loads.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from app.i18n import T_
from app.remote.model_server import ModelServerClient, ModelServerError, ResidentModel
from app.remote.share import LOOPBACK
from app.services.runner_process import RunnerProcess, RunnerState
from app.services.tasks import TaskRunner
from app.settings import AppSettings
from app.storage.secrets import SecretStoreError

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 5.0

# Where the server is and its key (called on a worker thread: the key may wait on a keyring).
Address = Callable[[], tuple[str, str]]


class ModelServerService(QObject):
    changed = Signal()  # running, or what it holds, changed
    failed = Signal(object)  # a sentence (Text) to show

    def __init__(self, tasks: TaskRunner, address: Address,
                 start_command: Callable[[], list[str]], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks = tasks
        self._address = address
        self._start_command = start_command
        self.running: bool | None = None  # None: not asked yet
        self.url = ""
        self.models: list[ResidentModel] = []
        self._asking = False
        self._started: subprocess.Popen[bytes] | None = None
        self.handed = ""  # the id the server serves the window's own model by ("": none)
        self._start_if_absent = False  # ensure(): start one once the answer is "none runs"

    # ---- what it holds -----------------------------------------------------------------------

    def refresh(self) -> None:
        if self._asking:
            return
        self._asking = True
        address = self._address

        def work() -> tuple[str, list[ResidentModel] | None]:
            url, key = address()
            client = ModelServerClient(url, key)
            try:
                return url, client.resident()
            finally:
                client.close()

        self._tasks.run(work, self._on_resident, self._on_failed,
                        expected=(ModelServerError, SecretStoreError, ValueError))

    def _on_resident(self, result: tuple[str, list[ResidentModel] | None]) -> None:
        self._asking = False
        url, models = result
        self.url, self.running, self.models = url, models is not None, models or []
        if self._start_if_absent:
            self._start_if_absent = False
            if not self.running:
                self.start()
        self.changed.emit()

    def ensure(self) -> None:
        """A server runs: the one running now (attached), else one this window starts."""
        self._start_if_absent = True
        self.refresh()

    def _on_failed(self, exc: Exception) -> None:
        self._asking = False
        self._start_if_absent = False  # something answers, or no key: starting would not help
        self.running = False
        self.models = []
        self.changed.emit()
        self.failed.emit(str(exc))

    # ---- asks --------------------------------------------------------------------------------

    def unload(self, model: str) -> None:
        self._ask(lambda client: client.unload(model))

    def pin(self, model: str, pinned: bool) -> None:
        self._ask(lambda client: client.pin(model, pinned))

    def _ask(self, what: Callable[[ModelServerClient], None]) -> None:
        address = self._address

        def work() -> None:
            url, key = address()
            client = ModelServerClient(url, key)
            try:
                what(client)
            finally:
                client.close()

        self._tasks.run(work, lambda _none: self.refresh(), self._on_ask_failed,
                        expected=(ModelServerError, SecretStoreError, ValueError))

    def _on_ask_failed(self, exc: Exception) -> None:
        self.failed.emit(str(exc))
        self.refresh()

    # ---- the window's own model -------------------------------------------------------------

    def hand_over(self, path: str, url: str, key: str) -> None:
        """The window loaded ``path`` (its runner at ``url`` with ``key``): where a server runs,
        it serves that runner under the model's id instead of loading a copy of its own. No
        server: nothing (the one that starts later is handed the next load)."""
        address = self._address

        def work() -> str:
            server_url, server_key = address()
            client = ModelServerClient(server_url, server_key)
            try:
                return "" if client.resident() is None else client.adopt(path, url, key)
            finally:
                client.close()

        self._tasks.run(work, self._on_handed, self._on_ask_failed,
                        expected=(ModelServerError, SecretStoreError, ValueError))

    def _on_handed(self, model: str) -> None:
        self.handed = model
        if model:
            log.info("the model server serves the window's %s", model)
        self.refresh()

    def take_back(self) -> None:
        """The window's model stops: the server forgets it now (else it notices within a few
        seconds), so no request goes to a runner that is gone."""
        model, self.handed = self.handed, ""
        if model:
            self._ask(lambda client: client.unload(model))

    def start(self) -> None:
        """Start a server (the window stops it when it closes); it says when it listens."""
        if self._started is not None and self._started.poll() is None:
            return
        command = self._start_command()
        try:
            self._started = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError as exc:
            self.failed.emit(T_("The model server could not be started: {reason}.",
                                reason=exc.strerror or exc))
            return
        process = self._started

        def work() -> bytes:
            assert process.stdout is not None
            return process.stdout.readline()  # the "listening" line, or b"" when it ended

        self._tasks.run(work, self._on_started)

    def _on_started(self, line: bytes) -> None:
        if not line:
            self.failed.emit(T_("The model server stopped as it started: another program may "
                                "use its port (Settings > Sharing), or see the log."))
        self.refresh()

    def stop_started(self) -> None:
        """The window closes: stop the server it started (one it found running stays)."""
        process, self._started = self._started, None
        if process is None or process.poll() is not None:
            return
        process.terminate()  # SIGTERM: it stops its models' runners and exits
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()


def serve_window_model(runner: RunnerProcess, server: ModelServerService,
                       settings: Callable[[], AppSettings]) -> Callable[[], None]:
    """The window's runner and the model server, wired: each load the window makes is handed
    over to a running server (and taken back when it stops), and while a server runs the
    window's runner starts on a free loopback port with a key of its own, since the server holds
    Sharing's port and key and shares the window's model itself. Returns what applies the
    settings to the next start (call it when they change)."""
    offered = [""]  # the runner URL last handed over: once per load, not at every refresh

    def configure() -> None:
        s = settings()
        if server.running:
            runner.configure(port=0, host=LOOPBACK, limits=s.runner_limits, sharing=False,
                             image_links=s.image_links)
        else:
            runner.configure(port=s.launch_port, host=s.launch_host, limits=s.runner_limits,
                             sharing=s.share_runner, image_links=s.image_links)

    def offer() -> None:
        if runner.state == RunnerState.READY and runner.url != offered[0] and \
                server.running is not False:
            offered[0] = runner.url
            server.hand_over(runner.model, runner.url, runner.key or "")

    def on_state(state: RunnerState) -> None:
        if state == RunnerState.READY:
            offer()
        elif offered[0]:
            offered[0] = ""
            server.take_back()

    def on_server() -> None:
        configure()
        offer()  # a server started after the model was loaded gets it too

    runner.state_changed.connect(on_state)
    server.changed.connect(on_server)
    return configure
