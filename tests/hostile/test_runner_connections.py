"""Connections and Host headers the runner must bound (issue 24, items 5 and 13).

1,100 idle sockets (no key needed) locked everyone out at a 1,024 open-file limit: no connection
cap, and uvicorn arms its keep-alive time-out only after a first response, so a connection that
never sends a request lived for ever. And no Host check: a web page on another name that
resolves to 127.0.0.1 (DNS rebinding) could reach a loopback runner as if it were its own.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx2
import pytest

from tests.hostile.conftest import RunnerSource
from tests.integration.conftest import Runner, StartRunner, spawn_runner, stop_runner


def _address(r: Runner) -> tuple[str, int]:
    parts = urlsplit(r.url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def _open_idle(address: tuple[str, int], n: int) -> list[socket.socket]:
    """``n`` connections that never send a byte (fewer where the runner stops accepting)."""
    socks = []
    for _ in range(n):
        try:
            socks.append(socket.create_connection(address, timeout=2))
        except OSError:
            break  # the backlog is full: nothing accepts any more
    return socks


def _closed_by_peer(sock: socket.socket, wait: float = 0.0) -> bool:
    """Whether the runner has closed ``sock`` (EOF or reset), waiting up to ``wait`` s for it."""
    sock.settimeout(wait if wait > 0 else 0.001)
    try:
        return sock.recv(1) == b""
    except (TimeoutError, BlockingIOError):
        return False
    except OSError:
        return True


def _keyed_models(r: Runner, timeout: float = 10.0) -> httpx2.Response:
    with r.client(timeout=httpx2.Timeout(timeout)) as http:
        return http.get("/v1/models")


@contextlib.contextmanager
def _closing(socks: list[socket.socket]) -> Iterator[list[socket.socket]]:
    try:
        yield socks
    finally:
        for s in socks:
            s.close()


@pytest.mark.timeout(120)
def test_idle_sockets_beyond_the_open_file_limit_do_not_lock_out_a_keyed_request() -> None:
    """The issue's lockout with the default limits, at a 200-file limit instead of 1,024.
    Today: the runner ran out of files, stopped accepting, and the keyed request timed out."""
    limit = 'ulimit -n 200 && exec "$0" "$@"'
    r = spawn_runner(program=["sh", "-c", limit, sys.executable, "-m", "runner"])
    try:
        r.wait_listening()
        r.wait_ready()
        with _closing(_open_idle(_address(r), 250)):
            time.sleep(0.5)  # let the runner accept what it will
            resp = _keyed_models(r)
            assert resp.status_code == 200, resp.text
    finally:
        if r.process.poll() is None:
            stop_runner(r)


@pytest.mark.timeout(120)
def test_idle_sockets_over_max_connections_make_room_for_a_keyed_request(
        start_runner: StartRunner) -> None:
    """At the cap the oldest idle connection is closed for the new one. Today: no cap, all 60
    stay open."""
    r = start_runner("--max-connections", "50")
    with _closing(_open_idle(_address(r), 60)) as socks:
        resp = _keyed_models(r)
        assert resp.status_code == 200, resp.text
        closed = sum(_closed_by_peer(s, wait=0.5) for s in socks[:20])
        assert closed >= 10, f"only {closed} of the oldest 20 idle connections were closed"
    r.wait_event("connection_evicted")


def _busy(address: tuple[str, int], key: str) -> socket.socket:
    """A keyed request whose body never comes: in flight, so never closed to make room."""
    s = socket.create_connection(address, timeout=5)
    s.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nHost: {address[0]}\r\n"
              f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
              "Content-Length: 100\r\n\r\n{".encode())
    return s


@pytest.mark.timeout(120)
def test_a_connection_over_the_cap_with_none_idle_gets_a_503(start_runner: StartRunner) -> None:
    """Today: no cap, the fourth connection was taken like the others."""
    r = start_runner("--max-connections", "3")
    assert r.key
    address = _address(r)
    with _closing([_busy(address, r.key) for _ in range(3)]):
        time.sleep(0.3)
        with socket.create_connection(address, timeout=10) as extra:
            extra.sendall(f"GET /health HTTP/1.1\r\nHost: {address[0]}\r\n\r\n".encode())
            try:
                head = extra.recv(4096)
            except TimeoutError:
                head = b""
    assert head.startswith(b"HTTP/1.1 503"), head
    assert b"--max-connections" in head, head


@pytest.mark.timeout(60)
def test_silent_connection_is_closed_after_the_header_timeout(start_runner: StartRunner) -> None:
    """Today: a connection that never sends a request is never closed (recv times out)."""
    r = start_runner("--header-timeout", "1")
    with socket.create_connection(_address(r), timeout=5) as s:
        s.settimeout(20)
        assert s.recv(1) == b"", "the runner sent something to a silent connection"


@pytest.mark.timeout(60)
def test_dribbled_request_head_is_cut_off_at_the_header_timeout(
        start_runner: StartRunner) -> None:
    """A request head sent a line at a time, never finished (slowloris). Today: each byte
    resets nothing, and the connection lives for as long as the client likes."""
    r = start_runner("--header-timeout", "1")
    address = _address(r)
    with socket.create_connection(address, timeout=5) as s:
        s.sendall(f"GET /health HTTP/1.1\r\nHost: {address[0]}\r\n".encode())
        closed = False
        for i in range(100):  # 20 s of dribbling
            try:
                s.sendall(f"X-Dribble-{i}: x\r\n".encode())
            except OSError:
                closed = True
                break
            if _closed_by_peer(s, wait=0.2):
                closed = True
                break
        assert closed, "the runner kept a request head open for 20 s"


def _lan_address() -> str | None:
    """An address of this computer other than loopback, where it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: no packet is sent by a UDP connect
            address: str = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


