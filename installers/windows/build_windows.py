#!/usr/bin/env python3
"""Build Hearth's Windows installer, dist\\Hearth-<version>-setup.exe, on Windows.

    python installers\\windows\\build_windows.py                   # everything
    python installers\\windows\\build_windows.py --runtimes cpu    # only these runtimes
    python installers\\windows\\build_windows.py --skip-runtimes   # use .venv\\runtimes as it is

Run it from a checkout on 64-bit Windows 10 or later. It needs what ``installers\\dev.py`` needs
(Python 3.11+, CMake, Visual Studio's C++ build tools), plus NSIS 3 (https://nsis.sourceforge.io,
or ``winget install NSIS.NSIS``) for makensis. Optional: the CUDA toolkit (nvcc) adds the CUDA
runtime, the Vulkan SDK (``VULKAN_SDK`` set) the Vulkan one.

Steps, each skipped or quick when its result is already there:

1. the virtual environment .venv with Hearth, its runner and PyInstaller (``installers\\dev.py``'s
   own steps, extras ``runner,package``);
2. the runtimes into .venv\\runtimes (``installers\\build_runtime.py``): the portable CPU one
   always, CUDA where nvcc is found, Vulkan where the Vulkan SDK is;
3. resources\\icons\\hearth.ico if it is missing (``make_ico.py``): the spec embeds it in hearth.exe;
4. the frozen app in dist\\hearth (``installers\\freeze.py --dist dist``; it leaves CUDA runtimes
   out of the installer, to be packaged apart);
5. the installer, compiled by makensis from ``hearth.nsi`` with warnings as errors.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
NSI = HERE / "hearth.nsi"
ICON = ROOT / "resources" / "icons" / "hearth.ico"
DIST = ROOT / "dist"
PAYLOAD = DIST / "hearth"
VENV = ROOT / ".venv"
VENV_PY = VENV / "Scripts" / "python.exe"
RUNTIMES = VENV / "runtimes"
# The CUDA majors installers/build_runtime.py has a runtime kind for.
CUDA_MAJORS = ("12", "13")


# --- Pure parts (unit-tested on any OS) ------------------------------------------------------

def makensis_command(makensis: str | Path, payload: Path, outfile: Path, version: str, icon: Path,
                     script: Path = NSI) -> list[str]:
    """The makensis command line that compiles ``script`` into ``outfile``.

    Paths are made absolute because makensis changes into the script's folder before it reads
    the script. ``-WX`` turns warnings into errors: a warning there is usually a mistake (an
    unused function, a missing language string) that would otherwise ship silently. The
    ``-D`` options come before the script, as makensis applies options in order.
    """
    return [
        str(makensis), "-WX", "-V2",
        f"-DPAYLOAD={payload.resolve()}",
        f"-DOUTFILE={outfile.resolve()}",
        f"-DVERSION={version}",
        f"-DICON={icon.resolve()}",
        str(script.resolve()),
    ]


def project_version(pyproject_text: str) -> str:
    """``[project] version`` from pyproject.toml, checked to be the three numbers that the
    installer's Windows version resource can hold (``0.1.0`` becomes ``0.1.0.0`` there)."""
    version = tomllib.loads(pyproject_text)["project"]["version"]
    if not isinstance(version, str) or not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise ValueError(f"the version {version!r} in pyproject.toml is not three numbers "
                         "(like 0.1.0), which the Windows installer needs")
    return version


def installer_name(version: str) -> str:
    return f"Hearth-{version}-setup.exe"


def cuda_kind(nvcc_version_output: str) -> str | None:
    """The runtime kind (``cuda12``, ``cuda13``) for the toolkit that printed this
    ``nvcc --version``, or None when build_runtime.py has no kind for it."""
    m = re.search(r"release (\d+)\.", nvcc_version_output)
    return f"cuda{m.group(1)}" if m and m.group(1) in CUDA_MAJORS else None


def runtime_kinds(nvcc_version_output: str | None, vulkan_sdk: str | None) -> list[str]:
    """The runtimes to build: CPU always (every machine can run it, and GPU runtimes take its
    CPU modules), CUDA when a toolkit is present, Vulkan when the Vulkan SDK is."""
    kinds = ["cpu"]
    cuda = cuda_kind(nvcc_version_output) if nvcc_version_output else None
    if cuda:
        kinds.append(cuda)
    if vulkan_sdk:
        kinds.append("vulkan")
    return kinds


