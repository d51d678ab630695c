"""Turn a hardware report into the memory pools a plan fills, with their reserves.

A report merged with the runner build's devices (``report.runner`` set) is planned for the GPUs
that build drives, not for every GPU the machine has: a CPU-only build on a PC with two RTX 3090s
plans for the CPU alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from app.hardware.merge import UnusedGpu, unused_gpus
from app.planner.types import Device, GiB, WorkerDevice

if TYPE_CHECKING:
    from app.hardware import HardwareReport
    from app.hardware.report import GpuInfo

# One runner build drives one backend; prefer the one that is fastest where several see a GPU.
_BACKEND_RANK = {"cuda": 0, "rocm": 1, "metal": 2, "vulkan": 3}
_LLAMA_PREFIX = {"cuda": "CUDA", "rocm": "ROCm", "vulkan": "Vulkan"}
RAM_HEADROOM_MIN = 2 * GiB
RAM_HEADROOM_FRACTION = 0.10


def ram_headroom(total: int) -> int:
    """RAM left to the system and other apps: max(2 GiB, 10 %)."""
    return max(RAM_HEADROOM_MIN, int(total * RAM_HEADROOM_FRACTION))


def llama_device_name(gpu: GpuInfo) -> str:
    """The ggml device name the runner will see (CUDA0, ROCm0, Vulkan0, Metal)."""
    if gpu.runner_device:
        return gpu.runner_device
    if gpu.backend == "metal":
        return "Metal"
    return f"{_LLAMA_PREFIX.get(gpu.backend, gpu.backend)}{gpu.index}"


def choose_gpus(hardware: HardwareReport) -> list[GpuInfo]:
    """The GPUs one runner build will use: those of the best backend on this machine.

    With the runner's own device list merged in, only the GPUs it drives (a ``runner_device``)
    count. An integrated GPU next to a discrete one is left out: it shares system RAM and is
    slower than the CPU path it would replace.
    """
    gpus = [g for g in hardware.gpus if g.total > 0 and g.backend in _BACKEND_RANK]
    if hardware.runner is not None:
        gpus = [g for g in gpus if g.runner_device]
    discrete = [g for g in gpus if not g.unified]
    pool = discrete or gpus
    if not pool:
        return []
    best = min(_BACKEND_RANK[g.backend] for g in pool)
    chosen = [g for g in pool if _BACKEND_RANK[g.backend] == best]
    return sorted(chosen, key=lambda g: g.index)


def left_out_gpus(hardware: HardwareReport) -> list[UnusedGpu]:
    """The machine's GPUs its runner build cannot drive (empty without the runner's word)."""
    return unused_gpus(hardware)


def worker_devices(workers: Sequence[WorkerDevice]) -> list[Device]:
    """The devices RPC workers lend, as llama.cpp orders them: before this computer's GPUs, in
    the order the workers are given, named RPC0, RPC1, … across all of them.

    What a worker reports as free is all it can give; we do not know whether it is a GPU or a
    CPU's RAM, so it keeps the larger of the GPU margin and the RAM headroom.
    """
    return [Device(
        name=f"device {w.index} of {w.endpoint}", kind="gpu", backend="rpc", index=k,
        total=w.total, free=w.free, used_by_others=max(0, w.total - w.free),
        reserve=max(RAM_HEADROOM_MIN, ram_headroom(w.total)), llama_name=f"RPC{k}",
        worker=w.endpoint,
    ) for k, w in enumerate(workers)]


def budgeted(total: int, free: int, used_by_others: int, budget: int | None) -> tuple[int, int]:
    """(total, free) of a card planned as if it had ``budget`` bytes (None: as it is).

    The smaller card keeps the memory other programs use on the real one, so a busy desktop
    GPU stays as tight under a budget as it would be in a card of that size.
    """
    if budget is None:
        return total, free
    small = min(total, budget)
    return small, max(0, min(free, small - used_by_others))


def devices_for(hardware: HardwareReport, margin: int, cpu_only: bool = False,
                workers: Sequence[WorkerDevice] = (),
                gpu_budget: int | None = None) -> list[Device]:
    """Workers' devices first, then this computer's GPUs (device order), then its RAM.

    ``gpu_budget``: plan each of this computer's GPUs as a card of that many bytes
    (:func:`budgeted`; ``Wishes.gpu_budget``); workers' devices are not shrunk.
    """
    out: list[Device] = [] if cpu_only else worker_devices(workers)
    if not cpu_only:
        for g in choose_gpus(hardware):
            total, free = budgeted(g.total, g.free, g.used_by_others, gpu_budget)
            out.append(Device(
                name=g.name, kind="gpu", backend=g.backend, index=g.index, total=total,
                free=free, used_by_others=g.used_by_others, reserve=margin, unified=g.unified,
                llama_name=llama_device_name(g),
            ))
    mem = hardware.memory
    out.append(Device(
        name=hardware.cpu.model or "CPU", kind="cpu", backend="cpu", index=0, total=mem.total,
        free=mem.available, used_by_others=max(0, mem.total - mem.available),
        reserve=ram_headroom(mem.total), llama_name="CPU",
    ))
    return out


def thread_count(hardware: HardwareReport) -> int:
    """Physical performance cores: decode is memory-bound, and E-cores and hyper-threads make
    every thread wait for the slowest one."""
    cpu = hardware.cpu
    return max(1, cpu.performance_cores or cpu.physical_cores or cpu.logical_cores or 1)
