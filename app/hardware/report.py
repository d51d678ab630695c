"""The hardware report: plain dataclasses that round-trip through JSON.

Everything the planner and the UI know about the machine is in one `HardwareReport`. Sizes are
bytes (ints). `from_json` ignores keys it does not know and fills defaults for keys that are
missing, so a report cached by another version of Hearth still loads.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA_VERSION = 1

# GpuInfo.vendor values
VENDORS = ("nvidia", "amd", "apple", "intel", "other")
# GpuInfo.backend values: the llama.cpp backend that best drives the GPU
BACKENDS = ("cuda", "rocm", "metal", "vulkan")


class ReportFormatError(ValueError):
    """A stored hardware report could not be read; detecting the hardware again replaces it."""


@dataclass
class SourceStatus:
    """One place detection looked (NVML, sysfs, a tool, ...) and what it found there."""

    name: str
    present: bool
    reason: str = ""

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SourceStatus:
        return cls(name=str(d["name"]), present=bool(d["present"]), reason=str(d.get("reason", "")))


@dataclass
class OsInfo:
    """`name`: Linux, macOS or Windows; `version`: what a user recognises; `kernel`: uname."""

    name: str
    version: str
    kernel: str = ""

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> OsInfo:
        return cls(name=str(d["name"]), version=str(d["version"]), kernel=str(d.get("kernel", "")))


@dataclass
class CpuInfo:
    """The CPU. `features` use llama.cpp's names (AVX2, AVX512_VNNI, NEON, DOTPROD, ...).

    `performance_cores` is the number of physical performance cores on hybrid CPUs (Intel P/E,
    Apple P/E) and None where all cores are alike or the OS does not say.
    """

    model: str
    arch: str
    physical_cores: int
    logical_cores: int
    performance_cores: int | None = None
    features: list[str] = field(default_factory=list)
    vendor: str = ""

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CpuInfo:
        perf = d.get("performance_cores")
        return cls(
            model=str(d["model"]),
            arch=str(d["arch"]),
            physical_cores=int(d["physical_cores"]),
            logical_cores=int(d["logical_cores"]),
            performance_cores=None if perf is None else int(perf),
            features=[str(f) for f in d.get("features", [])],
            vendor=str(d.get("vendor", "")),
        )


@dataclass
class MemoryInfo:
    """System RAM and swap, in bytes."""

    total: int
    available: int
    swap_total: int = 0
    swap_free: int = 0

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MemoryInfo:
        return cls(
            total=int(d["total"]),
            available=int(d["available"]),
            swap_total=int(d.get("swap_total", 0)),
            swap_free=int(d.get("swap_free", 0)),
        )


@dataclass
class GpuProcess:
    """A process holding memory on a GPU; `used` is None where the driver does not say."""

    pid: int
    name: str
    used: int | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GpuProcess:
        used = d.get("used")
        return cls(pid=int(d["pid"]), name=str(d["name"]), used=None if used is None else int(used))


@dataclass
class GpuInfo:
    """One physical GPU, listed once even when several sources see it.

    `total`/`free`/`used_by_others` are what this GPU offers a model: for a discrete card its VRAM;
    for an integrated GPU or Apple Silicon (`unified`) a share of system RAM, which must never be
    added on top of `MemoryInfo.total`. `estimate` marks numbers that were computed rather than
    read from the driver. `index` is the position within its source (NVML index, card number,
    Vulkan device number), which is what the backend's own device numbering follows.
    """

    name: str
    vendor: str
    backend: str
    index: int
    total: int
    free: int
    used_by_others: int
    unified: bool = False
    estimate: bool = False
    source: str = ""
    uuid: str | None = None
    pci_bus_id: str | None = None
    compute_capability: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    processes: list[GpuProcess] = field(default_factory=list)
    # Other llama.cpp backends that can drive the same GPU (an NVIDIA card under Vulkan, say).
    other_backends: list[str] = field(default_factory=list)
    # Display-only extras (GFX target, Vulkan driver, VRAM/GTT split, ...).
    details: dict[str, str] = field(default_factory=dict)
    # Filled by merge_runner_devices: the ggml device of the runner build that drives this GPU.
    runner_device: str | None = None
    runner_free: int | None = None
    runner_total: int | None = None

    @property
    def used(self) -> int:
        return max(0, self.total - self.free)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GpuInfo:
        def opt_str(key: str) -> str | None:
            v = d.get(key)
            return None if v is None else str(v)

        def opt_int(key: str) -> int | None:
            v = d.get(key)
            return None if v is None else int(v)

        return cls(
            name=str(d["name"]),
            vendor=str(d.get("vendor", "other")),
            backend=str(d.get("backend", "vulkan")),
            index=int(d.get("index", 0)),
            total=int(d["total"]),
            free=int(d["free"]),
            used_by_others=int(d.get("used_by_others", 0)),
            unified=bool(d.get("unified", False)),
            estimate=bool(d.get("estimate", False)),
            source=str(d.get("source", "")),
            uuid=opt_str("uuid"),
            pci_bus_id=opt_str("pci_bus_id"),
            compute_capability=opt_str("compute_capability"),
            driver_version=opt_str("driver_version"),
            cuda_driver_version=opt_str("cuda_driver_version"),
            processes=[GpuProcess.from_json(p) for p in d.get("processes", [])],
            other_backends=[str(b) for b in d.get("other_backends", [])],
            details={str(k): str(v) for k, v in d.get("details", {}).items()},
            runner_device=opt_str("runner_device"),
            runner_free=opt_int("runner_free"),
            runner_total=opt_int("runner_total"),
        )


@dataclass
class RunnerDevice:
    """A ggml backend device as the runner build sees it (`type`: cpu, gpu, igpu or accel)."""

    name: str
    description: str
    type: str
    free: int
    total: int

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RunnerDevice:
        return cls(
            name=str(d["name"]),
            description=str(d.get("description", "")),
            type=str(d.get("type", "")),
            free=int(d.get("free", 0)),
            total=int(d.get("total", 0)),
        )


@dataclass
class RunnerInfo:
    """What the runner build can use: its devices and its compiled CPU features."""

    devices: list[RunnerDevice] = field(default_factory=list)
    features: list[str] = field(default_factory=list)
    system_info: str = ""
    # Machine GPUs that no runner device drives (wrong build, driver missing), as "name: why".
    unused_gpus: list[str] = field(default_factory=list)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RunnerInfo:
        return cls(
            devices=[RunnerDevice.from_json(x) for x in d.get("devices", [])],
            features=[str(f) for f in d.get("features", [])],
            system_info=str(d.get("system_info", "")),
            unused_gpus=[str(x) for x in d.get("unused_gpus", [])],
        )


@dataclass
class HardwareReport:
    """What the machine has (and, once merged, what the runner build can use of it)."""

    os: OsInfo
    cpu: CpuInfo
    memory: MemoryInfo
    gpus: list[GpuInfo] = field(default_factory=list)
    sources: list[SourceStatus] = field(default_factory=list)
    runner: RunnerInfo | None = None
    collected_at: float = 0.0  # unix time
    elapsed_s: float = 0.0  # how long detection took
    schema: int = SCHEMA_VERSION

    # -- derived views -------------------------------------------------------------------------

    @property
    def discrete_gpus(self) -> list[GpuInfo]:
        """GPUs with memory of their own (not a share of system RAM)."""
        return [g for g in self.gpus if not g.unified]

    @property
    def dedicated_gpu_memory(self) -> int:
        """Total VRAM of discrete GPUs; unified memory is RAM and is not counted again."""
        return sum(g.total for g in self.discrete_gpus)

    @property
    def total_memory(self) -> int:
        """System RAM plus discrete VRAM: everything a model could be spread over."""
        return self.memory.total + self.dedicated_gpu_memory

    @property
    def usable_cpu_features(self) -> list[str]:
        """CPU features the runner build was compiled for *and* this CPU has.

        Without runner information, the CPU's own features.
        """
        if self.runner is None or not self.runner.features:
            return list(self.cpu.features)
        compiled = set(self.runner.features)
        return [f for f in self.cpu.features if f in compiled]

    def source(self, name: str) -> SourceStatus | None:
        return next((s for s in self.sources if s.name == name), None)

    # -- JSON ----------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> HardwareReport:
        """Build a report from `to_json` output; raises ReportFormatError when it is not one."""
        try:
            runner = d.get("runner")
            return cls(
                os=OsInfo.from_json(d["os"]),
                cpu=CpuInfo.from_json(d["cpu"]),
                memory=MemoryInfo.from_json(d["memory"]),
                gpus=[GpuInfo.from_json(g) for g in d.get("gpus", [])],
                sources=[SourceStatus.from_json(s) for s in d.get("sources", [])],
                runner=None if runner is None else RunnerInfo.from_json(runner),
                collected_at=float(d.get("collected_at", 0.0)),
                elapsed_s=float(d.get("elapsed_s", 0.0)),
                schema=int(d.get("schema", SCHEMA_VERSION)),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ReportFormatError(
                f"The stored hardware report is not readable ({type(exc).__name__}: {exc}); "
                "detect the hardware again to replace it."
            ) from exc
