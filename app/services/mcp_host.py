"""The MCP host process, from the window's side: start it, speak its JSON lines, keep the state.

The MCP SDK (and pydantic and starlette with it) is imported only in that child process
(``python -m mcphost``, mcphost/); this service reaches it through ``mcphost.wire``, the
standard-library protocol module, as the window reaches a runner. QProcess delivers the host's
lines through the event loop (no thread); each line is bounded (app/runner_client/lines.py).

A server starts when a conversation that uses it sends a message (:meth:`McpHostService.ensure`)
or when the person presses Test in Settings (:meth:`McpHostService.start`), and stops when it is
turned off or removed, or when Hearth closes: the host's stdin closes and it stops every server
with its whole process group, so a server started through ``npx`` or ``uvx`` leaves no
grandchildren behind.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, Signal

from app.runner_client.command import NO_CONSOLE_WINDOW, program_beside
from app.runner_client.lines import LineBuffer
from app.storage import secrets
from app.tools.config import McpServer
from app.tools.spec import ToolResult, ToolSpec
from mcphost import wire

log = logging.getLogger(__name__)

STOPPED, STARTING, READY, FAILED = (wire.STATE_STOPPED, wire.STATE_STARTING, wire.STATE_READY,
                                    wire.STATE_FAILED)


def host_program() -> list[str]:
    """How to start the host: ``HEARTH_MCPHOST`` if set, the ``hearth-mcphost`` executable
    beside a frozen (installed) app's own, else this interpreter with ``-m mcphost``."""
    return program_beside("HEARTH_MCPHOST", "hearth-mcphost", "mcphost")


def header_secret(server: str, header: str) -> str:
    """Where an HTTP server's header value is kept (app/storage/secrets.py)."""
    return f"mcp-header:{server}:{header}"


HOST_EXIT_MS = 8000  # how long Hearth's exit waits for the host to stop its servers
# A server that failed is started again by a conversation's next message only this much later:
# one that hangs at start would otherwise hold every message for its start's time limit.
RETRY_FAILED_S = 60.0


@dataclass(frozen=True)
class ServerView:
    """What the window shows of a server: its state, its tools, why it failed."""

    state: str = STOPPED
    tools: tuple[ToolSpec, ...] = ()
    error: str = ""
    stderr: str = ""
    since: float = 0.0  # when it got this state (time.monotonic)


@dataclass
class _Waiter:
    names: set[str]
    then: Callable[[], None] = field(repr=False)


