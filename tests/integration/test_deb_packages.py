"""The .deb packages' contents from a stand-in frozen folder (fast: no PyInstaller): the CUDA
runtime is a package of its own that puts its folder where the installed app looks."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from app.runtimes.catalog import list_runtimes
from tests.fixtures.scripts import load_script

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None,
                                reason="dpkg-deb is missing: the .deb is built on Debian or Ubuntu")


def build_deb() -> ModuleType:
    return load_script("linux/build_deb.py")


STAND_IN_RUNTIMES = (("cpu-portable", "cpu"), ("vulkan", "vulkan"), ("cuda12", "cuda"))


def stand_in(frozen: Path, runtimes: tuple[tuple[str, str], ...] = STAND_IN_RUNTIMES) -> None:
    """A folder shaped like freeze.py's: the two programs, _internal, and ``runtimes`` (name,
    backend), each with a llama.cpp build's leftover (bin/llama-server) that no package ships."""
    for name in ("hearth", "hearth-runner"):
        (frozen / name).parent.mkdir(parents=True, exist_ok=True)
        (frozen / name).write_text("#!/bin/sh\n")
        (frozen / name).chmod(0o755)
    (frozen / "_internal").mkdir()
    (frozen / "_internal" / "libpython3.11.so.1.0").write_bytes(b"\x7fELF")
    for name, backend in runtimes:
        lib = frozen / "runtimes" / name / "lib"
        lib.mkdir(parents=True)
        (lib / "libllama.so").write_bytes(b"\x7fELF")
        (lib.parent / "bin").mkdir()
        (lib.parent / "bin" / "llama-server").write_bytes(b"\x7fELF")
        (lib.parent / "manifest.json").write_text(json.dumps(
            {"name": name, "backend": backend, "llama_cpp_python": "0.3.36",
             "cuda_major": 12 if backend == "cuda" else 0}))


def contents(deb: Path) -> list[str]:
    out = subprocess.run(["dpkg-deb", "--contents", str(deb)], capture_output=True, text=True,
                         check=True).stdout
    return [line.split()[5] for line in out.splitlines() if line.strip()]


def test_cuda_is_a_package_of_its_own_that_puts_its_runtime_where_the_app_looks(
        tmp_path: Path) -> None:
    frozen = tmp_path / "hearth"
    stand_in(frozen)
    script = build_deb()
    debs = script.build_all(frozen, tmp_path / "out", tmp_path / "work", "gzip:1")
    ver, arch = script.version(), script.debian_arch()
    assert sorted(d.name for d in debs) == [f"hearth-runtime-cuda12_{ver}_{arch}.deb",
                                            f"hearth_{ver}_{arch}.deb"]
    main = next(d for d in debs if d.name.startswith("hearth_"))
    cuda = next(d for d in debs if d.name.startswith("hearth-runtime-cuda12"))
    main_files, cuda_files = contents(main), contents(cuda)
    assert "./opt/hearth/runtimes/vulkan/manifest.json" in main_files
    assert "./opt/hearth/runtimes/cpu-portable/lib/libllama.so" in main_files
    assert not any("cuda12" in f for f in main_files)
    assert "./opt/hearth/runtimes/cuda12/manifest.json" in cuda_files
    assert not any("cpu-portable" in f or f.endswith("/hearth") for f in cuda_files)
    # A runtime is its manifest and lib/: a build's leftovers stay out of every package.
    assert not any("/bin/llama-server" in f for f in main_files + cuda_files)
    assert "./usr/share/doc/hearth-runtime-cuda12/copyright" in cuda_files
    fields = subprocess.run(["dpkg-deb", "--field", str(cuda), "Depends"], capture_output=True,
                            text=True, check=True).stdout
    assert fields.strip() == f"hearth (= {ver})"
    recommends = subprocess.run(["dpkg-deb", "--field", str(main), "Recommends"],
                                capture_output=True, text=True, check=True).stdout
    assert "libvulkan1" in recommends

    # Both unpacked into one tree, as dpkg installs them: the app's catalog lists all three.
    root = tmp_path / "root"
    for deb in debs:
        subprocess.run(["dpkg-deb", "--extract", str(deb), str(root)], check=True)
    found = {rt.name: rt for rt in list_runtimes([root / "opt" / "hearth" / "runtimes"])}
    assert {"cpu-portable", "vulkan", "cuda12"} <= set(found)
    assert found["cuda12"].backend == "cuda" and not found["cuda12"].problem
