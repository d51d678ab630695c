"""`hearth-runner devices` against the real llama-cpp-python build in this environment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from app.hardware import detect_hardware, merge_runner_devices
from runner.devices import cpu_features

ROOT = Path(__file__).resolve().parents[2]


def test_cpu_features_parser() -> None:
    info = ("CUDA : ARCHS = 890 | USE_GRAPHS = 1 | CPU : SSE3 = 1 | AVX = 1 | AVX512 = 0 | "
            "LLAMAFILE = 1 | OPENMP = 1 |")
    assert cpu_features(info) == ["SSE3", "AVX"]


@pytest.fixture(scope="module")
def devices() -> dict:
    pytest.importorskip("llama_cpp")
    from runner.devices import list_devices

    return list_devices()


def test_list_devices_sees_the_cpu(devices: dict) -> None:
    cpu = [d for d in devices["devices"] if d["type"] == "cpu"]
    assert len(cpu) == 1
    assert cpu[0]["name"] == "CPU"
    assert cpu[0]["total"] == psutil.virtual_memory().total
    assert "CPU" in devices["backends"]
    assert devices["system_info"].startswith("CPU :") or "CPU :" in devices["system_info"]


def test_compiled_features_exist_on_this_cpu(devices: dict) -> None:
    report = detect_hardware()
    assert devices["cpu_features"], devices["system_info"]
    # a build using an instruction the CPU lacks would crash; everything compiled must be there
    assert set(devices["cpu_features"]) <= set(report.cpu.features)


def test_command_prints_json_that_merges(devices: dict) -> None:
    proc = subprocess.run([sys.executable, "-m", "runner.devices"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["devices"] == devices["devices"] or len(data["devices"]) == len(devices["devices"])
    merged = merge_runner_devices(detect_hardware(), data)
    assert merged.runner is not None
    assert merged.usable_cpu_features == [f for f in merged.cpu.features
                                          if f in data["cpu_features"]]
