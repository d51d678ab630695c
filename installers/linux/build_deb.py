#!/usr/bin/env python3
"""Build Hearth's Debian/Ubuntu packages from a checkout into dist/.

    python3 installers/linux/build_deb.py [--frozen dist/hearth] [--out dist]

Freezes the app first (installers/freeze.py, with the dev virtual environment's Python) unless
``--frozen`` names a folder that freeze.py made. Makes:

- ``hearth_<version>_<arch>.deb``: the app in /opt/hearth (the GUI, the runner, the portable CPU
  runtime and the Vulkan runtime when it was built), ``hearth`` and ``hearth-runner`` in
  /usr/bin, a .desktop entry, hicolor icons, a MIME type for .gguf files. No maintainer scripts:
  Debian's file triggers (desktop-file-utils, hicolor-icon-theme, shared-mime-info) refresh the
  menus and icon caches, and ``dpkg -r`` removes every file the package brought.
- ``hearth-runtime-cuda12_<version>_<arch>.deb`` (and cuda13), when that runtime was built: it
  adds /opt/hearth/runtimes/cuda12, where the app finds it at its next start. The CUDA runtime
  and cuBLAS travel inside it (installers/build_runtime.py copies them from NVIDIA's wheels;
  Debian has no package of them to depend on): only the driver's libcuda.so.1 comes from the
  system. Its copyright file says under which terms NVIDIA's libraries are redistributed.

A runtime is packaged as the app reads it, ``manifest.json`` and ``lib/``: whatever else its
folder holds (``bin/llama-server``, built for benchmarks) stays out.

The user's models, conversations and settings live in their home folder and stay on removal.
"""

from __future__ import annotations

import argparse
import json
import shutil
import stat
import subprocess
import sys
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "installers"))
import freeze  # noqa: E402

from app import qtdeps  # noqa: E402  (standard library only, like this script)

PREFIX = "opt/hearth"
ICON_SIZES = (16, 32, 48, 64, 128, 256, 512)
MAINTAINER = "Hearth developers <hearth@users.noreply.github.com>"
HOMEPAGE = "https://github.com/hearth-app/hearth"

# A launcher that works wherever the tree is unpacked (a test installs into a temporary root):
# /usr/bin/../../opt/hearth is /opt/hearth.
LAUNCHER = """#!/bin/sh
exec "$(dirname "$(readlink -f "$0")")/../../{prefix}/{program}" "$@"
"""

# What a runtime is (runner/runtime.py reads no more): anything else in its folder is a build's
# leftover, such as the llama-server that build_runtime.py --with-server puts in bin/.
RUNTIME_PARTS = ("manifest.json", "lib")

APP_COPYRIGHT = (
    "Hearth: MIT License. Bundled: Python (PSF License), Qt and PySide6 (LGPLv3), llama.cpp "
    "and llama-cpp-python (MIT), and the Python packages listed in the app's folder.\n")

# NVIDIA's libraries a CUDA runtime carries (build_runtime.CUDA_RUNTIME_LIBS), by file name
# prefix, with the component's name in Attachment A of the CUDA Toolkit EULA.
NVIDIA_LIBRARIES = {"libcudart.so": "CUDA Runtime", "libcublas.so": "CUDA BLAS Library",
                    "libcublasLt.so": "CUDA BLAS Library"}
NVIDIA_EULA = "https://docs.nvidia.com/cuda/eula/index.html"

MIME_XML = """<?xml version="1.0" encoding="UTF-8"?>
<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">
  <mime-type type="application/x-gguf">
    <comment>GGUF language model</comment>
    <magic priority="50"><match type="string" value="GGUF" offset="0"/></magic>
    <glob pattern="*.gguf"/>
  </mime-type>
</mime-info>
"""


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    arch: str
    depends: list[str]
    recommends: list[str]
    description: str


def version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def debian_arch() -> str:
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()


def app_depends() -> list[str]:
    """The system libraries Qt's xcb plugin needs (the same list the app checks at start),
    and those the spec leaves to the system (FROM_SYSTEM in hearth.spec: the C and C++
    runtimes, OpenMP for llama.cpp's CPU code, fontconfig); the rest of Qt and Python is in the
    package. Built on Debian 12: its libc and GCC 12 runtime are the oldest it runs with."""
    names = dict.fromkeys(lib.apt for lib in qtdeps.XCB_LIBRARIES)
    return ["libc6 (>= 2.36)", "libstdc++6 (>= 12)", "libgcc-s1", "libgomp1", "libfreetype6",
            *names]


