"""AMD through sysfs files and rocm-smi output recorded from an RX 7900 XTX and a Ryzen APU."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.hardware._subprocess import ToolResult
from app.hardware.amd import detect_amd, parse_rocm_smi
from tests.unit.hardware.fakes import FakeTools, fixture_json, fixture_text, materialize

GiB = 1024**3
ROCM_SMI = "rocm-smi"


def test_rx_7900_xtx_from_sysfs_and_rocm_smi(tmp_path: Path) -> None:
    root = materialize(fixture_json("sysfs/rx7900xtx.json"), tmp_path)
    tools = FakeTools({ROCM_SMI: ToolResult(True, fixture_text("rocm/rx7900xtx.json"))})
    [g], statuses = detect_amd(root, tools)
    assert [(s.name, s.present) for s in statuses] == [("amd", True), ("rocm-smi", True)]
    assert g.name == "Radeon RX 7900 XTX"  # from the PCI revision, not rocm-smi's family name
    assert (g.vendor, g.backend, g.source, g.index) == ("amd", "rocm", "sysfs", 0)
    assert g.total == 25753026560
    assert g.used_by_others == 1012064256
    assert g.free == g.total - g.used_by_others
    assert not g.unified
    assert g.pci_bus_id == "0000:03:00.0"
    assert g.details["GFX version"] == "gfx1100"
    assert g.other_backends == ["vulkan"]


def test_rx_7900_xtx_without_rocm(tmp_path: Path) -> None:
    tree = fixture_json("sysfs/rx7900xtx.json")
    del tree["dev/kfd"]
    [g], statuses = detect_amd(materialize(tree, tmp_path), FakeTools({}))
    assert g.backend == "vulkan"  # no ROCm stack: llama.cpp's Vulkan backend drives it
    assert statuses[1].reason == "rocm-smi is not installed"


def test_ryzen_apu_is_unified_and_counts_gtt(tmp_path: Path) -> None:
    root = materialize(fixture_json("sysfs/ryzen_apu_780m.json"), tmp_path)
    [g], _ = detect_amd(root, FakeTools({}))
    assert g.name == "Radeon 780M (Phoenix)"
    assert g.unified
    assert g.total == 536870912 + 16434159616
    assert g.used_by_others == 163577856 + 52068352
    assert g.details["VRAM carve-out"] == "0.5 GiB"


def test_machine_without_amd_gpu_does_not_run_rocm_smi(tmp_path: Path) -> None:
    root = materialize(fixture_json("sysfs/intel_nvidia_laptop.json"), tmp_path)
    tools = FakeTools({ROCM_SMI: ToolResult(True, fixture_text("rocm/rx7900xtx.json"))})
    gpus, statuses = detect_amd(root, tools)
    assert gpus == []
    assert not statuses[0].present and "no AMD GPU" in statuses[0].reason
    assert tools.calls == []


def test_no_drm_at_all(tmp_path: Path) -> None:
    gpus, statuses = detect_amd(tmp_path, FakeTools({}))
    assert gpus == [] and "no /sys/class/drm" in statuses[0].reason


def test_rocm_smi_garbage_is_reported_not_raised(tmp_path: Path) -> None:
    root = materialize(fixture_json("sysfs/rx7900xtx.json"), tmp_path)
    tools = FakeTools({ROCM_SMI: ToolResult(True, "WARNING: AMD GPU device(s) is/are in a low-power state")})
    [g], statuses = detect_amd(root, tools)
    assert g.total == 25753026560
    assert not statuses[1].present and "unreadable" in statuses[1].reason


def test_rocm_smi_that_timed_out(tmp_path: Path) -> None:
    root = materialize(fixture_json("sysfs/rx7900xtx.json"), tmp_path)
    tools = FakeTools({ROCM_SMI: ToolResult(False, reason="rocm-smi did not answer within 3 s")})
    [g], statuses = detect_amd(root, tools)
    assert g.name == "Radeon RX 7900 XTX"
    assert statuses[1].reason == "rocm-smi did not answer within 3 s"


def test_parse_rocm_smi_lowercases_keys_across_versions() -> None:
    [card] = parse_rocm_smi("WARNING: something\n" + fixture_text("rocm/rx7900xtx.json"))
    assert card["gfx version"] == "gfx1100"
    with pytest.raises(ValueError):
        parse_rocm_smi("no json here")
