"""Vulkan devices from ``vulkaninfo``: the only view of GPUs that NVML, amdgpu and Metal miss
(Intel Arc and Iris, AMD on Windows, Qualcomm Adreno, ...), which llama.cpp's Vulkan backend runs.

``vulkaninfo --summary`` lists the devices; it prints no memory heaps, so when a device needs them
the full ``vulkaninfo`` output is read too (with VK_EXT_memory_budget it also carries each heap's
budget, which already excludes other applications' use).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from app.hardware._subprocess import ToolResult, run_tool
from app.hardware.report import GpuInfo, SourceStatus
from app.i18n import T_

log = logging.getLogger(__name__)

SOURCE = "vulkan"

VENDOR_IDS = {0x10DE: "nvidia", 0x1002: "amd", 0x1022: "amd", 0x8086: "intel", 0x106B: "apple"}

Runner = Callable[[list[str]], ToolResult]


@dataclass
class VulkanHeap:
    size: int
    device_local: bool
    budget: int | None = None
    usage: int | None = None


@dataclass
class VulkanDevice:
    """One ``GPUn:`` block of ``vulkaninfo --summary``."""

    index: int
    name: str
    device_type: str  # discrete, integrated, virtual, cpu, other
    vendor_id: int
    device_id: int = 0
    driver_name: str = ""
    driver_version: str = ""
    driver_info: str = ""
    api_version: str = ""
    uuid: str = ""
    heaps: list[VulkanHeap] = field(default_factory=list)

    @property
    def vendor(self) -> str:
        return VENDOR_IDS.get(self.vendor_id, "other")


_TYPE_WORDS = {
    "DISCRETE_GPU": "discrete",
    "INTEGRATED_GPU": "integrated",
    "VIRTUAL_GPU": "virtual",
    "CPU": "cpu",
}


def parse_summary(text: str) -> list[VulkanDevice]:
    """The devices in ``vulkaninfo --summary`` output."""
    devices: list[VulkanDevice] = []
    for index, body in _gpu_sections(text, summary_only=True):
        fields: dict[str, str] = {}
        for line in body:
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip()] = value.strip()
        if "deviceName" not in fields:
            continue
        raw_type = fields.get("deviceType", "")
        dtype = next((v for k, v in _TYPE_WORDS.items() if raw_type.endswith(k)), "other")
        devices.append(
            VulkanDevice(
                index=index,
                name=fields["deviceName"],
                device_type=dtype,
                vendor_id=_hex(fields.get("vendorID", "0")),
                device_id=_hex(fields.get("deviceID", "0")),
                driver_name=fields.get("driverName", ""),
                driver_version=fields.get("driverVersion", "").split(" ")[0],
                driver_info=fields.get("driverInfo", ""),
                api_version=fields.get("apiVersion", "").split(" ")[0],
                uuid=fields.get("deviceUUID", ""),
            )
        )
    return devices


def parse_heaps(text: str) -> dict[int, list[VulkanHeap]]:
    """Memory heaps per GPU number from the full ``vulkaninfo`` output."""
    result: dict[int, list[VulkanHeap]] = {}
    for index, body in _gpu_sections(text, summary_only=False):
        heaps: list[VulkanHeap] = []
        current: VulkanHeap | None = None
        in_heaps = False
        for line in body:
            stripped = line.strip()
            if stripped.startswith("memoryHeaps:"):
                in_heaps = True
                continue
            if stripped.startswith("memoryTypes:"):
                in_heaps = False
                current = None
                continue
            if not in_heaps:
                continue
            if re.match(r"memoryHeaps\[\d+\]:", stripped):
                current = VulkanHeap(size=0, device_local=False)
                heaps.append(current)
                continue
            if current is None:
                continue
            m = re.match(r"(size|budget|usage)\s*=\s*(\d+)", stripped)
            if m:
                setattr(current, m.group(1), int(m.group(2)))
            elif "MEMORY_HEAP_DEVICE_LOCAL_BIT" in stripped:
                current.device_local = True
        if heaps:
            result[index] = heaps
    return result


def _gpu_sections(text: str, summary_only: bool) -> list[tuple[int, list[str]]]:
    """(n, lines) for each ``GPUn:`` block; blocks end at the next GPU or a top-level title."""
    sections: list[tuple[int, list[str]]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        m = re.fullmatch(r"GPU(\d+):\s*", line)
        if m:
            current = []
            sections.append((int(m.group(1)), current))
            continue
        if current is None:
            continue
        if summary_only and line and not line[0].isspace():
            current = None  # end of the Devices: list
            continue
        current.append(line)
    return sections


def detect_vulkan(run: Runner | None = None) -> tuple[list[VulkanDevice], list[SourceStatus]]:
    """The devices ``vulkaninfo --summary`` lists (without heaps: see `read_heaps`)."""
    run = run or run_tool
    result = run(["vulkaninfo", "--summary"])
    devices = parse_summary(result.stdout)
    if not devices:
        # vulkaninfo exits non-zero when one ICD is broken yet may still list the others, so
        # only an empty list counts as failure.
        reason = result.reason if not result.ok else T_("{tool} lists no device", tool="vulkaninfo")
        return [], [SourceStatus(SOURCE, False, reason)]
    n = len(devices)
    return devices, [SourceStatus(SOURCE, True, f"{n} device{'s' if n != 1 else ''}")]


def read_heaps(devices: list[VulkanDevice], run: Runner | None = None) -> str:
    """Fill ``heaps`` of ``devices`` from the full vulkaninfo output; returns a note on failure.

    Separate from `detect_vulkan` because the full output is slower to produce and only needed
    for devices that no other source measured.
    """
    run = run or run_tool
    full = run(["vulkaninfo"])
    heaps = parse_heaps(full.stdout)
    for d in devices:
        d.heaps = heaps.get(d.index, [])
    if not heaps:
        return T_("heap sizes unknown ({why})", why=full.reason or T_(
            "no heaps in {tool} output", tool="vulkaninfo"))
    return ""


def to_gpu(device: VulkanDevice) -> GpuInfo:
    """A Vulkan device as a report GPU (for devices no better source saw)."""
    integrated = device.device_type == "integrated"
    local = [h for h in device.heaps if h.device_local] or device.heaps
    if integrated:
        # An iGPU's "device local" heap is system RAM; several heaps would count it twice.
        heaps = [max(local, key=lambda h: h.size)] if local else []
    else:
        heaps = local
    total = sum(h.size for h in heaps)
    if heaps and all(h.budget is not None for h in heaps):
        free = sum(max(0, (h.budget or 0) - (h.usage or 0)) for h in heaps)
        estimate = False
    else:
        free = total
        estimate = True  # no VK_EXT_memory_budget: other apps' use is unknown
    free = min(free, total)
    details = {"device type": device.device_type}
    if device.driver_info or device.driver_name:
        details["Vulkan driver"] = device.driver_info or device.driver_name
    if device.api_version:
        details["Vulkan API"] = device.api_version
    if not heaps:
        details["memory"] = "unknown (vulkaninfo printed no heaps)"
    return GpuInfo(
        name=device.name,
        vendor=device.vendor,
        backend="vulkan",
        index=device.index,
        total=total,
        free=free,
        used_by_others=max(0, total - free),
        unified=integrated,
        estimate=estimate,
        source="vulkan",
        uuid=device.uuid or None,
        driver_version=device.driver_version or None,
        details=details,
    )


def _hex(text: str) -> int:
    try:
        return int(text.split()[0], 16)
    except (ValueError, IndexError):
        return 0
