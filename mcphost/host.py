"""The host's requests: each in a task of its own, answered by id (mcphost.wire says what each
means). The servers live in :class:`mcphost.servers.Server`; this module checks requests, keeps
the registry of servers and of calls in flight, and stops everything at the end."""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup

from mcphost import config as configs
from mcphost import explain, wire
from mcphost.channel import Outbox
from mcphost.results import result_text
from mcphost.servers import Server

log = logging.getLogger(__name__)

# Beyond the SDK's own request time-out (which also sends the server a cancellation): a bound on
# the whole call, should a write to a server that stopped reading never complete.
CALL_BACKSTOP_S = 5.0

Answer = dict[str, Any]

# The field besides "error" that a failed answer of these ops always carries.
_FAILURE_FIELDS: dict[str, tuple[str, Any]] = {wire.OP_START: ("stderr", ""),
                                                wire.OP_CALL: ("timed_out", False)}


class RequestError(Exception):
    """A request the host cannot carry out; ``str()`` is the answer's sentence."""

    def __init__(self, sentence: str, **fields: Any) -> None:
        super().__init__(sentence)
        self.fields = fields


class Host:
    def __init__(self, tasks: TaskGroup, outbox: Outbox) -> None:
        self._tasks = tasks
        self._outbox = outbox
        self._servers: dict[str, Server] = {}
        self._calls: dict[int, anyio.CancelScope] = {}
        self._handlers: dict[str, Callable[[int, dict[str, Any]], Awaitable[Answer]]] = {
            wire.OP_START: self._start, wire.OP_CALL: self._call, wire.OP_CANCEL: self._cancel,
            wire.OP_STOP: self._stop, wire.OP_LIST: self._list,
        }

    def receive(self, line: bytes | wire.WireError) -> None:
        """Take one line from the app: answered at once when malformed, else in a task."""
        try:
            if isinstance(line, wire.WireError):
                raise line
            if not line.strip():
                return
            message = wire.decode(line)
        except wire.WireError as exc:
            self._refuse(None, f"Hearth's MCP host could not read a request: {exc}.")
            return
        request_id = message.get("id")
        if not isinstance(request_id, int) or isinstance(request_id, bool):
            self._refuse(None, "A request to Hearth's MCP host has no integer id.")
            return
        op = message.get("op")
        handler = self._handlers.get(op) if isinstance(op, str) else None
        if handler is None:
            self._refuse(request_id, f"Hearth's MCP host has no op {op!r}: "
                                     f"use one of {', '.join(wire.OPS)}.")
            return
        # Started in order: a start registers its server before a later call looks it up.
        self._tasks.start_soon(self._answer, request_id, handler, message)

    def _refuse(self, request_id: int | None, sentence: str) -> None:
        self._outbox.send({"id": request_id, "ok": False, "error": sentence})

    async def _answer(self, request_id: int,
                      handler: Callable[[int, dict[str, Any]], Awaitable[Answer]],
                      message: dict[str, Any]) -> None:
        try:
            answer = await handler(request_id, message)
        except RequestError as exc:
            answer = {"ok": False, "error": str(exc), **exc.fields}
        except Exception as exc:
            log.exception("Request %d (%s) failed", request_id, message.get("op"))
            answer = {"ok": False, "error": f"Hearth's MCP host failed on this request ({exc!r}): "
                                            "see its log."}
        if not answer["ok"]:
            # Every failed answer of an op has the same fields, whatever failed.
            answer.setdefault(*_FAILURE_FIELDS.get(message["op"], ("error", "")))
        self._outbox.send({"id": request_id, **answer})

    async def shutdown(self) -> None:
        """Stop every server, together; each stop is bounded by its transport."""
        async with anyio.create_task_group() as tasks:
            for server in list(self._servers.values()):
                tasks.start_soon(server.stop)

    # The operations.

    async def _start(self, request_id: int, message: dict[str, Any]) -> Answer:
        name = _name(message)
        timeout = _timeout(message, wire.DEFAULT_START_TIMEOUT_S)
        try:
            config = configs.parse(name, message.get("config"))
        except configs.ConfigError as exc:
            raise RequestError(str(exc)) from None
        server = Server(name, config, timeout, self._exited)
        previous = self._servers.get(name)
        self._servers[name] = server  # before any await: later requests find this one
        if previous is not None:
            log.info("Restarting MCP server %r", name)
            await previous.stop()
        self._tasks.start_soon(server.run)
        await server.started.wait()
        if server.state == wire.STATE_READY:
            return {"ok": True, "tools": server.tools}
        if server.state == wire.STATE_STOPPED:
            raise RequestError(f"MCP server “{name}” was stopped before it finished starting.",
                               stderr=server.stderr_tail())
        raise RequestError(server.error, stderr=server.stderr_tail())

    async def _call(self, request_id: int, message: dict[str, Any]) -> Answer:
        name = _name(message)
        tool = message.get("tool")
        if not isinstance(tool, str) or not tool:
            raise RequestError("A call names no tool: give the tool's name.")
        arguments = message.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise RequestError(f"The arguments for “{tool}” are not an object.")
        timeout = _timeout(message, wire.DEFAULT_CALL_TIMEOUT_S)
        if request_id in self._calls:
            raise RequestError(f"Call id {request_id} is already in use by a call in flight.")
        server = self._servers.get(name)
        if server is None:
            raise RequestError(f"No MCP server named “{name}” was started: start it first.")
        scope = anyio.CancelScope()
        self._calls[request_id] = scope  # cancellable while it waits for a start, too
        try:
            with scope:
                await server.started.wait()
                client = server.client
                if server.state != wire.STATE_READY or client is None:
                    reason = f": {server.error}" if server.error else "."
                    raise RequestError(f"MCP server “{name}” is not running{reason}")
                try:
                    with anyio.fail_after(timeout + CALL_BACKSTOP_S):
                        result = await client.call_tool(tool, arguments,
                                                        read_timeout_seconds=timeout)
                except Exception as exc:
                    sentence, timed_out = explain.call_failure(exc, server.clues(), tool, timeout)
                    log.info("Call %d to %r on %r failed: %s", request_id, tool, name, sentence)
                    return {"ok": False, "error": sentence, "timed_out": timed_out}
                return {"ok": True, "text": result_text(result), "is_error": bool(result.is_error)}
            return {"ok": False, "error": wire.CANCELLED, "timed_out": False}
        finally:
            self._calls.pop(request_id, None)

    async def _cancel(self, request_id: int, message: dict[str, Any]) -> Answer:
        call_id = message.get("call")
        if not isinstance(call_id, int) or isinstance(call_id, bool):
            raise RequestError("A cancel names no call: give the id of the call to cancel.")
        scope = self._calls.get(call_id)
        if scope is not None:
            scope.cancel()
        # A call that already ended has been answered: nothing is left to cancel.
        return {"ok": True}

    async def _stop(self, request_id: int, message: dict[str, Any]) -> Answer:
        server = self._servers.get(_name(message))
        if server is not None:
            await server.stop()
        return {"ok": True}

    async def _list(self, request_id: int, message: dict[str, Any]) -> Answer:
        return {"ok": True,
                "servers": {name: server.status() for name, server in self._servers.items()}}

    async def _exited(self, server: Server) -> None:
        if self._servers.get(server.name) is server:
            log.warning("MCP server %r ended: %s", server.name, server.error)
            self._outbox.send({"event": wire.EVENT_EXITED, "server": server.name,
                               "error": server.error, "stderr": server.stderr_tail()})


def _name(message: dict[str, Any]) -> str:
    name = message.get("server")
    if not isinstance(name, str) or not name:
        raise RequestError("The request names no server: give the server's name.")
    return name


def _timeout(message: dict[str, Any], default: float) -> float:
    value = message.get("timeout_s", default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or not 0 < value <= wire.MAX_TIMEOUT_S:
        raise RequestError(f"timeout_s must be a number of seconds above 0 and at most "
                           f"{wire.MAX_TIMEOUT_S:g}.")
    return float(value)
