"""System RAM and swap.

psutil when it is there; /proc/meminfo otherwise (the Linux fallback keeps a broken psutil install
from costing the whole report).
"""

from __future__ import annotations

import logging
from pathlib import Path

from app.hardware.report import MemoryInfo

log = logging.getLogger(__name__)


class MemoryDetectionError(RuntimeError):
    """Neither psutil nor /proc/meminfo could say how much memory this machine has."""


def detect_memory() -> MemoryInfo:
    """Total, available and swap memory in bytes; raises MemoryDetectionError if unknowable."""
    try:
        import psutil

        vm = psutil.virtual_memory()
        sw = psutil.swap_memory()
        return MemoryInfo(
            total=int(vm.total),
            available=int(vm.available),
            swap_total=int(sw.total),
            swap_free=int(sw.free),
        )
    except Exception as exc:  # ImportError, or psutil failing inside a sandbox
        log.info("psutil cannot read memory (%s); trying /proc/meminfo", exc)
        try:
            return memory_from_meminfo(Path("/proc/meminfo").read_text(encoding="ascii"))
        except (OSError, ValueError) as exc2:
            raise MemoryDetectionError(
                f"The amount of memory could not be read ({exc}; {exc2}). "
                "Reinstalling Hearth restores the psutil library it needs."
            ) from exc2


def memory_from_meminfo(text: str) -> MemoryInfo:
    """Parse /proc/meminfo (values in kB)."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts:
            values[key.strip()] = int(parts[0]) * 1024
    total = values["MemTotal"]
    available = values.get("MemAvailable")
    if available is None:  # kernels before 3.14
        available = values.get("MemFree", 0) + values.get("Buffers", 0) + values.get("Cached", 0)
    return MemoryInfo(
        total=total,
        available=available,
        swap_total=values.get("SwapTotal", 0),
        swap_free=values.get("SwapFree", 0),
    )
