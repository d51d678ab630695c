"""The runner's connections: how many, from whom, and how long before a request arrives.

Idle sockets need no key, and each holds an open file: 1,100 of them locked everyone out at a
1,024-file limit. uvicorn 0.54 has no cap of its own that closes anything (``limit_concurrency``
answers 503 only once a request head has arrived), and arms its keep-alive time-out only after a
first response, so a connection that never sends a request lived for ever. Here, with
:class:`ConnectionGuard` consulted by the protocol :func:`guarded_protocol` makes:

- At most ``max_connections`` in all, kept below the open-file limit (:func:`open_file_cap`,
  after :func:`raise_open_file_limit`), and at most ``max_peer_connections`` from any one
  non-loopback address (the app itself is a loopback client and is never counted there).
- At a cap, the **oldest idle connection** in that cap (no request in flight: never sent one,
  between requests, or part way through a request head) **is closed** to make room, so idle
  sockets can never lock out a client that sends a request. Only when every connection in the
  cap has a request in flight is the **new one refused: it is sent a 503** (the total cap) **or
  429** (one address's cap) with a sentence naming the flag, **and closed at once**, without
  reading anything (a client that had already sent its request may see only the reset).
- ``header_timeout``: from a connection's opening, or its previous response's end, a complete
  request head must arrive within it, or the connection is closed (a silent socket, or a head
  sent a byte at a time). uvicorn's own keep-alive time-out (``--idle-timeout``) still closes a
  kept-alive connection that sends nothing at all sooner.

All of it runs on the event loop's thread.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import socket
from typing import Any

from runner.limits import FLAGS, Limits
from runner.logs import Throttle
from runner.wire.shapes import SERVER_ERROR, error_body

log = logging.getLogger(__name__)

# Open files the runner needs besides its connections: the model, log and pipes, the event
# loop, llama.cpp's and the GPU driver's own.
RESERVED_FILES = 64

_throttle = Throttle()


def raise_open_file_limit() -> int | None:
    """Raise this process's soft open-file limit to its hard one; the soft limit after that
    (None where there is none to read, as on Windows)."""
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # macOS reports an unlimited hard limit but refuses a soft one above OPEN_MAX (10240).
    for target in (hard, 10240):
        if target == resource.RLIM_INFINITY or soft >= target:
            continue
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
        except (ValueError, OSError):
            continue
    return None if soft == resource.RLIM_INFINITY else soft


def open_file_cap(wanted: int, open_files: int | None) -> int:
    """``wanted`` connections, or fewer where the open-file limit would run out first."""
    if open_files is None:
        return wanted
    return max(1, min(wanted, open_files - RESERVED_FILES))


def is_loopback_peer(peer: Any) -> bool:
    if not isinstance(peer, tuple) or not peer:
        return True  # a Unix socket or a transport without an address: this computer
    try:
        address = ipaddress.ip_address(str(peer[0]).split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


class ConnectionGuard:
    """Counts the open connections and decides who gets in. ``max_total`` is the cap in effect
    (``--max-connections`` lowered under the open-file limit)."""

    def __init__(self, limits: Limits, max_total: int) -> None:
        self.max_total = max_total
        self.max_peer = limits.max_peer_connections
        self.header_timeout = limits.header_timeout
        self.open: dict[Any, str | None] = {}  # connection -> its remote address (None: loopback)
        self.by_peer: dict[str, list[Any]] = {}  # remote address -> its connections, oldest first
        self.evicted = 0
        self.refused = 0

    def admit(self, conn: Any, peer: Any) -> int | None:
        """Count ``conn`` in, closing an idle one to make room where needed; None when it is
        in, else the status code to refuse it with."""
        address = None if is_loopback_peer(peer) else str(peer[0])
        if address is not None and len(self.by_peer.get(address, ())) >= self.max_peer:
            if not self._evict(self.by_peer[address], f"{address} is at its cap"):
                return self._refuse(429, address)
        if len(self.open) >= self.max_total:
            if not self._evict(list(self.open), "the runner is at its cap"):
                return self._refuse(503, address)
        self.open[conn] = address
        if address is not None:
            self.by_peer.setdefault(address, []).append(conn)
        return None

    def release(self, conn: Any) -> None:
        if conn not in self.open:
            return
        address = self.open.pop(conn)
        if address is not None:
            peers = self.by_peer[address]
            peers.remove(conn)
            if not peers:
                del self.by_peer[address]

    def status(self) -> dict[str, Any]:
        return {"open": len(self.open), "max": self.max_total, "evicted": self.evicted,
                "refused": self.refused}

    def _evict(self, candidates: list[Any], why: str) -> bool:
        for conn in candidates:  # oldest first
            if conn.is_idle():
                self.release(conn)
                conn.close_now()
                self.evicted += 1
                _throttle.log(log, "connection_evicted", "closed an idle connection to make "
                              "room for a new one (%s)", why)
                return True
        return False

    def _refuse(self, status: int, address: str | None) -> int:
        self.refused += 1
        flag = FLAGS["max_peer_connections"] if status == 429 else FLAGS["max_connections"]
        _throttle.log(log, "connection_refused", "refused a connection from %s: every "
                      "connection in its cap (%s) has a request in flight",
                      address or "this computer", flag, level=logging.WARNING)
        return status


def refusal(status: int, guard: ConnectionGuard) -> bytes:
    """The whole HTTP response sent to a connection refused at a cap."""
    if status == 429:
        message = (f"Too many connections from your address (at most {guard.max_peer}, "
                   f"{FLAGS['max_peer_connections']}), each with a request in flight. Wait for "
                   "one to finish.")
    else:
        message = (f"The runner has as many connections as it takes ({guard.max_total}, "
                   f"{FLAGS['max_connections']}), each with a request in flight. Try again "
                   "shortly.")
    body = json.dumps(error_body(message, SERVER_ERROR, "too_many_connections")).encode()
    reason = b"Too Many Requests" if status == 429 else b"Service Unavailable"
    return (b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"connection: close\r\nretry-after: 1\r\n\r\n" % (status, reason, len(body)) + body)


def guarded_protocol(guard: ConnectionGuard) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools, else h11) with ``guard``'s caps and header
    time-out; pass it as ``uvicorn.Config(http=...)``."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    base: Any = AutoHTTPProtocol

    class GuardedProtocol(base):
        """Counted by the guard from ``connection_made`` to ``connection_lost``; a timer closes
        it unless a request head arrives in time. Both uvicorn protocols keep the request in
        flight as ``cycle`` and call ``on_response_complete`` after each response."""

        _refused = False
        _head_timer: asyncio.TimerHandle | None = None
        _timed_cycle: Any = None  # the request in flight when the timer was armed

        def connection_made(self, transport: Any) -> None:
            status = guard.admit(self, transport.get_extra_info("peername"))
            if status is not None:
                self._refused = True
                transport.write(refusal(status, guard))
                transport.close()
                return
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._refused:
                return
            self._disarm()
            guard.release(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            super().data_received(data)
            if self._head_timer is not None and self.cycle is not self._timed_cycle:
                self._disarm()  # a new request's head is complete: it is in flight

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def is_idle(self) -> bool:
            return self.cycle is None or bool(self.cycle.response_complete)

        def close_now(self) -> None:
            if not self.transport.is_closing():
                self.transport.close()

        def _arm(self) -> None:
            self._disarm()
            self._timed_cycle = self.cycle
            self._head_timer = self.loop.call_later(guard.header_timeout, self._head_late)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_late(self) -> None:
            self._head_timer = None
            if self.is_idle() and not self.transport.is_closing():
                _throttle.log(log, "header_timeout", "closed a connection that sent no "
                              "complete request head within %g s (%s)", guard.header_timeout,
                              FLAGS["header_timeout"])
                self.transport.close()

    return GuardedProtocol


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` and listening (port 0: any free one), for uvicorn;
    the runner and the model server both listen through it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    if os.name != "nt":
        # Reuse a port in TIME_WAIT after a restart; Windows' SO_REUSEADDR means something unsafe.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(False)
    return sock
