#!/usr/bin/env python3
"""Build a runner runtime: one llama.cpp build's shared libraries in a folder with a manifest.

    python3 installers/build_runtime.py cpu              # portable: every x86 CPU variant
    python3 installers/build_runtime.py vulkan           # + the Vulkan backend (lavapipe works)
    python3 installers/build_runtime.py cuda13           # + CUDA 13 (toolkit from NVIDIA's wheels)
    python3 installers/build_runtime.py cuda12           # + CUDA 12 (needs a system CUDA 12 toolkit)
    python3 installers/build_runtime.py metal            # macOS arm64 (untested here)
    python3 installers/build_runtime.py auto             # what fits this machine

Options: ``--out DIR`` (default ``.venv/runtimes``, where a source checkout's app finds them),
``--jobs N``, ``--python PY`` (whose llama-cpp-python version to match), ``--cuda-arch LIST``
(build for these CUDA architectures only, e.g. ``90`` for an H100; the default is
``CUDA_ARCHS`` below), ``--toolkit wheels|system`` (where nvcc comes from; CUDA 13 defaults to
NVIDIA's wheels, CUDA 12 to the system's), ``--own-cpu`` (a GPU runtime builds one portable
AVX2 CPU module instead of taking the fifteen of the CPU runtime: minutes instead of 25 on 2
cores, for a quick GPU build), ``--with-server`` (also builds llama.cpp's own ``llama-server``
in the same build tree, into ``<runtime>/bin``, for benchmarks against the same code and flags).

CUDA without a system toolkit: the CUDA 13 compiler (``nvidia-cuda-nvcc``: nvcc, cudafe++,
fatbinary, nvlink, ptxas), NVVM, the runtime, CRT headers, CCCL and cuBLAS all come as wheels
from the package registry and unpack into a toolkit folder that CMake takes as it is, plus a
link-time stub of the driver library (``libcuda.so``, made here from ``cuda.h``; the real one
comes with the driver). The CUDA 12 ``nvidia-cuda-nvcc-cu12`` wheels hold ptxas, NVVM and
headers but no ``nvcc`` (12.1.105, 12.4.131, 12.6.85, 12.8.93 and 12.9.86 checked), so
``cuda12`` needs a system toolkit. What a CUDA runtime needs at run time (the CUDA runtime and
cuBLAS, redistributable under NVIDIA's licence) is copied into its ``lib``: only the driver
comes from the system.

A runtime is built from the llama.cpp that the installed llama-cpp-python vendors (its source
distribution, fetched once with pip into the cache), so the Python bindings and the libraries
agree. Every runtime is ``GGML_BACKEND_DL``: the CPU code is a set of modules, one per CPU
generation (``GGML_CPU_ALL_VARIANTS``), and the runner loads the best one at run time, so one
build runs at full speed on AVX-512 machines and still starts on a CPU without AVX2. RPC is
compiled into every runtime (one model over several machines), and so is libmtmd, llama.cpp's
multimodal library (images), linked to the runtime's own ggml: the runner calls it through
llama-cpp-python's ``mtmd_cpp`` bindings pointed at the runtime's folder, so one ggml serves both
(a second copy would have its own, empty, backend registry). A finished build is cached under
``~/.cache/hearth/runtimes/`` by its version and options, so building again only copies it.

Layout (what ``runner/runtime.py`` reads)::

    <out>/<name>/manifest.json   {"name", "backend", "llama_cpp_python", "build_options",
                                  "mtmd": true, ...}
    <out>/<name>/lib/             libllama.so, libmtmd.so, libggml*.so, and the backend modules
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("HEARTH_BUILD_CACHE", Path.home() / ".cache" / "hearth" / "runtimes"))
MANIFEST = "manifest.json"
FORMAT = 1

# The oldest NVIDIA driver each CUDA major runs on (NVIDIA's CUDA compatibility table, Linux).
MIN_DRIVER = {"cuda12": "525.60.13", "cuda13": "580.65.06"}

# The architectures a shipped CUDA runtime carries machine code for: Ampere (A100 80, RTX 30 86),
# Ada (RTX 40, L4, L40: 89), Hopper (H100/H200: 90), Blackwell data centre (B200: 100) and
# consumer (RTX 50: 120, which ggml turns into 120a), plus Turing as PTX that the driver compiles
# once on first use. CUDA 13 dropped everything below Turing. Each real architecture costs about
# the same compile time (docs/gpu.md has the figure measured here for one).
CUDA_ARCHS = {"cuda12": "75-virtual;80;86;89;90;120", "cuda13": "75-virtual;80;86;89;90;100;120"}

# NVIDIA's CUDA 13 toolkit as wheels (pinned: a runtime is rebuilt only when these change).
CUDA13_WHEELS = ["nvidia-cuda-nvcc==13.5.37", "nvidia-nvvm==13.5.37",
                 "nvidia-cuda-runtime==13.5.37", "nvidia-cuda-crt==13.5.37",
                 "nvidia-cuda-cccl==13.3.5.0.6", "nvidia-cublas==13.10.0.20"]
# What a CUDA runtime needs beside the driver, copied from the toolkit into its lib folder.
CUDA_RUNTIME_LIBS = ["libcudart.so.*", "libcublas.so.*", "libcublasLt.so.*"]

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
    # libmtmd on its own (tools/mtmd's library, none of its programs): LLAMA_BUILD_TOOLS would
    # bring every tool and llama-common with it. Video goes through an ffmpeg child process
    # (LLAMA_SUBPROCESS), which Hearth does not ship; mtmd turns it off without that, but
    # saying so keeps a --with-server build (which has LLAMA_SUBPROCESS) the same library.
    "-DLLAMA_BUILD_MTMD=ON",
    "-DMTMD_VIDEO=OFF",
    # The libraries find each other in their own folder, wherever it is copied.
    "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
    "-DCMAKE_INSTALL_RPATH=$ORIGIN" if sys.platform != "darwin" else "-DCMAKE_INSTALL_RPATH=@loader_path",
]


# A GPU runtime's CPU modules are the portable CPU runtime's own files: the same sources and
# options, so compiling all fifteen variants again (most of a build's 20 minutes on 2 cores)
# would only make the same bytes. The GPU build leaves the CPU backend out and takes them.
CPU_FROM_PORTABLE = ["-DGGML_CPU=OFF", "-DGGML_CPU_ALL_VARIANTS=OFF"]


# llama.cpp's own server, built beside the runtime's libraries in the same tree (--with-server).
WITH_SERVER = ["-DLLAMA_BUILD_COMMON=ON", "-DLLAMA_BUILD_TOOLS=ON", "-DLLAMA_BUILD_SERVER=ON"]
# A GPU runtime's own single CPU module (--own-cpu): GGML_NATIVE=OFF turns on AVX2-class code.
OWN_CPU = ["-DGGML_CPU=ON", "-DGGML_CPU_ALL_VARIANTS=OFF"]
_SERVER_SWITCHES = {o.split("=")[0] for o in WITH_SERVER}
# What is compiled: the libraries the runner loads, not the whole tree. Under GGML_BACKEND_DL
# every backend module (each CPU variant, the GPU's, RPC) is a dependency of ``ggml``, which
# both link, so naming these two builds them all.
TARGETS = ["llama", "mtmd"]


def options_for(kind: str, vulkan_headers: Path | None = None, *, cuda_arch: str | None = None,
                own_cpu: bool = False, with_server: bool = False) -> list[str]:
    """CMake options for a runtime kind (pure; unit-tested)."""
    opts = list(COMMON)
    if with_server:
        # The server's options replace COMMON's OFF for the same three switches.
        opts = [o for o in opts if o.split("=")[0] not in _SERVER_SWITCHES] + WITH_SERVER
    if kind == "metal":
        # Apple Silicon: one CPU (no variants to choose from) and Metal, shaders embedded.
        return [*opts, "-DGGML_METAL=ON", "-DGGML_METAL_EMBED_LIBRARY=ON",
                "-DGGML_CPU_ALL_VARIANTS=OFF"]
    if kind == "cpu":
        opts += ["-DGGML_CPU_ALL_VARIANTS=ON"]
    else:
        opts += OWN_CPU if own_cpu else CPU_FROM_PORTABLE
    if kind == "vulkan":
        opts.append("-DGGML_VULKAN=ON")
        if vulkan_headers is not None:
            opts.append(f"-DVulkan_INCLUDE_DIR={vulkan_headers}")
    elif kind in MIN_DRIVER:
        archs = cuda_arch or CUDA_ARCHS[kind]
        opts += ["-DGGML_CUDA=ON", f"-DCMAKE_CUDA_ARCHITECTURES={archs}"]
    elif kind != "cpu":
        raise ValueError(f"unknown runtime kind {kind!r}")
    return opts


def targets_for(with_server: bool = False) -> list[str]:
    """The CMake targets a runtime build compiles (pure; unit-tested)."""
    return [*TARGETS, *(["llama-server"] if with_server else [])]


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


def cuda_toolkit_from_wheels(python: str) -> Path:
    """A CUDA 13 toolkit folder made of NVIDIA's wheels (fetched once into the cache).

    The wheels unpack into ``nvidia/cu13/`` with nvcc's own ``nvcc.profile`` pointing at the
    folders beside it, so the folder is a toolkit as CMake's FindCUDAToolkit expects, once the
    unversioned library links and a driver stub for linking exist.
    """
    tk = CACHE / "cuda13-toolkit"
    root = tk / "nvidia" / "cu13"
    stamp = json.dumps(CUDA13_WHEELS)
    if (tk / "stamp").exists() and (tk / "stamp").read_text() == stamp:
        return root
    wheels = CACHE / "cuda13-wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    print("Fetching the CUDA 13 compiler, runtime and cuBLAS wheels (about 600 MB) …", flush=True)
    subprocess.check_call([python, "-m", "pip", "download", "-q", "--no-deps", "--only-binary",
                           ":all:", "--python-version", "3.12", "--platform",
                           "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64",
                           "--platform", "manylinux_2_5_x86_64", "--platform",
                           "manylinux1_x86_64", "--platform", "manylinux_2_12_x86_64",
                           "--platform", "manylinux2010_x86_64", "-d", str(wheels),
                           *CUDA13_WHEELS])
    shutil.rmtree(tk, ignore_errors=True)
    tk.mkdir(parents=True)
    for spec in CUDA13_WHEELS:
        name, version = spec.split("==")
        wheel = next(wheels.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                target = tk / info.filename
                zf.extract(info, tk)
                # Wheels keep the executable bit in the high bits of external_attr.
                mode = info.external_attr >> 16
                if mode & 0o111:
                    target.chmod(0o755)
    lib = root / "lib"
    for versioned in lib.glob("lib*.so.*"):
        link = lib / versioned.name.split(".so.")[0]
        link = link.with_name(link.name + ".so")
        if not link.exists():
            link.symlink_to(versioned.name)
    _driver_stub(root)
    (tk / "stamp").write_text(stamp)
    return root


def _driver_stub(root: Path) -> None:
    """``lib/stubs/libcuda.so``: every driver entry point that ``cuda.h`` declares, as an empty
    function, with the real library's soname. ggml-cuda links the driver for its virtual memory
    pool; at run time the driver's own ``libcuda.so.1`` answers. The toolkit's own stub does
    the same; the wheels do not ship one."""
    stubs = root / "lib" / "stubs"
    stubs.mkdir(parents=True, exist_ok=True)
    # Preprocessed, so the versioned names (cuMemAlloc -> cuMemAlloc_v2) are the ones kept.
    header = subprocess.run(["cc", "-E", "-P", "-I", str(root / "include"),
                             str(root / "include" / "cuda.h")],
                            capture_output=True, text=True, check=True).stdout
    names = sorted(set(re.findall(r"\bCUresult\s+(cu[A-Za-z0-9_]+)\s*\(", header)))
    source = stubs / "libcuda_stub.c"
    source.write_text("".join(f"int {n}(void) {{ return 999; }}\n" for n in names))
    subprocess.check_call(["cc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o",
                           str(stubs / "libcuda.so"), str(source)])


def _system_nvcc() -> Path | None:
    found = shutil.which("nvcc")
    if found:
        return Path(found).resolve()
    fallback = Path("/usr/local/cuda/bin/nvcc")
    return fallback if fallback.exists() else None


def build(kind: str, out: Path, python: str, jobs: int, *, cuda_arch: str | None = None,
          toolkit: str | None = None, own_cpu: bool = False, with_server: bool = False) -> Path:
    """Build (or take from the cache) the ``kind`` runtime and put it in ``out/<name>``."""
    version = llama_cpp_python_version(python)
    cached = _cached_build(kind, version, python, jobs, cuda_arch=cuda_arch, toolkit=toolkit,
                           own_cpu=own_cpu, with_server=with_server)
    manifest = json.loads((cached / MANIFEST).read_text())
    target = out / manifest["name"]
    if (target / MANIFEST).exists() and \
            json.loads((target / MANIFEST).read_text()).get("stamp") == manifest["stamp"]:
        return target  # already in place
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(cached, target, symlinks=True)
    return target


def _cached_build(kind: str, version: str, python: str, jobs: int, *,
                  cuda_arch: str | None = None, toolkit: str | None = None,
                  own_cpu: bool = False, with_server: bool = False) -> Path:
    """The cache folder of the ``kind`` runtime for this llama-cpp-python version, built if
    it is missing or was built with other options."""
    headers = None
    if kind == "vulkan":
        _vulkan_tools_present()
        headers = vulkan_headers()
    opts = options_for(kind, headers, cuda_arch=cuda_arch, own_cpu=own_cpu,
                       with_server=with_server)
    name = "cpu-portable" if kind == "cpu" else kind
    # Where nvcc comes from: CUDA 13 from NVIDIA's wheels unless told otherwise; CUDA 12 has no
    # compiler wheel, so the system's.
    tool_opts: list[str] = []
    toolkit_root: Path | None = None
    if kind in MIN_DRIVER:
        toolkit = toolkit or ("wheels" if kind == "cuda13" else "system")
        if toolkit == "wheels":
            if kind != "cuda13":
                sys.exit("Only CUDA 13 has a compiler in NVIDIA's wheels (nvidia-cuda-nvcc-cu12 "
                         "holds no nvcc): build cuda12 with a system CUDA 12 toolkit.")
            toolkit_root = cuda_toolkit_from_wheels(python)
        else:
            nvcc = _system_nvcc()
            if nvcc is None:
                sys.exit(f"No nvcc found for {kind}: install the CUDA toolkit"
                         + (" or use --toolkit wheels." if kind == "cuda13" else "."))
            toolkit_root = nvcc.parent.parent
        tool_opts = [f"-DCMAKE_CUDA_COMPILER={toolkit_root / 'bin' / 'nvcc'}",
                     f"-DCUDAToolkit_ROOT={toolkit_root}"]
    # The CPU modules of a GPU runtime come from the portable CPU build (built first if missing).
    cpu_lib = _cached_build("cpu", version, python, jobs) / "lib" \
        if CPU_FROM_PORTABLE[0] in opts else None
    # (The toolkit joins the key only for CUDA: a CPU or Vulkan build cached before it existed
    # stays valid.)
    stamp_key = json.dumps([FORMAT, version, kind, opts, *([toolkit] if toolkit else [])])
    default = opts == options_for(kind, headers) and toolkit in (None, "wheels" if kind ==
                                                                  "cuda13" else "system")
    variant = "" if default else "-" + hashlib.sha256(stamp_key.encode()).hexdigest()[:8]
    cached = CACHE / f"{version}-{kind}{variant}"
    if (cached / MANIFEST).exists() and \
            json.loads((cached / MANIFEST).read_text()).get("stamp") == stamp_key:
        return cached
    src = source(version, python)
    work = CACHE / f"build-{version}-{kind}{variant}"
    print(f"Building the {name} runtime from llama-cpp-python {version}'s llama.cpp "
          f"(about 10–20 minutes) …", flush=True)
    started = time.monotonic()
    subprocess.check_call(["cmake", "-S", str(src), "-B", str(work), *opts, *tool_opts])
    subprocess.check_call(["cmake", "--build", str(work), "--config", "Release",
                           "-j", str(jobs), "--target", *targets_for(with_server)])
    built_s = round(time.monotonic() - started, 1)
    shutil.rmtree(cached, ignore_errors=True)
    (cached / "lib").mkdir(parents=True)
    _collect(work, cached / "lib")
    if cpu_lib is not None:
        for module in sorted(cpu_lib.glob("*ggml-cpu-*")):
            shutil.copy2(module, cached / "lib" / module.name)
    if toolkit_root is not None:
        _copy_cuda_runtime(toolkit_root, cached / "lib")
    if with_server:
        (cached / "bin").mkdir()
        shutil.copy2(work / "bin" / "llama-server", cached / "bin" / "llama-server")
    manifest = {
        "format": FORMAT,
        "name": name,
        "backend": "cpu" if kind == "cpu" else ("cuda" if kind in MIN_DRIVER else kind),
        "llama_cpp_python": version,
        "llama_cpp_commit": _vendored_commit(src),
        "build_options": opts,
        # Images: a runtime built before libmtmd has no key (the runner itself looks for the
        # file, runner/runtime.mtmd_available).
        "mtmd": _has_mtmd(cached / "lib"),
        "min_driver": MIN_DRIVER.get(kind, ""),
        "cuda_major": int(kind[4:]) if kind in MIN_DRIVER else 0,
        "platform": f"{sys.platform}-{platform.machine()}",
        "built_s": built_s,
        "toolkit": toolkit or "",
        "stamp": stamp_key,
    }
    (cached / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return cached


def _copy_cuda_runtime(toolkit_root: Path, lib: Path) -> None:
    """The CUDA runtime and cuBLAS beside ggml-cuda ($ORIGIN finds them): only the driver is
    left to the system. Debian has no CUDA 12 or 13 cuBLAS package to depend on."""
    folders = [toolkit_root / "lib", toolkit_root / "lib64",
               toolkit_root / "targets" / f"{platform.machine()}-linux" / "lib"]
    for pattern in CUDA_RUNTIME_LIBS:
        found = sorted(p for folder in folders if folder.is_dir() for p in folder.glob(pattern)
                       if not p.is_symlink())
        if not found:
            sys.exit(f"{pattern} is missing from the CUDA toolkit in {toolkit_root}")
        # One real file under its soname (libcublas.so.13): what the loader asks for.
        real = found[0]
        soname = re.match(r"(lib\w+\.so\.\d+)", real.name)
        shutil.copy2(real, lib / (soname.group(1) if soname else real.name))


def _collect(work: Path, lib: Path) -> None:
    """The shared libraries and backend modules of a build, links kept as links."""
    found = 0
    for folder in (work / "bin", work / "src", work / "ggml" / "src"):
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if path.is_dir() or not re.search(r"\.(so(\.[\d.]+)?|dylib|dll)$", path.name):
                continue
            # libmtmd (images, audio) and llama-server's own libraries where they were built.
            if not (path.name.startswith(("libllama", "libggml", "libmtmd", "llama", "ggml",
                                          "mtmd"))):
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
    if not _has_mtmd(lib):
        sys.exit(f"the build in {work} made no libmtmd (images): the runner needs it")


def _has_mtmd(lib: Path) -> bool:
    return any((lib / n).exists() for n in ("libmtmd.so", "libmtmd.dylib", "mtmd.dll"))


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
    parser.add_argument("--cuda-arch", metavar="LIST",
                        help="CUDA architectures to build for, e.g. 90 (default: "
                             + ", ".join(f"{k} {v}" for k, v in CUDA_ARCHS.items()) + ")")
    parser.add_argument("--toolkit", choices=["wheels", "system"],
                        help="where nvcc comes from (default: wheels for cuda13, system for "
                             "cuda12)")
    parser.add_argument("--own-cpu", action="store_true",
                        help="a GPU runtime builds one portable CPU module of its own")
    parser.add_argument("--with-server", action="store_true",
                        help="also build llama.cpp's llama-server in the same tree (bin/)")
    args = parser.parse_args(argv)
    kinds = what_fits() if args.kind == "auto" else [args.kind]
    for kind in kinds:
        path = build(kind, args.out, args.python, args.jobs, cuda_arch=args.cuda_arch,
                     toolkit=args.toolkit, own_cpu=args.own_cpu, with_server=args.with_server)
        print(f"Built the {path.name} runtime in {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