def control(pkg: Package, installed_kb: int) -> str:
    lines = [
        f"Package: {pkg.name}",
        f"Version: {pkg.version}",
        f"Architecture: {pkg.arch}",
        f"Maintainer: {MAINTAINER}",
        f"Installed-Size: {installed_kb}",
        f"Depends: {', '.join(pkg.depends)}",
    ]
    if pkg.recommends:
        lines.append(f"Recommends: {', '.join(pkg.recommends)}")
    summary, _, body = pkg.description.partition("\n")
    lines += ["Section: utils", "Priority: optional", f"Homepage: {HOMEPAGE}",
              f"Description: {summary}"]
    lines += [f" {line}" if line.strip() else " ." for line in body.strip().splitlines()]
    return "\n".join(lines) + "\n"


def stage_app(frozen: Path, staging: Path, runtimes: list[str]) -> None:
    """The main package's tree: /opt/hearth without CUDA runtimes, launchers, menu entry."""
    dest = staging / PREFIX

    def leave_out(folder: str, names: list[str]) -> list[str]:
        if Path(folder) == frozen / "runtimes":
            return [n for n in names if n not in runtimes]
        if Path(folder).parent == frozen / "runtimes":
            return [n for n in names if n not in RUNTIME_PARTS]
        return []

    shutil.copytree(frozen, dest, symlinks=True, ignore=leave_out)
    bin_dir = staging / "usr" / "bin"
    bin_dir.mkdir(parents=True)
    for program in ("hearth", "hearth-runner"):
        launcher = bin_dir / program
        launcher.write_text(LAUNCHER.format(prefix=PREFIX, program=program))
        launcher.chmod(0o755)
    share = staging / "usr" / "share"
    (share / "applications").mkdir(parents=True)
    shutil.copy2(ROOT / "resources" / "hearth.desktop", share / "applications" / "hearth.desktop")
    icons = ROOT / "resources" / "icons"
    for size in ICON_SIZES:
        folder = share / "icons" / "hicolor" / f"{size}x{size}" / "apps"
        folder.mkdir(parents=True)
        shutil.copy2(icons / f"hearth-{size}.png", folder / "hearth.png")
    scalable = share / "icons" / "hicolor" / "scalable" / "apps"
    scalable.mkdir(parents=True)
    shutil.copy2(icons / "hearth.svg", scalable / "hearth.svg")
    (share / "mime" / "packages").mkdir(parents=True)
    (share / "mime" / "packages" / "hearth.xml").write_text(MIME_XML)
    _docs(staging, "hearth", APP_COPYRIGHT)


def stage_runtime(frozen: Path, staging: Path, name: str) -> None:
    """A runtime package's tree: the runtime's manifest and libraries, its copyright file."""
    source = frozen / "runtimes" / name
    dest = staging / PREFIX / "runtimes" / name
    dest.mkdir(parents=True)
    shutil.copy2(source / "manifest.json", dest / "manifest.json")
    shutil.copytree(source / "lib", dest / "lib", symlinks=True)
    _docs(staging, f"hearth-runtime-{name}", runtime_copyright(name, dest))


def runtime_copyright(name: str, runtime: Path) -> str:
    """The copyright file of a runtime package: llama.cpp's licence, and for NVIDIA's libraries
    in the runtime's ``lib`` where they came from and the terms they are redistributed under."""
    paragraphs = [
        f"hearth-runtime-{name}: llama.cpp built for Hearth ({name}).",
        "llama.cpp and ggml (libllama, libggml and the ggml backend modules): MIT License, "
        "Copyright (c) The ggml authors. Hearth: MIT License.",
    ]
    files = sorted(p.name for p in (runtime / "lib").iterdir() if not p.is_symlink())
    found = {prefix: component for prefix, component in NVIDIA_LIBRARIES.items()
             if any(f.startswith(prefix + ".") for f in files)}
    if found:
        nvidia = [f for f in files if f.startswith(tuple(p + "." for p in found))]
        toolkit = json.loads((runtime / "manifest.json").read_text("utf-8")).get("toolkit")
        origin = ("NVIDIA's Python wheels (nvidia-cuda-runtime, nvidia-cublas)"
                  if toolkit == "wheels" else "the NVIDIA CUDA Toolkit the runtime was built with")
        listed = "; ".join(f"{component}: {', '.join(p for p in found if found[p] == component)}"
                           for component in dict.fromkeys(found.values()))
        paragraphs.append(
            f"NVIDIA libraries in /{PREFIX}/runtimes/{name}/lib: {', '.join(nvidia)}. "
            f"Copyright NVIDIA Corporation. Copied unmodified from {origin} and redistributed "
            "under the distribution terms of the NVIDIA CUDA Toolkit End User License Agreement "
            f"({NVIDIA_EULA}), whose Attachment A lists them among the portions of the SDK that "
            f"are distributable ({listed}). They are loaded only by Hearth's runner, through "
            "llama.cpp's CUDA backend. The NVIDIA driver's library (libcuda.so.1) is not "
            "included: it comes with the driver installed on the system.")
    return "\n\n".join(textwrap.fill(p, 78, break_on_hyphens=False) for p in paragraphs) + "\n"


