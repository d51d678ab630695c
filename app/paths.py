"""Where Hearth keeps its files.

Everything goes through these functions so that tests (and portable installs) can move the whole
tree with one variable, ``HEARTH_HOME``, instead of patching platformdirs in many places.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

_APP = "Hearth"


def _root(kind: str) -> Path:
    override = os.environ.get("HEARTH_HOME")
    if override:
        return Path(override) / kind
    getter = {
        "config": platformdirs.user_config_dir,
        "data": platformdirs.user_data_dir,
        "cache": platformdirs.user_cache_dir,
        "log": platformdirs.user_log_dir,
    }[kind]
    return Path(getter(_APP, appauthor=False))


def config_dir() -> Path:
    """Settings and the recent-models list."""
    return _ensure(_root("config"))


def data_dir() -> Path:
    """Conversations and other things the user would miss."""
    return _ensure(_root("data"))


def cache_dir() -> Path:
    """Things that can be rebuilt (hardware reports, measured corrections)."""
    return _ensure(_root("cache"))


def models_dir() -> Path:
    """Where Hearth downloads models (``HEARTH_MODELS_DIR`` moves it; the library settings can
    name another folder)."""
    override = os.environ.get("HEARTH_MODELS_DIR")
    return _ensure(Path(override) if override else _root("data") / "models")


def runtimes_dir() -> Path:
    """Runtimes built or added after installation (not created: only listed)."""
    return _root("data") / "runtimes"


def log_dir() -> Path:
    """The rotating application log and the runner's logs."""
    return _ensure(_root("log"))


def resources_dir() -> Path:
    """Data files shipped with Hearth (the curated model list, icons)."""
    return Path(__file__).resolve().parents[1] / "resources"


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
