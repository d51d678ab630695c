#!/usr/bin/env python3
"""Fill ``.gpu/`` (ignored by git) with what tests/gpu/check.py needs on a GPU machine that
reaches no network, within the 64 MiB a device call carries.

    python3 tests/gpu/carry.py [--runtime DIR] [--python-version 3.12]

- ``runtime.tar.xz``: a CUDA runtime folder (manifest.json, lib/, bin/llama-server), built by
  ``installers/build_runtime.py cuda13 --cuda-arch 90 --own-cpu --with-server``, without its
  copy of cuBLAS (600 MB; the GPU machine's CUDA toolkit has cuBLAS 13). Its CUDA runtime
  (libcudart, under 1 MB) travels: the kernels were compiled against it.
- ``wheels/``: the runner's and the app's Python packages that machine lacks (its Python has
  numpy, psutil, huggingface_hub, nvidia-ml-py, uvloop, jinja2, markdown-it-py, pygments,
  anyio and h11), for its CPython version.
- ``py/llama_cpp``: llama-cpp-python's bindings without their libraries: the runtime's serve.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CARRY = ROOT / ".gpu"
LIMIT = 60 << 20  # the device call's 64 MiB, less the checkout itself

# What the GPU machine's Python lacks of the runner's and `hearth plan`'s imports, resolved with
# their dependencies (pydantic pins its core), less what that Python has or what is large and
# unused there (keyring's Secret Service backend: no keyring is asked on that machine).
WHEELS = ["fastapi>=0.110", "uvicorn>=0.29", "httptools>=0.6", "httpx2>=2.16",
          "platformdirs>=4.0", "gguf>=0.17", "diskcache", "keyring>=24"]
ON_THE_MACHINE = ("numpy-", "cryptography-", "cffi-", "pycparser-", "secretstorage-", "jeepney-",
                  "pyyaml-", "charset_normalizer-", "requests-", "urllib3-")
LEFT_BEHIND = ("libcublas", "libnvblas")  # libcublasLt too (same prefix)


def newest_runtime() -> Path:
    cache = Path.home() / ".cache" / "hearth" / "runtimes"
    found = [p.parent for p in cache.glob("*-cuda13*/manifest.json")
             if (p.parent / "bin" / "llama-server").exists()]
    if not found:
        sys.exit("No CUDA 13 runtime with llama-server in ~/.cache/hearth/runtimes: build one "
                 "with `installers/build_runtime.py cuda13 --cuda-arch 90 --own-cpu "
                 "--with-server`.")
    return max(found, key=lambda p: p.stat().st_mtime)


def pack_runtime(runtime: Path, dest: Path) -> int:
    manifest = json.loads((runtime / "manifest.json").read_text())
    with tarfile.open(dest, "w:xz", preset=9) as tar:
        for path in sorted(runtime.rglob("*")):
            rel = path.relative_to(runtime)
            if path.is_dir() or path.name.startswith(LEFT_BEHIND):
                continue
            tar.add(path, arcname=str(Path(manifest["name"]) / rel), recursive=False)
        note = b"cuBLAS comes from the GPU machine's CUDA toolkit.\n"
        info = tarfile.TarInfo(f"{manifest['name']}/CARRIED.txt")
        info.size = len(note)
        tar.addfile(info, io.BytesIO(note))
    return dest.stat().st_size


def fetch_wheels(dest: Path, python_version: str) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    platforms = [f"manylinux_2_{n}_x86_64" for n in (17, 27, 28, 31, 34)] + ["manylinux2014_x86_64"]
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:",
           "--python-version", python_version, "--implementation", "cp", "-d", str(dest)]
    for plat in platforms:
        cmd += ["--platform", plat]
    subprocess.check_call([*cmd, *WHEELS])
    for wheel in dest.glob("*.whl"):
        if wheel.name.lower().startswith(ON_THE_MACHINE):
            wheel.unlink()


def copy_bindings(dest: Path) -> None:
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or spec.origin is None:
        sys.exit("llama-cpp-python is not installed in this Python (run installers/dev.py test).")
    src = Path(spec.origin).parent
    target = dest / "llama_cpp"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(src, target, ignore=shutil.ignore_patterns("lib", "*.so*", "__pycache__"))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runtime", type=Path, help="the runtime folder (default: the newest "
                                                "cuda13 one in the build cache)")
    p.add_argument("--python-version", default="3.12")
    args = p.parse_args(argv)
    CARRY.mkdir(exist_ok=True)
    size = pack_runtime(args.runtime or newest_runtime(), CARRY / "runtime.tar.xz")
    print(f"runtime.tar.xz: {size / (1 << 20):.1f} MiB")
    shutil.rmtree(CARRY / "wheels", ignore_errors=True)
    fetch_wheels(CARRY / "wheels", args.python_version)
    copy_bindings(CARRY / "py")
    total = sum(f.stat().st_size for f in CARRY.rglob("*") if f.is_file())
    print(f".gpu/: {total / (1 << 20):.1f} MiB in all")
    if total > LIMIT:
        print(f"more than {LIMIT >> 20} MiB: the device call would refuse it", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
