"""Image links in chat requests, fetched where the person running the runner allows them
(``serve --image-links``; Hearth: Settings → Sharing).

A runner shared with other programs or devices must not become a proxy into the network it sits
on: a link is fetched only from public internet addresses. Every address the host name resolves
to is checked (:func:`address_problem`: loopback, private, link-local, CGNAT, multicast,
reserved, site-local, IPv4 inside IPv6, and this computer's own addresses are refused), and the
connection goes to exactly a checked address: there is no second lookup that a DNS answer with
a short lifetime could turn towards 127.0.0.1 (DNS rebinding). For https the certificate is
checked against the link's host name, sent as SNI. Redirects are followed by hand, each hop
checked the same way, at most ``max_redirects``. The whole fetch, lookups and TLS handshake
included, has one deadline: a watchdog shuts the socket when it passes, so a server that sends
a byte every few seconds cannot hold the prompt thread. More than ``max_bytes`` is refused,
from the Content-Length where there is one, and reading stops at the limit where there is not.

Proxies from the environment (``HTTPS_PROXY``) are not used: the address checks would then
judge the proxy, not the link. Every refusal is an :class:`ImageRefused` whose sentence names
the image's place in the request and says what to do.
"""

from __future__ import annotations

import http.client
import ipaddress
import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, quote, urljoin, urlsplit

from runner.logs import Throttle
from runner.vision import ImageRefused

log = logging.getLogger(__name__)
_throttle = Throttle()
_log_lock = threading.Lock()

MAX_BYTES = 20 * 2**20
TIMEOUT_S = 10.0
MAX_REDIRECTS = 3
REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CHUNK = 64 * 1024
# The way round every refusal, as a sentence and as the end of one.
_SEND_DATA = "Send the image itself as a data URL (data:image/png;base64,…)."
_OR_SEND = "send the image itself as a data URL (data:image/png;base64,…)."

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# socket.getaddrinfo's shape: (host, port, family, type) -> [(family, type, proto, name, addr)]
Resolve = Callable[..., Sequence[tuple[Any, ...]]]
# Why an address must not be fetched from ("a loopback address"), or None where it may be.
AddressCheck = Callable[[IPAddress], str | None]

_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_KINDS: tuple[tuple[str, str], ...] = (
    ("is_loopback", "a loopback address (the server's own computer)"),
    ("is_unspecified", "the unspecified address (the server's own computer)"),
    ("is_link_local", "a link-local address (the server's own network)"),
    ("is_private", "a private network address"),
    ("is_multicast", "a multicast address"),
    ("is_reserved", "a reserved address"),
)


def address_problem(ip: IPAddress) -> str | None:
    """Why the runner must not connect to ``ip``, as words that follow "which is"; None for a
    globally routable address."""
    if isinstance(ip, ipaddress.IPv6Address):
        # An IPv4 address carried in IPv6 is judged by the IPv4 address it reaches.
        if ip.ipv4_mapped is not None:
            return address_problem(ip.ipv4_mapped)
        if ip in _NAT64:  # DNS64 on an IPv6-only network: the gateway connects to the IPv4 one
            return address_problem(ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF))
        if ip.sixtofour is not None and (why := address_problem(ip.sixtofour)):
            return why
        if ip.teredo is not None:
            return "a Teredo tunnel address"
        if ip.is_site_local:
            return "a site-local address (the server's own network)"
    elif ip in _CGNAT:
        return "a shared address of a provider's network (CGNAT)"
    for attr, words in _KINDS:
        if getattr(ip, attr):
            return words
    if not ip.is_global:
        return "not a public internet address"
    return None


def own_addresses() -> frozenset[IPAddress]:
    """This computer's own addresses, on every interface (a public one reaches services that a
    firewall hides from the internet but not from the computer itself)."""
    import psutil

    found: set[IPAddress] = set()
    try:
        interfaces = psutil.net_if_addrs()
    except (OSError, RuntimeError):
        return frozenset()
    for addrs in interfaces.values():
        for a in addrs:
            if a.family in (socket.AF_INET, socket.AF_INET6):
                try:
                    found.add(ipaddress.ip_address(a.address.split("%", 1)[0]))
                except ValueError:
                    continue
    return frozenset(found)


