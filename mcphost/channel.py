"""The host's two pipes to the app, each served by a thread so the event loop never blocks on them.

Threads rather than the event loop's own pipe support: it differs by platform (Windows' proactor
cannot wait on an anonymous pipe), and a blocking read or write in a daemon thread ends with the
process whatever it is waiting for.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Mapping
from typing import Any, BinaryIO

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcphost import wire

log = logging.getLogger(__name__)

# How long the host waits at exit for its last lines to reach the app.
FLUSH_S = 2.0


class TooLong(wire.WireError):
    pass


def open_inbox(source: BinaryIO) -> MemoryObjectReceiveStream[bytes | wire.WireError]:
    """The app's lines as they come, ending when ``source`` closes. A line over
    :data:`wire.MAX_LINE_BYTES` is skipped whole and given as a :class:`TooLong`."""
    send, receive = anyio.create_memory_object_stream[bytes | wire.WireError](16)
    token = anyio.lowlevel.current_token()
    threading.Thread(target=_read, args=(source, send, token), name="mcphost-stdin",
                     daemon=True).start()
    return receive


def _read(source: BinaryIO, send: MemoryObjectSendStream[bytes | wire.WireError],
          token: anyio.lowlevel.EventLoopToken) -> None:
    try:
        while line := source.readline(wire.MAX_LINE_BYTES + 1):
            item: bytes | wire.WireError = line
            if len(line) > wire.MAX_LINE_BYTES:
                # Skipped in bounded pieces: never more than one limit's worth held.
                while (rest := source.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
                item = TooLong(f"the line is longer than {wire.MAX_LINE_BYTES} bytes")
            anyio.from_thread.run(send.send, item, token=token)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.RunFinishedError):
        return  # the host is shutting down
    except (OSError, ValueError):
        log.warning("Reading the app's requests failed", exc_info=True)
    finally:
        try:
            anyio.from_thread.run_sync(send.close, token=token)
        except anyio.RunFinishedError:
            pass


class Outbox:
    """Lines to the app, in the order given, written by one daemon thread: a slow reader holds
    up neither the event loop nor a server. An answer too large for the app's reader, or one
    that cannot be encoded, is replaced by an error answer."""

    def __init__(self, sink: BinaryIO) -> None:
        self._sink = sink
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._idle = threading.Event()
        self._idle.set()
        self._pending = 0
        self._lock = threading.Lock()
        self.broken = False
        threading.Thread(target=self._write, name="mcphost-stdout", daemon=True).start()

    def send(self, message: Mapping[str, Any]) -> None:
        try:
            line = wire.encode(message)
        except ValueError:
            log.exception("An answer could not be encoded")
            line = wire.encode(_replacement(message, "Hearth could not encode this answer "
                                                     "(it holds a number JSON cannot carry)."))
        if len(line) > wire.MAX_LINE_BYTES:
            line = wire.encode(_replacement(message, "The answer was larger than the app can "
                                                     "read; it was left out."))
        with self._lock:
            self._pending += 1
            self._idle.clear()
        self._queue.put(line)

    def flush(self, timeout: float = FLUSH_S) -> None:
        """Wait (a bounded time) until every line given has been written or the pipe broke."""
        self._idle.wait(timeout)

    def close(self) -> None:
        self._queue.put(None)

    def _write(self) -> None:
        while (line := self._queue.get()) is not None:
            if not self.broken:
                try:
                    self._sink.write(line)
                    self._sink.flush()
                except (OSError, ValueError):
                    # The app is gone: nothing more can reach it, and its closing our stdin
                    # (or its death) is what stops the host.
                    self.broken = True
            with self._lock:
                self._pending -= 1
                if self._pending == 0:
                    self._idle.set()


def _replacement(message: Mapping[str, Any], sentence: str) -> dict[str, Any]:
    if "id" in message:
        return {"id": message["id"], "ok": False, "error": sentence}
    return {"event": message.get("event"), "error": sentence}

