#!/usr/bin/env python3
"""Set up Hearth from a source checkout, then run the app or the tests.

    python3 installers/dev.py run     # install into .venv and launch Hearth
    python3 installers/dev.py test    # also install the test tools, run the whole suite

Safe to run again: an install step is skipped while pyproject.toml and the Python version are
unchanged since it last succeeded. Needs only Python 3.11+, a C/C++ compiler and CMake
(llama-cpp-python compiles llama.cpp on first install: about 10 minutes on 2 cores; pip keeps
the built wheel in its cache, so a second install takes seconds). Then it builds the runtimes
that fit this machine (installers/build_runtime.py auto) and says what it built.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")

EXTRAS = {"run": "runner", "test": "runner,dev,package"}


def main(argv: list[str]) -> int:
    if len(argv) < 1 or argv[0] not in EXTRAS:
        print(__doc__.strip())
        return 2
    if sys.version_info < (3, 11):  # noqa: UP036 (this script may be started by an older Python)
        print(f"Hearth needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
        return 1
    command, rest = argv[0], argv[1:]
    if command == "run" and not qt_libraries_present():
        return 1
    ensure_venv()
    install(EXTRAS[command])
    if os.environ.get("HEARTH_SKIP_RUNTIMES") != "1":
        build_runtimes()
    if command == "run":
        return subprocess.call([str(PY), "-m", "app", *rest], cwd=ROOT)
    return run_tests(rest)


def qt_libraries_present() -> bool:
    """Check Qt's system libraries before the long install, not after it in Qt's own abort."""
    # app/qtdeps.py is standard library only and app/__init__.py is empty: importable with this
    # Python before .venv exists.
    sys.path.insert(0, str(ROOT))
    from app import qtdeps

    return qtdeps.check_qt_libraries(sys.stderr)


def ensure_venv() -> None:
    if PY.exists():
        return
    print(f"Creating the virtual environment in {VENV} …", flush=True)
    venv.EnvBuilder(with_pip=True).create(VENV)


def install(extras: str) -> None:
    stamp = VENV / f".hearth-installed-{extras.replace(',', '-')}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()
                            + sys.version.encode()).hexdigest()
    if stamp.exists() and stamp.read_text().strip() == digest:
        print(f"Dependencies ({extras}) already installed; skipping.", flush=True)
        return
    missing = [tool for tool in ("cmake",) if shutil.which(tool) is None]
    if missing and not _llama_installed():
        print("Note: CMake was not found; llama-cpp-python needs it (and a C/C++ compiler) to "
              "build llama.cpp. Install CMake if the next step fails.", flush=True)
    print(f"Installing Hearth with [{extras}] into .venv (the first time compiles llama.cpp, "
          "about 10 minutes) …", flush=True)
    pip = [str(PY), "-m", "pip", "install", "--disable-pip-version-check"]
    env = dict(os.environ)
    # A portable CPU build: the same wheel works on any x86-64 machine the cache is reused on.
    env.setdefault("CMAKE_ARGS", "-DGGML_NATIVE=OFF")
    subprocess.check_call([*pip, "-q", "--upgrade", "pip"], cwd=ROOT)
    subprocess.check_call([*pip, "-e", f".[{extras}]"], cwd=ROOT, env=env)
    stamp.write_text(digest)


def build_runtimes() -> None:
    """The runtimes that fit this machine, into .venv/runtimes (the app finds them there).

    CPU everywhere (every CPU variant: about 25 minutes on 2 cores the first time, then
    cached in ~/.cache/hearth/runtimes), CUDA where an NVIDIA driver and nvcc are present,
    Metal on Apple Silicon. HEARTH_SKIP_RUNTIMES=1 skips this; the app then serves with
    llama-cpp-python's own build.
    """
    subprocess.check_call([str(PY), str(ROOT / "installers" / "build_runtime.py"), "auto",
                           "--python", str(PY), "--out", str(VENV / "runtimes")], cwd=ROOT)


def _llama_installed() -> bool:
    return subprocess.call([str(PY), "-c", "import llama_cpp"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) == 0


def run_tests(extra_args: list[str]) -> int:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    steps = [
        [str(PY), "-m", "ruff", "check", "."],
        # The layering of docs/architecture.md, as import contracts in pyproject.toml.
        [str(BIN / "lint-imports"), "--no-cache"],
        [str(PY), "-m", "mypy"],
        [str(PY), "-m", "pytest", *extra_args],
    ]
    for step in steps:
        print("$ " + " ".join(step[2:] if step[1] == "-m" else step), flush=True)
        code = subprocess.call(step, cwd=ROOT, env=env)
        if code != 0:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
