"""What every HTTP request passes before any endpoint sees it: its Host, its key, its body size.

Pure ASGI middleware (cheaper than Starlette's BaseHTTPMiddleware, and streaming stays
untouched), wrapped around the whole app by :func:`guard`, so an endpoint added later inherits
all three. In order:

1. :class:`HostCheck` (defence in depth against DNS rebinding): on a loopback bind only a Host
   naming loopback (127.0.0.0/8, localhost, [::1], any port) is answered; anything else gets a
   421. A web page on another name that resolves to 127.0.0.1 sends its own name. On a shared
   bind the runner is reached by names it cannot know, and the key protects it.
2. :class:`BearerAuth`: the API key (``Authorization: Bearer``, or ``x-api-key`` as Anthropic's
   clients send it), compared in constant time; 401 otherwise.
3. :class:`BodyLimit`: a body over ``--max-body-mib`` gets a 413 before it is read (a declared
   Content-Length) or as soon as it passes the limit (chunked). Only keyed requests get this far,
   so nobody without the key can make the runner read a body at all. A body that has not
   arrived ``--body-timeout`` seconds after the head gets a 408 (sent a byte at a time, it
   would hold a connection counted as busy for ever).

Refusals close the connection (``connection: close``): what the client sends next is not read.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from runner.limits import FLAGS, Limits
from runner.logs import Throttle
from runner.wire.shapes import error_body

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

_throttle = Throttle()


# The error body a refusal sends: (the request's scope, status, message, code, OpenAI's error
# type) -> JSON. The runner's clients all read OpenAI's shape; the model server answers each
# API's clients in their own (server/app.py error_shape), Anthropic's and Ollama's too.
ErrorShape = Callable[[Scope, int, str, str, str], dict[str, Any]]


def openai_shape(scope: Scope, status: int, message: str, code: str, type_: str
                 ) -> dict[str, Any]:
    return error_body(message, type_, code)


async def refuse(send: Send, status: int, message: str, code: str,
                 type_: str = "invalid_request_error",
                 headers: list[tuple[bytes, bytes]] | None = None, *,
                 scope: Scope | None = None, shape: ErrorShape = openai_shape) -> None:
    """Answer ``status`` with ``message`` (in ``shape`` for the request ``scope``) and close
    the connection."""
    body = json.dumps(shape(scope or {}, status, message, code, type_)).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def guard(app: App, limits: Limits, key: str | None, loopback_only: bool,
          pacer: Pacer | None = None, shape: ErrorShape = openai_shape) -> App:
    """``app`` behind the Host check (``loopback_only``: the runner is bound to loopback), the
    key and the body limit, its bodies read at ``pacer``'s pace; refusals in ``shape``."""
    inner: App = BodyLimit(app, limits.max_body_bytes, limits.body_timeout, pacer, shape=shape)
    inner = BearerAuth(inner, key, shape)
    return HostCheck(inner, shape) if loopback_only else inner


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


# ---- Host --------------------------------------------------------------------------------------

def is_loopback_host(value: str) -> bool:
    """Whether a Host header names this computer's loopback: 127.x.y.z, localhost or [::1],
    with any port or none."""
    host = value.strip().lower()
    if host.startswith("["):
        name, bracket, port = host[1:].partition("]")
        if not bracket or (port and not (port.startswith(":") and port[1:].isdigit())):
            return False
    else:
        name, colon, port = host.partition(":")
        if colon and not port.isdigit():
            return False
    if name in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class HostCheck:
    def __init__(self, app: App, shape: ErrorShape = openai_shape) -> None:
        self.app = app
        self.shape = shape

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            raw = _header(scope, b"host")
            # No Host at all (HTTP/1.0 tools) is no rebinding: a browser always sends one.
            host = raw.decode("latin-1") if raw is not None else None
            if host is not None and not is_loopback_host(host):
                shown = host if len(host) <= 100 else host[:100] + "…"
                _throttle.log(log, "host_refused", "refused a request for Host %r: this runner "
                              "listens on loopback only", shown)
                await refuse(send, 421, (
                    f"This runner answers only requests addressed to this computer's loopback "
                    f"(127.0.0.1, localhost or [::1]); this one was addressed to {shown!r}. A web "
                    "page may be trying to reach it under another name (DNS rebinding). To use "
                    "the runner under another name, share it on a network address (--host with "
                    "--allow-remote), where the API key protects it."), "misdirected_request",
                    scope=scope, shape=self.shape)
                return
        await self.app(scope, receive, send)


# ---- the key -----------------------------------------------------------------------------------

class BearerAuth:
    def __init__(self, app: App, key: str | None, shape: ErrorShape = openai_shape) -> None:
        self.app = app
        self.expected = key.encode() if key else None
        self.shape = shape

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.expected is not None:
            got = b""
            value = _header(scope, b"authorization")
            if value is not None:
                scheme, _, got = value.strip().partition(b" ")
                if scheme.lower() != b"bearer":  # the scheme is case-insensitive (RFC 9110)
                    got = b""
                got = got.strip()
            if not got:  # Anthropic's clients send their key as x-api-key
                got = (_header(scope, b"x-api-key") or b"").strip()
            if not got or not hmac.compare_digest(got, self.expected):  # constant time
                await refuse(send, 401,
                             "Missing or wrong API key: send 'Authorization: Bearer <key>'.",
                             "invalid_api_key", "authentication_error",
                             [(b"www-authenticate", b"Bearer")], scope=scope, shape=self.shape)
                return
        await self.app(scope, receive, send)


