"""The model server's own settings: idle time-outs, aliases, a memory cap (no Qt, no server stack).

Kept as ``server.json`` in Hearth's config folder, written by hand or (later) by Settings:

    {"idle_minutes": 10,
     "models": {"qwen2.5-7b-instruct-q4_k_m.gguf": {"idle_minutes": 60}},
     "aliases": {"claude-*": "qwen2.5-coder-7b-instruct-q4_k_m.gguf", "gpt-4o": "..."},
     "memory_budget_mib": 0}

Aliases map the names other programs send (coding agents send their own: ``claude-sonnet-…``,
``gpt-…``) to a model of the library; a name may end in ``*`` to match every name it begins.
A file that cannot be read leaves the defaults and says so in the log: the server still starts.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app import paths

log = logging.getLogger(__name__)

# Ollama's default is 5 minutes, LM Studio's 60; a model in a coding agent's loop is asked again
# within minutes, and memory given back after ten idle minutes is rarely missed.
DEFAULT_IDLE_S = 600.0


@dataclass(frozen=True)
class ServerConfig:
    idle_s: float = DEFAULT_IDLE_S  # a model nobody asked for this long is unloaded
    model_idle_s: dict[str, float] = field(default_factory=dict)  # per model id
    aliases: dict[str, str] = field(default_factory=dict)  # name or prefix* -> model id
    # What all resident models together may hold in RAM, in bytes (0: what the planner allows).
    memory_budget: int = 0
    # Each model's runner fetches images from http(s) links in requests (public addresses
    # only): not from server.json but Hearth's settings (Settings → Sharing), or --image-links.
    image_links: bool = False

    def idle_for(self, model_id: str) -> float:
        return self.model_idle_s.get(model_id, self.idle_s)

    def alias(self, name: str) -> str | None:
        """The model id ``name`` stands for: an exact alias first, then the longest prefix."""
        if name in self.aliases:
            return self.aliases[name]
        best = ""
        for pattern in self.aliases:
            if pattern.endswith("*") and name.startswith(pattern[:-1]) and len(pattern) > len(best):
                best = pattern
        return self.aliases[best] if best else None


def config_path() -> Path:
    return paths.config_dir() / "server.json"


def load_config(path: Path | None = None) -> ServerConfig:
    path = path or config_path()
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return ServerConfig()
    except (OSError, ValueError) as exc:
        log.warning("%s cannot be read (%s): the server uses its defaults", path, exc)
        return ServerConfig()
    return parse_config(data, str(path))


def parse_config(data: Any, where: str = "server.json") -> ServerConfig:
    """The settings in ``data``; a value of the wrong kind is left out with a warning."""
    if not isinstance(data, dict):
        log.warning("%s holds no JSON object: the server uses its defaults", where)
        return ServerConfig()
    idle = _minutes(data.get("idle_minutes"), where, "idle_minutes")
    models: dict[str, float] = {}
    raw_models = data.get("models")
    for name, entry in (raw_models.items() if isinstance(raw_models, dict) else ()):
        minutes = _minutes(entry.get("idle_minutes") if isinstance(entry, dict) else None,
                           where, f"models.{name}.idle_minutes")
        if minutes is not None:
            models[str(name)] = minutes
    raw_aliases = data.get("aliases")
    aliases = {str(k): v for k, v in raw_aliases.items()
               if isinstance(v, str) and v} if isinstance(raw_aliases, dict) else {}
    budget = data.get("memory_budget_mib", 0)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        log.warning("%s: memory_budget_mib must be a whole number of MiB; ignored", where)
        budget = 0
    return ServerConfig(idle_s=DEFAULT_IDLE_S if idle is None else idle, model_idle_s=models,
                        aliases=aliases, memory_budget=budget * 2**20)


def _minutes(value: Any, where: str, name: str) -> float | None:
    """Minutes as seconds; -1 (or any negative) means never; None where not given or wrong."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        log.warning("%s: %s must be a number of minutes; ignored", where, name)
        return None
    return math.inf if value < 0 else float(value) * 60
