"""NVIDIA through NVML, with the pynvml functions answering values recorded from real machines."""

from __future__ import annotations

import sys

import pynvml
import pytest

from app.hardware.detect import Probes, detect_hardware
from app.hardware.nvidia import cuda_version_text, detect_nvidia
from app.i18n import Text
from tests.unit.hardware.fakes import FakeNvml

GiB = 1024**3


def test_rtx_4090() -> None:
    nvml = FakeNvml("rtx4090")
    gpus, [status] = detect_nvidia(nvml)
    assert status.present and status.name == "nvidia"
    assert status.reason == "driver 550.120, 1 GPU"
    [g] = gpus
    assert g.name == "NVIDIA GeForce RTX 4090"
    assert (g.vendor, g.backend, g.index, g.source) == ("nvidia", "cuda", 0, "nvml")
    assert g.total == 25757220864 and g.free == 24823398400
    assert g.used_by_others == g.total - g.free
    assert not g.unified and not g.estimate
    assert g.uuid == "GPU-8f9d31c5-2b64-7a0e-95d1-3c8e1f6a4b27"
    assert g.pci_bus_id == "00000000:01:00.0"
    assert g.compute_capability == "8.9"
    assert (g.driver_version, g.cuda_driver_version) == ("550.120", "12.4")
    assert [(p.pid, p.name, p.used) for p in g.processes] == [
        (2214, "Xorg", 612368384), (3390, "gnome-shell", 131072000)]
    assert nvml.shutdowns == 1  # NVML is released after reading


def test_two_3090s_and_a_process_listed_as_both_compute_and_graphics() -> None:
    gpus, [status] = detect_nvidia(FakeNvml("2x3090"))
    assert status.reason == "driver 535.183.01, 2 GPUs"
    assert [g.index for g in gpus] == [0, 1]
    assert len({g.uuid for g in gpus}) == 2
    assert [p.pid for p in gpus[0].processes] == [1843, 2977]  # firefox once, not twice
    assert gpus[1].processes == []
    assert all(g.total == 24 * GiB for g in gpus)
    assert gpus[0].cuda_driver_version == "12.2"


def test_laptop_on_windows_lists_processes_without_sizes() -> None:
    [g], _ = detect_nvidia(FakeNvml("rtx3060_laptop"))
    assert g.name == "NVIDIA GeForce RTX 3060 Laptop GPU"
    assert g.total == 6 * GiB
    assert [(p.name, p.used) for p in g.processes] == [("msedge.exe", None), ("Discord.exe", None)]


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH, "restart the computer"),
        (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, "no NVIDIA driver is installed"),
        (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, "not running"),
        (pynvml.NVML_ERROR_NO_PERMISSION, "permission"),
        (pynvml.NVML_ERROR_UNKNOWN, "NVML could not start"),
    ],
)
def test_nvml_init_failures_become_reasons(code: int, words: str) -> None:
    nvml = FakeNvml("rtx4090", init_error=code)
    gpus, [status] = detect_nvidia(nvml)
    assert gpus == []
    assert not status.present
    assert words in status.reason
    assert isinstance(status.reason, Text)  # translated on the Hardware page


def test_a_gpu_lost_after_being_counted_is_skipped_with_a_reason() -> None:
    nvml = FakeNvml("2x3090", lost={1: pynvml.NVML_ERROR_GPU_IS_LOST})
    gpus, [status] = detect_nvidia(nvml)
    assert [g.uuid for g in gpus] == ["GPU-3b1c7e0a-9d4f-5e62-a1b8-0c7d2f9e6a15"]
    assert status.present
    assert "GPU 1 did not answer" in status.reason and "reset" in status.reason


def test_a_gpu_that_disappears_between_two_reports() -> None:
    nvml = FakeNvml("2x3090")
    probes = Probes(nvidia=lambda: detect_nvidia(nvml), amd=None, apple=None, vulkan=None)
    first = detect_hardware(probes)
    assert len(first.gpus) == 2
    nvml.rec["devices"].pop()  # the second card fell off the bus: NVML no longer counts it
    second = detect_hardware(probes)
    assert [g.name for g in second.gpus] == ["NVIDIA GeForce RTX 3090"]
    assert second.source("nvidia").reason == "driver 535.183.01, 1 GPU"


def test_missing_pynvml_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    gpus, [status] = detect_nvidia()
    assert gpus == [] and not status.present
    assert "nvidia-ml-py" in status.reason


def test_real_nvml_on_this_machine_fails_soft() -> None:
    gpus, [status] = detect_nvidia()
    assert status.present == bool(gpus)
    if not gpus:
        assert status.reason


def test_cuda_version_text() -> None:
    assert cuda_version_text(12040) == "12.4"
    assert cuda_version_text(11080) == "11.8"
    assert cuda_version_text(13000) == "13.0"


def test_h100_as_the_gpu_check_recorded_it() -> None:
    # tests/gpu/check.py wrote this recording on the lent machine (a Firecracker VM).
    gpus, [status] = detect_nvidia(FakeNvml("h100"))
    assert status.reason == "driver 580.159.04, 1 GPU"
    [g] = gpus
    assert g.name == "NVIDIA H100 80GB HBM3" and g.compute_capability == "9.0"
    assert (g.driver_version, g.cuda_driver_version) == ("580.159.04", "13.0")
    assert g.total == 85520809984 and g.free == 85017493504
    assert g.used_by_others == 503316480 and g.processes == []
