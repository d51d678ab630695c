"""A stdio MCP server's process, in a process group of its own that is stopped as a whole.

On POSIX the host owns the pipes rather than using the SDK's ``stdio_client`` (mcp 2.3.0), which
does start the server in a new session but signals that group only when the server outlives
its two-second grace after stdin closes. A server that exits promptly on EOF, as most do,
leaves its children running: ``npx``/``uvx`` launchers, a ``sleep`` it started. Here the group
is always sent SIGTERM (then SIGKILL, the SDK's own ``terminate_posix_process_tree``) once the
grace is over, whether the leader is still there or not. Owning the pipes also bounds a line
(the SDK's reader keeps an unending line in memory and copies it for every chunk), keeps the
tail of the server's stderr for the person, and notices the server's death at once.

On Windows the SDK's transport is used as it is: it puts the server in a Job Object created
with KILL_ON_JOB_CLOSE and closes it at every shutdown, which ends the whole tree. There the
death of a server is noticed only when a request finds its connection closed, and its stderr
goes through a temporary file. (Not exercised by the tests, which run on Linux.)
"""

from __future__ import annotations

import logging
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import IO, TYPE_CHECKING

import anyio
import mcp_types
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client import Transport
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
from mcp.shared.message import SessionMessage

from mcphost import wire
from mcphost.config import StdioConfig, server_environment

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams  # a type only, in a private module

log = logging.getLogger(__name__)

# The longest JSON-RPC line a server may send: a big image in base64 fits, an endless line
# does not stay in memory.
MAX_SERVER_LINE_BYTES = 64 * 1024 * 1024
# The MCP spec's shutdown: close stdin, give the server this long to exit, then SIGTERM (to
# the group here) and SIGKILL after FORCE_KILL_S.
GRACE_S = 2.0
FORCE_KILL_S = 2.0
EXIT_POLL_S = 0.05
# Raw stderr bytes kept: enough for the tail in characters whatever the encoding.
_STDERR_KEEP = wire.STDERR_TAIL_CHARS * 4


class StdioServer:
    """One server process. :meth:`connect` is the MCP transport; :attr:`ended` is set, and
    ``on_end`` called, when the connection is over by the server's doing (it exited, closed
    stdout or stdin, or sent too long a line); :attr:`returncode` (when it exited by itself),
    :meth:`stderr_tail` and :attr:`garbage` explain why."""

    def __init__(self, name: str, config: StdioConfig,
                 on_end: Callable[[], object] = lambda: None) -> None:
        self.name = name
        self.config = config
        self.ended = anyio.Event()
        self._on_end = on_end
        self.returncode: int | None = None
        self.overlong = False
        # The first line on stdout that was not JSON-RPC, shortened: a server that logs to
        # stdout is the usual cause of a handshake that never completes.
        self.garbage: str | None = None
        self._garbage_lines = 0
        self._stderr = bytearray()
        self._errlog: IO[str] | None = None
        # Set when the host begins to stop the server: what the server does after that (exit
        # on EOF, close its output) is the stop's doing, not something to report.
        self.closing = False

    def stderr_tail(self) -> str:
        if self._errlog is not None:  # Windows: the SDK wrote it to a file
            with suppress(OSError, ValueError):
                self._errlog.flush()
                self._errlog.seek(0)
                return self._errlog.read()[-wire.STDERR_TAIL_CHARS:]
        text = self._stderr.decode("utf-8", errors="replace")
        return text[-wire.STDERR_TAIL_CHARS:]

    def end(self) -> None:
        if not self.ended.is_set() and not self.closing:
            self.ended.set()
            self._on_end()

    def _environment(self) -> dict[str, str]:
        return server_environment(get_default_environment(), self.config.env)

    def connect(self) -> Transport:
        """The transport to hand ``mcp.Client``; entering it spawns the server."""
        if sys.platform == "win32":  # pragma: no cover - the tests run on Linux
            return _windows(self)
        return _posix(self)

    # The POSIX pipe tasks.

    async def read_stdout(self, stdout: ByteReceiveStream,
                          out: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        buffer = bytearray()
        scanned = 0  # bytes of buffer known to hold no newline: each byte is searched once
        try:
            async with out:
                async for chunk in stdout:
                    buffer += chunk
                    while (end := buffer.find(b"\n", scanned)) >= 0:
                        line = bytes(buffer[:end])
                        del buffer[:end + 1]
                        scanned = 0
                        if line.strip():
                            message = self._parse(line)
                            if message is not None:
                                await out.send(message)
                    scanned = len(buffer)
                    if len(buffer) > MAX_SERVER_LINE_BYTES:
                        self.overlong = True
                        log.warning("MCP server %r sent a line over %d bytes; closing it",
                                    self.name, MAX_SERVER_LINE_BYTES)
                        break
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream,
                OSError):
            pass  # our own shutdown closed a stream under the read, or the session left
        # Not in a finally: a cancellation is the host stopping the server, not its end.
        self.end()

    def _parse(self, line: bytes) -> SessionMessage | None:
        try:
            return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError:
            # Skipped, not handed to the session: it has no use for them, and a server that
            # writes nothing else is reported when its start times out.
            self._garbage_lines += 1
            if self.garbage is None:
                self.garbage = line[:120].decode("utf-8", errors="replace")
            if self._garbage_lines <= 3:
                log.warning("MCP server %r wrote a line that is not JSON-RPC: %r",
                            self.name, line[:200])
            return None

    async def write_stdin(self, process: Process,
                          messages: MemoryObjectReceiveStream[SessionMessage]) -> None:
        assert process.stdin is not None
        try:
            async with messages:
                async for message in messages:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode("utf-8") + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            self.end()  # the server stopped reading: it is gone or going

    async def read_stderr(self, stderr: ByteReceiveStream) -> None:
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream,
                      OSError):
            async for chunk in stderr:
                self._stderr += chunk
                if len(self._stderr) > 2 * _STDERR_KEEP:
                    del self._stderr[:-_STDERR_KEEP]

    async def watch(self, process: Process) -> None:
        # Polled, not process.wait(): on asyncio that also waits for the pipes to close, which
        # a grandchild holding them delays forever.
        while process.returncode is None:
            await anyio.sleep(EXIT_POLL_S)
        if not self.closing:
            self.returncode = process.returncode
        self.end()


