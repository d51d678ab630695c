"""A server's configuration from a ``start`` request, checked before anything is spawned."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# Hearth's own variables (the model server's key, a runner's key) never reach a server, even
# one whose configuration names them: a tool server is someone else's program.
SECRET_PREFIX = "HEARTH_"


class ConfigError(ValueError):
    """A configuration that cannot work; ``str()`` is the sentence the app shows."""


@dataclass(frozen=True)
class StdioConfig:
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None


@dataclass(frozen=True)
class HttpConfig:
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)


ServerConfig = StdioConfig | HttpConfig


def parse(name: str, raw: object) -> ServerConfig:
    """The configuration of server ``name``, or :class:`ConfigError`."""
    if not isinstance(raw, dict):
        raise ConfigError(f"The configuration of MCP server “{name}” is not an object: "
                          "give a command (stdio) or a url (HTTP).")
    if "command" in raw and "url" in raw:
        raise ConfigError(f"MCP server “{name}” has both a command and a url: keep one.")
    if "command" in raw:
        return _stdio(name, raw)
    if "url" in raw:
        return _http(name, raw)
    raise ConfigError(f"MCP server “{name}” has neither a command nor a url: "
                      "give the command that starts it, or its address.")


def _stdio(name: str, raw: dict[str, Any]) -> StdioConfig:
    command = raw["command"]
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f"The command of MCP server “{name}” is empty: give the program to run.")
    args = raw.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"The args of MCP server “{name}” must be a list of strings.")
    env = _strings(name, "env", raw.get("env"))
    cwd = raw.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not cwd):
        raise ConfigError(f"The cwd of MCP server “{name}” must be a folder's path.")
    for text in (command, *args, *env, *env.values(), cwd or ""):
        if "\0" in text:
            raise ConfigError(f"The command line of MCP server “{name}” holds a NUL character, "
                              "which no program can receive: remove it.")
    return StdioConfig(command=command, args=tuple(args), env=env, cwd=cwd)


def _http(name: str, raw: dict[str, Any]) -> HttpConfig:
    url = raw["url"]
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"The url of MCP server “{name}” is not an http:// or https:// address.")
    headers = _strings(name, "headers", raw.get("headers"))
    for key, value in headers.items():
        if any(c in key + value for c in "\r\n\0"):
            raise ConfigError(f"The header “{key}” of MCP server “{name}” holds a line break: "
                              "remove it.")
    return HttpConfig(url=url, headers=headers)


def _strings(name: str, what: str, raw: object) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                            for k, v in raw.items()):
        raise ConfigError(f"The {what} of MCP server “{name}” must map names to strings.")
    return dict(raw)


def server_environment(base: Mapping[str, str], configured: Mapping[str, str]) -> dict[str, str]:
    """What a stdio server's process gets: ``base`` (the SDK's short list of safe variables:
    PATH, HOME...) with the configured ones over it, less any of Hearth's own."""
    merged = {**base, **configured}
    return {k: v for k, v in merged.items() if not k.upper().startswith(SECRET_PREFIX)}