# ---- the body ----------------------------------------------------------------------------------

# Bytes a body may bring at once before the pacer counts them against its rate: more than any
# ordinary chat request, so pacing only ever slows big uploads.
PACER_BURST = 4 * 2**20


class Pacer:
    """Reading request bodies, all connections together, at most ``rate`` bytes a second while
    ``busy()`` (a reply is being generated); otherwise at once.

    Reading, parsing and refusing a 32 MiB body costs the runner about 5 ms of CPU per MiB and
    its sender about 2: on 2 cores, bodies sent back to back left a concurrent stream a fifth of
    its rate. Paced, the kernel's buffers fill and the sender waits (TCP's own flow control:
    uvicorn stops reading a connection whose request nobody receives), so the bytes cost the
    machine only as fast as they are taken. A token bucket: ``burst`` bytes pass at once, then
    ``rate`` a second; an idle runner refills it."""

    def __init__(self, rate: float, busy: Callable[[], bool], burst: int = PACER_BURST,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.busy = busy
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()
        self.paced_bytes = 0  # bytes that had to wait, since start (/runner/status)

    def wait_for(self, n: int) -> float:
        """Seconds to wait before taking ``n`` more bytes of a body."""
        now = self._clock()
        if not self.busy():
            self._tokens, self._last = float(self.burst), now
            return 0.0
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.rate)
        self._last = now
        self._tokens -= n
        if self._tokens >= 0:
            return 0.0
        self.paced_bytes += n
        return -self._tokens / self.rate


class BodyLimit:
    """Reads a request's body up to ``max_bytes`` before the app runs, then hands it over
    whole, in one message; the app's later ``receive()`` calls (a disconnect) go to the server
    as before. ``pacer`` says how long to wait before reading on (see :class:`Pacer`)."""

    def __init__(self, app: App, max_bytes: int, timeout: float, pacer: Pacer | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 shape: ErrorShape = openai_shape) -> None:
        self.app = app
        self.shape = shape
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.pacer = pacer
        self._sleep = sleep

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = _header(scope, b"content-length")
        chunked = _header(scope, b"transfer-encoding") is not None
        if length is None and not chunked:
            await self.app(scope, receive, send)  # no body: nothing to count (GET /health)
            return
        declared = int(length) if length is not None and length.strip().isdigit() else None
        if declared is not None and declared > self.max_bytes:
            await self._too_large(scope, send, declared)
            return
        # Gathered as it arrives: joining 32 MiB of pieces at the end would hold the event loop
        # (and the GIL) for one long copy.
        body = bytearray()
        try:
            async with asyncio.timeout(self.timeout) as limit:
                while True:
                    message = await receive()
                    if message["type"] != "http.request":
                        return  # the client left before its body arrived: nobody to answer
                    chunk = message.get("body", b"")
                    if len(body) + len(chunk) > self.max_bytes:
                        await self._too_large(scope, send, None)
                        return
                    body += chunk
                    if not message.get("more_body", False):
                        break
                    wait = self.pacer.wait_for(len(chunk)) if self.pacer is not None else 0.0
                    if wait > 0:
                        # Our own wait: not the sender's slowness, which the time-out is for.
                        when = limit.when()
                        limit.reschedule(None if when is None else when + wait)
                        await self._sleep(wait)
        except TimeoutError:
            await self._too_slow(scope, send, len(body), declared)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _too_slow(self, scope: Scope, send: Send, got: int, declared: int | None) -> None:
        of = f" of {declared}" if declared is not None else ""
        _throttle.log(log, "body_timeout", "refused a request to %s whose body had not arrived "
                      "after %g s (%d%s bytes; %s)", scope.get("path", "?"), self.timeout, got,
                      of, FLAGS["body_timeout"])
        await refuse(send, 408, (
            f"The request body had not arrived {self.timeout:g} s after its head ({got}{of} "
            f"bytes came); this runner waits at most that long ({FLAGS['body_timeout']}). "
            "Send it at once, or over a faster network."), "body_timeout", scope=scope,
            shape=self.shape)

    async def _too_large(self, scope: Scope, send: Send, declared: int | None) -> None:
        size = f"{declared / 2**20:.1f} MiB" if declared is not None else \
            f"more than {self.max_bytes // 2**20} MiB"
        _throttle.log(log, "body_too_large", "refused a request body of %s to %s (the limit is "
                      "%d MiB, %s)", size, scope.get("path", "?"), self.max_bytes // 2**20,
                      FLAGS["max_body_mib"])
        await refuse(send, 413, (
            f"The request body is {size}; this runner takes at most {self.max_bytes // 2**20} "
            f"MiB ({FLAGS['max_body_mib']}). Send less at once: fewer or smaller images, or a "
            "shorter conversation."), "body_too_large", scope=scope, shape=self.shape)


def _replay(body: bytearray, receive: Receive) -> Receive:
    """The body in one message (a bytearray: copying it into bytes would cost the copy this
    avoids), then the server's own messages."""
    delivered = False

    async def replay() -> MutableMapping[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