class McpHostService(QObject):
    """Starts the host on first use; one request id space for starts, calls and stops."""

    call_done = Signal(str, object, bool)  # uid, ToolResult, timed out
    changed = Signal()  # a server's state or tools changed

    def __init__(self, servers: Iterable[McpServer] = (), *,
                 program: list[str] | None = None,
                 start_timeout_s: float = wire.DEFAULT_START_TIMEOUT_S,
                 parent: QObject | None = None) -> None:
        """``start_timeout_s``: how long a server may take to start and list its tools."""
        super().__init__(parent)
        self._start_timeout_s = start_timeout_s
        self._program = program or host_program()
        self._servers = {s.name: s for s in servers}
        self._views: dict[str, ServerView] = {}
        self._proc: QProcess | None = None
        self._lines = LineBuffer(wire.MAX_LINE_BYTES)
        self._next_id = 1
        self._pending: dict[int, tuple[str, str]] = {}  # request id -> (kind, server or uid)
        self._calls: dict[str, int] = {}  # uid -> its call's request id
        self._waiters: list[_Waiter] = []
        self._starts: dict[str, int] = {}  # server -> its latest start's request id

    # ---- what the window reads -----------------------------------------------------------------

    def view(self, name: str) -> ServerView:
        return self._views.get(name, ServerView())

    def tools(self) -> list[ToolSpec]:
        """The tools of every server turned on and ready."""
        return [t for name, s in self._servers.items() if s.enabled
                for t in self.view(name).tools if self.view(name).state == READY]

    # ---- what the settings and the chat ask --------------------------------------------------

    def configure(self, servers: Iterable[McpServer]) -> None:
        """The servers as the person keeps them now: one removed, turned off or changed stops
        (a changed one starts again when next used)."""
        new = {s.name: s for s in servers}
        for name, old in self._servers.items():
            if new.get(name) == old:
                continue
            if self.view(name).state in (STARTING, READY):
                self._request(wire.stop(self._id(), name), "stop", name)
            self._starts.pop(name, None)  # an answer to its start now is about the old one
            if name in self._views:
                self._set(name, ServerView())  # a failed one is tried again when next used
        self._servers = new
        self.changed.emit()

    def start(self, name: str) -> None:
        """Start (or start again) the server ``name``: Test in Settings, or first use."""
        server = self._servers.get(name)
        if server is None:
            return
        self._set(name, ServerView(STARTING))
        request_id = self._id()
        self._starts[name] = request_id
        self._request(wire.start(request_id, name, self._config(server), self._start_timeout_s),
                      "start", name)

    def ensure(self, names: Iterable[str], then: Callable[[], None]) -> None:
        """Start those of ``names`` that are turned on and not running, then call ``then()``
        once none of them is starting (ready or failed: a failed one is simply not offered)."""
        wanted = {n for n in names if n in self._servers and self._servers[n].enabled}
        for name in wanted:
            view = self.view(name)
            if view.state == STOPPED or (view.state == FAILED and
                                         time.monotonic() - view.since > RETRY_FAILED_S):
                self.start(name)
        waiting = {n for n in wanted if self.view(n).state == STARTING}
        if not waiting:
            then()
            return
        self._waiters.append(_Waiter(waiting, then))

    def call(self, uid: str, server: str, tool: str, arguments: dict[str, Any],
             timeout_s: float) -> None:
        if self.view(server).state != READY:
            self.call_done.emit(uid, ToolResult.error(f"The MCP server {server} is not running."),
                                False)
            return
        request_id = self._id()
        self._calls[uid] = request_id
        self._request(wire.call(request_id, server, tool, arguments, timeout_s), "call", uid)

    def cancel(self, uid: str) -> None:
        request_id = self._calls.pop(uid, None)
        if request_id is not None:
            self._pending.pop(request_id, None)  # its answer, if it comes, is dropped
            self._request(wire.cancel(self._id(), request_id), "cancel", uid)

    def close(self) -> None:
        """Hearth closes: the host stops every server (their process groups) and exits."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.closeWriteChannel()
        # The host gives a stubborn server 2 s after its stdin closes, 2 s after SIGTERM, then
        # kills its group: killed sooner itself, it would leave the groups running.
        if not proc.waitForFinished(HOST_EXIT_MS):
            proc.kill()
            proc.waitForFinished(2000)

    # ---- the host process ----------------------------------------------------------------------

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _config(self, server: McpServer) -> dict[str, Any]:
        if server.is_http:
            headers = {}
            for name in server.header_names:
                value = secrets.get(header_secret(server.name, name))
                if value:
                    headers[name] = value
            return {"url": server.url, "headers": headers}
        config: dict[str, Any] = {"command": server.command, "args": list(server.args),
                                  "env": dict(server.env)}
        if server.cwd:
            config["cwd"] = server.cwd
        return config

    def _ensure_process(self) -> QProcess:
        if self._proc is not None:
            return self._proc
        proc = QProcess(self)
        env = QProcessEnvironment.systemEnvironment()
        for key in env.keys():
            if key.startswith("HEARTH_API"):  # the runner's key is nobody else's business
                env.remove(key)
        proc.setProcessEnvironment(env)
        if NO_CONSOLE_WINDOW and hasattr(proc, "setCreateProcessArgumentsModifier"):
            # Windows only (PySide6 has the method there): no console window for the host.
            def no_window(args: Any) -> None:
                args.flags |= NO_CONSOLE_WINDOW

            proc.setCreateProcessArgumentsModifier(no_window)
        proc.errorOccurred.connect(lambda error: self._on_error(proc, error))
        proc.readyReadStandardOutput.connect(self._on_stdout)
        proc.readyReadStandardError.connect(lambda: self._on_stderr(proc))
        proc.finished.connect(lambda *_: self._on_finished(proc))
        proc.start(self._program[0], self._program[1:])
        self._proc = proc
        self._lines = LineBuffer(wire.MAX_LINE_BYTES)
        return proc

    def _request(self, message: dict[str, Any], kind: str, about: str) -> None:
        proc = self._ensure_process()
        self._pending[int(message["id"])] = (kind, about)
        proc.write(wire.encode(message))

    def _on_stderr(self, proc: QProcess) -> None:
        data = bytes(proc.readAllStandardError().data())
        for line in data.decode("utf-8", "replace").splitlines()[-20:]:
            log.debug("mcp host: %s", line[:2000])

    def _on_stdout(self) -> None:
        proc = self._proc
        if proc is None:
            return
        for line in self._lines.feed(bytes(proc.readAllStandardOutput().data())):
            if line.cut:
                log.warning("the MCP host sent a line longer than %d bytes; it was dropped",
                            wire.MAX_LINE_BYTES)
                continue
            try:
                message = wire.decode(line.data)
            except wire.WireError as exc:
                log.warning("the MCP host sent a line that is not the protocol: %s", exc)
                continue
            self._dispatch(message)

    def _dispatch(self, message: dict[str, Any]) -> None:
        event = message.get("event")
        if event == wire.EVENT_EXITED:
            name = str(message.get("server") or "")
            if self.view(name).state == READY:  # not a newer start of it
                self._set(name, ServerView(FAILED, error=str(message.get("error") or ""),
                                           stderr=str(message.get("stderr") or "")))
            return
        if event is not None:
            return
        request_id = message.get("id")
        pending = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if pending is None:
            return
        kind, about = pending
        ok = message.get("ok") is True
        if kind == "start":
            if self._starts.get(about) == request_id:  # not an earlier start's answer
                del self._starts[about]
                self._started(about, message, ok)
        elif kind == "call":
            self._calls.pop(about, None)
            if ok:
                result = ToolResult(str(message.get("text") or ""),
                                    message.get("is_error") is True)
            else:
                result = ToolResult.error(str(message.get("error") or "The call failed."))
            self.call_done.emit(about, result, message.get("timed_out") is True)

    def _started(self, name: str, message: dict[str, Any], ok: bool) -> None:
        if self.view(name).state != STARTING:
            return  # stopped or changed meanwhile
        if not ok:
            self._set(name, ServerView(FAILED, error=str(message.get("error") or ""),
                                       stderr=str(message.get("stderr") or "")))
            return
        specs = []
        for tool in message.get("tools") or []:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                schema = tool.get("input_schema")
                specs.append(ToolSpec(name, tool["name"], str(tool.get("description") or ""),
                                      schema if isinstance(schema, dict) else
                                      {"type": "object", "properties": {}}))
        self._set(name, ServerView(READY, tuple(specs)))

    def _on_error(self, proc: QProcess, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:  # no finished() will follow
            log.error("the MCP host could not be started (%s): %s", " ".join(self._program),
                      proc.errorString())
            self._host_gone(proc, f"The MCP host could not be started: {proc.errorString()}")

    def _on_finished(self, proc: QProcess) -> None:
        log.warning("the MCP host exited (code %s)", proc.exitCode())
        self._host_gone(proc, "The MCP host stopped.")

    def _host_gone(self, proc: QProcess, why: str) -> None:
        """The host is gone: its calls fail, its servers are failed with ``why``."""
        if proc is not self._proc:
            return
        self._proc = None
        for kind, about in list(self._pending.values()):
            if kind == "call":
                self.call_done.emit(about, ToolResult.error(
                    "The MCP host stopped during the call."), False)
        self._pending.clear()
        self._calls.clear()
        self._starts.clear()
        for name, view in list(self._views.items()):
            if view.state in (STARTING, READY):
                self._set(name, replace(view, state=FAILED, tools=(), error=why))

    def _set(self, name: str, view: ServerView) -> None:
        self._views[name] = replace(view, since=time.monotonic())
        self.changed.emit()
        if view.state != STARTING:
            for waiter in list(self._waiters):
                waiter.names.discard(name)
                if not waiter.names:
                    self._waiters.remove(waiter)
                    waiter.then()
