"""The runtimes installed: folders made by installers/build_runtime.py, each with a manifest.

A runtime folder::

    <folder>/manifest.json   {"name", "backend", "llama_cpp_python", "min_driver", "cuda_major", ...}
    <folder>/lib/            libllama, libggml*, the backend and CPU-variant modules

Looked for, in this order (first wins on a name clash): the folders in ``HEARTH_RUNTIMES``
(``os.pathsep``-separated), those bundled with this installation (``runtimes/`` beside the frozen
programs, or ``<sys.prefix>/runtimes``: the virtual environment of a source checkout, shared by
the app and the runner it starts), and the user's ``<data dir>/runtimes`` (built or added
later). llama-cpp-python's own libraries are the "built-in" runtime, always present and last.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "manifest.json"
LIBRARIES = ("libllama.so", "libllama.dylib", "llama.dll")
BUILTIN_NAME = "built-in"
AUTO = "auto"
FOLDERS_VARIABLE = "HEARTH_RUNTIMES"  # more folders to look in, before the usual ones
WISH_VARIABLE = "HEARTH_RUNTIME"  # the runtime wanted (a name or folder); "" or auto: choose
APP_NAME = "Hearth"  # the data folder's name (app/paths.py, platformdirs)

# The built-in runtime named on the runner's command line, as one token: a runner given no
# --runtime chooses for itself, so the app names it where that choice could differ. One token
# because code that reads the word after a "--runtime" as a folder (the program fingerprint, the
# RPC worker's program) treats a program without one as llama-cpp-python's own build.
PIN_BUILTIN = f"--runtime={BUILTIN_NAME}"


@dataclass(frozen=True)
class Runtime:
    """One llama.cpp build for the runner. ``path`` None: llama-cpp-python's own libraries."""

    name: str
    backend: str  # cpu, cuda, vulkan, metal; "" for the built-in (whatever pip built)
    path: Path | None = None
    llama_cpp_python: str = ""
    min_driver: str = ""
    cuda_major: int = 0
    problem: str = ""  # why this folder cannot be used (an unreadable manifest, no library)

    @property
    def builtin(self) -> bool:
        return self.path is None

    def args(self) -> tuple[str, ...]:
        """What goes before the runner's command to serve with this runtime's folder."""
        return () if self.path is None else ("--runtime", str(self.path))

    def label(self) -> str:
        kind = {"cpu": "CPU", "cuda": f"CUDA {self.cuda_major or ''}".strip(),
                "vulkan": "Vulkan", "metal": "Metal"}.get(self.backend, "")
        return f"{self.name} ({kind})" if kind and kind.lower() != self.name else self.name


BUILTIN = Runtime(BUILTIN_NAME, "")


def is_builtin(value: str) -> bool:
    """Whether a ``--runtime`` value or a wish names llama-cpp-python's own build."""
    return value.strip().lower() in (BUILTIN_NAME, "builtin")


def wish(value: str | None) -> str:
    """A wish as the choice reads it: "" for none or ``auto`` (choose), else the name or folder."""
    value = (value or "").strip()
    return "" if value.lower() in ("", AUTO) else value


def user_runtimes_dir(env: Mapping[str, str] | None = None) -> Path:
    """``<data dir>/runtimes``: where app/paths.runtimes_dir() points, worked out without
    platformdirs (``HEARTH_HOME`` moves it, ``HEARTH_DATA_DIR`` does not)."""
    env = os.environ if env is None else env
    home = env.get("HEARTH_HOME")
    if home:
        return Path(home) / "data" / "runtimes"
    if sys.platform == "win32":
        base = env.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / APP_NAME / "runtimes"
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg.startswith("/"):
        base = xdg
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / "Application Support")
    else:
        base = str(Path.home() / ".local" / "share")
    return Path(base) / APP_NAME / "runtimes"


def runtime_folders(env: Mapping[str, str] | None = None,
                    user_folder: Path | None = None) -> list[Path]:
    """Where runtimes are looked for, first wins on a name clash.

    ``user_folder``: the user's runtimes folder as the caller knows it (the app passes its own
    paths module's); None works it out here.
    """
    env = os.environ if env is None else env
    folders = [Path(p) for p in env.get(FOLDERS_VARIABLE, "").split(os.pathsep) if p]
    frozen = getattr(sys, "frozen", False)
    # Frozen: hearth and hearth-runner share one folder, so either finds the same runtimes/.
    folders.append((Path(sys.executable).parent if frozen else Path(sys.prefix)) / "runtimes")
    folders.append(user_runtimes_dir(env) if user_folder is None else user_folder)
    return folders


def read_runtime(folder: Path) -> Runtime:
    """The runtime in ``folder``; its ``problem`` says why it cannot be used, if it cannot."""
    try:
        data = json.loads((folder / MANIFEST).read_text("utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        return Runtime(folder.name, "", folder, problem=f"its manifest cannot be read ({exc})")
    lib = folder / "lib"
    has_lib = any((lib / n).exists() for n in LIBRARIES)
    try:
        cuda_major = int(data.get("cuda_major", 0) or 0)
    except (TypeError, ValueError):
        cuda_major = 0
    return Runtime(
        name=str(data.get("name") or folder.name),
        backend=str(data.get("backend", "")),
        path=folder,
        llama_cpp_python=str(data.get("llama_cpp_python", "")),
        min_driver=str(data.get("min_driver", "")),
        cuda_major=cuda_major,
        problem="" if has_lib else f"it has no llama library in {lib}",
    )


def list_runtimes(folders: Iterable[Path]) -> list[Runtime]:
    """Every runtime found (broken ones too, with their problem), then the built-in one."""
    found: dict[str, Runtime] = {}
    for parent in folders:
        try:
            children = sorted(p for p in parent.iterdir() if p.is_dir())
        except OSError:
            continue
        for child in children:
            if (child / MANIFEST).exists():
                rt = read_runtime(child)
                found.setdefault(rt.name, rt)
    return [*found.values(), BUILTIN]


def find(runtimes: Sequence[Runtime], wanted: str) -> Runtime | None:
    """A runtime by name or folder path (``--runtime``, ``HEARTH_RUNTIME``, the settings)."""
    if is_builtin(wanted):
        return BUILTIN
    for rt in runtimes:
        if rt.name == wanted or (rt.path is not None and str(rt.path) == wanted):
            return rt
    path = Path(wanted).expanduser()
    if (path / MANIFEST).exists():
        return read_runtime(path.resolve())
    return None
