"""Sharing this computer's model: where the runner listens and the URL others use (no Qt).

The runner listens on loopback unless the user turns sharing on and picks a wider interface:
"all networks" (0.0.0.0) or one address of this computer. Hearth itself always talks to the
runner on an address that works locally (:func:`local_url`); the URL shown to paste into
another device names this computer's network address (:func:`shared_url`).
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
ALL_INTERFACES = "0.0.0.0"


@dataclass(frozen=True)
class Interface:
    """One address this computer has on a network, as the sharing choice lists it."""

    name: str  # the adapter's name ("eth0", "Wi-Fi")
    address: str  # an IPv4 address

    def label(self) -> str:
        return f"{self.address} ({self.name})"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def valid_host(host: object) -> bool:
    """An IP address the runner may be told to bind (what the settings file may hold)."""
    if not isinstance(host, str):
        return False
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def network_interfaces() -> list[Interface]:
    """This computer's IPv4 addresses on its networks (loopback and link-local left out),
    the private ones first; empty when they cannot be read."""
    try:
        import psutil

        found = psutil.net_if_addrs()
    except Exception as exc:  # psutil reads OS tables; never let the dialog fail on them
        log.info("network interfaces not readable: %s", exc)
        return []
    out: list[Interface] = []
    for name, addrs in found.items():
        for a in addrs:
            if a.family != socket.AF_INET:
                continue
            try:
                ip = ipaddress.IPv4Address(a.address)
            except ValueError:
                continue
            if ip.is_loopback or ip.is_link_local or ip.is_unspecified:
                continue
            out.append(Interface(name, a.address))
    out.sort(key=lambda i: (not ipaddress.IPv4Address(i.address).is_private, i.name, i.address))
    return out


def local_url(listen_url: str) -> str:
    """Where Hearth itself reaches a runner that reported ``listen_url``: a runner on every
    interface (0.0.0.0 or ::) is reached on loopback (Windows refuses connecting to 0.0.0.0)."""
    parts = urlsplit(listen_url)
    host = parts.hostname or ""
    try:
        unspecified = ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return listen_url
    if not unspecified:
        return listen_url
    loop = "[::1]" if ":" in host else LOOPBACK
    return f"{parts.scheme}://{loop}:{parts.port}" if parts.port else f"{parts.scheme}://{loop}"


def shared_url(runner_url: str, host: str, interfaces: list[Interface]) -> str:
    """The base URL (with /v1) to paste into a client on another device: the runner's port on
    the address it listens on, or, listening everywhere, on this computer's first network
    address. Empty when there is no runner URL."""
    if not runner_url:
        return ""
    port = urlsplit(runner_url).port
    if is_loopback(host) or not host:
        address = LOOPBACK
    elif host == ALL_INTERFACES:
        address = interfaces[0].address if interfaces else LOOPBACK
    else:
        address = host
    shown = f"[{address}]" if ":" in address else address
    return f"http://{shown}:{port}/v1" if port else f"http://{shown}/v1"
