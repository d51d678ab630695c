"""The runtimes installed: folders made by installers/build_runtime.py, each with a manifest.

Where they are found and what a folder's manifest says are the runner's rules too (a runner
started without ``--runtime`` chooses by them), so they live in :mod:`runner.wire.runtimes`;
this module gives them the app's own data folder (:func:`app.paths.runtimes_dir`). Looked for,
in this order: the folders in ``HEARTH_RUNTIMES`` (``os.pathsep``-separated), those bundled with
this installation (``<sys.prefix>/runtimes``: the virtual environment of a source checkout, or
the frozen app's folder), and ``<data dir>/runtimes`` (built or added later). The runner's own
llama-cpp-python libraries are the "built-in" runtime, always present and last.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from runner.wire.runtimes import (
    BUILTIN,
    BUILTIN_NAME,
    MANIFEST,
    Runtime,
    find,
    read_runtime,
)
from runner.wire.runtimes import list_runtimes as _list_in
from runner.wire.runtimes import runtime_folders as _folders

__all__ = ["BUILTIN", "BUILTIN_NAME", "MANIFEST", "Runtime", "find", "list_runtimes",
           "read_runtime", "runtime_folders"]


def runtime_folders(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where runtimes are looked for, first wins on a name clash."""
    from app.paths import runtimes_dir

    return _folders(env, user_folder=runtimes_dir())


def list_runtimes(folders: Iterable[Path] | None = None) -> list[Runtime]:
    """Every runtime found (broken ones too, with their problem), then the built-in one."""
    return _list_in(runtime_folders() if folders is None else folders)
