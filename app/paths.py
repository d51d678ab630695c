"""Where Hearth keeps its files.

Everything goes through these functions so that tests (and portable installs) can move the whole
tree with one variable, ``HEARTH_HOME``, instead of patching platformdirs in many places.
``HEARTH_DATA_DIR`` moves only the data folder (conversations, the download queue, downloaded
models): the way out when the usual one cannot be written, which the start-up check suggests.

Folders are created on first use, but a folder that cannot be created is not an error here: the
start-up check (app/storage/folder.py) tells the person about the data folder, and whoever writes
into a folder reports its own failure. Raising here crashed the app before any window existed.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from pathlib import Path

import platformdirs

_APP = "Hearth"
DATA_DIR_VARIABLE = "HEARTH_DATA_DIR"
MODELS_DIR_VARIABLE = "HEARTH_MODELS_DIR"

log = logging.getLogger(__name__)
# Folders already reported as not creatable: data_dir() is called at every save, and the log
# should say it once, not at every call.
_reported: set[Path] = set()
_reported_lock = threading.Lock()


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


def data_location() -> Path:
    """The data folder without creating it (``HEARTH_DATA_DIR``, else the platform's place):
    what the start-up check tries to write to."""
    override = os.environ.get(DATA_DIR_VARIABLE)
    return Path(override) if override else _root("data")


def data_dir() -> Path:
    """Conversations and other things the user would miss."""
    return _ensure(data_location())


def cache_dir() -> Path:
    """Things that can be rebuilt (hardware reports, measured corrections)."""
    return _ensure(_root("cache"))


def models_dir() -> Path:
    """Where Hearth downloads models (``HEARTH_MODELS_DIR`` moves it; the library settings can
    name another folder)."""
    override = os.environ.get(MODELS_DIR_VARIABLE)
    return _ensure(Path(override) if override else data_location() / "models")


def runtimes_dir() -> Path:
    """Runtimes built or added after installation (not created: only listed). Not moved by
    ``HEARTH_DATA_DIR``: a session with a temporary data folder still lists them."""
    return _root("data") / "runtimes"


def log_dir() -> Path:
    """The rotating application log and the runner's logs."""
    return _ensure(_root("log"))


def resources_dir() -> Path:
    """Data files shipped with Hearth (the curated model list, icons)."""
    return Path(__file__).resolve().parents[1] / "resources"


def make_temporary_data_dir() -> Path:
    """A new, empty temporary folder to be the data folder for one session (not used yet:
    :func:`use_data_dir` does that). Raises OSError when none can be made."""
    return Path(tempfile.mkdtemp(prefix="hearth-data-"))


def use_data_dir(folder: Path) -> None:
    """Make ``folder`` this process's data folder (a start where the usual one cannot be
    written and the person chose to go on anyway).

    The models folder stays where it was (unless ``HEARTH_MODELS_DIR`` already moved it): the
    models already there stay in the library, and gigabytes of new downloads must not fill a
    temporary folder that may live in memory. Hearth never deletes the folder: what was written
    there this session can still be copied out.
    """
    os.environ[MODELS_DIR_VARIABLE] = os.environ.get(MODELS_DIR_VARIABLE) or str(
        data_location() / "models")
    os.environ[DATA_DIR_VARIABLE] = str(folder)
    log.warning("the data folder for this session is %s", folder)


def _ensure(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        with _reported_lock:
            first = path not in _reported
            _reported.add(path)
        if first:
            log.warning("the folder %s cannot be created: %s", path, exc)
    return path
