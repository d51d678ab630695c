"""Sharing this computer's model: where the runner listens, the URL others use, and the key
they send (no Qt).

The runner listens on loopback unless the user turns sharing on and picks a wider interface:
"all networks" (0.0.0.0) or one address of this computer. Hearth itself always talks to the
runner on an address that works locally (:func:`local_url`); the URL shown to paste into
another device names this computer's network address (:func:`shared_url`).

Other apps are set up once with the address and the key, so both stay the same from one load
to the next: the port is fixed (:data:`DEFAULT_PORT` unless the person picks another) and the
key (:class:`SharedKey`) is made once, kept in the secret store (app/storage/secrets.py), and
replaced only when the person asks for a new one.
"""

from __future__ import annotations

import ipaddress
import logging
import secrets
import socket
import threading
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from app.storage import secrets as secret_store

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
ALL_INTERFACES = "0.0.0.0"
# The runner's port while shared, unless the person picks another. 4327 spells HEAR on a phone
# keypad. It is none of the ports other local-model apps take by default, so Hearth can run
# beside them with both shared: LM Studio 1234, Jan 1337, LiteLLM 4000, GPT4All 4891,
# text-generation-webui 5000, KoboldCpp 5001, Gradio 7860, vLLM 8000, llama-server and
# llamafile 8080, Ollama 11434; nor a common development server's (3000, 5173, 8000, 8888). It
# is below every system's range of ephemeral ports (Linux 32768-60999, Windows and macOS
# 49152-65535), so an outgoing connection never holds it when the runner starts.
DEFAULT_PORT = 4327
# The shared key's name in the secret store.
KEY_NAME = "runner:key"


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


# -- the key other apps send ----------------------------------------------------------------------


class SecretStore(Protocol):
    """Where the key is kept: app/storage/secrets.py, or a test's in-memory store."""

    def get(self, name: str) -> str | None: ...

    def put(self, name: str, value: str) -> None: ...

    def notice(self) -> str: ...


def new_key() -> str:
    """A new random key (256 bits, URL-safe text: it goes into an HTTP header)."""
    return secrets.token_urlsafe(32)


class SharedKey:
    """The key other apps and devices use for the shared model.

    Made the first time it is wanted and kept in ``store``, so it is the same at every load
    and every start of Hearth until :meth:`rotate` replaces it. Read once per process and then
    kept in memory: a keyring may ask to be unlocked, and a load should not ask each time.
    :meth:`get` and :meth:`rotate` raise app.storage.secrets.SecretStoreError when the store
    fails.
    """

    def __init__(self, store: SecretStore | None = None) -> None:
        self._store: SecretStore = store if store is not None else secret_store
        self._value: str | None = None
        self._lock = threading.Lock()  # the runner and the dialog may ask at once

    def get(self) -> str:
        with self._lock:
            if self._value is None:
                value = self._store.get(KEY_NAME)
                if not value:
                    value = new_key()
                    self._store.put(KEY_NAME, value)
                    log.info("made the shared model's key (%s)", self._store.notice())
                self._value = value
            return self._value

    def rotate(self) -> str:
        """A new key, kept in place of the old one (which stops working at the next load)."""
        with self._lock:
            value = new_key()
            self._store.put(KEY_NAME, value)
            self._value = value
            return value

    def notice(self) -> str:
        """Where the key is kept, as a sentence for Settings."""
        return self._store.notice()


# The one shared key of this process: the runner and the Settings dialog use the same, so a
# key made by either is the one the other sees.
SHARED_KEY = SharedKey()
