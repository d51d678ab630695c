#!/usr/bin/env python3
"""Freeze Hearth with PyInstaller: one folder with the app, its runner and the runtimes.

    .venv/bin/python installers/freeze.py [--dist dist] [--runtimes cpu-portable,vulkan]

Runs ``installers/hearth.spec`` (PyInstaller must be installed: ``pip install -e .[package]``),
then copies the named runtimes from ``--runtimes-from`` (default ``.venv/runtimes``, where
``installers/build_runtime.py`` puts them) into ``runtimes/`` beside the two executables, where
the frozen app looks (app/runtimes/catalog.py). Without ``--runtimes`` every runtime there that
is not CUDA goes in: CUDA runtimes are packaged apart (they are large, and only NVIDIA machines
want them); ``--runtimes all`` takes them too. Prints the folder and its size; the installers
(linux/build_deb.py, windows/build_windows.py, macos/build_macos.py) package that folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from app.runtimes.catalog import list_runtimes  # noqa: E402  (standard library only)

SPEC = ROOT / "installers" / "hearth.spec"


def frozen_folder(dist: Path) -> Path:
    """Where the executables end up: the .app's Contents/MacOS on macOS, else dist/hearth."""
    if sys.platform == "darwin":
        return dist / "Hearth.app" / "Contents" / "MacOS"
    return dist / "hearth"


def unlink_builtin_aliases(folder: Path) -> list[Path]:
    """Remove the links to llama-cpp-python's own libraries that PyInstaller puts in the top of
    the collected folder (it links every library that another one needs there).

    The frozen program's library path names that folder, and it is searched before a runtime's
    own folder (RUNPATH): a runtime's libllama would load the built-in libggml, which has no CPU
    variants, no RPC and no GPU. The built-in runtime itself finds them in llama_cpp/lib.
    """
    removed = []
    for top in (folder / "_internal", folder):
        for path in sorted(top.glob("*")):
            if path.is_symlink() and path.name.startswith(("libllama", "libggml", "libmtmd")) \
                    and "llama_cpp" in os.readlink(path):
                path.unlink()
                removed.append(path)
    return removed


def runtime_backends(source: Path) -> dict[str, str]:
    """Folder name -> backend of every runtime in ``source``, read as the app reads them."""
    return {rt.path.name: rt.backend for rt in list_runtimes([source]) if rt.path is not None}


def default_runtimes(source: Path, cuda: bool = False) -> list[str]:
    """The runtimes in ``source`` that belong in the main package: all but CUDA (``cuda``:
    all, for installers that package CUDA apart themselves)."""
    return [name for name, backend in runtime_backends(source).items()
            if cuda or backend != "cuda"]


def copy_runtimes(names: list[str], source: Path, folder: Path) -> list[Path]:
    """Copy each named runtime folder into ``folder/runtimes`` (links kept as links)."""
    copied = []
    for name in names:
        src = source / name
        if not (src / "manifest.json").exists():
            raise SystemExit(f"No runtime {name!r} in {source}: build it first with "
                             f"installers/build_runtime.py (it makes the folder and its manifest).")
        dest = folder / "runtimes" / name
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(src, dest, symlinks=True)
        copied.append(dest)
    return copied


def size_of(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def freeze(dist: Path, runtimes: list[str] | None = None,
           runtimes_from: Path = ROOT / ".venv" / "runtimes", python: str = sys.executable) -> Path:
    """Run the spec into ``dist`` and add the runtimes; returns the folder with the programs."""
    work = ROOT / "build" / "pyinstaller"
    started = time.monotonic()
    subprocess.check_call([python, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level",
                           "WARN", "--distpath", str(dist), "--workpath", str(work), str(SPEC)],
                          cwd=ROOT)
    folder = frozen_folder(dist)
    unlink_builtin_aliases(folder)
    names = default_runtimes(runtimes_from) if runtimes is None else runtimes
    copy_runtimes(names, runtimes_from, folder)
    print(f"Froze Hearth into {folder} in {time.monotonic() - started:.0f} s: "
          f"{size_of(folder) / 1e6:.0f} MB, runtimes: {', '.join(names) or 'none'}", flush=True)
    return folder


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="freeze.py", description=__doc__.split("\n")[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--runtimes", help="comma-separated runtime names, or 'all' "
                                              "(default: all but CUDA)")
    parser.add_argument("--runtimes-from", type=Path, default=ROOT / ".venv" / "runtimes")
    args = parser.parse_args(argv)
    if args.runtimes == "all":
        names: list[str] | None = default_runtimes(args.runtimes_from, cuda=True)
    elif args.runtimes is not None:
        names = [n for n in args.runtimes.split(",") if n]
    else:
        names = None
    os.environ.setdefault("PYTHONHASHSEED", "0")  # reproducible archives
    freeze(args.dist.resolve(), names, args.runtimes_from.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
