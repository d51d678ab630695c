"""`hearth hardware [--json]`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.hardware import format_report, main
from app.hardware import HardwareReport, detect
from tests.fixtures.hardware.make_reports import load_report
from tests.unit.hardware.fakes import FIXTURES

ROOT = Path(__file__).resolve().parents[3]


def test_json_output_is_a_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json"]) == 0
    report = HardwareReport.from_json(json.loads(capsys.readouterr().out))
    assert report.cpu.logical_cores >= 1 and report.memory.total > 0


def test_table_shows_gpus_and_reasons(monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(detect, "detect_hardware", lambda: load_report("2x3090"))
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.count("NVIDIA GeForce RTX 3090") == 2
    assert "24.0 GiB" in out and "580 MiB" in out
    assert "rocm-smi  not present: rocm-smi is not installed" in out


def test_table_marks_unified_memory_and_hybrid_cores() -> None:
    text = format_report(load_report("m2pro_16gb"))
    assert "shares system RAM" in text and "6 performance cores" in text


def test_runner_json_is_merged(monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(detect, "detect_hardware", lambda: load_report("rtx4090_24gb"))
    assert main(["--json", "--runner-json", str(FIXTURES / "runner/cpu_only_build.json")]) == 0
    report = HardwareReport.from_json(json.loads(capsys.readouterr().out))
    assert report.runner is not None
    assert report.runner.unused_gpus == ["NVIDIA GeForce RTX 4090: this runner build has no CUDA support"]


def test_unreadable_runner_json_is_an_error_with_the_report_still_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["--runner-json", str(bad)]) == 1
    captured = capsys.readouterr()
    assert "Sources" in captured.out
    assert "Cannot read" in captured.err


def test_runs_as_a_module() -> None:
    proc = subprocess.run([sys.executable, "-m", "app.cli.hardware", "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "cpu" in json.loads(proc.stdout)


def test_hearth_hardware_is_the_apps_subcommand(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from app.__main__ import main as hearth

    monkeypatch.setattr(detect, "detect_hardware", lambda: load_report("rx7900xtx"))
    assert hearth(["hardware", "--json"]) == 0
    assert HardwareReport.from_json(json.loads(capsys.readouterr().out)) == load_report("rx7900xtx")
