"""`detect_hardware()`: every source, each failing soft, combined into one `HardwareReport`.

GPU sources run in daemon threads under one deadline: a driver call or a tool that hangs costs at
most the deadline and shows up as a reason in the report, never as a frozen app or an exception.
(Daemon threads, not an executor: a thread stuck in a driver must not block interpreter exit.)
"""

from __future__ import annotations

import logging
import os
import platform
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.hardware._names import same_gpu_name
from app.hardware._subprocess import MAX_TIMEOUT, ToolResult, run_tool
from app.hardware.report import (
    CpuInfo,
    GpuInfo,
    HardwareReport,
    MemoryInfo,
    OsInfo,
    SourceStatus,
)
from app.hardware.vulkan import VulkanDevice
from app.i18n import T_

log = logging.getLogger(__name__)

GpuProbe = Callable[[], tuple[list[GpuInfo], list[SourceStatus]]]
VulkanProbe = Callable[[], tuple[list[VulkanDevice], list[SourceStatus]]]

DEFAULT_DEADLINE = MAX_TIMEOUT + 1.0
SOURCE_ORDER = ("cpu", "memory", "nvidia", "amd", "rocm-smi", "apple", "vulkan")


def _default_os() -> OsInfo:
    from app.hardware.osinfo import detect_os

    return detect_os()


def _default_cpu() -> CpuInfo:
    from app.hardware.cpu import detect_cpu

    return detect_cpu()


def _default_memory() -> MemoryInfo:
    from app.hardware.memory import detect_memory

    return detect_memory()


def _default_nvidia() -> tuple[list[GpuInfo], list[SourceStatus]]:
    from app.hardware.nvidia import detect_nvidia

    return detect_nvidia()


def _default_amd() -> tuple[list[GpuInfo], list[SourceStatus]]:
    from app.hardware.amd import detect_amd

    return detect_amd()


def _default_vulkan() -> tuple[list[VulkanDevice], list[SourceStatus]]:
    from app.hardware.vulkan import detect_vulkan

    return detect_vulkan()


def _default_apple(available: int) -> tuple[list[GpuInfo], list[SourceStatus]]:
    from app.hardware.apple import detect_apple

    return detect_apple(available)


@dataclass
class Probes:
    """The sources `detect_hardware` asks; tests replace them with recorded machines.

    A probe set to None is skipped and reported as not present with ``skip_reasons``' reason.
    """

    os: Callable[[], OsInfo] = _default_os
    cpu: Callable[[], CpuInfo] = _default_cpu
    memory: Callable[[], MemoryInfo] = _default_memory
    nvidia: GpuProbe | None = _default_nvidia
    amd: GpuProbe | None = _default_amd
    apple: Callable[[int], tuple[list[GpuInfo], list[SourceStatus]]] | None = _default_apple
    vulkan: VulkanProbe | None = _default_vulkan
    # Runs a tool for the second, heap-reading vulkaninfo call.
    run: Callable[..., ToolResult] = run_tool
    skip_reasons: dict[str, str] = field(default_factory=dict)

    @classmethod
    def for_platform(cls, system: str | None = None) -> Probes:
        """The real probes that make sense on this OS."""
        system = system or platform.system()
        probes = cls()
        if system != "Linux":
            probes.amd = None
            probes.skip_reasons["amd"] = T_("{tool} is Linux only", tool="sysfs")
            probes.skip_reasons["rocm-smi"] = T_("{tool} is Linux only", tool="rocm-smi")
        if system != "Darwin":
            probes.apple = None
            probes.skip_reasons["apple"] = T_("not a Mac")
        else:
            probes.nvidia = None
            probes.skip_reasons["nvidia"] = T_("NVML is not available on macOS")
        return probes


