"""The recently used models list, kept in the config directory (no Qt)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from app import paths

log = logging.getLogger(__name__)
MAX_RECENT = 10


def _file() -> Path:
    return paths.config_dir() / "recent_models.json"


def load_recent() -> list[str]:
    """Recent model paths, newest first; a damaged file is set aside, never fatal."""
    path = _file()
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable %s: %s", path, exc)
        return []
    if not isinstance(data, list):
        return []
    return [p for p in data if isinstance(p, str)][:MAX_RECENT]


def add_recent(model: str) -> list[str]:
    items = [model] + [p for p in load_recent() if p != model]
    items = items[:MAX_RECENT]
    path = _file()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(items, indent=1), "utf-8")
    os.replace(tmp, path)  # atomic: a crash never leaves half a file
    return items
