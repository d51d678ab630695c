"""The CUDA 13 runtime's package, ``hearth-runtime-cuda13``, from the real runtime: built with
build_deb's own functions beside a stand-in app package (no PyInstaller), both installed with
dpkg into a temporary root; the app's catalog finds the runtime there, and every library in it
resolves with nothing missing but the driver's libcuda.so.1.

The real runtime is the folder ``HEARTH_CUDA_RUNTIME`` names, else the newest CUDA 13 build in
installers/build_runtime.py's cache (``HEARTH_BUILD_CACHE`` or ~/.cache/hearth/runtimes); the
test is skipped where there is none (building one takes an hour or more on 2 cores). A
stand-in runtime of small libraries compiled here, linked like the real one, checks the same
things in seconds wherever a C compiler is.

The packages are compressed with ``gzip:1`` (``HEARTH_DEB_COMPRESS`` sets another, ``xz`` for
the release size): xz takes minutes over the runtime's 600 MB. ``-s`` shows the size and time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.runtimes import catalog
from tests.fixtures.dpkg import dpkg, empty_dpkg_root
from tests.integration.test_deb_packages import build_deb, contents, stand_in

NAME = "cuda13"
PACKAGE = f"hearth-runtime-{NAME}"
# What may be missing where no NVIDIA driver is installed: the driver's own library.
DRIVER = "libcuda.so.1"
NVIDIA_LIBRARIES = ("libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13")

pytestmark = [
    pytest.mark.slow,
    # Copying, compressing and installing the real runtime's 600 MB: minutes on 2 cores.
    pytest.mark.timeout(1800),
    pytest.mark.skipif(shutil.which("dpkg-deb") is None or shutil.which("dpkg") is None,
                       reason="dpkg is missing: the .deb is built on Debian or Ubuntu"),
    pytest.mark.skipif(shutil.which("ldd") is None, reason="ldd is missing"),
]


def real_runtime() -> Path | None:
    """The CUDA 13 runtime to package: ``HEARTH_CUDA_RUNTIME``, else the newest in the cache."""
    named = os.environ.get("HEARTH_CUDA_RUNTIME")
    if named:
        return Path(named).expanduser()
    cache = Path(os.environ.get("HEARTH_BUILD_CACHE",
                                Path.home() / ".cache" / "hearth" / "runtimes"))
    built = [folder for folder in cache.glob(f"*-{NAME}*") if is_cuda_runtime(folder)]
    return max(built, key=lambda f: (f / catalog.MANIFEST).stat().st_mtime, default=None)


def is_cuda_runtime(folder: Path) -> bool:
    try:
        manifest = json.loads((folder / catalog.MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        return False  # a build tree (build-…) or a build that has not finished
    return isinstance(manifest, dict) and manifest.get("backend") == "cuda" \
        and manifest.get("name") == NAME


def compile_library(folder: Path, soname: str, needs: list[str], link_dirs: list[Path]) -> None:
    """A tiny ``folder/soname`` that needs ``needs`` and looks for them beside itself."""
    source = folder.parent / f"{soname}.c"
    source.write_text(f"int {soname.split('.')[0].replace('-', '_')}_symbol(void) {{ return 1; }}\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(folder / soname), f"-Wl,-soname,{soname}",
                    "-Wl,--no-as-needed", "-Wl,-rpath,$ORIGIN", str(source),
                    *[f"-L{d}" for d in link_dirs], *[f"-l:{n}" for n in needs]], check=True)
    source.unlink()


def stand_in_runtime(folder: Path) -> Path:
    """A runtime folder shaped like build_runtime.py's CUDA 13 one, with tiny libraries that
    need each other and the driver's libcuda.so.1 as the real ones do, and a llama-server."""
    lib, stubs = folder / "lib", folder.parent / "driver-stub"
    lib.mkdir(parents=True)
    stubs.mkdir()
    compile_library(stubs, DRIVER, [], [])  # only to link against, as build_runtime.py does
    compile_library(lib, "libcudart.so.13", [], [])
    compile_library(lib, "libcublasLt.so.13", [], [])
    compile_library(lib, "libcublas.so.13", ["libcublasLt.so.13"], [lib])
    compile_library(lib, "libggml-base.so", [], [])
    compile_library(lib, "libggml.so", ["libggml-base.so"], [lib])
    compile_library(lib, "libllama.so", ["libggml.so", "libggml-base.so"], [lib])
    compile_library(lib, "libggml-cuda.so",
                    ["libggml-base.so", "libcudart.so.13", "libcublas.so.13", DRIVER],
                    [lib, stubs])
    (folder / "bin").mkdir()
    shutil.copy2(lib / "libggml.so", folder / "bin" / "llama-server")
    (folder / catalog.MANIFEST).write_text(json.dumps(
        {"name": NAME, "backend": "cuda", "llama_cpp_python": "0.3.36", "min_driver": "580",
         "cuda_major": 13, "toolkit": "wheels"}))
    return folder


