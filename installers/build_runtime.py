#!/usr/bin/env python3
"""Build a runner runtime: one llama.cpp build's shared libraries in a folder with a manifest.

    python3 installers/build_runtime.py cpu              # portable: every x86 CPU variant
    python3 installers/build_runtime.py vulkan           # + the Vulkan backend (lavapipe works)
    python3 installers/build_runtime.py cuda12|cuda13    # + CUDA (needs nvcc of that major)
    python3 installers/build_runtime.py metal            # macOS arm64 (untested here)
    python3 installers/build_runtime.py auto             # what fits this machine

Options: ``--out DIR`` (default ``.venv/runtimes``, where a source checkout's app finds them),
``--jobs N``, ``--python PY`` (whose llama-cpp-python version to match).

A runtime is built from the llama.cpp that the installed llama-cpp-python vendors (its source
distribution, fetched once with pip into the cache), so the Python bindings and the libraries
agree. Every runtime is ``GGML_BACKEND_DL``: the CPU code is a set of modules, one per CPU
generation (``GGML_CPU_ALL_VARIANTS``), and the runner loads the best one at run time, so one
build runs at full speed on AVX-512 machines and still starts on a CPU without AVX2. RPC is
compiled into every runtime (one model over several machines). A finished build is cached under
``~/.cache/hearth/runtimes/`` by its version and options, so building again only copies it.

Layout (what ``runner/runtime.py`` reads)::

    <out>/<name>/manifest.json   {"name", "backend", "llama_cpp_python", "build_options", ...}
    <out>/<name>/lib/             libllama.so, libggml*.so, and the backend modules
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("HEARTH_BUILD_CACHE", Path.home() / ".cache" / "hearth" / "runtimes"))
MANIFEST = "manifest.json"
FORMAT = 1

# The oldest NVIDIA driver each CUDA major runs on (NVIDIA's CUDA compatibility table, Linux).
MIN_DRIVER = {"cuda12": "525.60.13", "cuda13": "580.65.06"}

COMMON = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=OFF",
    "-DLLAMA_BUILD_SERVER=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_COMMON=OFF",
    "-DLLAMA_CURL=OFF",
    "-DGGML_NATIVE=OFF",
    "-DGGML_BACKEND_DL=ON",
    "-DGGML_RPC=ON",
    "-DGGML_RPC_RDMA=OFF",
    # The libraries find each other in their own folder, wherever it is copied.
    "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
    "-DCMAKE_INSTALL_RPATH=$ORIGIN" if sys.platform != "darwin" else "-DCMAKE_INSTALL_RPATH=@loader_path",
]


# A GPU runtime's CPU modules are the portable CPU runtime's own files: the same sources and
# options, so compiling all fifteen variants again (most of a build's 20 minutes on 2 cores)
# would only make the same bytes. The GPU build leaves the CPU backend out and takes them.
CPU_FROM_PORTABLE = ["-DGGML_CPU=OFF", "-DGGML_CPU_ALL_VARIANTS=OFF"]


def options_for(kind: str, vulkan_headers: Path | None = None) -> list[str]:
    """CMake options for a runtime kind (pure; unit-tested)."""
    opts = list(COMMON)
    if kind == "metal":
        # Apple Silicon: one CPU (no variants to choose from) and Metal, shaders embedded.
        return [*opts, "-DGGML_METAL=ON", "-DGGML_METAL_EMBED_LIBRARY=ON",
                "-DGGML_CPU_ALL_VARIANTS=OFF"]
    opts += ["-DGGML_CPU_ALL_VARIANTS=ON"] if kind == "cpu" else CPU_FROM_PORTABLE
    if kind == "vulkan":
        opts.append("-DGGML_VULKAN=ON")
        if vulkan_headers is not None:
            opts.append(f"-DVulkan_INCLUDE_DIR={vulkan_headers}")
    elif kind in MIN_DRIVER:
        # The common consumer and data-centre generations: Turing to Blackwell on CUDA 12; CUDA
        # 13 dropped Turing-era compute below 7.5.
        archs = "75-virtual;80;86;89;90" if kind == "cuda12" else "75-virtual;80;86;89;90;120"
        opts += ["-DGGML_CUDA=ON", f"-DCMAKE_CUDA_ARCHITECTURES={archs}"]
    elif kind != "cpu":
        raise ValueError(f"unknown runtime kind {kind!r}")
    return opts


def what_fits() -> list[str]:
    """The runtimes worth building on this machine: CPU everywhere, plus its GPU's."""
    if sys.platform == "darwin":
        return ["metal"] if platform.machine() == "arm64" else ["cpu"]
    kinds = ["cpu"]
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                    if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if nvcc and _nvidia_gpu_present():
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"release (\d+)\.", out)
        if m and f"cuda{m.group(1)}" in MIN_DRIVER:
            kinds.append(f"cuda{m.group(1)}")
    return kinds