def _docs(staging: Path, package: str, copyright_text: str) -> None:
    doc = staging / "usr" / "share" / "doc" / package
    doc.mkdir(parents=True)
    (doc / "copyright").write_text(copyright_text)


def normalise_modes(staging: Path) -> None:
    """Files 644 or 755, folders 755: dpkg installs the modes as they are in the archive."""
    for path in [staging, *staging.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        executable = path.is_dir() or mode & stat.S_IXUSR
        path.chmod(0o755 if executable else 0o644)


def size_kb(tree: Path) -> int:
    return sum(p.lstat().st_size for p in tree.rglob("*") if not p.is_dir()) // 1024 + 1


def build_package(pkg: Package, staging: Path, out: Path, compress: str) -> Path:
    normalise_modes(staging)
    debian = staging / "DEBIAN"
    debian.mkdir()
    (debian / "control").write_text(control(pkg, size_kb(staging)))
    out.mkdir(parents=True, exist_ok=True)
    deb = out / f"{pkg.name}_{pkg.version}_{pkg.arch}.deb"
    kind, _, level = compress.partition(":")
    subprocess.check_call(["dpkg-deb", "--root-owner-group", f"-Z{kind}",
                           *([f"-z{level}"] if level else []), "--build", str(staging), str(deb)])
    return deb


def build_all(frozen: Path, out: Path, work: Path, compress: str = "xz") -> list[Path]:
    ver, arch = version(), debian_arch()
    runtimes = freeze.runtime_backends(frozen / "runtimes")
    main = [n for n, backend in runtimes.items() if backend != "cuda"]
    recommends = ["libvulkan1"] if "vulkan" in main else []
    shutil.rmtree(work, ignore_errors=True)
    app_tree = work / "hearth"
    stage_app(frozen, app_tree, main)
    built = [build_package(Package(
        "hearth", ver, arch, app_depends(), recommends,
        "Run open large language models on your own computer\n"
        "Hearth finds GGUF models on Hugging Face, works out how to load them on this\n"
        "computer's hardware, and chats with them through a local llama.cpp runner.\n"
        f"Runtimes included: {', '.join(main) or 'none'}."), app_tree, out, compress)]
    for name in (n for n, backend in runtimes.items() if backend == "cuda"):
        tree = work / name
        stage_runtime(frozen, tree, name)
        built.append(build_package(Package(
            f"hearth-runtime-{name}", ver, arch, [f"hearth (= {ver})"], [],
            f"CUDA runtime for Hearth ({name})\n"
            "llama.cpp built for NVIDIA GPUs; Hearth chooses it at its next start when the\n"
            "NVIDIA driver supports it."), tree, out, compress))
    shutil.rmtree(work, ignore_errors=True)
    return built


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="build_deb.py", description=__doc__.split("\n")[0])
    parser.add_argument("--frozen", type=Path, help="a folder made by installers/freeze.py")
    parser.add_argument("--out", type=Path, default=ROOT / "dist")
    parser.add_argument("--compress", default="xz",
                        help="dpkg-deb's compressor[:level] (xz for releases; gzip:1 is fast)")
    args = parser.parse_args(argv)
    if shutil.which("dpkg-deb") is None:
        print("dpkg-deb was not found: build the .deb on Debian or Ubuntu.", file=sys.stderr)
        return 1
    frozen = args.frozen
    if frozen is None:
        python = ROOT / ".venv" / "bin" / "python"
        # Every runtime built, CUDA too: build_all puts each CUDA runtime in a package of its own.
        subprocess.check_call([str(python if python.exists() else sys.executable),
                               str(ROOT / "installers" / "freeze.py"), "--dist", str(args.out),
                               "--runtimes", "all"])
        frozen = args.out / "hearth"
    for deb in build_all(frozen.resolve(), args.out.resolve(), args.out.resolve() / "deb-staging",
                         args.compress):
        print(f"Built {deb} ({deb.stat().st_size / 1e6:.1f} MB)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
