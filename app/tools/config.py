"""Which tools the chat may use, and who decided what about each (no Qt).

Kept as ``tools.json`` in the config folder (one atomic write): the built-in tools turned on,
the folder the file tools read, the MCP servers the person added (never their secret header
values: those are kept as every secret is, app/storage/secrets.py), the per-tool decisions
("ask", "allow", "deny") and the limits of one reply's tool loop.

A decision holds for the tool as it was decided about: its ``fingerprint`` (app/tools/spec.py)
is kept with it, and a tool whose description or schema changed since is asked about again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from app import paths
from app.storage.atomic import write_json_atomic
from app.tools.spec import ToolSpec

log = logging.getLogger(__name__)

FILE_NAME = "tools.json"
VERSION = 1
Mode = Literal["ask", "allow", "deny"]
Verdict = Literal["ask", "allow", "deny"]
MAX_ROUNDS = 8  # tool rounds in one reply, by default: a model that keeps calling is stopped
TIMEOUT_S = 60.0  # one call's time limit, by default
CONVERSATION_ALLOWED = "tools_allowed"  # a conversation's settings: "key#fingerprint" allowed
CONVERSATION_OFF = "tools_off"  # a conversation's settings: sources or tool keys it leaves out


@dataclass(frozen=True)
class McpServer:
    """An MCP server the person added: a command (stdio) or a URL (streamable HTTP)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    header_names: tuple[str, ...] = ()  # the headers sent; their values are secrets
    enabled: bool = True

    @property
    def is_http(self) -> bool:
        return bool(self.url)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "enabled": self.enabled}
        if self.is_http:
            out.update(url=self.url, header_names=list(self.header_names))
        else:
            out.update(command=self.command, args=list(self.args), env=dict(self.env),
                       cwd=self.cwd)
        return out

    @staticmethod
    def from_json(raw: Any) -> McpServer | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or \
                not raw["name"].strip():
            return None
        args: list[Any] = raw["args"] if isinstance(raw.get("args"), list) else []
        env: dict[str, Any] = raw["env"] if isinstance(raw.get("env"), dict) else {}
        names: list[Any] = raw["header_names"] if isinstance(raw.get("header_names"), list) \
            else []
        return McpServer(
            name=raw["name"].strip(), command=str(raw.get("command") or ""),
            args=tuple(str(a) for a in args),
            env={str(k): str(v) for k, v in env.items()}, cwd=str(raw.get("cwd") or ""),
            url=str(raw.get("url") or ""), header_names=tuple(str(n) for n in names),
            enabled=raw.get("enabled") is not False)


@dataclass(frozen=True)
class ToolsConfig:
    """Everything tools.json keeps."""

    builtin: tuple[str, ...] = ()  # the built-in tools turned on (none by default)
    folder: str = ""  # the folder the file tools read ("" none chosen)
    servers: tuple[McpServer, ...] = ()
    # tool key -> {"mode": Mode, "fingerprint": the tool as decided about}
    decisions: dict[str, dict[str, str]] = field(default_factory=dict)
    max_rounds: int = MAX_ROUNDS
    timeout_s: float = TIMEOUT_S

    def mode(self, spec: ToolSpec) -> Mode | None:
        """The person's standing decision for this very tool; None when there is none or the
        tool changed since it was made."""
        d = self.decisions.get(spec.key)
        if not d or d.get("fingerprint") != spec.fingerprint:
            return None
        mode = d.get("mode")
        return mode if mode in ("ask", "allow", "deny") else None  # type: ignore[return-value]

    def decided(self, spec: ToolSpec, mode: Mode) -> ToolsConfig:
        """With ``mode`` as the standing decision for ``spec`` as it is now."""
        decisions = {**self.decisions, spec.key: {"mode": mode,
                                                  "fingerprint": spec.fingerprint}}
        return replace(self, decisions=decisions)

    def server(self, name: str) -> McpServer | None:
        return next((s for s in self.servers if s.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "builtin": list(self.builtin), "folder": self.folder,
                "servers": [s.to_json() for s in self.servers], "decisions": self.decisions,
                "max_rounds": self.max_rounds, "timeout_s": self.timeout_s}

    @staticmethod
    def from_json(raw: Any) -> ToolsConfig:
        if not isinstance(raw, dict):
            return ToolsConfig()
        servers = [s for s in map(McpServer.from_json, raw.get("servers") or []) if s]
        decisions: dict[str, Any] = raw["decisions"] if isinstance(raw.get("decisions"), dict) \
            else {}
        rounds = raw.get("max_rounds")
        timeout = raw.get("timeout_s")
        return ToolsConfig(
            builtin=tuple(str(b) for b in raw.get("builtin") or [] if isinstance(b, str)),
            folder=str(raw.get("folder") or ""), servers=tuple(servers),
            decisions={str(k): {"mode": str(v.get("mode")),
                                "fingerprint": str(v.get("fingerprint"))}
                       for k, v in decisions.items() if isinstance(v, dict)},
            max_rounds=rounds if isinstance(rounds, int) and 1 <= rounds <= 100 else MAX_ROUNDS,
            timeout_s=float(timeout) if isinstance(timeout, (int, float)) and
            1 <= timeout <= 3600 else TIMEOUT_S)


def verdict(config: ToolsConfig, spec: ToolSpec, allowed_here: Collection[str]) -> Verdict:
    """Whether a call of ``spec`` runs, is refused, or is asked about: the standing decision for
    the tool as it is, else an "Allow for this conversation" (``allowed_here``, the
    conversation's ``key#fingerprint`` entries), else ask."""
    mode = config.mode(spec)
    if mode in ("allow", "deny"):
        return mode
    if conversation_entry(spec) in allowed_here:
        return "allow"
    return "ask"


def conversation_entry(spec: ToolSpec) -> str:
    """How a conversation remembers that a tool, as it is, was allowed for it."""
    return f"{spec.key}#{spec.fingerprint}"


def offered_here(specs: list[ToolSpec], off: Collection[str]) -> list[ToolSpec]:
    """The tools a conversation offers: all but the sources and tools it turned off."""
    return [s for s in specs if s.source not in off and s.key not in off]


def config_path() -> Path:
    return paths.config_dir() / FILE_NAME


def load(path: Path | None = None) -> ToolsConfig:
    """tools.json; the defaults (no tools) when it is missing or unreadable (logged)."""
    path = path or config_path()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ToolsConfig()
    except (OSError, ValueError) as exc:
        log.warning("tools.json could not be read (%s); no tools until it is saved again", exc)
        return ToolsConfig()
    return ToolsConfig.from_json(raw)


def save(config: ToolsConfig, path: Path | None = None) -> None:
    write_json_atomic(path or config_path(), config.to_json())
