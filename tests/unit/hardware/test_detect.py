"""detect_hardware: the real machine, failing sources, hung sources, and recorded machines
rebuilt through the detectors (which also proves the recorded report files are honest)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.hardware import HardwareReport, detect_hardware
from app.hardware._subprocess import ToolResult, run_tool
from app.hardware.amd import detect_amd
from app.hardware.apple import detect_apple
from app.hardware.detect import Probes
from app.hardware.nvidia import detect_nvidia
from app.hardware.report import GpuInfo, MemoryInfo, SourceStatus
from app.hardware.vulkan import detect_vulkan
from app.i18n import Text
from tests.fixtures.hardware.make_reports import load_report
from tests.unit.hardware.fakes import FakeNvml, FakeTools, fixture_json, fixture_text, materialize
from tests.unit.hardware.test_apple import FakeMetalDevice, fake_metal
from tests.unit.hardware.test_vulkan import laptop_tools

GiB = 1024**3
ALL_SOURCES = ["cpu", "memory", "nvidia", "amd", "rocm-smi", "apple", "vulkan"]


def test_real_machine_report() -> None:
    report = detect_hardware()
    assert [s.name for s in report.sources] == ALL_SOURCES
    assert report.source("cpu").present and report.source("memory").present
    assert report.memory.total == psutil.virtual_memory().total
    assert report.cpu.logical_cores >= report.cpu.physical_cores >= 1
    # How long it took is a figure for tests/bench/hardware.py; a hung source has its own test.
    for s in report.sources:
        assert s.present or s.reason, s  # every absence says why
    assert HardwareReport.from_json(json.loads(json.dumps(report.to_json()))) == report


def test_a_hung_source_costs_the_deadline_not_the_app() -> None:
    release = threading.Event()
    answered = threading.Event()

    def hung() -> Any:
        release.wait(60)  # a hang guard: only the test releases it
        answered.set()
        return [], []

    probes = Probes(nvidia=hung, amd=None, apple=None, vulkan=None)
    report = detect_hardware(probes, deadline_s=0.5)
    # Detection returned while the probe still hung: it did not wait for the source.
    assert not answered.is_set()
    release.set()
    status = report.source("nvidia")
    assert not status.present and "did not answer within 0.5 s" in status.reason
    assert report.source("cpu").present


def test_a_hung_amd_probe_still_accounts_for_rocm_smi() -> None:
    release = threading.Event()
    probes = Probes(amd=lambda: (release.wait(30), ([], []))[1], nvidia=None, apple=None,
                    vulkan=None)
    report = detect_hardware(probes, deadline_s=0.3)
    release.set()
    assert [s.name for s in report.sources] == ["cpu", "memory", "nvidia", "amd", "rocm-smi",
                                                "apple", "vulkan"]
    rocm = report.source("rocm-smi")
    assert rocm is not None and not rocm.present and "did not finish" in rocm.reason


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for vulkaninfo")
def test_a_hanging_vulkaninfo_on_path_is_killed_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real subprocess path: an executable named vulkaninfo that never answers.
    tool = tmp_path / "vulkaninfo"
    pid_file = tmp_path / "pid"
    # It would hang for an hour: only run_tool's time-out ends it.
    tool.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 3600\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    probes = Probes(nvidia=None, amd=None, apple=None,
                    vulkan=lambda: detect_vulkan(lambda argv: run_tool(argv, timeout=0.5)))
    report = detect_hardware(probes)
    status = report.source("vulkan")
    assert status is not None and not status.present
    assert status.reason == "vulkaninfo did not answer within 0.5 s"  # the time-out path
    assert report.gpus == []
    if pid_file.exists():  # it got as far as writing its pid before the kill
        pid = int(pid_file.read_text())
        deadline = time.monotonic() + 30  # a hang guard
        while _running(pid):
            assert time.monotonic() < deadline, f"vulkaninfo ({pid}) still runs"
            time.sleep(0.05)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_crashing_source_becomes_a_reason() -> None:
    def boom() -> Any:
        raise RuntimeError("driver exploded")

    report = detect_hardware(Probes(nvidia=boom, amd=None, apple=None, vulkan=None))
    assert report.source("nvidia").reason == "failed: RuntimeError: driver exploded"
    # Every reason the Hardware page lists under "Not found" is a translatable sentence.
    missing = [s for s in report.sources if not s.present]
    assert missing and all(isinstance(s.reason, Text) for s in missing), missing


def test_skipped_probes_say_why_in_translatable_sentences() -> None:
    probes = Probes.for_platform("Windows")
    assert probes.skip_reasons["amd"] == "sysfs is Linux only"
    assert all(isinstance(r, Text) for r in probes.skip_reasons.values())
    assert Probes.for_platform("Darwin").skip_reasons["nvidia"] == "NVML is not available on macOS"


def test_cpu_and_memory_failures_fall_back() -> None:
    def boom() -> Any:
        raise OSError("no /proc")

    report = detect_hardware(Probes(cpu=boom, memory=boom, nvidia=None, amd=None, apple=None,
                                    vulkan=None))
    assert report.cpu.logical_cores >= 1
    assert not report.source("cpu").present and "no /proc" in report.source("cpu").reason
    assert report.memory.total == 0 and not report.source("memory").present


def test_unified_gpu_is_capped_by_ram() -> None:
    igpu = GpuInfo("iGPU", "amd", "vulkan", 0, total=40 * GiB, free=40 * GiB, used_by_others=0,
                   unified=True)
    probes = Probes(memory=lambda: MemoryInfo(16 * GiB, 10 * GiB), nvidia=None, amd=None,
                    apple=lambda _: ([igpu], [SourceStatus("apple", True)]), vulkan=None)
    [g] = detect_hardware(probes).gpus
    assert (g.total, g.free, g.used_by_others) == (16 * GiB, 10 * GiB, 6 * GiB)


KEY_FIELDS = ("name", "vendor", "backend", "index", "total", "free", "used_by_others", "unified",
              "estimate", "uuid", "pci_bus_id", "compute_capability", "driver_version",
              "cuda_driver_version", "processes", "other_backends")


def _keys(g: GpuInfo) -> dict[str, Any]:
    return {k: getattr(g, k) for k in KEY_FIELDS}


def _recorded(name: str) -> tuple[HardwareReport, MemoryInfo]:
    report = load_report(name)
    return report, report.memory


def test_recorded_nvidia_machines_match_their_report_files() -> None:
    for report_name, nvml_name in [("rtx4090_24gb", "rtx4090"), ("2x3090", "2x3090")]:
        recorded, mem = _recorded(report_name)
        nvml = FakeNvml(nvml_name)
        probes = Probes(memory=lambda m=mem: m, nvidia=lambda n=nvml: detect_nvidia(n),
                        amd=None, apple=None, vulkan=None)
        detected = detect_hardware(probes)
        assert [_keys(g) for g in detected.gpus] == [_keys(g) for g in recorded.gpus]
        assert detected.source("nvidia") == recorded.source("nvidia")


def test_recorded_laptop_matches_its_report_file() -> None:
    recorded, mem = _recorded("rtx3060_laptop")
    tools = laptop_tools()
    nvml = FakeNvml("rtx3060_laptop")
    from app.hardware.vulkan import detect_vulkan

    probes = Probes(memory=lambda: mem, nvidia=lambda: detect_nvidia(nvml), amd=None, apple=None,
                    vulkan=lambda: detect_vulkan(tools), run=tools)
    detected = detect_hardware(probes)
    assert [_keys(g) for g in detected.gpus] == [_keys(g) for g in recorded.gpus]


def test_recorded_rx7900xtx_matches_its_report_file(tmp_path: Path) -> None:
    recorded, mem = _recorded("rx7900xtx")
    root = materialize(fixture_json("sysfs/rx7900xtx.json"), tmp_path)
    tools = FakeTools({"rocm-smi": ToolResult(True, fixture_text("rocm/rx7900xtx.json"))})
    # the recorded report was taken without vulkaninfo, so "vulkan" is only a possible backend
    probes = Probes(memory=lambda: mem, nvidia=None, amd=lambda: detect_amd(root, tools),
                    apple=None, vulkan=None)
    [g] = detect_hardware(probes).gpus
    [r] = recorded.gpus
    assert {**_keys(g), "other_backends": []} == _keys(r)


def test_recorded_m2pro_matches_its_report_file() -> None:
    recorded, mem = _recorded("m2pro_16gb")
    metal = fake_metal(FakeMetalDevice("Apple M2 Pro", 11453251584))
    probes = Probes(memory=lambda: mem, nvidia=None, amd=None, vulkan=None,
                    apple=lambda avail: detect_apple(avail, lambda _: None, lambda: metal))
    detected = detect_hardware(probes)
    assert [_keys(g) for g in detected.gpus] == [_keys(g) for g in recorded.gpus]