def _nvidia_gpu_present() -> bool:
    """A driver that answers and lists a GPU (a toolkit alone, as on a build server, is not
    a reason to spend an hour compiling CUDA kernels)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU " in out.stdout


def llama_cpp_python_version(python: str) -> str:
    out = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('llama-cpp-python'))"],
        capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("llama-cpp-python is not installed in that Python; run "
                 "`python3 installers/dev.py test` (or run) first.")
    return out.stdout.strip()


def source(version: str, python: str) -> Path:
    """The llama.cpp that llama-cpp-python ``version`` vendors (its sdist, fetched once)."""
    src = CACHE / "src" / f"llama_cpp_python-{version}"
    if (src / "vendor" / "llama.cpp" / "CMakeLists.txt").exists():
        return src / "vendor" / "llama.cpp"
    (CACHE / "src").mkdir(parents=True, exist_ok=True)
    print(f"Fetching llama-cpp-python {version}'s source …", flush=True)
    subprocess.check_call([python, "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
                           ":all:", "-d", str(CACHE / "src"), f"llama-cpp-python=={version}"])
    with tarfile.open(CACHE / "src" / f"llama_cpp_python-{version}.tar.gz") as tar:
        tar.extractall(CACHE / "src", filter="data")
    return src / "vendor" / "llama.cpp"


def vulkan_headers() -> Path:
    """Vulkan-Headers new enough for ggml-vulkan (1.3.272+), unpacked into the cache.

    Debian 12's libvulkan-dev is 1.3.239; its trixie suite has 1.4.x. ``apt-get download`` with
    a trixie source list into a private state folder installs nothing system-wide.
    """
    hdr = CACHE / "vulkan-headers"
    if (hdr / "usr" / "include" / "vulkan" / "vulkan_core.h").exists():
        return hdr / "usr" / "include"
    if shutil.which("apt-get") is None:
        sys.exit("Vulkan headers 1.3.272 or newer are needed: install the Vulkan SDK.")
    tmp = CACHE / "apt-trixie"
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "lists" / "partial").mkdir(parents=True)
    uri = _apt_mirror()
    (tmp / "trixie.sources").write_text(
        f"Types: deb\nURIs: {uri}\nSuites: trixie\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
    opts = ["-o", f"Dir::Etc::sourcelist={tmp / 'trixie.sources'}",
            "-o", "Dir::Etc::sourceparts=/dev/null", "-o", f"Dir::State::Lists={tmp / 'lists'}"]
    subprocess.check_call(["apt-get", "update", "-qq", *opts])
    subprocess.check_call(["apt-get", "download", "-qq", *opts, "libvulkan-dev"], cwd=tmp)
    deb = next(tmp.glob("libvulkan-dev_*.deb"))
    subprocess.check_call(["dpkg", "-x", str(deb), str(hdr)])
    shutil.rmtree(tmp, ignore_errors=True)
    return hdr / "usr" / "include"


def _apt_mirror() -> str:
    for f in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        m = re.search(r"^URIs:\s*(\S+)", f.read_text(), re.M)
        if m:
            return m.group(1)
    listing = Path("/etc/apt/sources.list")
    if listing.exists():
        m = re.search(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)", listing.read_text(), re.M)
        if m:
            return m.group(1)
    return "http://deb.debian.org/debian"


def _vulkan_tools_present() -> None:
    missing = [tool for tool in ("glslc",) if shutil.which(tool) is None]
    if missing or not any(Path(p).exists() for p in ("/usr/lib/x86_64-linux-gnu/libvulkan.so",
                                                       "/usr/lib/aarch64-linux-gnu/libvulkan.so")):
        sys.exit("The Vulkan build needs glslc, spirv-headers and libvulkan-dev (Debian: "
                 "apt-get install glslc spirv-headers libvulkan-dev mesa-vulkan-drivers).")


def build(kind: str, out: Path, python: str, jobs: int) -> Path:
    """Build (or take from the cache) the ``kind`` runtime and put it in ``out/<name>``."""
    version = llama_cpp_python_version(python)
    cached = _cached_build(kind, version, python, jobs)
    manifest = json.loads((cached / MANIFEST).read_text())
    target = out / manifest["name"]
    if (target / MANIFEST).exists() and \
            json.loads((target / MANIFEST).read_text()).get("stamp") == manifest["stamp"]:
        return target  # already in place
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(cached, target, symlinks=True)
    return target


def _cached_build(kind: str, version: str, python: str, jobs: int) -> Path:
    """The cache folder of the ``kind`` runtime for this llama-cpp-python version, built if
    it is missing or was built with other options."""
    headers = None
    if kind == "vulkan":
        _vulkan_tools_present()
        headers = vulkan_headers()
    opts = options_for(kind, headers)
    name = "cpu-portable" if kind == "cpu" else kind
    # The CPU modules of a GPU runtime come from the portable CPU build (built first if missing).
    cpu_lib = _cached_build("cpu", version, python, jobs) / "lib" \
        if CPU_FROM_PORTABLE[0] in opts else None
    stamp_key = json.dumps([FORMAT, version, kind, opts])
    cached = CACHE / f"{version}-{kind}"
    if (cached / MANIFEST).exists() and \
            json.loads((cached / MANIFEST).read_text()).get("stamp") == stamp_key:
        return cached
    src = source(version, python)
    work = CACHE / f"build-{version}-{kind}"
    print(f"Building the {name} runtime from llama-cpp-python {version}'s llama.cpp "
          f"(about 10–20 minutes) …", flush=True)
    started = time.monotonic()
    subprocess.check_call(["cmake", "-S", str(src), "-B", str(work), *opts])
    subprocess.check_call(["cmake", "--build", str(work), "--config", "Release",
                           "-j", str(jobs)])
    shutil.rmtree(cached, ignore_errors=True)
    (cached / "lib").mkdir(parents=True)
    _collect(work, cached / "lib")
    if cpu_lib is not None:
        for module in sorted(cpu_lib.glob("*ggml-cpu-*")):
            shutil.copy2(module, cached / "lib" / module.name)
    manifest = {
        "format": FORMAT,
        "name": name,
        "backend": "cpu" if kind == "cpu" else ("cuda" if kind in MIN_DRIVER else kind),
        "llama_cpp_python": version,
        "llama_cpp_commit": _vendored_commit(src),
        "build_options": opts,
        "min_driver": MIN_DRIVER.get(kind, ""),
        "cuda_major": int(kind[4:]) if kind in MIN_DRIVER else 0,
        "platform": f"{sys.platform}-{platform.machine()}",
        "built_s": round(time.monotonic() - started, 1),
        "stamp": stamp_key,
    }
    (cached / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return cached


def _collect(work: Path, lib: Path) -> None:
    """The shared libraries and backend modules of a build, links kept as links."""
    found = 0
    for folder in (work / "bin", work / "src", work / "ggml" / "src"):
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if path.is_dir() or not re.search(r"\.(so(\.[\d.]+)?|dylib|dll)$", path.name):
                continue
            if not (path.name.startswith(("libllama", "libggml", "llama", "ggml"))):
                continue
            dest = lib / path.name
            if dest.exists() or dest.is_symlink():
                continue
            if path.is_symlink():
                dest.symlink_to(os.readlink(path))
            else:
                shutil.copy2(path, dest)
            found += 1
    if not (lib / "libllama.so").exists() and not (lib / "libllama.dylib").exists() \
            and not (lib / "llama.dll").exists():
        sys.exit(f"the build in {work} made no llama library ({found} files found)")


def _vendored_commit(src: Path) -> str:
    for name in ("build-info.cmake", "CMakeLists.txt"):
        text = (src / "cmake" / name).read_text() if (src / "cmake" / name).exists() else ""
        m = re.search(r"BUILD_COMMIT\s+\"?([0-9a-f]{7,40})", text)
        if m:
            return m.group(1)
    return ""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="build_runtime.py", description=__doc__.split("\n")[0])
    parser.add_argument("kind", choices=["cpu", "vulkan", "cuda12", "cuda13", "metal", "auto"])
    parser.add_argument("--out", type=Path, default=ROOT / ".venv" / "runtimes")
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python")
                        if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    kinds = what_fits() if args.kind == "auto" else [args.kind]
    for kind in kinds:
        path = build(kind, args.out, args.python, args.jobs)
        print(f"Built the {path.name} runtime in {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
