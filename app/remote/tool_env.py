"""What points a kind of tool at Hearth's model server: the environment variables and the
shell lines that set them (pure: `hearth env` prints them, Settings shows them with Copy).

The address is the one a program on this computer uses: the fixed port, on loopback or on the
one address sharing binds the server to (:func:`~app.remote.share.local_url`).
"""

from __future__ import annotations

import os
import shlex
from typing import Literal, get_args

from app.remote import share

Kind = Literal["openai", "anthropic", "ollama"]
Shell = Literal["sh", "fish", "powershell"]
KINDS: tuple[Kind, ...] = get_args(Kind)
SHELLS: tuple[Shell, ...] = get_args(Shell)

# PowerShell takes the typographic single quotes as quotes too: each must be doubled like "'".
_PS_QUOTES = "'\u2018\u2019\u201a\u201b"


def default_shell() -> Shell:
    return "powershell" if os.name == "nt" else "sh"


def variables(kind: Kind, url: str, key: str) -> list[tuple[str, str]]:
    """The environment variables, in order, that point ``kind``'s tools at the server at
    ``url`` (no trailing /v1) with ``key``."""
    base = url.rstrip("/")
    if kind == "openai":
        return [("OPENAI_BASE_URL", f"{base}/v1"), ("OPENAI_API_KEY", key)]
    if kind == "anthropic":
        # ANTHROPIC_AUTH_TOKEN is sent as a Bearer header (ANTHROPIC_API_KEY would go as
        # x-api-key); Claude Code and the SDKs read both, the server takes either.
        return [("ANTHROPIC_BASE_URL", base), ("ANTHROPIC_AUTH_TOKEN", key)]
    if kind == "ollama":
        # Ollama's Python client (0.6 and later) sends OLLAMA_API_KEY as a Bearer header; the
        # ollama command and most other clients send no key (the comment below says so).
        return [("OLLAMA_HOST", base), ("OLLAMA_API_KEY", key)]
    raise ValueError(f"unknown kind of tool: {kind!r} (one of {', '.join(KINDS)})")


def env_lines(kind: Kind, url: str, key: str, shell: Shell) -> list[str]:
    """The lines for ``shell`` that set :func:`variables`, each value quoted so that the shell
    reads it back unchanged and runs nothing in it. ValueError for an unknown kind or shell,
    or a value with a control character (a line break would end the line it is quoted on;
    no URL or HTTP header holds one)."""
    if shell not in SHELLS:
        raise ValueError(f"unknown shell: {shell!r} (one of {', '.join(SHELLS)})")
    pairs = variables(kind, url, key)
    for name, value in pairs:
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
            raise ValueError(f"{name} holds a control character, which no shell line can carry")
    lines = [_assign(shell, name, value) for name, value in pairs]
    if kind == "ollama":
        lines += [
            f"# Hearth's server wants its key as the header 'Authorization: Bearer {key}'.",
            "# Ollama's Python client sends OLLAMA_API_KEY that way; for the ollama command and "
            "other clients that read no key, set that header where the client allows.",
        ]
    return lines


def _assign(shell: Shell, name: str, value: str) -> str:
    if shell == "sh":
        return f"export {name}={shlex.quote(value)}"
    if shell == "fish":
        # Inside fish's single quotes only \\ and \' are escapes.
        quoted = value.replace("\\", "\\\\").replace("'", "\\'")
        return f"set -gx {name} '{quoted}'"
    # PowerShell's single quotes expand nothing; a quote is written twice.
    quoted = "".join(c * 2 if c in _PS_QUOTES else c for c in value)
    return f"$env:{name} = '{quoted}'"


def server_url(port: int, host: str) -> str:
    """The base URL a program on this computer reaches the model server at, listening on
    ``host``:``port`` (the settings' ``runner_port`` and ``launch_host``); ValueError when the
    port is chosen anew at every start, so no fixed address exists."""
    if port == 0:
        raise ValueError("The model server's port is set to change at every start, so no tool "
                         "can be pointed at it: choose a fixed port in Settings > Sharing.")
    shown = f"[{host}]" if ":" in host else host
    # A server listening on every interface is reached on loopback, like Hearth reaches it.
    return share.local_url(f"http://{shown}:{port}")
