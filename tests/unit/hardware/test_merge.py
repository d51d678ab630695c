"""Merging `hearth-runner devices` output (recorded from CPU, CUDA and Vulkan builds)."""

from __future__ import annotations

import pytest

from app.hardware import merge_runner_devices
from app.hardware.merge import RunnerDevicesError, compiled_cpu_features, parse_system_info
from tests.fixtures.hardware.make_reports import load_report
from tests.unit.hardware.fakes import fixture_json


def test_cuda_build_drives_both_3090s() -> None:
    report = load_report("2x3090")
    merged = merge_runner_devices(report, fixture_json("runner/cuda_2x3090.json"))
    assert [g.runner_device for g in merged.gpus] == ["CUDA0", "CUDA1"]
    assert merged.gpus[0].runner_free == 24964497408
    assert merged.runner is not None and merged.runner.unused_gpus == []
    # features parsed from system_info when the runner did not list them
    assert merged.runner.features == ["SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2"]
    assert report.gpus[0].runner_device is None  # the input report is left alone


def test_cpu_only_build_on_a_cuda_machine_says_why_the_gpus_are_unused() -> None:
    merged = merge_runner_devices(load_report("rtx4090_24gb"),
                                  fixture_json("runner/cpu_only_build.json"))
    assert merged.gpus[0].runner_device is None
    assert merged.runner is not None
    assert merged.runner.unused_gpus == [
        "NVIDIA GeForce RTX 4090: this runner build has no CUDA support"]
    # Zen 4 has AVX-512 but this build was compiled without it
    assert merged.usable_cpu_features == ["SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2"]


def test_vulkan_build_on_the_laptop_uses_nvidia_and_the_igpu() -> None:
    merged = merge_runner_devices(load_report("rtx3060_laptop"),
                                  fixture_json("runner/vulkan_laptop.json"))
    nvidia, iris = merged.gpus
    assert (nvidia.runner_device, iris.runner_device) == ("Vulkan0", "Vulkan1")
    assert iris.runner_total == 8428105728
    assert len(merged.gpus) == 2


def test_runner_sees_a_gpu_detection_missed() -> None:
    cpu_only = load_report("cpu_only_16gb")  # no vulkaninfo on that machine
    runner = {"devices": [{"name": "Vulkan0", "description": "Intel(R) UHD Graphics 620",
                           "type": "igpu", "free": 8 * 1024**3, "total": 8 * 1024**3}],
              "system_info": ""}
    merged = merge_runner_devices(cpu_only, runner)
    [g] = merged.gpus
    assert (g.vendor, g.backend, g.unified, g.source) == ("intel", "vulkan", True, "runner")
    assert merged.total_memory == merged.memory.total  # shares RAM: not added


def test_not_a_device_list() -> None:
    with pytest.raises(RunnerDevicesError, match="not readable"):
        merge_runner_devices(load_report("2x3090"), {"error": "llama-cpp-python missing"})
    with pytest.raises(RunnerDevicesError):
        merge_runner_devices(load_report("2x3090"), {"devices": [{"nom": 1}]})


def test_parse_system_info_sections() -> None:
    text = fixture_json("runner/cuda_2x3090.json")["system_info"]
    sections = parse_system_info(text)
    assert sections["CUDA"]["ARCHS"] == "500,610,700,750,800,860,890"
    assert compiled_cpu_features(text)[-1] == "BMI2"
    assert "OPENMP" not in compiled_cpu_features(text)
