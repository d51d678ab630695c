"""hearth-mcphost: host MCP servers for the app over JSON lines on stdin/stdout (mcphost.wire).

Exits when stdin closes or on SIGTERM/SIGINT, after stopping every server and its processes.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from typing import BinaryIO

import anyio
from anyio.abc import ObjectReceiveStream

from mcphost import logs, wire
from mcphost.channel import Outbox, open_inbox
from mcphost.host import Host

log = logging.getLogger("mcphost")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hearth-mcphost", description=__doc__)
    parser.add_argument("--verbose", action="store_true", help="log at debug level")
    args = parser.parse_args(argv)
    logs.setup(args.verbose)
    source, sink = _protocol_pipes()
    outbox = Outbox(sink)
    try:
        anyio.run(_serve, source, outbox)
    except KeyboardInterrupt:  # a second Ctrl+C while stopping
        return 130
    finally:
        outbox.flush()
        outbox.close()
    return 0


def _protocol_pipes() -> tuple[BinaryIO, BinaryIO]:
    """The app's pipes, taken away from fd 0 and 1: anything that prints (a library, a stray
    ``print``) writes to stderr instead of corrupting the protocol, and the servers' processes,
    which get pipes of their own, never inherit them (os.dup's copies are not inheritable)."""
    # Buffered: a raw pipe's readline reads a byte per system call, and its write may be partial.
    source = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    sink = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    with open(os.devnull, "rb") as null:
        os.dup2(null.fileno(), sys.stdin.fileno())
    return source, sink


async def _serve(source: BinaryIO, outbox: Outbox) -> None:
    inbox = open_inbox(source)
    async with anyio.create_task_group() as tasks:
        host = Host(tasks, outbox)
        finished = anyio.Event()
        tasks.start_soon(_read, inbox, host, finished)
        if sys.platform != "win32":
            tasks.start_soon(_signals, finished)
        outbox.send({"event": wire.EVENT_READY})
        await finished.wait()
        log.info("Stopping every MCP server")
        await host.shutdown()
        tasks.cancel_scope.cancel()


async def _read(inbox: ObjectReceiveStream[bytes | wire.WireError], host: Host,
                finished: anyio.Event) -> None:
    async with inbox:
        async for line in inbox:
            host.receive(line)
    log.info("The app closed the host's stdin")
    finished.set()


async def _signals(finished: anyio.Event) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
        async for signum in received:
            log.info("Received %s", signal.Signals(signum).name)
            finished.set()


if __name__ == "__main__":
    sys.exit(main())
