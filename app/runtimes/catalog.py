"""The runtimes installed: folders made by installers/build_runtime.py, each with a manifest.

Looked for, in this order: the folders in ``HEARTH_RUNTIMES`` (``os.pathsep``-separated), those
bundled with this installation (``<sys.prefix>/runtimes``: the virtual environment of a source
checkout, or the frozen app's folder), and ``<data dir>/runtimes`` (built or added later). The
runner's own llama-cpp-python libraries are the "built-in" runtime, always present and last.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "manifest.json"
BUILTIN_NAME = "built-in"


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
        """What goes before the runner's command to serve with this runtime."""
        return () if self.path is None else ("--runtime", str(self.path))

    def label(self) -> str:
        kind = {"cpu": "CPU", "cuda": f"CUDA {self.cuda_major or ''}".strip(),
                "vulkan": "Vulkan", "metal": "Metal"}.get(self.backend, "")
        return f"{self.name} ({kind})" if kind and kind.lower() != self.name else self.name


BUILTIN = Runtime(BUILTIN_NAME, "")


def runtime_folders(env: dict[str, str] | None = None) -> list[Path]:
    """Where runtimes are looked for, first wins on a name clash."""
    env = dict(os.environ) if env is None else env
    folders = [Path(p) for p in env.get("HEARTH_RUNTIMES", "").split(os.pathsep) if p]
    frozen = getattr(sys, "frozen", False)
    folders.append((Path(sys.executable).parent if frozen else Path(sys.prefix)) / "runtimes")
    from app.paths import runtimes_dir

    folders.append(runtimes_dir())
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
    has_lib = any((lib / n).exists() for n in ("libllama.so", "libllama.dylib", "llama.dll"))
    return Runtime(
        name=str(data.get("name") or folder.name),
        backend=str(data.get("backend", "")),
        path=folder,
        llama_cpp_python=str(data.get("llama_cpp_python", "")),
        min_driver=str(data.get("min_driver", "")),
        cuda_major=int(data.get("cuda_major", 0) or 0),
        problem="" if has_lib else f"it has no llama library in {lib}",
    )


def list_runtimes(folders: Iterable[Path] | None = None) -> list[Runtime]:
    """Every runtime found (broken ones too, with their problem), then the built-in one."""
    found: dict[str, Runtime] = {}
    for parent in runtime_folders() if folders is None else folders:
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
    """A runtime by name or folder path (the ``--runtime`` option and the settings' choice)."""
    for rt in runtimes:
        if rt.name == wanted or (rt.path is not None and str(rt.path) == wanted):
            return rt
    path = Path(wanted).expanduser()
    if (path / MANIFEST).exists():
        return read_runtime(path.resolve())
    return None