def default_check() -> AddressCheck:
    """:func:`address_problem`, and this computer's own addresses refused too."""
    own = own_addresses()

    def check(ip: IPAddress) -> str | None:
        return address_problem(ip) or (
            "an address of the server's own computer" if ip in own else None)

    return check


def fetch_image(url: str, where: str, *, max_bytes: int = MAX_BYTES,
                timeout_s: float = TIMEOUT_S, max_redirects: int = MAX_REDIRECTS,
                resolve: Resolve = socket.getaddrinfo, check: AddressCheck | None = None,
                tls: ssl.SSLContext | None = None) -> bytes:
    """The bytes an http(s) link to an image answers with, within the bounds; ImageRefused with
    a sentence naming ``where`` otherwise. ``resolve`` looks up host names; ``check`` judges
    each address (default: :func:`default_check`); ``tls`` holds the certificates trusted
    (default: the system's). The runner passes none of the three: they are for tests."""
    deadline = _Deadline(timeout_s)
    check = check or default_check()
    try:
        for _hop in range(max_redirects + 1):
            target = _Target.of(url, where)
            addresses = _addresses(target, where, resolve, check, deadline)
            got = _get(target, addresses, where, deadline, max_bytes, tls)
            if isinstance(got, bytes):
                log.debug("fetched an image link from %s: %d bytes", target.host, len(got))
                return got
            url = urljoin(url, got)
        raise _refused(f"{where} links to a page that redirected more than {max_redirects} "
                       f"times; this server follows at most {max_redirects}. Link to the image "
                       f"itself, or {_OR_SEND}")
    except _TimedOut:
        raise _refused(f"{where}: fetching the link took longer than {timeout_s:g} s, the most "
                       f"this server waits for an image. {_SEND_DATA}") from None
    finally:
        deadline.stop()


def _refused(sentence: str) -> ImageRefused:
    # Throttled: whoever can send requests could otherwise fill the log (prompt threads share it).
    with _log_lock:
        _throttle.log(log, "image_link_refused", "image link refused: %s", sentence)
    return ImageRefused(sentence)


# -- the link and its addresses ---------------------------------------------------------------


@dataclass(frozen=True)
class _Target:
    """One hop: where to connect and what to ask for."""

    tls: bool
    host: str  # ASCII (IDNA) host name, or an IP address without brackets
    port: int
    path: str  # path and query, as sent in the request line

    @classmethod
    def of(cls, url: str, where: str) -> _Target:
        try:
            parts: SplitResult = urlsplit(url)
            port = parts.port
        except ValueError:
            raise _refused(f"{where} is not a valid link: check it, or "
                           f"{_OR_SEND}") from None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise _refused(f"{where} leads to a {scheme or 'relative'} link; this server fetches "
                           f"only http and https links. {_SEND_DATA}")
        if parts.username is not None or parts.password is not None:
            raise _refused(f"{where} is a link with a user name or password in it; this server "
                           f"does not send credentials. {_SEND_DATA}")
        host = parts.hostname or ""
        try:
            host = host.encode("idna").decode("ascii") if not host.isascii() else host
        except UnicodeError:
            host = ""
        if not host:
            raise _refused(f"{where} is a link without a usable host name: check it, or "
                           f"{_OR_SEND}")
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        # Characters a request line cannot carry are escaped; escapes already there are kept.
        path = quote(path, safe="/?=&%:@!$'()*+,;~-._")
        if port is None:
            port = 443 if scheme == "https" else 80
        return cls(scheme == "https", host, port, path)


