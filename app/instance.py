"""One Hearth per data folder: a second start hands its file to the first and ends.

Two app instances on one data folder each resumed the same queued downloads and wrote the same
files (the download list, the settings, the window's place). Now the first start takes an OS
lock in the data folder (app/storage/filelock.py: the kernel drops it when the process dies, so
a crash never locks Hearth out) and listens on a local socket named after that folder. A later
start finds the lock taken, connects, sends its request (the .gguf file of ``hearth MODEL``,
made absolute against its own working directory, and ``--load``), and exits 0 once the first
has answered; the first brings its window forward and selects the file as at its own start.

Keyed by the data folder, not by the user: portable installs and tests (``HEARTH_HOME``) run a
Hearth of their own beside the user's. The lock is taken where the GUI starts
(``app.__main__.run_gui``), never in ``compose()``, so tests that compose windows are not
single-instance. Qt's local socket is used (``QLocalServer``: a Unix socket, a named pipe on
Windows) because it runs on the GUI's event loop with no thread of its own; if QtNetwork is
missing (a frozen build that left it out) the lock still makes Hearth single-instance and a
second start says that Hearth is running instead of handing over.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

from app.storage.filelock import FileLock

if TYPE_CHECKING:
    from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

LOCK_NAME = "hearth.lock"
_MAX_REQUEST = 64 * 1024  # a path and a flag; anything longer is not a Hearth talking
# The first Hearth listens right after it takes the lock, so a socket that is not there yet
# appears within moments; answering waits for its event loop, which starts after the window is
# built (seconds on a slow disk).
CONNECT_TIMEOUT = 3.0
ANSWER_TIMEOUT = 30.0


@dataclass(frozen=True)
class StartRequest:
    """What a second start asks of the first: the file it was given, and whether to load it."""

    model: str | None = None
    load: bool = False

    @classmethod
    def from_args(cls, model: str | None, load: bool) -> StartRequest:
        # The first Hearth runs in another working directory: a relative path is resolved here
        # (an address is left as it is).
        if model and "://" not in model:
            model = os.path.abspath(model)
        return cls(model or None, bool(load))

    def encode(self) -> bytes:
        return json.dumps({"model": self.model, "load": self.load}).encode("utf-8") + b"\n"

    @classmethod
    def decode(cls, line: bytes) -> StartRequest:
        """The request in one line; ValueError for anything else."""
        raw = json.loads(line.decode("utf-8"))
        if not isinstance(raw, dict):
            raise ValueError("not a start request")
        model, load = raw.get("model"), raw.get("load", False)
        if model is not None and (not isinstance(model, str) or not model or "\0" in model):
            raise ValueError("the model must be a path")
        if not isinstance(load, bool):
            raise ValueError("load must be true or false")
        return cls(model, load)


def server_name(data_dir: Path) -> str:
    """The local socket of the Hearth that holds ``data_dir``.

    A hash of the folder keeps the name short (a Unix socket path has about 100 bytes) and the
    same for every start on that folder. Where the session has a private runtime folder (Linux's
    XDG_RUNTIME_DIR, 0700) the socket goes there, out of other users' reach; otherwise Qt puts a
    plain name in the temporary folder (per user on macOS) or makes it a named pipe (Windows),
    and the server accepts only its own user (UserAccessOption).
    """
    key = hashlib.sha256(os.fsencode(str(data_dir.resolve()))).hexdigest()[:24]
    name = f"hearth-{key}"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if sys.platform != "win32" and runtime and os.path.isdir(runtime):
        return os.path.join(runtime, f"{name}.sock")
    return name


class Window(Protocol):
    """What bringing Hearth forward needs of its main window."""

    def isMinimized(self) -> bool: ...  # Qt's names

    def showNormal(self) -> None: ...

    def show(self) -> None: ...

    def raise_(self) -> None: ...

    def activateWindow(self) -> None: ...

    def use_model(self, path: str) -> None: ...

    def load_selected(self) -> None: ...


def bring_forward(window: Window, request: StartRequest) -> None:
    """Show the window on top, then select (and load) the file, as ``hearth MODEL`` at start."""
    if window.isMinimized():
        window.showNormal()
    else:
        window.show()
    window.raise_()
    window.activateWindow()
    if request.model:
        window.use_model(request.model)
        if request.load:
            window.load_selected()


class SingleInstance:
    """The claim on one data folder: :meth:`claim` at start, then :meth:`serve` with the
    window (the first Hearth), or :meth:`hand_over` (a later start)."""

    def __init__(self, data_dir: Path, *, connect_timeout: float = CONNECT_TIMEOUT,
                 answer_timeout: float = ANSWER_TIMEOUT) -> None:
        self.data_dir = Path(data_dir)
        self.name = server_name(self.data_dir)
        self.lock = FileLock(self.data_dir / LOCK_NAME, "the Hearth app")
        self.connect_timeout = connect_timeout
        self.answer_timeout = answer_timeout
        self._server: QLocalServer | None = None
        self._clients: set[QLocalSocket] = set()
        self._handler: Callable[[StartRequest], None] | None = None
        self._pending: list[StartRequest] = []

    # -- the first Hearth --------------------------------------------------------------------

    def claim(self) -> bool:
        """Become the Hearth of this data folder and listen; False when another one is."""
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            if not self.lock.try_acquire():
                return False
        except OSError as exc:  # the start-up check let an odd folder through: run unguarded
            log.warning("cannot lock the data folder %s (%s); a second start would open a second "
                        "Hearth", self.data_dir, exc)
            return True
        try:
            from PySide6.QtCore import QCoreApplication
            from PySide6.QtNetwork import QLocalServer
        except ImportError as exc:
            log.warning("no local socket (%s): a second start cannot hand its file over", exc)
            return True
        # A Hearth that was killed leaves its socket file; with the lock held nobody else
        # listens on this name, so it can go.
        QLocalServer.removeServer(self.name)
        server = QLocalServer()
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            log.warning("cannot listen on %s (%s): a second start cannot hand its file over",
                        self.name, server.errorString())
            return True
        server.newConnection.connect(self._accept)
        self._server = server
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.close)
        return True

    def serve(self, window: Window) -> None:
        """Requests from later starts (also those that came while the window was being built)
        bring ``window`` forward and open their file."""
        self.on_request(lambda request: bring_forward(window, request))

    def on_request(self, handler: Callable[[StartRequest], None]) -> None:
        self._handler = handler
        pending, self._pending = self._pending, []
        for request in pending:
            self._deliver(request)

    def close(self) -> None:
        """Stop listening and let go of the folder (the process ending does it too)."""
        if self._server is not None:
            self._server.close()
            self._server = None
        self.lock.release()

    def _accept(self) -> None:
        server = self._server
        while server is not None and server.hasPendingConnections():
            sock = server.nextPendingConnection()
            if sock is None:
                return
            self._clients.add(sock)
            buffer = bytearray()
            sock.readyRead.connect(lambda s=sock, b=buffer: self._read(s, b))
            sock.disconnected.connect(lambda s=sock: self._forget(s))
            if sock.bytesAvailable():
                self._read(sock, buffer)

    def _read(self, sock: QLocalSocket, buffer: bytearray) -> None:
        buffer += bytes(sock.readAll().data())
        if b"\n" not in buffer:
            if len(buffer) > _MAX_REQUEST:
                log.warning("dropped a local connection that sent %d bytes without a request",
                            len(buffer))
                sock.abort()
            return
        line = bytes(buffer[:buffer.index(b"\n")])
        buffer.clear()
        try:
            request = StartRequest.decode(line)
        except (ValueError, UnicodeDecodeError) as exc:
            log.warning("ignored a start request that Hearth cannot read: %s", exc)
            sock.write(b"no\n")
            sock.disconnectFromServer()
            return
        # Logged before the answer: once the later start has ended, the log says what it asked.
        log.info("another start asked for the window%s", f" and {request.model}" if request.model
                 else "")
        sock.write(b"ok\n")
        sock.flush()
        sock.disconnectFromServer()
        self._deliver(request)

    def _forget(self, sock: QLocalSocket) -> None:
        self._clients.discard(sock)
        sock.deleteLater()

    def _deliver(self, request: StartRequest) -> None:
        if self._handler is None:
            self._pending.append(request)
            return
        try:
            self._handler(request)
        except Exception:  # one bad request must not stop the next
            log.exception("could not open what another start asked for")

    # -- a later start -----------------------------------------------------------------------

    def hand_over(self, request: StartRequest, err: TextIO) -> int:
        """Send ``request`` to the Hearth holding the folder: 0 when it answered, else 1 with a
        sentence on ``err``."""
        holder = self.lock.holder()
        if self._send(request, holder.pid if holder else None):
            what = f" with {request.model}" if request.model else ""
            print(f"Hearth is already running; its window was brought forward{what}.", file=err)
            return 0
        who = f" ({holder})" if holder else ""
        print(f"Hearth is already running for {self.data_dir}{who} but does not answer. Switch to "
              "its window, or end it and start Hearth again.", file=err)
        log.warning("the running Hearth%s did not answer a start request", who)
        return 1

    def _send(self, request: StartRequest, pid: int | None) -> bool:
        try:
            from PySide6.QtNetwork import QLocalSocket
        except ImportError:
            return False
        _allow_foreground(pid)
        sock = QLocalSocket()
        deadline = time.monotonic() + self.connect_timeout
        while True:
            sock.connectToServer(self.name)
            if sock.waitForConnected(_ms(deadline)):
                break
            sock.abort()
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)  # the first Hearth took the lock but is not listening yet
        try:
            sock.write(request.encode())
            if not sock.waitForBytesWritten(_ms(deadline)):
                return False
            answer = b""
            deadline = time.monotonic() + self.answer_timeout
            while b"\n" not in answer:
                if not sock.waitForReadyRead(_ms(deadline)):
                    answer += bytes(sock.readAll().data())
                    break
                answer += bytes(sock.readAll().data())
            return answer.startswith(b"ok\n")
        finally:
            sock.abort()


def _ms(deadline: float) -> int:
    return max(1, int((deadline - time.monotonic()) * 1000))


def _allow_foreground(pid: int | None) -> None:
    """Windows lets only the program the user just started take the foreground: this start
    passes that right on to the first Hearth, so its window can come to the front."""
    if sys.platform != "win32" or pid is None:
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.windll.user32.AllowSetForegroundWindow(pid)
