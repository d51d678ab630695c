"""The llama.cpp libraries this runner process serves with: its runtime, chosen once per process.

A runtime is a folder made by ``installers/build_runtime.py``::

    <folder>/manifest.json   {"name", "backend", "llama_cpp_python", "build_options", ...}
    <folder>/lib/            libllama, libggml*, the backend and CPU-variant modules

``hearth-runner --runtime <folder> <command>`` serves (probes, lists devices, self-tests) with
that build; without it the runner uses llama-cpp-python's own libraries (the "built-in"
runtime). llama_cpp reads ``LLAMA_CPP_LIB_PATH`` once, when it is first imported, so the choice
must be made before anything imports it: :func:`use` refuses once it has been.

Runtimes are ``GGML_BACKEND_DL`` builds: libggml registers no backend by itself, and
``llama_backend_init`` only looks next to the executable and in the working directory.
:func:`llama` therefore asks ggml to load every backend module in the runtime's folder, which
also picks the best CPU variant for this processor. Every ggml call goes through libllama's
own handle: opening ``libggml.so`` by path would load a second ggml with its own, empty, backend
registry (the wheel ships copies, not links).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

MANIFEST = "manifest.json"
CPU_DEVICE = 0  # enum ggml_backend_dev_type

_lock = threading.Lock()
_chosen: dict[str, Any] | None = None  # the manifest of the runtime in use; None: built-in
_backends_loaded = False


class RuntimeUnusable(RuntimeError):
    """A runtime folder that cannot be used; the message says what to do."""


def read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of the runtime in ``folder``; raises RuntimeUnusable if it is not one."""
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise RuntimeUnusable(f"{folder} is not a runtime: it has no {MANIFEST}. Build one with "
                            "installers/build_runtime.py.") from None
    except (OSError, ValueError) as exc:
        raise RuntimeUnusable(f"{path} cannot be read ({exc}); build the runtime again.") from None
    if not isinstance(data, dict):
        raise RuntimeUnusable(f"{path} is not a runtime manifest; build the runtime again.")
    lib = folder / "lib"
    if not any((lib / n).exists() for n in ("libllama.so", "libllama.dylib", "llama.dll")):
        raise RuntimeUnusable(f"the runtime in {folder} has no llama library in {lib}; build it "
                            "again.")
    return data


def use(folder: str | Path) -> dict[str, Any]:
    """Serve with the runtime in ``folder`` from now on (before llama_cpp is imported)."""
    global _chosen
    path = Path(folder).expanduser().resolve()
    manifest = read_manifest(path)
    built_for = str(manifest.get("llama_cpp_python", ""))
    ours = _bindings_version()
    if built_for and ours and built_for != ours:
        # The bindings declare llama.cpp's structs by hand: another version's libraries would
        # be called with the wrong layouts and crash, not fail.
        raise RuntimeUnusable(f"the runtime in {path} was built for llama-cpp-python "
                              f"{built_for}, and this runner has {ours}: build it again with "
                              "installers/build_runtime.py.")
    with _lock:
        if "llama_cpp.llama_cpp" in sys.modules:
            loaded = getattr(sys.modules["llama_cpp.llama_cpp"], "_base_path", None)
            if loaded is None or Path(loaded).resolve() != path / "lib":
                raise RuntimeUnusable("llama.cpp is already loaded from another folder; the "
                                    "runtime must be chosen first.")
        lib = str(path / "lib")
        os.environ["LLAMA_CPP_LIB_PATH"] = lib
        os.environ["MTMD_CPP_LIB"] = lib
        if sys.platform == "win32":
            os.add_dll_directory(lib)
        _chosen = {**manifest, "path": str(path)}
    return _chosen


def _bindings_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        return ""


def chosen() -> dict[str, Any]:
    """What this process serves with, for ``devices``, ``selftest`` and ``/runner/status``."""
    if _chosen is None:
        return {"name": "built-in", "backend": "", "path": ""}
    return {k: _chosen[k] for k in ("name", "backend", "llama_cpp_python", "path", "min_driver",
                                    "cuda_major") if k in _chosen}


def llama() -> ModuleType:
    """llama_cpp, imported from the chosen runtime, with its backends loaded (once)."""
    global _backends_loaded
    import llama_cpp

    with _lock:
        if not _backends_loaded:
            _load_backends(llama_cpp)
            _backends_loaded = True
    return llama_cpp


def lib() -> ctypes.CDLL:
    """libllama's handle: its symbol lookups reach the ggml that llama really uses."""
    handle: ctypes.CDLL = llama().llama_cpp._lib
    return handle


def _fn(handle: ctypes.CDLL, name: str, restype: Any, argtypes: list[Any]) -> Any:
    fn = getattr(handle, name)
    fn.restype = restype
    fn.argtypes = argtypes
    return fn


def _load_backends(llama_cpp: ModuleType) -> None:
    handle = llama_cpp.llama_cpp._lib
    reg_count = _fn(handle, "ggml_backend_reg_count", ctypes.c_size_t, [])
    if reg_count() > 0:
        return  # a build with its backends linked in (the built-in wheel)
    load_all = getattr(handle, "ggml_backend_load_all_from_path", None)
    folder = os.environ.get("LLAMA_CPP_LIB_PATH") or str(
        Path(str(llama_cpp.__file__)).parent / "lib")
    if load_all is not None:
        load_all.restype = None
        load_all.argtypes = [ctypes.c_char_p]
        load_all(folder.encode())
    if reg_count() == 0:
        raise RuntimeUnusable(f"no llama.cpp backend could be loaded from {folder}: the runtime is "
                            "incomplete or was built for another processor; build it again.")


def cpu_buffer_type() -> int:
    """The CPU's buffer type, found through the device registry (the CPU may be a module)."""
    handle = lib()
    dev = _fn(handle, "ggml_backend_dev_by_type", ctypes.c_void_p, [ctypes.c_int])(CPU_DEVICE)
    if not dev:
        raise RuntimeUnusable("this runtime has no CPU device")
    buft = _fn(handle, "ggml_backend_dev_buffer_type", ctypes.c_void_p, [ctypes.c_void_p])(dev)
    return int(buft)


def cpu_variant() -> str:
    """Which CPU module ggml loaded (``x64``, ``haswell``, ``skylakex``, …), or "" if built in.

    Read from the process's own memory map, so it names the file that really runs.
    """
    names: set[str] = set()
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                m = re.search(r"libggml-cpu-([\w.-]+?)\.so", line)
                if m:
                    names.add(m.group(1))
    except OSError:
        return ""
    return ",".join(sorted(names))
