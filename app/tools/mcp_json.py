"""The ``mcpServers`` JSON that Claude Desktop, LM Studio, Cursor and others keep (no Qt).

``{"mcpServers": {"name": {"command": "npx", "args": [...], "env": {...}}}}`` for a server
started over stdio; ``{"url": "https://…", "headers": {...}}`` for one over streamable HTTP.
Importing keeps header values apart (they are secrets: the caller stores them as every secret
is kept); exporting writes them back only when the caller passes them, so a file for sharing
can leave them out. Everything in such a file is someone else's text: names are checked, sizes
bounded, and nothing is started by importing it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from app.i18n import T_, TextError
from app.tools.config import McpServer
from app.tools.spec import BUILTIN

MAX_FILE = 1024 * 1024  # bytes of JSON read
MAX_SERVERS = 100
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$")


class McpJsonError(TextError, ValueError):
    """The text is not an ``mcpServers`` file (``str()`` says what is wrong)."""


def valid_name(name: str) -> bool:
    """A server's name: letters, digits, space, ``_ . -``, at most 64 characters (it names
    the server's tools to the model and its secrets in the keyring), and not ``builtin``, the
    built-in tools' source."""
    return bool(_NAME.match(name)) and name.strip().lower() != BUILTIN


def parse(text: str) -> tuple[list[McpServer], dict[tuple[str, str], str]]:
    """The servers in ``text`` and their header values by (server, header)."""
    if len(text.encode("utf-8", "replace")) > MAX_FILE:
        raise McpJsonError(T_("The file is larger than 1 MiB; an mcpServers file is much "
                              "smaller. Choose the right file."))
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise McpJsonError(T_("The file is not JSON ({error}).", error=str(exc))) from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise McpJsonError(T_("The file has no “mcpServers” object, so it is not an MCP "
                              "servers file (Claude Desktop's claude_desktop_config.json or "
                              "LM Studio's mcp.json are)."))
    out: list[McpServer] = []
    headers: dict[tuple[str, str], str] = {}
    for name, entry in list(servers.items())[:MAX_SERVERS]:
        if not isinstance(name, str) or not valid_name(name) or not isinstance(entry, dict):
            continue
        if isinstance(entry.get("url"), str) and entry["url"].startswith(("http://",
                                                                          "https://")):
            given: dict[Any, Any] = entry["headers"] if isinstance(entry.get("headers"), dict) \
                else {}
            names = tuple(str(k)[:128] for k in given)
            headers.update({(name, str(k)[:128]): str(v) for k, v in given.items()})
            out.append(McpServer(name, url=entry["url"], header_names=names))
        elif isinstance(entry.get("command"), str) and entry["command"]:
            args: list[Any] = entry["args"] if isinstance(entry.get("args"), list) else []
            env: dict[Any, Any] = entry["env"] if isinstance(entry.get("env"), dict) else {}
            out.append(McpServer(name, command=entry["command"],
                                 args=tuple(str(a) for a in args),
                                 env={str(k): str(v) for k, v in env.items()},
                                 cwd=str(entry.get("cwd") or "")))
    return out, headers


def dump(servers: Iterable[McpServer], header: Callable[[str, str], str | None] | None = None
         ) -> str:
    """``servers`` as an ``mcpServers`` file; ``header(server, name)`` gives a header's value
    (None: headers are written with empty values, to fill in)."""
    entries: dict[str, Any] = {}
    for s in servers:
        if s.is_http:
            entries[s.name] = {"url": s.url, "headers": {
                n: (header(s.name, n) or "") if header else "" for n in s.header_names}}
        else:
            entry: dict[str, Any] = {"command": s.command, "args": list(s.args)}
            if s.env:
                entry["env"] = dict(s.env)
            if s.cwd:
                entry["cwd"] = s.cwd
            entries[s.name] = entry
    return json.dumps({"mcpServers": entries}, indent=2, ensure_ascii=False) + "\n"
