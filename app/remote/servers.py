"""The servers the user added: records, their base URLs, and the file they are kept in (no Qt).

Kept as ``servers.json`` in the config folder (one atomic write), never with their API keys:
those are kept apart, like every secret of Hearth's (app/remote/keys.py). Each record also
keeps the model ids its last check found, so the picker can list them at start without
contacting anything: Hearth talks to a server only when the user adds it, refreshes it, or
chats with one of its models.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from app import paths
from app.i18n import T_, TextError
from app.storage.atomic import write_json_atomic

log = logging.getLogger(__name__)

FILE_NAME = "servers.json"
VERSION = 1
MAX_NAME = 80
# A picker entry's data names a remote model with this prefix; a local model's data is an
# absolute path, which never starts with it.
KEY_PREFIX = "remote:"


class ServerFormError(TextError, ValueError):
    """What the user typed cannot be a server (``str()`` says what to change, an
    :class:`app.i18n.Text` the window translates)."""


@dataclass(frozen=True)
class Server:
    """One OpenAI-compatible endpoint the user added."""

    id: str  # stable, made when added: the keyring entry and the picker entries use it
    name: str
    base_url: str  # normalized: scheme://host[:port]/path, no trailing slash (usually .../v1)
    has_key: bool = False  # an API key is kept for it (the secret store, or memory for this run)
    models: tuple[str, ...] = ()  # the model ids its last successful check listed
    checked: float = 0.0  # when that check was made (time.time); 0: never

    def with_models(self, models: list[str], when: float | None = None) -> Server:
        return replace(self, models=tuple(models), checked=time.time() if when is None else when)


@dataclass(frozen=True)
class RemoteModel:
    """A model on a server, as the picker and a conversation name it."""

    server_id: str
    model: str

    @property
    def key(self) -> str:
        """The picker's item data and the conversation's ``model`` for this remote model."""
        return f"{KEY_PREFIX}{self.server_id}:{self.model}"

    @staticmethod
    def from_key(key: object) -> RemoteModel | None:
        """The remote model a key names, or None (a local path, or not a key at all)."""
        if not isinstance(key, str) or not key.startswith(KEY_PREFIX):
            return None
        server_id, sep, model = key[len(KEY_PREFIX):].partition(":")
        return RemoteModel(server_id, model) if sep and server_id and model else None


def new_id() -> str:
    return uuid.uuid4().hex


def normalize_base_url(text: str) -> str:
    """The base URL an OpenAI client would use, from what the user typed.

    No scheme means http:// (a server on the local network is the common case, and the URL
    Hearth's own sharing shows starts with it); an address with no path gets ``/v1``, the path
    every OpenAI-compatible server here serves under. Raises ServerFormError with a sentence.
    """
    text = text.strip()
    if not text:
        raise ServerFormError(T_("Enter the server's address, such as http://192.168.1.20:8080/v1."))
    if any(ch.isspace() for ch in text):
        raise ServerFormError(T_("The address cannot contain spaces."))
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ServerFormError(T_("The address must start with http:// or https://, not {scheme}://.",
                                 scheme=parts.scheme))
    try:
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number or out of range
        raise ServerFormError(T_("The port in the address is not valid (1–65535).")) from None
    if not host:
        raise ServerFormError(T_("The address has no server name or IP address."))
    if parts.username or parts.password:
        raise ServerFormError(T_("Put the API key in the key field, not in the address."))
    if parts.query or parts.fragment:
        raise ServerFormError(T_("The address cannot have a query (?…) or a fragment (#…)."))
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    path = parts.path.rstrip("/") or "/v1"
    return f"{scheme}://{netloc}{path}"


def check_name(name: str, others: list[Server], own_id: str = "") -> str:
    """The name cleaned up; ServerFormError when empty, too long or already used."""
    name = " ".join(name.split())
    if not name:
        raise ServerFormError(T_("Give the server a name, such as “Office PC”."))
    if len(name) > MAX_NAME:
        raise ServerFormError(T_("The name is too long (at most {most} characters).", most=MAX_NAME))
    if any(s.name.casefold() == name.casefold() and s.id != own_id for s in others):
        raise ServerFormError(T_("A server is already called “{name}”: choose another name.", name=name))
    return name


# -- the file --------------------------------------------------------------------------------


def servers_path() -> Path:
    return paths.config_dir() / FILE_NAME


def to_json(servers: list[Server]) -> dict[str, Any]:
    return {"version": VERSION, "servers": [
        {"id": s.id, "name": s.name, "base_url": s.base_url, "has_key": s.has_key,
         "models": list(s.models), "checked": s.checked} for s in servers]}


def from_json(data: object) -> list[Server]:
    """The servers in the file's parsed JSON; a damaged entry is skipped with a warning."""
    if not isinstance(data, dict) or not isinstance(data.get("servers"), list):
        raise ValueError("not Hearth's server list")
    out: list[Server] = []
    for entry in data["servers"]:
        try:
            out.append(_server(entry))
        except (TypeError, ValueError, KeyError) as exc:
            log.warning("servers: skipping an unreadable entry (%s): %.120r", exc, entry)
    return out


def _server(entry: Any) -> Server:
    sid, name = entry["id"], entry["name"]
    if not isinstance(sid, str) or not sid or ":" in sid or not isinstance(name, str):
        raise ValueError("bad id or name")
    models = entry.get("models", [])
    checked = entry.get("checked", 0.0)
    return Server(id=sid, name=name, base_url=normalize_base_url(str(entry["base_url"])),
                  has_key=entry.get("has_key") is True,
                  models=tuple(m for m in models if isinstance(m, str) and m)
                  if isinstance(models, list) else (),
                  checked=float(checked) if isinstance(checked, int | float) else 0.0)


def load_servers(path: Path | None = None) -> list[Server]:
    """The saved servers; none when there is no file. An unreadable file is renamed aside
    (``servers.json.unreadable-<time>``) so the next save cannot destroy what it held."""
    path = path or servers_path()
    try:
        raw = path.read_text("utf-8")
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        log.warning("servers %s cannot be read (%s); none are listed", path, exc)
        return []
    try:
        return from_json(json.loads(raw))
    except ValueError as exc:
        aside = path.with_name(f"{path.name}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            path.rename(aside)
        except OSError:
            aside = path
        log.warning("servers %s are not readable (%s); kept as %s", path, exc, aside)
        return []


def save_servers(servers: list[Server], path: Path | None = None) -> None:
    """Write the list all at once (raises OSError as the system reported it)."""
    write_json_atomic(path or servers_path(), to_json(servers))


@dataclass
class ServerList:
    """The servers in memory, in the order they were added, with the file they came from."""

    servers: list[Server] = field(default_factory=list)
    path: Path | None = None

    @classmethod
    def load(cls, path: Path | None = None) -> ServerList:
        return cls(load_servers(path), path)

    def save(self) -> None:
        save_servers(self.servers, self.path)

    def get(self, server_id: str) -> Server | None:
        return next((s for s in self.servers if s.id == server_id), None)

    def put(self, server: Server) -> None:
        """Add ``server``, or replace the one with its id (keeping its place)."""
        for i, s in enumerate(self.servers):
            if s.id == server.id:
                self.servers[i] = server
                return
        self.servers.append(server)

    def remove(self, server_id: str) -> None:
        self.servers = [s for s in self.servers if s.id != server_id]
