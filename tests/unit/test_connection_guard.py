"""runner.guards.is_loopback_host and runner.connections.ConnectionGuard, without a server."""

from __future__ import annotations

import pytest

from runner.connections import ConnectionGuard, is_loopback_peer, open_file_cap
from runner.guards import is_loopback_host
from runner.limits import Limits


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:8080", "127.9.9.9", "localhost",
                                  "LOCALHOST:1", "localhost.", "[::1]", "[::1]:443"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["evil.example", "localhost.evil.example", "127.0.0.1.nip.io",
                                  "127.0.0.1:80x", "[::1", "[::1]x", "::1", "10.0.0.1", "",
                                  "0.0.0.0", "[::]:80"])
def test_other_hosts(host: str) -> None:
    assert not is_loopback_host(host)


class _Conn:
    def __init__(self, idle: bool = True) -> None:
        self.idle = idle
        self.closed = False

    def is_idle(self) -> bool:
        return self.idle

    def close_now(self) -> None:
        self.closed = True


def test_at_the_cap_the_oldest_idle_connection_makes_room() -> None:
    guard = ConnectionGuard(Limits(), max_total=2)
    busy, idle = _Conn(idle=False), _Conn()
    assert guard.admit(busy, ("127.0.0.1", 1)) is None
    assert guard.admit(idle, ("127.0.0.1", 2)) is None
    new = _Conn()
    assert guard.admit(new, ("127.0.0.1", 3)) is None
    assert idle.closed and not busy.closed
    assert set(guard.open) == {busy, new}


def test_a_full_cap_of_busy_connections_refuses_with_503() -> None:
    guard = ConnectionGuard(Limits(), max_total=1)
    guard.admit(_Conn(idle=False), ("127.0.0.1", 1))
    assert guard.admit(_Conn(), ("127.0.0.1", 2)) == 503
    assert guard.refused == 1


def test_one_remote_address_is_capped_and_loopback_is_not() -> None:
    guard = ConnectionGuard(Limits(max_peer_connections=1), max_total=100)
    first = _Conn(idle=False)
    assert guard.admit(first, ("192.0.2.7", 1)) is None
    assert guard.admit(_Conn(), ("192.0.2.7", 2)) == 429
    assert guard.admit(_Conn(), ("192.0.2.8", 1)) is None  # another address
    for port in range(10):
        assert guard.admit(_Conn(idle=False), ("127.0.0.1", port)) is None
    guard.release(first)
    assert guard.admit(_Conn(), ("192.0.2.7", 3)) is None


def test_loopback_peers_and_the_open_file_cap() -> None:
    assert is_loopback_peer(("127.0.0.1", 5)) and is_loopback_peer(("::1", 5, 0, 0))
    assert is_loopback_peer(("::ffff:127.0.0.1", 5, 0, 0))
    assert not is_loopback_peer(("192.0.2.1", 5))
    assert open_file_cap(512, 1024) == 512
    assert open_file_cap(512, 200) == 136
    assert open_file_cap(512, None) == 512
