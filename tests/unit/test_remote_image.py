"""Image links (runner/remote_image.py): which addresses are refused, and the bounds on a fetch
(redirects, size, time), against a local HTTP(S) server.

127.0.0.1 is itself refused, so the tests reach their server through a fake resolver that maps
made-up names to it and an address check that lets 127.0.0.1 alone through: both are keyword
arguments of fetch_image that the runner never passes (it sets ``fetch_image`` itself)."""

from __future__ import annotations

import ipaddress
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from runner import remote_image
from runner.remote_image import IPAddress, address_problem, fetch_image
from runner.vision import ImageRefused
from tests.fixtures.vision import png_bytes

WHERE = "messages[0].content[1]"
PNG = png_bytes(8, 8, 1)
LOCAL = ipaddress.ip_address("127.0.0.1")

REFUSED = [
    "127.0.0.1", "127.5.6.7", "0.0.0.0", "10.1.2.3", "172.16.0.1", "192.168.1.1",
    "169.254.169.254",  # a cloud's metadata service
    "100.64.0.1", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255", "192.0.2.1",
    "::1", "::", "fe80::1", "fe80::1%2", "fc00::1", "fd12:3456::1", "fec0::1", "ff02::1",
    "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254",
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
    "2001:db8::1", "::7f00:1",  # documentation; IPv4-compatible 127.0.0.1
]
ALLOWED = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8",
           "64:ff9b::808:808", "2002:808:808::1"]


