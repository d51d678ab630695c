"""Whether this machine's NVIDIA driver can run a CUDA runtime, said before llama.cpp tries.

A CUDA runtime whose driver is missing or too old fails inside llama.cpp silently (the CUDA
backend module does not register, and the self-test finds only the CPU) or obscurely ("CUDA
driver version is insufficient for CUDA runtime version"). This reads the driver in plain
Python, at the lowest boundary: whether ``libcuda`` loads, the driver version from
``/proc/driver/nvidia/version`` (Linux) and, where that file cannot be read, the CUDA version
the driver supports from ``cuDriverGetVersion``. Loading libcuda does not initialise CUDA, and
llama.cpp's CUDA backend later gets the same handle.

:func:`read_driver` takes the file and the library name as parameters so tests can fake both;
:func:`driver_problem` is pure.
"""

from __future__ import annotations

import ctypes
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROC_VERSION = Path("/proc/driver/nvidia/version")
LIBCUDA = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"

# The oldest Linux driver for each CUDA major (NVIDIA's CUDA release notes; the same numbers as
# installers/build_runtime.py's MIN_DRIVER). Used only to suggest an older CUDA runtime that
# this driver can run: the runtime's own manifest decides what it needs.
_OLDEST_DRIVER = {12: "525.60.13", 13: "580.65.06"}

_NVRM = re.compile(r"NVRM version:.*?\s(\d+\.\d+(?:\.\d+)?)(?=\s|$)", re.MULTILINE)


@dataclass(frozen=True)
class NvidiaDriver:
    """What this machine's NVIDIA driver says about itself (libcuda loaded)."""

    version: str = ""  # "580.159.04"; "" when the version file cannot be read
    cuda: tuple[int, int] | None = None  # (13, 0): the newest CUDA the driver supports


def parse_proc_version(text: str) -> str:
    """The driver version in ``/proc/driver/nvidia/version``'s text, or ""."""
    m = _NVRM.search(text)
    return m.group(1) if m else ""


def read_driver(proc: Path = PROC_VERSION, library: str = LIBCUDA) -> NvidiaDriver | None:
    """This machine's NVIDIA driver; None when ``library`` cannot be loaded (no driver)."""
    try:
        cuda = ctypes.CDLL(library)
    except OSError:
        return None
    try:
        version = parse_proc_version(proc.read_text("utf-8", errors="replace"))
    except OSError:  # not Linux, or a container that hides the file
        version = ""
    return NvidiaDriver(version, _cuda_version(cuda))


def _cuda_version(cuda: ctypes.CDLL) -> tuple[int, int] | None:
    """cuDriverGetVersion (callable before cuInit): 13000 -> (13, 0); None if it fails."""
    fn = getattr(cuda, "cuDriverGetVersion", None)
    if fn is None:
        return None
    out = ctypes.c_int(0)
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.POINTER(ctypes.c_int)]
    if fn(ctypes.byref(out)) != 0 or out.value <= 0:
        return None
    return out.value // 1000, out.value % 1000 // 10


def version_key(version: str) -> tuple[int, ...]:
    """"580.65.06" -> (580, 65, 6), so versions compare as numbers, not text."""
    return tuple(int(p) for p in re.findall(r"\d+", version))


def driver_problem(runtime: Mapping[str, Any], driver: NvidiaDriver | None,
                   library: str = LIBCUDA) -> str:
    """One sentence saying why ``driver`` cannot run the CUDA ``runtime`` and what to do, or ""
    when it can (or when nothing certain is known: then llama.cpp has its say).

    ``runtime``: the runtime's manifest (``backend``, ``min_driver``, ``cuda_major``).
    """
    if runtime.get("backend") != "cuda":
        return ""
    need = str(runtime.get("min_driver") or "")
    major = int(runtime.get("cuda_major") or 0)
    runtime_name = f"the CUDA {major} runtime" if major else "this CUDA runtime"
    if driver is None:
        newer = f"driver {need.split('.')[0]} or newer" if need else "driver"
        return (f"The NVIDIA driver is not installed ({library} was not found): install "
                f"NVIDIA's {newer}, or use the Vulkan or CPU runtime.")
    if driver.version and need and version_key(driver.version) < version_key(need):
        return (f"This NVIDIA driver is {driver.version}; {runtime_name} needs {need} or "
                f"newer: update the driver, or use {_alternatives(driver, major)}.")
    if not driver.version and driver.cuda and major and driver.cuda[0] < major:
        needs = f"driver {need} or newer" if need else f"a driver for CUDA {major}"
        return (f"This NVIDIA driver supports CUDA {driver.cuda[0]}.{driver.cuda[1]}; "
                f"{runtime_name} needs {needs}: update the driver, or use "
                f"{_alternatives(driver, major)}.")
    return ""


def _alternatives(driver: NvidiaDriver, major: int) -> str:
    """The runtimes this driver can run instead: an older CUDA one where it is new enough."""
    older = [m for m, oldest in sorted(_OLDEST_DRIVER.items(), reverse=True)
             if m < major and _runs(driver, m, oldest)]
    if older:
        m = older[0]
        return f"the CUDA {m} (driver {_OLDEST_DRIVER[m].split('.')[0]}+) or Vulkan runtime"
    return "the Vulkan or CPU runtime"


def _runs(driver: NvidiaDriver, major: int, oldest: str) -> bool:
    if driver.version:
        return version_key(driver.version) >= version_key(oldest)
    return driver.cuda is not None and driver.cuda[0] >= major


def check_runtime(runtime: Mapping[str, Any]) -> str:
    """:func:`driver_problem` for this machine ("" for a runtime that is not CUDA)."""
    if runtime.get("backend") != "cuda":
        return ""  # no libcuda to load on a Vulkan, Metal or CPU runtime's machine
    return driver_problem(runtime, read_driver())