@pytest.mark.timeout(120)
def test_one_other_computer_is_capped_and_this_one_is_not(start_runner: StartRunner) -> None:
    """Connections from a non-loopback address count against --max-peer-connections (the
    oldest idle one is closed for a new one); this computer's own do not. Today: no cap."""
    lan = _lan_address()
    if lan is None:
        pytest.skip("this machine has no address other than loopback")
    r = start_runner("--host", "0.0.0.0", "--allow-remote", "--max-peer-connections", "5")
    port = _address(r)[1]
    with _closing(_open_idle((lan, port), 20)) as remote, \
            _closing(_open_idle(("127.0.0.1", port), 20)) as local:
        time.sleep(0.5)
        still_open = sum(not _closed_by_peer(s, wait=0.2) for s in remote)
        assert still_open <= 5, f"{still_open} connections from {lan} are open"
        assert not any(_closed_by_peer(s) for s in local), "loopback connections were capped"
    with httpx2.Client(base_url=f"http://{lan}:{port}", headers=r.headers, trust_env=False,
                       timeout=60) as http:
        assert http.get("/v1/models").status_code == 200


@pytest.mark.timeout(60)
@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1.evil.example",
                                  "192.168.1.10"])
def test_foreign_host_header_is_refused_on_loopback(hostile_runner: RunnerSource,
                                                    host: str) -> None:
    """DNS rebinding: a page at evil.example resolved to 127.0.0.1 sends Host: evil.example.
    Today: answered like any other request."""
    r = hostile_runner()
    with r.client(timeout=httpx2.Timeout(60.0)) as http:
        resp = http.get("/v1/models", headers={"Host": host})
    assert resp.status_code == 421, resp.text
    message = resp.json()["error"]["message"]
    assert host in message and "127.0.0.1" in message, message


@pytest.mark.timeout(60)
def test_loopback_host_headers_are_accepted(hostile_runner: RunnerSource) -> None:
    r = hostile_runner()
    port = _address(r)[1]
    with r.client(timeout=httpx2.Timeout(60.0)) as http:
        for host in ("127.0.0.1", f"127.0.0.1:{port}", "localhost", f"LOCALHOST:{port}",
                     f"[::1]:{port}", "[::1]", "127.1.2.3:9"):
            resp = http.get("/v1/models", headers={"Host": host})
            assert resp.status_code == 200, (host, resp.text)


@pytest.mark.timeout(60)
def test_any_host_header_is_accepted_on_a_shared_interface(start_runner: StartRunner) -> None:
    """Shared with other computers, the runner is reached by names it cannot know; the key
    protects it there."""
    r = start_runner("--host", "0.0.0.0", "--allow-remote")
    with r.client(timeout=httpx2.Timeout(60.0)) as http:
        assert http.get("/v1/models", headers={"Host": "hearth.lan:8080"}).status_code == 200



@pytest.mark.timeout(60)
def test_a_body_that_never_arrives_gets_a_408_naming_the_limit(start_runner: StartRunner) -> None:
    """A keyed request whose body stops after one byte. Today: the connection is in flight for
    as long as the client likes, counted as busy, so a few of them lock everyone out at the
    cap."""
    r = start_runner("--body-timeout", "1")
    assert r.key
    with _busy(_address(r), r.key) as s:
        s.settimeout(30)
        answer = b""
        while chunk := s.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 408"), answer[:300]
    assert b"--body-timeout" in answer, answer
    r.wait_event("body_timeout")
    with r.client() as http:
        assert http.get("/health").status_code == 200