@asynccontextmanager
async def _posix(server: StdioServer) -> AsyncIterator[TransportStreams]:
    config = server.config
    process = await anyio.open_process(
        [config.command, *config.args], env=server._environment(), cwd=config.cwd,
        start_new_session=True)
    log.info("Started MCP server %r (pid %d)", server.name, process.pid)
    # No await until the task group is entered: a cancellation in between would leak the process.
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    assert process.stdout is not None and process.stderr is not None
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(server.read_stdout, process.stdout, to_session)
        tasks.start_soon(server.write_stdin, process, from_session)
        tasks.start_soon(server.read_stderr, process.stderr)
        tasks.start_soon(server.watch, process)
        try:
            yield read_stream, write_stream
        finally:
            # Shielded and bounded: a cancelled caller must neither leak the group nor hang.
            with anyio.CancelScope(shield=True):
                server.closing = True
                write_stream.close()
                read_stream.close()
                await _stop(server, process)
            tasks.cancel_scope.cancel()


async def _stop(server: StdioServer, process: Process) -> None:
    """Close stdin, wait out the grace, then end the whole process group."""
    from mcp.os.posix.utilities import terminate_posix_process_tree

    name = server.name
    by_itself = server.ended.is_set()
    assert process.stdin is not None
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    with anyio.move_on_after(GRACE_S):
        while process.returncode is None:
            await anyio.sleep(EXIT_POLL_S)
    if by_itself and server.returncode is None:
        # It closed its output and exited before the watch saw it: still its own doing.
        server.returncode = process.returncode
    # Always, even when the server exited: its children are in the group it leads (the
    # leader's pid is the group's id, and stays reserved while any member lives).
    await terminate_posix_process_tree(process, FORCE_KILL_S)
    with anyio.move_on_after(FORCE_KILL_S):
        while process.returncode is None:
            await anyio.sleep(EXIT_POLL_S)
    if process.returncode is None:
        log.warning("MCP server %r (pid %d) survived SIGKILL; abandoning it", name, process.pid)
    else:
        log.info("MCP server %r stopped (exit code %s)", name, process.returncode)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.aclose()


@asynccontextmanager
async def _windows(server: StdioServer) -> AsyncIterator[TransportStreams]:  # pragma: no cover
    config = server.config
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        server._errlog = errlog
        params = StdioServerParameters(command=config.command, args=list(config.args),
                                       env=server._environment(), cwd=config.cwd)
        async with stdio_client(params, errlog=errlog) as streams:
            yield streams
