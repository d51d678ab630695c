"""One configured MCP server: its connection's whole life in one task, and its state for ``list``.

The SDK's client and transports are async context managers whose task groups must be entered
and left by the same task, so :meth:`Server.run` holds them from spawn to stop while calls,
made from the request tasks, go through :attr:`Server.client`. Stopping, a server that ends by
itself and the start time-out all cancel one scope around that task's work; the transports'
own shutdowns are shielded, so the processes are gone before :attr:`Server.done` is set.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from importlib import metadata
from typing import Any

import anyio
import httpx2
import mcp_types
from mcp import Client
from mcp.client import Transport
from mcp.client.streamable_http import streamable_http_client

from mcphost import explain, wire
from mcphost.config import HttpConfig, ServerConfig, StdioConfig
from mcphost.stdio import StdioServer

log = logging.getLogger(__name__)

# A listing is bounded like a result: a server with thousands of tools, or a description the
# size of a book, must not become an answer the app cannot read.
MAX_TOOLS = 512
MAX_TOOL_PAGES = 64
MAX_DESCRIPTION_CHARS = 16 * 1024
HTTP_TIMEOUT_S = 30.0
HTTP_READ_TIMEOUT_S = 300.0


def _client_info() -> mcp_types.Implementation:
    try:
        version = metadata.version("hearth")
    except metadata.PackageNotFoundError:
        version = "0"
    return mcp_types.Implementation(name="hearth", version=version)


class Server:
    """A server from ``start`` to its end. ``on_exit`` is awaited when a ready server ends
    without being asked to (the host sends the ``exited`` event)."""

    def __init__(self, name: str, config: ServerConfig, timeout_s: float,
                 on_exit: Callable[[Server], Awaitable[None]]) -> None:
        self.name = name
        self.config = config
        self.timeout_s = timeout_s
        self.state: wire.State = wire.STATE_STARTING
        self.tools: list[wire.Tool] = []
        self.error = ""
        self.client: Client | None = None
        self.started = anyio.Event()  # the start is decided: ready or failed
        self.done = anyio.Event()  # the connection and its processes are gone
        self._on_exit = on_exit
        self._scope = anyio.CancelScope()
        self._stopping = False
        self._running = False
        self._stdio = StdioServer(name, config, self._scope.cancel) \
            if isinstance(config, StdioConfig) else None
        self._http_status: int | None = None

    def status(self) -> wire.ServerStatus:
        return {"state": self.state, "tools": len(self.tools), "error": self.error}

    def stderr_tail(self) -> str:
        return self._stdio.stderr_tail() if self._stdio is not None else ""

    def clues(self) -> explain.Clues:
        clues = explain.Clues(name=self.name, http_status=self._http_status)
        if isinstance(self.config, HttpConfig):
            clues.url = self.config.url
        if self._stdio is not None:
            clues.command = self._stdio.config.command
            clues.returncode = self._stdio.returncode
            clues.garbage = self._stdio.garbage
            clues.overlong = self._stdio.overlong
        return clues

    async def stop(self) -> None:
        """End the connection (a start in progress too) and wait until its processes are gone."""
        self._stopping = True
        self._scope.cancel()
        if not self._running:  # replaced before its task began: nothing was spawned
            self.state = wire.STATE_STOPPED
            self.started.set()
            self.done.set()
        await self.done.wait()

    async def run(self) -> None:
        if self._stopping:
            return
        self._running = True
        ready = False
        try:
            with self._scope:
                self._scope.deadline = anyio.current_time() + self.timeout_s
                async with AsyncExitStack() as stack:
                    client = Client(await self._transport(stack), client_info=_client_info(),
                                    cache=None, logging_callback=self._server_log)
                    await stack.enter_async_context(client)
                    tools = await _list_tools(client)
                    self._scope.deadline = math.inf
                    self.client, self.tools, self.state = client, tools, wire.STATE_READY
                    ready = True
                    self.started.set()
                    log.info("MCP server %r is ready with %d tools", self.name, len(tools))
                    await anyio.sleep_forever()  # until stop(), or the server ends
        except Exception as exc:
            if not self._stopping:
                self._fail(explain.start_failure(exc, self.clues()) if not ready
                           else explain.exited(self.clues()))
                log.info("MCP server %r failed: %s", self.name, self.error,
                         exc_info=not ready and not isinstance(explain.leaf(exc), OSError))
        finally:
            self.client = None
            if self._stopping:
                self.state = wire.STATE_STOPPED
                self.error = ""
            elif self.state in (wire.STATE_STARTING, wire.STATE_READY):
                # Cancelled without an exception: the deadline passed, or the server ended.
                self._fail(explain.start_timeout(self.clues(), self.timeout_s) if not ready
                           else explain.exited(self.clues()))
            self.started.set()
            self.done.set()
        if ready and not self._stopping:
            await self._on_exit(self)

    def _fail(self, sentence: str) -> None:
        self.state, self.error = wire.STATE_FAILED, sentence

    async def _transport(self, stack: AsyncExitStack) -> Transport:
        if self._stdio is not None:
            return self._stdio.connect()
        assert isinstance(self.config, HttpConfig)
        # The SDK's own client settings (its create_mcp_http_client, in a private module): a
        # long read time-out for the server's event stream. Redirects the transport follows
        # itself, within the server's origin only. The response hook keeps the status of a
        # refusal, which the transport turns into a generic MCP error, to explain it.
        http = httpx2.AsyncClient(headers=dict(self.config.headers),
                                  timeout=httpx2.Timeout(HTTP_TIMEOUT_S, read=HTTP_READ_TIMEOUT_S),
                                  event_hooks={"response": [self._record_status]})
        await stack.enter_async_context(http)
        return streamable_http_client(self.config.url, http_client=http)

    async def _record_status(self, response: httpx2.Response) -> None:
        if response.request.method == "POST" and response.status_code >= 400:
            self._http_status = response.status_code

    async def _server_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        log.debug("MCP server %r says (%s): %.500s", self.name, params.level, params.data)


async def _list_tools(client: Client) -> list[wire.Tool]:
    found: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        found.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None or len(found) >= MAX_TOOLS:
            break
    if len(found) > MAX_TOOLS:
        log.warning("An MCP server lists %d tools; Hearth takes the first %d", len(found), MAX_TOOLS)
    return [_tool(tool) for tool in found[:MAX_TOOLS]]


def _tool(tool: mcp_types.Tool) -> wire.Tool:
    # The description is the server's text, passed on as data: whatever it asks of a model is
    # for the app to present as a tool's description, never to obey.
    description = (tool.description or "")[:MAX_DESCRIPTION_CHARS]
    schema: dict[str, Any] = dict(tool.input_schema)
    return {"name": tool.name, "description": description, "input_schema": schema}
