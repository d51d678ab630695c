"""Apple Silicon: Metal through a fake of pyobjc's Metal module, or the sysctl estimate."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from app.hardware.apple import detect_apple, estimate_working_set
from tests.unit.hardware.fakes import sysctl_from

GiB = 1024**3
MiB = 1024**2
M2PRO_METAL_WORKING_SET = 11453251584  # recommendedMaxWorkingSetSize on an M2 Pro 16 GB


class FakeMetalDevice:
    def __init__(self, name: str, working_set: int, allocated: int = 0, unified: bool = True):
        self._name, self._ws, self._alloc, self._unified = name, working_set, allocated, unified

    def name(self) -> str:
        return self._name

    def hasUnifiedMemory(self) -> bool:
        return self._unified

    def recommendedMaxWorkingSetSize(self) -> int:
        return self._ws

    def currentAllocatedSize(self) -> int:
        return self._alloc


def fake_metal(*devices: FakeMetalDevice) -> Any:
    return SimpleNamespace(MTLCopyAllDevices=lambda: list(devices),
                           MTLCreateSystemDefaultDevice=lambda: devices[0] if devices else None)


def no_pyobjc() -> Any:
    raise ImportError("No module named 'Metal'")


def test_m2_pro_through_metal() -> None:
    metal = fake_metal(FakeMetalDevice("Apple M2 Pro", M2PRO_METAL_WORKING_SET))
    [g], [status] = detect_apple(9_663_676_416, sysctl_from("sysctl/m2pro_16gb.txt"), lambda: metal)
    assert status.present and status.reason == "Metal, 1 GPU"
    assert (g.name, g.vendor, g.backend, g.source) == ("Apple M2 Pro", "apple", "metal", "metal")
    assert g.unified and not g.estimate
    assert g.total == M2PRO_METAL_WORKING_SET
    assert g.free == 9_663_676_416  # other apps' memory is in RAM: free RAM is the limit
    assert g.used_by_others == g.total - g.free


def test_m2_pro_estimate_matches_metals_figure_without_pyobjc() -> None:
    [g], [status] = detect_apple(16 * GiB, sysctl_from("sysctl/m2pro_16gb.txt"), no_pyobjc)
    assert status.present and "estimated" in status.reason and "pyobjc" in status.reason
    assert g.estimate and g.unified and g.source == "sysctl"
    assert g.total == M2PRO_METAL_WORKING_SET
    assert g.name == "Apple M2 Pro"


def test_raised_wired_limit_is_used() -> None:
    [g], _ = detect_apple(60 * GiB, sysctl_from("sysctl/m1max_64gb_wired.txt"), no_pyobjc)
    assert g.total == 57344 * MiB
    assert "iogpu.wired_limit_mb" in g.details["working set"]


def test_intel_mac_without_pyobjc_reports_why() -> None:
    gpus, [status] = detect_apple(16 * GiB, sysctl_from("sysctl/intel_mac_i9.txt"), no_pyobjc)
    assert gpus == [] and not status.present
    assert "Intel Mac" in status.reason


def test_intel_mac_with_a_radeon_through_metal() -> None:
    metal = fake_metal(FakeMetalDevice("AMD Radeon Pro 5500M", 4 * GiB, unified=False),
                       FakeMetalDevice("Intel(R) UHD Graphics 630", 1536 * MiB, unified=True))
    gpus, _ = detect_apple(20 * GiB, sysctl_from("sysctl/intel_mac_i9.txt"), lambda: metal)
    assert [(g.vendor, g.unified) for g in gpus] == [("amd", False), ("intel", True)]


def test_broken_metal_falls_back_to_the_estimate() -> None:
    def broken() -> Any:
        raise RuntimeError("objc.error: bad bridge")

    [g], [status] = detect_apple(16 * GiB, sysctl_from("sysctl/m2pro_16gb.txt"), broken)
    assert g.estimate and "bad bridge" in status.reason


def test_working_set_rule_matches_known_macs() -> None:
    assert estimate_working_set(8 * GiB) == 5726633984  # M1/M2 8 GB
    assert estimate_working_set(16 * GiB) == M2PRO_METAL_WORKING_SET
    # llama.cpp logs recommendedMaxWorkingSetSize in units of 1e6 bytes:
    assert estimate_working_set(32 * GiB) == 22906503168  # "22906.50 MB" on 32 GB Macs
    assert estimate_working_set(36 * GiB) == 28991029248  # "28991.03 MB" on a 36 GB M4 Max: 3/4
    assert estimate_working_set(64 * GiB) == 48 * GiB
    assert estimate_working_set(128 * GiB) == 96 * GiB