@dataclass
class Packaged:
    kind: str  # "real" or "stand-in"
    runtime: Path  # the runtime folder that was packaged
    deb: Path  # hearth-runtime-cuda13's .deb
    root: Path  # where dpkg installed it and the app's package
    build_s: float

    @property
    def installed(self) -> Path:
        return self.root / "opt" / "hearth" / "runtimes" / NAME


@pytest.fixture(scope="module", params=["stand-in", "real"])
def packaged(request: pytest.FixtureRequest,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Packaged]:
    work = tmp_path_factory.mktemp(f"deb-{request.param}")
    if request.param == "real":
        runtime = real_runtime()
        if runtime is None:
            pytest.skip(f"no CUDA 13 runtime: set HEARTH_CUDA_RUNTIME to one, or build it with "
                        f"installers/build_runtime.py {NAME} (an hour or more on 2 cores)")
        assert is_cuda_runtime(runtime), f"{runtime} is not a {NAME} runtime (manifest.json)"
    else:
        if shutil.which("cc") is None:
            pytest.skip("no C compiler to build the stand-in runtime's libraries")
        runtime = stand_in_runtime(work / "stand-in-runtime")
    # The frozen app, as freeze.py --runtimes all leaves it: the runtime under runtimes/ (linked,
    # not copied: build_deb copies what it packages).
    frozen = work / "hearth"
    stand_in(frozen, runtimes=(("cpu-portable", "cpu"),))
    (frozen / "runtimes" / NAME).symlink_to(runtime.resolve(), target_is_directory=True)
    script = build_deb()
    started = time.monotonic()
    debs = script.build_all(frozen, work / "out", work / "staging",
                            os.environ.get("HEARTH_DEB_COMPRESS", "gzip:1"))
    build_s = time.monotonic() - started
    ver, arch = script.version(), script.debian_arch()
    assert sorted(d.name for d in debs) == [f"{PACKAGE}_{ver}_{arch}.deb",
                                            f"hearth_{ver}_{arch}.deb"]
    deb = next(d for d in debs if d.name.startswith(PACKAGE))
    root = work / "root"
    empty_dpkg_root(root)
    # Both at once, as apt would (the runtime depends on the app); --force-depends: the
    # temporary root's database knows none of the system's libraries.
    result = dpkg(root, "--force-depends", "-i", *map(str, debs), timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    size = deb.stat().st_size
    print(f"\n{request.param} {deb.name}: {size} bytes ({size / 2**20:.1f} MiB, "
          f"{size / 1e6:.1f} MB), installed {installed_size(deb)} KiB; both packages built in "
          f"{build_s:.0f} s with {os.environ.get('HEARTH_DEB_COMPRESS', 'gzip:1')}")
    yield Packaged(request.param, runtime, deb, root, build_s)


def installed_size(deb: Path) -> int:
    return int(subprocess.run(["dpkg-deb", "--field", str(deb), "Installed-Size"],
                              capture_output=True, text=True, check=True).stdout)


def libraries(folder: Path) -> list[Path]:
    """The shared libraries in ``folder``, each once (a link names a library listed already)."""
    return sorted(p for p in folder.iterdir()
                  if (p.name.endswith(".so") or ".so." in p.name) and not p.is_symlink())


def ldd(library: Path) -> dict[str, str]:
    """Needed library -> where the loader finds it ("not found" when it does not)."""
    # Only the system's own search path: a library path set here would hide what is missing.
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    run = subprocess.run(["ldd", str(library)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert run.returncode == 0, f"ldd {library}: {run.stdout}{run.stderr}"
    found = {}
    for line in run.stdout.splitlines():
        name, arrow, where = line.strip().partition(" => ")
        if arrow:
            found[name] = where.split(" (")[0].strip()
    return found


def test_the_package_holds_the_runtime_as_the_app_reads_it_and_nothing_else(
        packaged: Packaged) -> None:
    files = contents(packaged.deb)
    prefix = f"./opt/hearth/runtimes/{NAME}/"
    wanted = {prefix + "manifest.json"} | {prefix + f"lib/{p.name}"
                                           for p in (packaged.runtime / "lib").iterdir()}
    shipped = {f for f in files if not f.endswith("/")}
    assert shipped == wanted | {f"./usr/share/doc/{PACKAGE}/copyright"}, \
        sorted(shipped ^ (wanted | {f"./usr/share/doc/{PACKAGE}/copyright"}))
    assert not any(f.startswith(f"{prefix}bin") for f in files)  # bin/llama-server
    for name in NVIDIA_LIBRARIES:
        assert prefix + f"lib/{name}" in files, name
    depends = subprocess.run(["dpkg-deb", "--field", str(packaged.deb), "Depends"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert depends.startswith("hearth (= ")


def test_the_installed_app_finds_the_runtime_beside_its_own(
        packaged: Packaged, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The frozen app looks in runtimes/ beside its executable (catalog.runtime_folders).
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(packaged.root / "opt" / "hearth" / "hearth"))
    monkeypatch.delenv("HEARTH_RUNTIMES", raising=False)
    monkeypatch.setenv("HEARTH_HOME", str(tmp_path / "home"))
    found = {rt.name: rt for rt in catalog.list_runtimes()}
    assert {NAME, "cpu-portable", catalog.BUILTIN_NAME} <= set(found), found
    cuda = found[NAME]
    assert cuda.path == packaged.installed
    assert cuda.backend == "cuda" and cuda.cuda_major == 13 and not cuda.problem, cuda
    assert cuda.label() == "cuda13 (CUDA 13)"


def test_its_libraries_resolve_inside_it_with_only_the_driver_missing(packaged: Packaged) -> None:
    lib = packaged.installed / "lib"
    own = {p.name for p in lib.iterdir()}
    missing: dict[str, list[str]] = {}
    elsewhere: dict[str, list[str]] = {}
    needs_driver = []
    for library in libraries(lib):
        deps = ldd(library)
        missing.update({library.name: [n for n, where in deps.items()
                                       if where == "not found" and n != DRIVER]})
        # The runtime's own libraries and NVIDIA's come from its folder ($ORIGIN), never from
        # a CUDA toolkit or another llama.cpp that happens to be on this system.
        elsewhere.update({library.name: [f"{n} => {where}" for n, where in deps.items()
                                         if n in own and Path(where).parent.resolve()
                                         != lib.resolve()]})
        if DRIVER in deps:
            needs_driver.append(library.name)
    assert not any(missing.values()), {k: v for k, v in missing.items() if v}
    assert not any(elsewhere.values()), {k: v for k, v in elsewhere.items() if v}
    # The CUDA backend module is what needs the driver (and cuBLAS, found above).
    assert "libggml-cuda.so" in needs_driver, needs_driver
    assert {"libcudart.so.13", "libcublas.so.13"} <= set(ldd(lib / "libggml-cuda.so"))


def test_its_copyright_file_says_under_which_terms_nvidias_libraries_travel(
        packaged: Packaged) -> None:
    text = (packaged.root / "usr" / "share" / "doc" / PACKAGE / "copyright").read_text()
    flat = " ".join(text.split())
    assert "llama.cpp" in flat and "MIT License" in flat
    assert "NVIDIA CUDA Toolkit End User License Agreement" in flat
    assert "Attachment A" in flat and "distributable" in flat
    assert "CUDA Runtime: libcudart.so" in flat
    assert "CUDA BLAS Library: libcublas.so, libcublasLt.so" in flat
    for name in NVIDIA_LIBRARIES:
        assert name in flat, name
    if json.loads((packaged.runtime / catalog.MANIFEST).read_text()).get("toolkit") == "wheels":
        assert "Copied unmodified from NVIDIA's Python wheels" in flat


def test_removing_the_runtime_package_leaves_the_app_installed(packaged: Packaged) -> None:
    result = dpkg(packaged.root, "--purge", PACKAGE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not packaged.installed.exists()
    assert (packaged.root / "opt" / "hearth" / "runtimes" / "cpu-portable" / "manifest.json").exists()