def find_makensis(env: Mapping[str, str], which: Callable[[str], str | None]) -> Path | None:
    """makensis on PATH, else where the NSIS installer puts it (it does not add itself to
    PATH)."""
    found = which("makensis")
    if found:
        return Path(found)
    for var in ("ProgramFiles(x86)", "ProgramFiles"):
        if env.get(var):
            candidate = Path(env[var]) / "NSIS" / "makensis.exe"
            if candidate.is_file():
                return candidate
    return None


# --- Steps (run on Windows) ------------------------------------------------------------------

def load_script(path: Path) -> ModuleType:
    """Import a script of installers/ by its path (they are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would: dataclasses and pickling look there
    spec.loader.exec_module(module)
    return module


def ensure_venv() -> None:
    """.venv with Hearth, its runner's dependencies and PyInstaller: dev.py's own steps, so a
    checkout set up with ``python installers\\dev.py test`` is reused (pip only checks)."""
    dev = load_script(ROOT / "installers" / "dev.py")
    dev.ensure_venv()
    dev.install("runner,package")


def find_nvcc(env: Mapping[str, str]) -> str | None:
    """nvcc on PATH, else in %CUDA_PATH%\\bin (the CUDA installer sets that variable)."""
    found = shutil.which("nvcc")
    if found:
        return found
    if env.get("CUDA_PATH"):
        candidate = Path(env["CUDA_PATH"]) / "bin" / "nvcc.exe"
        if candidate.is_file():
            return str(candidate)
    return None


def detect_runtime_kinds(env: Mapping[str, str]) -> list[str]:
    nvcc = find_nvcc(env)
    output = None
    if nvcc:
        output = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
        if cuda_kind(output) is None:
            print(f"Note: {nvcc} is a CUDA version without a Hearth runtime "
                  f"(only {', '.join(CUDA_MAJORS)}); no CUDA runtime is built.", flush=True)
    return runtime_kinds(output, env.get("VULKAN_SDK"))


def build_runtimes(kinds: list[str]) -> None:
    script = ROOT / "installers" / "build_runtime.py"
    for kind in kinds:
        print(f"== Runtime {kind}", flush=True)
        subprocess.check_call([str(VENV_PY), str(script), kind, "--python", str(VENV_PY),
                               "--out", str(RUNTIMES)], cwd=ROOT)


def freeze() -> None:
    print("== Freezing the app into dist\\hearth", flush=True)
    subprocess.check_call([str(VENV_PY), str(ROOT / "installers" / "freeze.py"), "--dist",
                           str(DIST)], cwd=ROOT)


def ensure_icon() -> None:
    if not ICON.exists():
        print("== Making resources\\icons\\hearth.ico", flush=True)
        if load_script(HERE / "make_ico.py").main([]) != 0:
            raise SystemExit("could not make resources\\icons\\hearth.ico")


def compile_installer(makensis: Path, version: str) -> Path:
    outfile = DIST / installer_name(version)
    print(f"== Compiling {outfile.name} with {makensis}", flush=True)
    subprocess.check_call(makensis_command(makensis, PAYLOAD, outfile, version, ICON), cwd=ROOT)
    return outfile


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="build_windows.py", description=__doc__.split("\n")[0])
    parser.add_argument("--runtimes", metavar="KIND[,KIND]",
                        help="build these runtimes (cpu, cuda12, cuda13, vulkan) instead of "
                             "what this machine's toolkits allow")
    parser.add_argument("--skip-runtimes", action="store_true",
                        help="build no runtime; package .venv\\runtimes as it is")
    parser.add_argument("--makensis", type=Path, help="makensis.exe (default: PATH, then NSIS's "
                                                      "install folder)")
    args = parser.parse_args(argv)
    if sys.platform != "win32":
        print("build_windows.py builds the Windows installer and runs on Windows only "
              "(tests/integration/test_nsis.py checks the NSIS script elsewhere).", file=sys.stderr)
        return 2
    # Before the long steps: a missing makensis should not be found out an hour in.
    makensis = args.makensis or find_makensis(os.environ, shutil.which)
    if makensis is None or not Path(makensis).is_file():
        print("makensis was not found: install NSIS 3 (winget install NSIS.NSIS) or pass "
              "--makensis PATH.", file=sys.stderr)
        return 1
    try:
        version = project_version((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    except ValueError as e:
        print(e, file=sys.stderr)
        return 1

    ensure_venv()
    if not args.skip_runtimes:
        kinds = args.runtimes.split(",") if args.runtimes else detect_runtime_kinds(os.environ)
        build_runtimes(kinds)
    ensure_icon()  # before freezing: installers/hearth.spec gives hearth.exe this icon
    freeze()
    outfile = compile_installer(Path(makensis), version)
    print(f"Built {outfile} ({outfile.stat().st_size / 1e6:.1f} MB)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