def _addresses(target: _Target, where: str, resolve: Resolve, check: AddressCheck,
               deadline: _Deadline) -> list[tuple[int, tuple[Any, ...]]]:
    """(family, socket address) of every address of the host, each checked; refused where any
    one fails (a name with one public and one private address is not a public name)."""
    try:
        literal: IPAddress | None = ipaddress.ip_address(target.host)
    except ValueError:
        literal = None
    if literal is not None:
        family = socket.AF_INET6 if literal.version == 6 else socket.AF_INET
        infos: Sequence[tuple[Any, ...]] = [(family, socket.SOCK_STREAM, 0, "",
                                             (str(literal), target.port))]
    else:
        infos = _resolve(resolve, target, where, deadline)
    out: list[tuple[int, tuple[Any, ...]]] = []
    for family, _type, _proto, _name, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        try:
            ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        except ValueError:
            continue
        why = check(ip)
        if why is not None:
            named = target.host if literal is not None else f"{target.host} ({ip})"
            raise _refused(
                f"{where} links to {named}, which is {why}: this server fetches "
                "images only from public internet addresses, never from its own network. "
                f"{_SEND_DATA}")
        if (family, sockaddr) not in out:
            out.append((family, tuple(sockaddr)))
    if not out:
        raise _refused(f"{where} links to {target.host}, which has no internet address. Check "
                       f"the link, or {_OR_SEND}")
    return out


def _resolve(resolve: Resolve, target: _Target, where: str,
             deadline: _Deadline) -> Sequence[tuple[Any, ...]]:
    """The host's addresses, looked up on a thread of its own: the system's resolver has no
    time-out to give it, and the deadline holds for the lookup too."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["found"] = resolve(target.host, target.port, 0, socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            box["error"] = exc

    thread = threading.Thread(target=work, name="resolve", daemon=True)
    thread.start()
    thread.join(deadline.left())
    if thread.is_alive():
        raise _TimedOut
    if "error" in box:
        reason = getattr(box["error"], "strerror", None) or box["error"]
        raise _refused(f"{where} links to {target.host}, a name that could not be looked up "
                       f"({reason}). Check the link, or {_OR_SEND}")
    return list(box.get("found") or [])


# -- the request ------------------------------------------------------------------------------


class _TimedOut(Exception):
    """The fetch's deadline passed."""


