"""Hardware detection: what this machine has, as plain dataclasses (no Qt).

`detect_hardware()` is the one call; `merge_runner_devices()` adds what a runner build can use.
"""

from app.hardware.detect import Probes, detect_hardware
from app.hardware.merge import merge_runner_devices
from app.hardware.report import (
    CpuInfo,
    GpuInfo,
    GpuProcess,
    HardwareReport,
    MemoryInfo,
    OsInfo,
    ReportFormatError,
    RunnerDevice,
    RunnerInfo,
    SourceStatus,
)

__all__ = [
    "CpuInfo",
    "GpuInfo",
    "GpuProcess",
    "HardwareReport",
    "MemoryInfo",
    "OsInfo",
    "Probes",
    "ReportFormatError",
    "RunnerDevice",
    "RunnerInfo",
    "SourceStatus",
    "detect_hardware",
    "merge_runner_devices",
]
