"""Merge what the runner build sees (``hearth-runner devices``) into the machine's report.

The machine may have a GPU the runner cannot use (a CPU-only build, a CUDA build on an AMD card, a
driver the build does not load) and the runner may see a GPU no detector found (an iGPU on a
machine without vulkaninfo). After the merge each GPU names the ggml device that drives it, or the
report says why none does.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from typing import Any, Literal

from app.hardware._names import same_gpu_name
from app.hardware.report import GpuInfo, HardwareReport, RunnerDevice, RunnerInfo
from app.i18n import T_, TextError

log = logging.getLogger(__name__)

# ggml device name prefix -> GpuInfo.backend
_BACKEND_PREFIXES = (
    ("CUDA", "cuda"),
    ("ROCm", "rocm"),
    ("HIP", "rocm"),
    ("Vulkan", "vulkan"),
    ("Metal", "metal"),
    ("MTL", "metal"),
)

# system_info keys that are build options, not CPU instruction sets
_NOT_ISA = {"LLAMAFILE", "OPENMP", "REPACK", "KLEIDIAI", "ACCELERATE", "BLAS", "AARCH64_REPACK"}


class RunnerDevicesError(TextError, ValueError):
    """The runner's device list could not be read (``str()``: an :class:`app.i18n.Text`, the
    plan's ``runner_unknown`` reason shows it)."""


def backend_of(device_name: str) -> str | None:
    for prefix, backend in _BACKEND_PREFIXES:
        if device_name.startswith(prefix):
            return backend
    return None


def parse_system_info(text: str) -> dict[str, dict[str, str]]:
    """``llama_print_system_info()`` as {section: {key: value}}.

    The text looks like ``CUDA : ARCHS = 890 | USE_GRAPHS = 1 | CPU : SSE3 = 1 | AVX = 1 |``.
    """
    sections: dict[str, dict[str, str]] = {}
    current = sections.setdefault("", {})
    for part in text.split("|"):
        part = part.strip()
        if not part:
            continue
        head, sep, rest = part.partition(" : ")
        if sep and "=" not in head:
            current = sections.setdefault(head.strip(), {})
            part = rest
        key, eq, value = part.partition("=")
        if eq:
            current[key.strip()] = value.strip()
    return {k: v for k, v in sections.items() if v or k}


def compiled_cpu_features(system_info: str) -> list[str]:
    """The CPU instruction sets a runner build was compiled for."""
    cpu = parse_system_info(system_info).get("CPU", {})
    return [k for k, v in cpu.items() if v == "1" and k not in _NOT_ISA]


def runner_info_from_json(data: dict[str, Any]) -> RunnerInfo:
    """Read ``hearth-runner devices`` output; raises RunnerDevicesError if it is not that."""
    if not isinstance(data, dict) or not isinstance(data.get("devices"), list):
        raise RunnerDevicesError(
            T_("The runner's device list is not readable (no 'devices' list); the runner build "
               "may be from another Hearth version.")
        )
    try:
        devices = [RunnerDevice.from_json(d) for d in data["devices"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise RunnerDevicesError(T_("The runner's device list is not readable: {error}",
                                    error=str(exc))) from exc
    system_info = str(data.get("system_info", ""))
    features = data.get("cpu_features")
    if not isinstance(features, list):
        features = compiled_cpu_features(system_info)
    return RunnerInfo(devices=devices, features=[str(f) for f in features],
                      system_info=system_info)


def merge_runner_devices(report: HardwareReport, runner_json: dict[str, Any]) -> HardwareReport:
    """A copy of ``report`` that says which GPUs the runner build drives, and with what memory.

    Raises RunnerDevicesError when ``runner_json`` is not the runner's device list.
    """
    return merge_runner_info(report, runner_info_from_json(runner_json))


def merge_runner_info(report: HardwareReport, info: RunnerInfo) -> HardwareReport:
    """:func:`merge_runner_devices` for a device list already read (``info`` becomes the copy's
    ``runner``: pass a fresh one)."""
    merged = copy.deepcopy(report)
    for g in merged.gpus:
        g.runner_device = g.runner_free = g.runner_total = None
    gpus = merged.gpus
    for dev in info.devices:
        if dev.type not in ("gpu", "igpu"):
            continue
        backend = backend_of(dev.name)
        gpu = _match(dev, backend, gpus)
        if gpu is None:
            gpu = _gpu_from_runner(dev, backend, len(gpus))
            log.info("runner device %s (%s) was not detected directly", dev.name, dev.description)
            gpus.append(gpu)
        gpu.runner_device = dev.name
        gpu.runner_free = dev.free
        gpu.runner_total = dev.total
    backends = _runner_backends(info)
    info.unused_gpus = [str(_unused(g, backends)) for g in gpus if g.runner_device is None]
    merged.runner = info
    return merged


@dataclass(frozen=True)
class UnusedGpu:
    """A GPU of the machine that the runner build does not drive, and why (for the planner's
    reasons: ``cause`` "no_support" means the build lacks every backend that could drive it,
    "not_seen" that it has one but does not see this GPU, a driver not loaded, say)."""

    name: str
    backends: tuple[str, ...]  # the backends that could drive it
    cause: Literal["no_support", "not_seen"]

    def __str__(self) -> str:
        if self.cause == "not_seen":
            return f"{self.name}: the runner does not see it (driver not loaded for this build?)"
        wanted = " or ".join(b.upper() for b in self.backends)
        return f"{self.name}: this runner build has no {wanted} support"


def unused_gpus(report: HardwareReport) -> list[UnusedGpu]:
    """The GPUs of a merged report that its runner build does not drive (none before a merge:
    without the runner's word every GPU counts as usable)."""
    if report.runner is None:
        return []
    backends = _runner_backends(report.runner)
    return [_unused(g, backends) for g in report.gpus if g.runner_device is None]


def _runner_backends(info: RunnerInfo) -> set[str]:
    return {b for b in (backend_of(d.name) for d in info.devices) if b is not None}


def _unused(gpu: GpuInfo, runner_backends: set[str]) -> UnusedGpu:
    usable = (gpu.backend, *(b for b in gpu.other_backends if b != gpu.backend))
    cause: Literal["no_support", "not_seen"] = (
        "not_seen" if set(usable) & runner_backends else "no_support")
    return UnusedGpu(gpu.name, tuple(sorted(usable)), cause)


def _match(dev: RunnerDevice, backend: str | None, gpus: list[GpuInfo]) -> GpuInfo | None:
    free = [
        g for g in gpus
        if g.runner_device is None and backend is not None
        and (g.backend == backend or backend in g.other_backends)
    ]
    if not free:
        return None
    for g in free:
        if same_gpu_name(g.name, dev.description):
            return g
    return free[0]


def _gpu_from_runner(dev: RunnerDevice, backend: str | None, index: int) -> GpuInfo:
    desc = dev.description or dev.name
    lowered = desc.lower()
    vendor = "other"
    for word, v in (("nvidia", "nvidia"), ("geforce", "nvidia"), ("radeon", "amd"),
                    ("amd", "amd"), ("intel", "intel"), ("apple", "apple")):
        if word in lowered:
            vendor = v
            break
    return GpuInfo(
        name=desc,
        vendor=vendor,
        backend=backend or "vulkan",
        index=index,
        total=dev.total,
        free=dev.free,
        used_by_others=max(0, dev.total - dev.free),
        unified=dev.type == "igpu",
        estimate=False,
        source="runner",
    )