class _Deadline:
    """One deadline for a whole fetch: :meth:`left` for each blocking call's time-out, and a
    watchdog that shuts every socket it watches when the deadline passes (a socket time-out
    alone restarts with every byte that arrives)."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds
        self.expired = False
        self._done = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.name = "image-link-deadline"
        self._timer.start()

    def left(self) -> float:
        """Seconds left; _TimedOut where none are."""
        left = self.end - time.monotonic()
        if left <= 0 or self.expired:
            raise _TimedOut
        return left

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def stop(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._done = True
            self._sockets.clear()

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # closed already, or never connected


class _PinnedConnection(http.client.HTTPConnection):
    """HTTP(S) to the host name of the link, connected to one of the addresses already checked:
    http.client would look the name up again."""

    def __init__(self, target: _Target, addresses: list[tuple[int, tuple[Any, ...]]],
                 deadline: _Deadline, tls: ssl.SSLContext | None) -> None:
        super().__init__(target.host, target.port, timeout=deadline.left())
        self.default_port = 443 if target.tls else 80  # the Host header leaves it out then
        self._addresses = addresses
        self._deadline = deadline
        self._tls = (tls or _system_tls()) if target.tls else None

    def connect(self) -> None:
        error: OSError | None = None
        for family, sockaddr in self._addresses:
            sock = socket.socket(family, socket.SOCK_STREAM)
            self._deadline.watch(sock)
            try:
                sock.settimeout(self._deadline.left())
                sock.connect(sockaddr)
            except OSError as exc:
                sock.close()
                error = exc
                continue
            break
        else:
            raise error or OSError("no address to connect to")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._tls is not None:
            sock = self._tls.wrap_socket(sock, server_hostname=self.host,
                                         do_handshake_on_connect=False)
            self._deadline.watch(sock)
            sock.settimeout(self._deadline.left())
            sock.do_handshake()
        self.sock = sock


_tls_context: ssl.SSLContext | None = None


def _system_tls() -> ssl.SSLContext:
    """The system's certificate authorities (certifi's where the system offers none, as in
    some Python builds for macOS)."""
    global _tls_context
    if _tls_context is None:
        context = ssl.create_default_context()
        if not context.cert_store_stats().get("x509_ca"):
            try:
                import certifi

                context.load_verify_locations(certifi.where())
            except (ImportError, OSError):
                pass
        _tls_context = context
    return _tls_context


def _get(target: _Target, addresses: list[tuple[int, tuple[Any, ...]]], where: str,
         deadline: _Deadline, max_bytes: int, tls: ssl.SSLContext | None) -> bytes | str:
    """The body of a 200 answer, or the Location of a redirect."""
    conn = _PinnedConnection(target, addresses, deadline, tls)
    host = target.host
    try:
        try:
            conn.putrequest("GET", target.path, skip_accept_encoding=True)
            conn.putheader("Accept", "image/png, image/jpeg;q=0.9, image/*;q=0.5")
            conn.putheader("Accept-Encoding", "identity")
            conn.putheader("User-Agent", "hearth-runner")
            conn.putheader("Connection", "close")
            conn.endheaders()
            sock = conn.sock
            assert sock is not None
            sock.settimeout(deadline.left())
            resp = conn.getresponse()
            if resp.status in REDIRECTS and resp.getheader("Location"):
                return str(resp.getheader("Location"))
            if resp.status != 200:
                raise _refused(f"{where}: {host} answered {resp.status} {resp.reason} instead "
                               f"of the image. Check the link, or {_OR_SEND}")
            return _body(resp, sock, where, deadline, max_bytes)
        except ssl.SSLCertVerificationError as exc:
            raise _refused(f"{where}: {host}'s certificate could not be verified "
                           f"({exc.verify_message or exc.reason}), so the image was not "
                           f"fetched. {_SEND_DATA}") from None
        except (http.client.HTTPException, OSError) as exc:
            if deadline.expired or isinstance(exc, TimeoutError):
                raise _TimedOut from None
            if isinstance(exc, http.client.InvalidURL):
                raise _refused(f"{where} is not a valid link ({exc}). {_SEND_DATA}") from None
            what = "did not answer in HTTP" if isinstance(exc, http.client.HTTPException) \
                else "could not be reached"
            raise _refused(f"{where}: {host} {what} ({_reason(exc)}). Check the link, or "
                           f"{_OR_SEND}") from None
    finally:
        conn.close()


def _body(resp: http.client.HTTPResponse, sock: socket.socket, where: str,
          deadline: _Deadline, max_bytes: int) -> bytes:
    declared = resp.getheader("Content-Length", "").strip()
    limit = f"{max_bytes / 2**20:g} MiB"
    if declared.isdigit() and int(declared) > max_bytes:
        raise _refused(f"{where} links to {int(declared) / 2**20:.1f} MiB, more than the "
                       f"{limit} this server fetches for an image: link to a smaller image "
                       "(scale it down), or send it as a data URL.")
    chunks: list[bytes] = []
    total = 0
    while True:
        sock.settimeout(deadline.left())
        chunk = resp.read1(_CHUNK)
        if not chunk:
            break
        total += len(chunk)
        if total > max_bytes:
            raise _refused(f"{where} links to more than the {limit} this server fetches for "
                           "an image: link to a smaller image (scale it down), or send it as "
                           "a data URL.")
        chunks.append(chunk)
    if deadline.expired:
        raise _TimedOut
    if resp.length:  # the Content-Length promised more than arrived
        raise _refused(f"{where}: the connection closed before the whole image arrived "
                       f"({total} of {total + resp.length} bytes). Try again, or "
                       f"{_OR_SEND}")
    return b"".join(chunks)


def _reason(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return text[:200]
