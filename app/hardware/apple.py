"""Apple GPUs through Metal (pyobjc's Metal bindings), with a sysctl estimate when pyobjc is absent.

On Apple Silicon the GPU shares the machine's RAM. What Metal lets one process keep resident is
``recommendedMaxWorkingSetSize`` (llama.cpp's Metal backend reports exactly that as the device's
total). Without pyobjc the number is estimated the way macOS sets it: two thirds of RAM below
36 GiB, three quarters from 36 GiB up (a 36 GB M4 Max reports exactly 27 GiB, a 32 GB Mac 2/3),
unless the user raised ``iogpu.wired_limit_mb``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from app.hardware.cpu import Sysctl, read_sysctl, sysctl_int
from app.hardware.report import GpuInfo, SourceStatus
from app.i18n import T_

log = logging.getLogger(__name__)

SOURCE = "apple"
GiB = 1024**3
_PAGE = 16384  # Apple Silicon page size; Metal's figure is a whole number of pages

MetalLoader = Callable[[], Any]


def estimate_working_set(memsize: int, wired_limit_mb: int | None = None) -> int:
    """Metal's recommended working set for a Mac with ``memsize`` bytes of unified memory."""
    if wired_limit_mb:
        return min(memsize, wired_limit_mb * 1024 * 1024)
    share = memsize * 2 // 3 if memsize < 36 * GiB else memsize * 3 // 4
    return -(-share // _PAGE) * _PAGE


def detect_apple(
    available: int,
    sysctl: Sysctl = read_sysctl,
    load_metal: MetalLoader | None = None,
) -> tuple[list[GpuInfo], list[SourceStatus]]:
    """The Mac's GPUs. ``available`` is free system RAM: unified memory cannot exceed it.

    ``load_metal`` returns pyobjc's ``Metal`` module (raises ImportError without pyobjc); tests
    pass fakes of it and of ``sysctl``.
    """
    load_metal = load_metal or _import_metal
    try:
        metal = load_metal()
    except ImportError as exc:
        log.debug("no pyobjc Metal: %s", exc)
        metal = None
        why_not_metal = T_("{package} is not installed", package="pyobjc-framework-Metal")
    except Exception as exc:  # a broken pyobjc install
        metal = None
        why_not_metal = T_("Metal bindings failed to load: {error}", error=str(exc))
    if metal is not None:
        try:
            gpus = _from_metal(metal, available)
        except Exception as exc:
            log.warning("Metal device query failed: %s", exc)
            why_not_metal = T_("Metal device query failed: {error}", error=str(exc))
        else:
            if gpus:
                n = len(gpus)
                return gpus, [SourceStatus(SOURCE, True, f"Metal, {n} GPU{'s' if n != 1 else ''}")]
            why_not_metal = T_("Metal reports no GPU")
    return _from_sysctl(sysctl, available, why_not_metal)


def _import_metal() -> Any:
    import Metal  # type: ignore[import-not-found,unused-ignore]

    return Metal


def _from_metal(metal: Any, available: int) -> list[GpuInfo]:
    devices = list(metal.MTLCopyAllDevices() or [])
    if not devices:
        default = metal.MTLCreateSystemDefaultDevice()
        devices = [default] if default is not None else []
    gpus: list[GpuInfo] = []
    for i, dev in enumerate(devices):
        unified = bool(dev.hasUnifiedMemory())
        total = int(dev.recommendedMaxWorkingSetSize())
        allocated = int(dev.currentAllocatedSize())
        free = max(0, total - allocated)
        if unified:
            # Other apps' memory is in system RAM, not in Metal's per-process figure.
            free = min(free, available)
        name = str(dev.name())
        vendor = "apple" if name.startswith("Apple") else _vendor_of(name)
        gpus.append(
            GpuInfo(
                name=name,
                vendor=vendor,
                backend="metal",
                index=i,
                total=total,
                free=free,
                used_by_others=max(0, total - free),
                unified=unified,
                estimate=False,
                source="metal",
            )
        )
    return gpus


def _vendor_of(name: str) -> str:
    lowered = name.lower()
    if "amd" in lowered or "radeon" in lowered:
        return "amd"
    if "intel" in lowered:
        return "intel"
    if "nvidia" in lowered:
        return "nvidia"
    return "other"


def _from_sysctl(
    sysctl: Sysctl, available: int, why_not_metal: str
) -> tuple[list[GpuInfo], list[SourceStatus]]:
    arm = sysctl_int(sysctl, "hw.optional.arm64") == 1
    memsize = sysctl_int(sysctl, "hw.memsize")
    if not arm:
        return [], [SourceStatus(SOURCE, False, T_("Intel Mac and {why}", why=why_not_metal))]
    if not memsize:
        return [], [SourceStatus(SOURCE, False, T_("{why}; {key} unreadable",
                                                       why=why_not_metal, key="sysctl hw.memsize"))]
    wired = sysctl_int(sysctl, "iogpu.wired_limit_mb")
    total = estimate_working_set(memsize, wired)
    free = min(total, available)
    name = (sysctl("machdep.cpu.brand_string") or "Apple Silicon").strip()
    gpu = GpuInfo(
        name=name,
        vendor="apple",
        backend="metal",
        index=0,
        total=total,
        free=free,
        used_by_others=max(0, total - free),
        unified=True,
        estimate=True,
        source="sysctl",
        details={
            "unified memory": f"{memsize / GiB:.1f} GiB",
            "working set": "raised by iogpu.wired_limit_mb" if wired else "estimated",
        },
    )
    return [gpu], [SourceStatus(SOURCE, True, T_("estimated from sysctl ({why})", why=why_not_metal))]
