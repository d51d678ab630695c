"""Vulkan through recorded vulkaninfo output: an Intel Arc only Vulkan sees, a laptop where Vulkan
sees the NVIDIA card NVML already measured plus an Iris Xe, a machine with no Vulkan driver."""

from __future__ import annotations

from app.hardware._subprocess import ToolResult
from app.hardware.detect import Probes, detect_hardware
from app.hardware.nvidia import detect_nvidia
from app.hardware.report import MemoryInfo
from app.hardware.vulkan import detect_vulkan, parse_heaps, parse_summary
from tests.unit.hardware.fakes import FakeNvml, FakeTools, fixture_text

GiB = 1024**3
SUMMARY = "vulkaninfo --summary"
FULL = "vulkaninfo"


def arc_tools() -> FakeTools:
    return FakeTools({
        SUMMARY: ToolResult(True, fixture_text("vulkan/arc_a770_summary.txt")),
        FULL: ToolResult(True, fixture_text("vulkan/arc_a770_full.txt")),
    })


def laptop_tools() -> FakeTools:
    return FakeTools({
        SUMMARY: ToolResult(True, fixture_text("vulkan/rtx3060_laptop_summary.txt")),
        FULL: ToolResult(True, fixture_text("vulkan/rtx3060_laptop_full.txt")),
    })


def probes(tools: FakeTools, nvml: FakeNvml | None = None, ram: int = 32 * GiB) -> Probes:
    return Probes(
        memory=lambda: MemoryInfo(ram, ram // 2),
        nvidia=(lambda: detect_nvidia(nvml)) if nvml else None,
        amd=None,
        apple=None,
        vulkan=lambda: detect_vulkan(tools),
        run=tools,
    )


def test_parse_summary() -> None:
    arc, cpu = parse_summary(fixture_text("vulkan/arc_a770_summary.txt"))
    assert (arc.index, arc.name, arc.device_type, arc.vendor) == (
        0, "Intel(R) Arc(tm) A770 Graphics (DG2)", "discrete", "intel")
    assert arc.device_id == 0x56A0 and arc.driver_version == "24.0.9"
    assert arc.api_version == "1.3.274"
    assert (cpu.device_type, cpu.vendor) == ("cpu", "other")


def test_parse_heaps_per_gpu() -> None:
    heaps = parse_heaps(fixture_text("vulkan/arc_a770_full.txt"))
    assert sorted(heaps) == [0, 1]
    h0, h1 = heaps[0]
    assert (h0.size, h0.budget, h0.usage, h0.device_local) == (16225665024, 15949385728, 0, True)
    assert (h1.size, h1.device_local) == (33491341312, False)


def test_intel_arc_seen_only_through_vulkan() -> None:
    report = detect_hardware(probes(arc_tools()))
    [g] = report.gpus  # llvmpipe is a software rasteriser, not a GPU
    assert (g.name, g.vendor, g.backend, g.source) == (
        "Intel(R) Arc(tm) A770 Graphics (DG2)", "intel", "vulkan", "vulkan")
    assert g.total == 16225665024
    assert g.free == 15949385728 and not g.estimate
    assert not g.unified
    assert report.source("vulkan").present


def test_laptop_nvidia_is_listed_once_and_the_igpu_shares_ram() -> None:
    tools = laptop_tools()
    report = detect_hardware(probes(tools, FakeNvml("rtx3060_laptop"), ram=16_856_211_456))
    nvidia, iris = report.gpus
    assert nvidia.source == "nvml" and nvidia.other_backends == ["vulkan"]
    assert nvidia.total == 6 * GiB  # NVML's figure, not Vulkan's heap
    assert (iris.name, iris.vendor, iris.unified) == ("Intel(R) Iris(R) Xe Graphics", "intel", True)
    assert iris.total == 8428105728 and iris.free == 7534845952
    assert report.total_memory == report.memory.total + 6 * GiB


def test_heaps_are_not_read_when_every_device_is_already_known() -> None:
    tools = FakeTools({SUMMARY: ToolResult(
        True, fixture_text("vulkan/rtx3060_laptop_summary.txt").split("GPU1:")[0])})
    report = detect_hardware(probes(tools, FakeNvml("rtx3060_laptop")))
    assert len(report.gpus) == 1
    assert tools.calls == [["vulkaninfo", "--summary"]]


def test_no_vulkan_driver() -> None:
    tools = FakeTools({SUMMARY: ToolResult(
        False, "", "vulkaninfo failed: ERROR: [Loader Message] Code 0 : vkCreateInstance: "
        "Found no drivers!", 1)})
    report = detect_hardware(probes(tools))
    assert report.gpus == []
    status = report.source("vulkan")
    assert not status.present and "Found no drivers" in status.reason


def test_heaps_missing_marks_the_numbers_unknown() -> None:
    tools = FakeTools({
        SUMMARY: ToolResult(True, fixture_text("vulkan/arc_a770_summary.txt")),
        FULL: ToolResult(False, reason="vulkaninfo did not answer within 3 s"),
    })
    report = detect_hardware(probes(tools))
    [g] = report.gpus
    assert g.estimate and g.total == 0
    assert "heap sizes unknown" in report.source("vulkan").reason