class _Job:
    """A probe running in a daemon thread."""

    def __init__(self, name: str, fn: Callable[[], Any]) -> None:
        self.name = name
        self.result: Any = None
        self.error: BaseException | None = None
        self._fn = fn
        self.thread = threading.Thread(target=self._run, name=f"hardware-{name}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.result = self._fn()
        except BaseException as exc:  # reported as a source failure, never raised
            self.error = exc

    def wait(self, until: float) -> bool:
        self.thread.join(max(0.0, until - time.monotonic()))
        return not self.thread.is_alive()


def detect_hardware(
    probes: Probes | None = None, deadline_s: float = DEFAULT_DEADLINE
) -> HardwareReport:
    """Detect OS, CPU, memory and GPUs. Never raises; takes at most about ``deadline_s``."""
    probes = probes or Probes.for_platform()
    started = time.monotonic()
    until = started + deadline_s
    sources: list[SourceStatus] = []

    memory = _sync("memory", probes.memory, sources, _fallback_memory)
    jobs: dict[str, _Job] = {}
    for name, fn in (("nvidia", probes.nvidia), ("amd", probes.amd), ("vulkan", probes.vulkan)):
        if fn is not None:
            jobs[name] = _Job(name, fn)
    apple = probes.apple
    if apple is not None:
        jobs["apple"] = _Job("apple", lambda: apple(memory.available))
    os_info = _sync("os", probes.os, None, _fallback_os)
    cpu = _sync("cpu", probes.cpu, sources, _fallback_cpu)

    primary: list[GpuInfo] = []
    vulkan_devices: list[VulkanDevice] = []
    for name in ("nvidia", "amd", "apple", "vulkan"):
        job = jobs.get(name)
        if job is None:
            sources.append(SourceStatus(name, False, probes.skip_reasons.get(name) or T_("skipped")))
            if name == "amd" and "rocm-smi" in probes.skip_reasons:
                sources.append(SourceStatus("rocm-smi", False, probes.skip_reasons["rocm-smi"]))
            continue
        if not job.wait(until):
            log.warning("hardware source %s did not answer within %.1f s", name, deadline_s)
            sources.append(
                SourceStatus(name, False, T_("did not answer within {seconds:g} s (driver hung?)",
                                             seconds=deadline_s))
            )
            _note_rocm_smi_not_asked(name, sources)
            continue
        if job.error is not None:
            log.warning("hardware source %s failed", name, exc_info=job.error)
            sources.append(SourceStatus(name, False, T_("failed: {error}",
                                                        error=_describe(job.error))))
            _note_rocm_smi_not_asked(name, sources)
            continue
        found, statuses = job.result
        sources.extend(statuses)
        if name == "vulkan":
            vulkan_devices = list(found)
        else:
            primary.extend(found)

    gpus, unmatched = combine_vulkan(primary, vulkan_devices)
    if unmatched:
        gpus.extend(_vulkan_only_gpus(unmatched, probes, until, sources))
    for g in gpus:
        if g.unified:
            # A share of system RAM: it can never be more than the RAM there is.
            g.total = min(g.total, memory.total) if memory.total else g.total
            g.free = min(g.free, memory.available) if memory.total else g.free
            g.used_by_others = max(0, g.total - g.free)

    order = {name: i for i, name in enumerate(SOURCE_ORDER)}
    sources.sort(key=lambda s: order.get(s.name, len(order)))
    return HardwareReport(
        os=os_info,
        cpu=cpu,
        memory=memory,
        gpus=gpus,
        sources=sources,
        collected_at=time.time(),
        elapsed_s=round(time.monotonic() - started, 3),
    )


def _note_rocm_smi_not_asked(name: str, sources: list[SourceStatus]) -> None:
    # rocm-smi runs inside the AMD probe: when that probe is lost, say so rather than leave the
    # source out of the report (every source the report knows has a line and a reason).
    if name == "amd":
        sources.append(SourceStatus("rocm-smi", False,
                                    T_("not asked: AMD detection did not finish")))


def combine_vulkan(
    primary: list[GpuInfo], devices: list[VulkanDevice]
) -> tuple[list[GpuInfo], list[VulkanDevice]]:
    """Match Vulkan devices to GPUs a better source found; return the GPUs and the leftovers.

    A matched GPU gains "vulkan" in ``other_backends``; software rasterisers (llvmpipe) are
    dropped; what is left is a GPU only Vulkan can see.
    """
    gpus = list(primary)
    taken: set[int] = set()
    unmatched: list[VulkanDevice] = []
    for dev in devices:
        if dev.device_type == "cpu":
            continue
        match = _find_match(dev, gpus, taken)
        if match is None:
            unmatched.append(dev)
            continue
        taken.add(id(match))
        if match.backend != "vulkan" and "vulkan" not in match.other_backends:
            match.other_backends.append("vulkan")
    return gpus, unmatched


def _find_match(dev: VulkanDevice, gpus: list[GpuInfo], taken: set[int]) -> GpuInfo | None:
    same_vendor = [g for g in gpus if g.vendor == dev.vendor and id(g) not in taken]
    if not same_vendor:
        return None
    dev_uuid = _hexdigits(dev.uuid)
    for g in same_vendor:
        if dev_uuid and g.uuid and _hexdigits(g.uuid) == dev_uuid:
            return g
    for g in same_vendor:
        if same_gpu_name(g.name, dev.name):
            return g
    return same_vendor[0]


def _vulkan_only_gpus(
    devices: list[VulkanDevice], probes: Probes, until: float, sources: list[SourceStatus]
) -> list[GpuInfo]:
    from app.hardware.vulkan import read_heaps, to_gpu

    remaining = until - time.monotonic()
    if remaining > 0.2:

        def run(argv: list[str]) -> ToolResult:
            return probes.run(argv, min(MAX_TIMEOUT, remaining))

        try:
            note = read_heaps(devices, run)
        except Exception as exc:
            log.warning("reading Vulkan heaps failed", exc_info=True)
            note = T_("heap sizes unknown ({why})", why=_describe(exc))
    else:
        note = T_("heap sizes unknown (no time left)")
    if note:
        for s in sources:
            if s.name == "vulkan":
                s.reason = T_("{reason}; {note}", reason=s.reason, note=note) if s.reason \
                    else note
    return [to_gpu(d) for d in devices]


def _sync(
    name: str,
    fn: Callable[[], Any],
    sources: list[SourceStatus] | None,
    fallback: Callable[[], Any],
) -> Any:
    try:
        value = fn()
    except Exception as exc:
        log.warning("hardware source %s failed", name, exc_info=True)
        if sources is not None:
            sources.append(SourceStatus(name, False, T_("failed: {error}", error=_describe(exc))))
        return fallback()
    if sources is not None:
        sources.append(SourceStatus(name, True))
    return value


def _fallback_memory() -> MemoryInfo:
    return MemoryInfo(total=0, available=0)


def _fallback_os() -> OsInfo:
    return OsInfo(platform.system() or "unknown", platform.platform(terse=True), platform.release())


def _fallback_cpu() -> CpuInfo:
    n = os.cpu_count() or 1
    return CpuInfo(model=platform.processor() or "unknown CPU", arch=platform.machine(),
                   physical_cores=n, logical_cores=n)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _hexdigits(text: str) -> str:
    return re.sub(r"[^0-9a-f]", "", text.lower().removeprefix("gpu-"))