@pytest.mark.parametrize("address", REFUSED)
def test_addresses_that_are_not_public_are_refused(address: str) -> None:
    assert address_problem(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses_are_allowed(address: str) -> None:
    assert address_problem(ipaddress.ip_address(address)) is None


def test_this_computers_own_addresses_are_refused_too(monkeypatch: pytest.MonkeyPatch) -> None:
    public = ipaddress.ip_address("8.8.4.4")
    monkeypatch.setattr(remote_image, "own_addresses", lambda: frozenset({public}))
    with pytest.raises(ImageRefused, match="own computer"):
        fetch_image("http://8.8.4.4/a.png", WHERE)
    monkeypatch.undo()
    assert LOCAL in remote_image.own_addresses()  # loopback is an interface everywhere


# -- refused before any connection ----------------------------------------------------------------


def _no_lookup(*_a: Any) -> Any:
    raise AssertionError("looked up")


def _refusal(url: str, **kw: Any) -> str:
    with pytest.raises(ImageRefused) as refused:
        fetch_image(url, WHERE, **kw)
    text = str(refused.value)
    assert WHERE in text, text
    return text


def test_links_that_are_not_http_are_refused() -> None:
    assert "only http and https" in _refusal("ftp://example.com/a.png", resolve=_no_lookup)
    assert "user name or password" in _refusal("https://me:pw@example.com/a.png",
                                               resolve=_no_lookup)
    assert "not a valid link" in _refusal("http://example.com:99999/a.png", resolve=_no_lookup)
    assert "without a usable host" in _refusal("http:///a.png", resolve=_no_lookup)


@pytest.mark.parametrize("url", ["http://127.0.0.1/a.png", "http://[::1]:8080/a.png",
                                 "https://[::ffff:7f00:1]/a.png", "http://10.0.0.7/a.png",
                                 "http://169.254.169.254/latest/meta-data/"])
def test_address_links_are_checked_without_a_lookup(url: str) -> None:
    text = _refusal(url, resolve=_no_lookup)
    assert "never from its own network" in text and "data URL" in text


@pytest.mark.parametrize("host", ["localhost", "2130706433", "0x7f.1", "127.1"])
def test_names_and_odd_spellings_of_loopback_are_refused(host: str) -> None:
    """The system's resolver reads these as 127.0.0.1 (no network needed): what is judged is
    the address it gives, not the text."""
    try:
        socket.getaddrinfo(host, 80)
    except OSError:
        pytest.skip(f"this system's resolver does not read {host!r}")
    assert "loopback" in _refusal(f"http://{host}/a.png")


def fake_resolver(names: dict[str, list[str]], calls: list[str] | None = None
                  ) -> Callable[..., list[tuple[Any, ...]]]:
    def resolve(host: str, port: int, *_a: Any) -> list[tuple[Any, ...]]:
        if calls is not None:
            calls.append(host)
        if host not in names:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        out = []
        for a in names[host]:
            family = socket.AF_INET6 if ":" in a else socket.AF_INET
            out.append((family, socket.SOCK_STREAM, 6, "", (a, port)))
        return out

    return resolve


def test_a_name_is_refused_when_any_of_its_addresses_is_not_public() -> None:
    resolve = fake_resolver({"mixed.test": ["8.8.8.8", "192.168.0.10"]})
    text = _refusal("http://mixed.test/a.png", resolve=resolve)
    assert "mixed.test (192.168.0.10), which is a private network address" in text


def test_a_name_that_does_not_resolve_says_so() -> None:
    assert "could not be looked up" in _refusal("http://nowhere.test/a.png",
                                                 resolve=fake_resolver({}))


def test_a_slow_lookup_is_bounded_by_the_deadline() -> None:
    def slow(*_a: Any) -> Any:
        time.sleep(3)
        raise socket.gaierror("late")

    # The deadline's sentence, not the late lookup's "could not be looked up": it was cut off.
    assert "longer than 0.3 s" in _refusal("http://slow.test/a.png", resolve=slow,
                                           timeout_s=0.3)


# -- a local server --------------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[dict[str, str]]

    def log_message(self, *_a: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
        route = self.path.split("?")[0].strip("/").split("/")
        handler = getattr(self, "r_" + route[0].split(".")[0].replace("-", "_"), None)
        if handler is None:
            self.send_error(404, "Not Found")
            return
        handler(*route[1:])

    def _send(self, body: bytes, status: int = 200, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers.items():
            self.send_header(k.replace("_", "-"), v)
        self.end_headers()
        self.wfile.write(body)

    def r_ok(self, *_: str) -> None:
        self._send(PNG, content_type="image/png")

    def r_hop(self, n: str, *_: str) -> None:
        """/hop/N redirects N more times, then to the image (relative Locations)."""
        left = int(n)
        self._send(b"", 302, location="/ok.png" if left <= 1 else f"/hop/{left - 1}")

    def r_to(self, *rest: str) -> None:
        """/to/<host>/<port>: a redirect to the image on another host."""
        host, port = rest
        self._send(b"", 307, location=f"http://{host}:{port}/ok.png")

    def r_big(self, *_: str) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(30 * 2**20))
        self.end_headers()
        self.wfile.write(PNG)

    def r_endless(self, *_: str) -> None:
        """No Content-Length: chunks until the client stops reading."""
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"x" * 16384
        try:
            for _i in range(10_000):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            pass

    def r_short(self, *_: str) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(PNG[:10])
        self.close_connection = True

    def r_drip(self, *_: str) -> None:
        """The headers, then a byte every 0.1 s: each read succeeds, the whole never ends."""
        self.send_response(200)
        self.send_header("Content-Length", "100000")
        self.end_headers()
        try:
            for _i in range(200):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass


class Server:
    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        seen: list[dict[str, str]] = []
        handler = type("H", (Handler,), {"seen": seen})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.seen = seen
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def only_local(ip: IPAddress) -> str | None:
    """The test server's address passes; every other is judged as the runner judges it."""
    return None if ip == LOCAL else address_problem(ip)


NAMES = {"images.test": ["127.0.0.1"], "other.test": ["127.0.0.1"],
         "private.test": ["10.0.0.5"]}


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


def fetch(server: Server, path: str, host: str = "images.test", **kw: Any) -> bytes:
    kw.setdefault("resolve", fake_resolver(NAMES))
    kw.setdefault("check", only_local)
    return fetch_image(f"http://{host}:{server.port}{path}", WHERE, **kw)


def refused(server: Server, path: str, **kw: Any) -> str:
    with pytest.raises(ImageRefused) as exc:
        fetch(server, path, **kw)
    text = str(exc.value)
    assert WHERE in text, text
    return text


def test_an_image_is_fetched_from_the_checked_address_with_its_host_name(server: Server) -> None:
    calls: list[str] = []
    assert fetch(server, "/ok.png?size=8", resolve=fake_resolver(NAMES, calls)) == PNG
    assert calls == ["images.test"]  # looked up once: connected to the address checked
    request = server.seen[-1]
    assert request["path"] == "/ok.png?size=8"
    assert request["host"] == f"images.test:{server.port}"
    assert request["accept-encoding"] == "identity" and "cookie" not in request


def test_no_second_lookup_can_change_the_address(server: Server) -> None:
    """DNS rebinding: the first answer is checked and used; a later answer would be 10.0.0.1."""
    answers = iter([["127.0.0.1"], ["10.0.0.1"]])

    def rebinding(host: str, port: int, *_a: Any) -> list[tuple[Any, ...]]:
        return fake_resolver({host: next(answers)})(host, port)

    assert fetch(server, "/ok.png", resolve=rebinding) == PNG


def test_redirects_are_followed_up_to_the_limit(server: Server) -> None:
    assert fetch(server, "/hop/3") == PNG
    assert "redirected more than 3 times" in refused(server, "/hop/4")
    assert fetch(server, "/hop/1", max_redirects=1) == PNG
    assert "more than 0 times" in refused(server, "/hop/1", max_redirects=0)


def test_every_hop_is_checked(server: Server) -> None:
    text = refused(server, f"/to/private.test/{server.port}")
    assert "private.test (10.0.0.5), which is a private network address" in text
    assert "which is a loopback" in refused(server, f"/to/localhost/{server.port}",
                                            resolve=fake_resolver(
                                                {**NAMES, "localhost": ["::1"]}))


def test_other_answers_are_named(server: Server) -> None:
    text = refused(server, "/missing.png")
    assert "images.test answered 404 Not Found instead of the image" in text


def test_a_declared_size_over_the_limit_is_refused_before_reading(server: Server) -> None:
    # The declared size is named: refused from the header, not after reading 20 MiB.
    assert "30.0 MiB, more than the 20 MiB" in refused(server, "/big")


def test_reading_stops_at_the_limit(server: Server) -> None:
    assert "more than the 0.25 MiB" in refused(server, "/endless", max_bytes=2**18)
    assert fetch(server, "/ok.png", max_bytes=len(PNG)) == PNG


def test_a_cut_short_body_is_refused(server: Server) -> None:
    assert "closed before the whole image arrived (10 of 1000 bytes)" in refused(server,
                                                                                  "/short")


def test_the_deadline_holds_for_a_server_that_drips(server: Server) -> None:
    assert "longer than 0.8 s" in refused(server, "/drip", timeout_s=0.8)


def test_the_deadline_holds_for_a_server_that_never_answers() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()  # accepted by the kernel, never answered
        port = silent.getsockname()[1]
        with pytest.raises(ImageRefused, match=r"longer than 0\.5 s"):
            fetch_image(f"http://images.test:{port}/a.png", WHERE, timeout_s=0.5,
                        resolve=fake_resolver(NAMES), check=only_local)


def test_a_closed_port_is_unreachable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ImageRefused, match="could not be reached"):
        fetch_image(f"http://images.test:{port}/a.png", WHERE, resolve=fake_resolver(NAMES),
                    check=only_local)


# -- https: the certificate is checked against the link's name, sent as SNI -------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl command to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=images.test", "-addext", "subjectAltName=DNS:images.test",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


@pytest.fixture
def tls_server(certificate: tuple[Path, Path]) -> Iterator[Server]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    names: list[str | None] = []

    def sni(_sock: Any, name: str | None, _context: Any) -> None:
        names.append(name)

    context.sni_callback = sni
    s = Server(context)
    s.sni = names  # type: ignore[attr-defined]
    yield s
    s.close()


def test_https_checks_the_certificate_against_the_links_name(
        tls_server: Server, certificate: tuple[Path, Path]) -> None:
    trusted = ssl.create_default_context(cafile=str(certificate[0]))
    url = f"https://images.test:{tls_server.port}/ok.png"
    assert fetch_image(url, WHERE, resolve=fake_resolver(NAMES), check=only_local,
                       tls=trusted) == PNG
    assert tls_server.sni == ["images.test"]  # type: ignore[attr-defined]
    assert tls_server.seen[-1]["host"] == f"images.test:{tls_server.port}"
    # The same address under another name: its certificate does not name it.
    with pytest.raises(ImageRefused, match="certificate could not be verified"):
        fetch_image(f"https://other.test:{tls_server.port}/ok.png", WHERE,
                    resolve=fake_resolver(NAMES), check=only_local, tls=trusted)
    # Not trusted at all (the system's authorities did not sign it).
    with pytest.raises(ImageRefused, match="certificate could not be verified"):
        fetch_image(url, WHERE, resolve=fake_resolver(NAMES), check=only_local)
