"""Sharing the model (app/remote/share.py): which addresses are offered, the URL another device
pastes, and the address Hearth itself uses to reach a runner listening everywhere."""

from __future__ import annotations

import socket
from types import SimpleNamespace
from typing import Any

import pytest

from app.remote import share
from app.remote.share import Interface, local_url, shared_url


def test_a_runner_on_every_interface_is_reached_on_loopback() -> None:
    assert local_url("http://0.0.0.0:8765") == "http://127.0.0.1:8765"
    assert local_url("http://[::]:8765") == "http://[::1]:8765"
    assert local_url("http://127.0.0.1:8765") == "http://127.0.0.1:8765"
    assert local_url("http://192.168.1.5:8765") == "http://192.168.1.5:8765"


def test_the_shared_url_names_this_computers_network_address() -> None:
    lan = [Interface("eth0", "192.168.1.23"), Interface("wlan0", "10.0.0.7")]
    assert shared_url("http://127.0.0.1:8765", "127.0.0.1", lan) == "http://127.0.0.1:8765/v1"
    assert shared_url("http://127.0.0.1:8765", "0.0.0.0", lan) == "http://192.168.1.23:8765/v1"
    assert shared_url("http://10.0.0.7:8765", "10.0.0.7", lan) == "http://10.0.0.7:8765/v1"
    assert shared_url("http://127.0.0.1:8765", "0.0.0.0", []) == "http://127.0.0.1:8765/v1"
    assert shared_url("", "0.0.0.0", lan) == ""


def test_interfaces_leave_out_loopback_and_link_local_and_list_private_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def addr(family: Any, address: str) -> SimpleNamespace:
        return SimpleNamespace(family=family, address=address)

    fake = {
        "lo": [addr(socket.AF_INET, "127.0.0.1")],
        "eth0": [addr(socket.AF_INET, "93.184.216.34"), addr(socket.AF_INET6, "fe80::1")],
        "wlan0": [addr(socket.AF_INET, "192.168.1.23"), addr(socket.AF_INET, "169.254.3.3")],
    }
    import psutil

    monkeypatch.setattr(psutil, "net_if_addrs", lambda: fake)
    assert share.network_interfaces() == [Interface("wlan0", "192.168.1.23"),
                                          Interface("eth0", "93.184.216.34")]

    def broken() -> None:
        raise OSError("no")

    monkeypatch.setattr(psutil, "net_if_addrs", broken)
    assert share.network_interfaces() == []


def test_hosts() -> None:
    assert share.is_loopback("127.0.0.1") and share.is_loopback("::1")
    assert share.is_loopback("localhost")
    assert not share.is_loopback("0.0.0.0") and not share.is_loopback("192.168.1.2")
    assert share.valid_host("0.0.0.0") and share.valid_host("fe80::1")
    assert not share.valid_host("my-laptop") and not share.valid_host(3)
