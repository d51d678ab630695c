"""The tools the chat may call, as a service: which are offered, who decided what, and the calls.

Built-in tools (app/tools/builtin.py) run on a task thread of their own; MCP servers' tools run
in the MCP host process (app/services/mcp_host.py), which is the only place the MCP SDK is
imported. Every call ends in exactly one ``call_done`` on the GUI thread: its result, an error,
its time limit, or nothing at all after :meth:`ToolService.cancel` (the round that cancelled it
has already recorded that).
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.chat.toolcalls import ERROR, OK, TIMED_OUT
from app.services.tasks import TaskRunner
from app.tools import config as tools_config
from app.tools.builtin import BUILTIN_TOOLS, BuiltinContext, run_builtin
from app.tools.config import ToolsConfig, Verdict, verdict
from app.tools.spec import BUILTIN, ToolResult, ToolSpec, within_budget

log = logging.getLogger(__name__)


class ToolService(QObject):
    """What app/services/tool_round.py's ToolBox asks for, over tools.json."""

    call_done = Signal(str, str, object, int)  # uid, status, ToolResult, milliseconds
    changed = Signal()  # the configuration or a server's state changed

    def __init__(self, path: Path | None = None, *, mcp: Any = None,
                 clock: Callable[[], float] = time.monotonic,
                 parent: QObject | None = None) -> None:
        """``path``: tools.json (default: the config folder's). ``mcp``: the MCP host service
        (None: built-in tools only)."""
        super().__init__(parent)
        self._path = path
        self.config = tools_config.load(path)
        self.mcp = mcp
        self._clock = clock
        self._tasks = TaskRunner(self, max_threads=2, name="tools")
        # uid -> (when it started, its serial): the serial tells a time limit that fires after
        # its call ended from a later call's.
        self._running: dict[str, tuple[float, int]] = {}
        self._serial = itertools.count(1)
        if mcp is not None:
            mcp.configure(self.config.servers)
            mcp.call_done.connect(self._on_mcp_done)
            mcp.changed.connect(self._on_mcp_changed)

    def _on_mcp_changed(self) -> None:
        self.changed.emit()

    # ---- the configuration ---------------------------------------------------------------------

    @property
    def max_rounds(self) -> int:
        return self.config.max_rounds

    def set_config(self, config: ToolsConfig) -> None:
        """Keep ``config`` (tools.json) and tell the window."""
        self.config = config
        tools_config.save(config, self._path)
        if self.mcp is not None:
            self.mcp.configure(config.servers)
        self.changed.emit()

    def remember(self, spec: ToolSpec, mode: str) -> None:
        if mode in ("ask", "allow", "deny"):
            self.set_config(self.config.decided(spec, mode))  # type: ignore[arg-type]

    def verdict(self, spec: ToolSpec, allowed_here: list[str]) -> Verdict:
        return verdict(self.config, spec, allowed_here)

    # ---- what is offered -----------------------------------------------------------------------

    def builtin_specs(self) -> list[ToolSpec]:
        """The built-in tools turned on (the file tools only once a folder is chosen)."""
        out = []
        for name in self.config.builtin:
            tool = BUILTIN_TOOLS.get(name)
            if tool is not None and (not tool.needs_folder or self.config.folder):
                out.append(tool.spec)
        return out

    def prepare(self, off: list[str], then: Callable[[], None]) -> None:
        """Start the MCP servers a conversation uses (all turned on, less ``off``) that are
        not running, and call ``then()`` once each is ready or failed."""
        if self.mcp is None:
            then()
            return
        self.mcp.ensure([s.name for s in self.config.servers
                          if s.enabled and s.name not in off], then)

    def sources(self) -> list[str]:
        return ([BUILTIN] if self.builtin_specs() else []) + \
            [s.name for s in self.config.servers if s.enabled]

    def wanted(self, off: list[str]) -> bool:
        return bool(tools_config.offered_here(self.builtin_specs(), off)) or any(
            s.enabled and s.name not in off for s in self.config.servers)

    def offered(self, off: list[str]) -> list[ToolSpec]:
        specs = self.builtin_specs()
        if self.mcp is not None:
            specs += self.mcp.tools()
        return tools_config.offered_here(specs, off)

    # ---- calls ---------------------------------------------------------------------------------

    def run(self, uid: str, spec: ToolSpec, arguments: dict[str, Any]) -> None:
        timeout_s = self.config.timeout_s
        serial = next(self._serial)
        self._running[uid] = (self._clock(), serial)
        # Qt's own single-shot timer with this service as its context: no timer object of
        # ours to delete (one deleted later than its owner crashed PySide).
        QTimer.singleShot(int(timeout_s * 1000), self,
                          lambda: self._timed_out(uid, serial, timeout_s))
        if spec.source == BUILTIN:
            context = BuiltinContext(folder=Path(self.config.folder) if self.config.folder
                                     else None)
            self._tasks.run(lambda: run_builtin(spec.name, arguments, context),
                            lambda result: self._done(uid, result),
                            lambda exc: self._done(uid, ToolResult.error(str(exc))))
        elif self.mcp is not None:
            self.mcp.call(uid, spec.source, spec.name, arguments, timeout_s)
        else:
            self._done(uid, ToolResult.error("The tool's server is not running."))

    def close(self) -> None:
        """Hearth closes: the MCP servers stop (the host stops their process groups)."""
        if self.mcp is not None:
            self.mcp.close()

    def cancel(self, uid: str) -> None:
        """Forget the call (an MCP call is cancelled in its server): nothing more is said of
        it. A built-in call cannot be interrupted; its outcome is dropped."""
        if self._forget(uid) is not None and self.mcp is not None:
            self.mcp.cancel(uid)

    def _forget(self, uid: str) -> float | None:
        entry = self._running.pop(uid, None)
        return None if entry is None else entry[0]

    def _done(self, uid: str, result: ToolResult, status: str | None = None) -> None:
        started = self._forget(uid)
        if started is None:
            return  # cancelled or timed out before
        ms = int((self._clock() - started) * 1000)
        result = within_budget(result)
        self.call_done.emit(uid, status or (ERROR if result.is_error else OK), result, ms)

    def _timed_out(self, uid: str, serial: int, timeout_s: float) -> None:
        entry = self._running.get(uid)
        if entry is None or entry[1] != serial:
            return  # that call ended in time
        if self.mcp is not None:
            self.mcp.cancel(uid)
        self._done(uid, ToolResult.error(
            f"The call took longer than its time limit of {timeout_s:.0f} s and was "
            "cancelled."), TIMED_OUT)

    def _on_mcp_done(self, uid: str, result: ToolResult, timed_out: bool) -> None:
        self._done(uid, result, TIMED_OUT if timed_out else None)
