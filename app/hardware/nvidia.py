"""NVIDIA GPUs through NVML (``import pynvml`` from the nvidia-ml-py package).

NVML ships with the driver, so it works without the CUDA toolkit, and it is the only source that
names the processes holding VRAM. Every NVML failure becomes a reason in the report: no driver,
a driver that was updated but not reloaded, a GPU that falls off the bus between two calls.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from app.hardware.report import GpuInfo, GpuProcess, SourceStatus
from app.i18n import T_

log = logging.getLogger(__name__)

SOURCE = "nvidia"

# NVML return codes (nvml.h); literal so that a fake NVML in tests need not define them.
_ERR_NO_PERMISSION = 4
_ERR_DRIVER_NOT_LOADED = 9
_ERR_LIBRARY_NOT_FOUND = 12
_ERR_FUNCTION_NOT_FOUND = 13
_ERR_GPU_IS_LOST = 15
_ERR_RESET_REQUIRED = 16
_ERR_LIB_RM_VERSION_MISMATCH = 18

_INIT_REASONS = {
    _ERR_LIBRARY_NOT_FOUND: T_("NVML library not found: no NVIDIA driver is installed"),
    _ERR_DRIVER_NOT_LOADED: T_(
        "the NVIDIA driver is installed but not running; restart the computer, and if that does "
        "not help check that the nvidia kernel module loads (Secure Boot can block it)"
    ),
    _ERR_LIB_RM_VERSION_MISMATCH: T_(
        "the NVIDIA driver was updated but the old one is still loaded (NVML/driver version "
        "mismatch); restart the computer"
    ),
    _ERR_NO_PERMISSION: T_("no permission to query the NVIDIA driver (check {path} access)",
                           path="/dev/nvidia*"),
}


def detect_nvidia(nvml: Any = None) -> tuple[list[GpuInfo], list[SourceStatus]]:
    """All NVIDIA GPUs NVML can see. ``nvml`` is the pynvml module (a fake in tests)."""
    if nvml is None:
        try:
            import pynvml

            nvml = pynvml
        except ImportError as exc:
            return [], [SourceStatus(SOURCE, False, T_(
                "the {package} package is missing ({error})", package="nvidia-ml-py",
                error=str(exc)))]
    try:
        nvml.nvmlInit()
    except Exception as exc:
        reason = _INIT_REASONS.get(_code(exc) or 0) or T_("NVML could not start: {error}",
                                                          error=_describe(exc))
        return [], [SourceStatus(SOURCE, False, reason)]
    try:
        return _read_all(nvml)
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:
            log.debug("nvmlShutdown failed", exc_info=True)


def _read_all(nvml: Any) -> tuple[list[GpuInfo], list[SourceStatus]]:
    driver = _optional(nvml, "nvmlSystemGetDriverVersion")
    cuda = _optional(nvml, "nvmlSystemGetCudaDriverVersion")
    cuda_text = cuda_version_text(cuda) if isinstance(cuda, int) else None
    try:
        count = int(nvml.nvmlDeviceGetCount())
    except Exception as exc:
        return [], [SourceStatus(SOURCE, False, T_("NVML cannot count GPUs: {error}",
                                                         error=_describe(exc)))]
    gpus: list[GpuInfo] = []
    problems: list[str] = []
    for i in range(count):
        try:
            gpus.append(_read_device(nvml, i, str(driver) if driver else None, cuda_text))
        except Exception as exc:
            # A GPU that fell off the bus (or was reset) between nvmlDeviceGetCount and now.
            why = _describe(exc)
            if _code(exc) in (_ERR_GPU_IS_LOST, _ERR_RESET_REQUIRED):
                why += "; the GPU may need a reset or a restart of the computer"
            log.warning("NVIDIA GPU %d could not be read: %s", i, why)
            problems.append(f"GPU {i} did not answer ({why})")
    parts = [f"driver {driver}" if driver else "", f"{len(gpus)} GPU{'s' if len(gpus) != 1 else ''}"]
    parts += problems
    present = bool(gpus)
    reason = ", ".join(p for p in parts if p)
    if not gpus and not problems:
        reason = T_("the NVIDIA driver is running but reports no GPU")
    return gpus, [SourceStatus(SOURCE, present, reason)]


def _read_device(nvml: Any, index: int, driver: str | None, cuda: str | None) -> GpuInfo:
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    name = _text(nvml.nvmlDeviceGetName(handle))
    mem = nvml.nvmlDeviceGetMemoryInfo(handle)
    total, free = int(mem.total), int(mem.free)
    uuid = _optional(nvml, "nvmlDeviceGetUUID", handle)
    pci = _optional(nvml, "nvmlDeviceGetPciInfo", handle)
    cc = _optional(nvml, "nvmlDeviceGetCudaComputeCapability", handle)
    return GpuInfo(
        name=name,
        vendor="nvidia",
        backend="cuda",
        index=index,
        total=total,
        free=free,
        # Everything not free is unavailable to us: other apps, the desktop, the driver's reserve.
        used_by_others=max(0, total - free),
        unified=False,
        estimate=False,
        source="nvml",
        uuid=_text(uuid) if uuid is not None else None,
        pci_bus_id=_text(pci.busId) if pci is not None else None,
        compute_capability=f"{cc[0]}.{cc[1]}" if cc is not None else None,
        driver_version=driver,
        cuda_driver_version=cuda,
        processes=_processes(nvml, handle),
    )


def _processes(nvml: Any, handle: Any) -> list[GpuProcess]:
    by_pid: dict[int, int | None] = {}
    for fn in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        for p in _optional(nvml, fn, handle) or []:
            pid = int(p.pid)
            used = getattr(p, "usedGpuMemory", None)  # None on Windows (WDDM) and in some VMs
            used = None if used is None else int(used)
            old = by_pid.get(pid)
            by_pid[pid] = used if old is None else max(old, used or 0)
    procs = [GpuProcess(pid, _process_name(nvml, pid), used) for pid, used in by_pid.items()]
    # Biggest holders first: they are what a user would close to make room.
    procs.sort(key=lambda p: (p.used is None, -(p.used or 0)))
    return procs


def _process_name(nvml: Any, pid: int) -> str:
    name = _optional(nvml, "nvmlSystemGetProcessName", pid)
    if name:
        # NVML gives a path on Linux and sometimes on Windows; the file name is what users know.
        return os.path.basename(_text(name).replace("\\", "/")) or f"pid {pid}"
    try:
        import psutil

        return str(psutil.Process(pid).name())
    except Exception:  # gone, another user's, or in another container
        return f"pid {pid}"


def cuda_version_text(version: int) -> str:
    """NVML's CUDA driver version (12040) as users write it (12.4)."""
    return f"{version // 1000}.{(version % 1000) // 10}"


def _optional(nvml: Any, fn_name: str, *args: Any) -> Any:
    """Call an NVML function whose failure only costs one field (old drivers lack some)."""
    fn = getattr(nvml, fn_name, None)
    if fn is None:
        return None
    try:
        return fn(*args)
    except Exception as exc:
        if _code(exc) in (_ERR_GPU_IS_LOST, _ERR_RESET_REQUIRED):
            raise
        log.debug("%s failed: %s", fn_name, _describe(exc))
        return None


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _code(exc: BaseException) -> int | None:
    value = getattr(exc, "value", None)
    return value if isinstance(value, int) else None


def _describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # pynvml's __str__ calls into the library, which may be the broken part
        text = ""
    code = _code(exc)
    if code is not None and f"{code}" not in text:
        text = f"{text} (NVML error {code})".strip()
    return text or type(exc).__name__
