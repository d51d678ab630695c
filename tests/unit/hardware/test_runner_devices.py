"""`hearth-runner devices` as the app meets it: the runner's JSON (recorded from CPU, CUDA and
Vulkan builds) coming back through a real child process, and the runner failing to load."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from app.cli import hardware as cli
from app.hardware import HardwareReport, detect
from app.hardware.merge import RunnerDevicesError, compiled_cpu_features
from app.runner_client import command
from app.runner_client.build import query_runner_devices
from runner import devices
from tests.fixtures.hardware.make_reports import load_report
from tests.unit.hardware.fakes import FIXTURES, fixture_json

RECORDINGS = ("cpu_only_build", "cuda_2x3090", "vulkan_laptop")


def printing(text: str, exit_code: int = 0, stderr: str = "") -> list[str]:
    """A child that prints ``text`` as the runner would."""
    code = (f"import sys; sys.stdout.write({text!r}); sys.stderr.write({stderr!r}); "
            f"sys.exit({exit_code})")
    return [sys.executable, "-c", code]


@pytest.mark.parametrize("name", RECORDINGS)
def test_recorded_runner_output_comes_back_through_a_child(name: str) -> None:
    text = (FIXTURES / f"runner/{name}.json").read_text()
    # the runner may log before its JSON line; only the last line is the answer
    data = query_runner_devices(printing("llama.cpp says hello\n" + text.strip() + "\n"))
    assert data == json.loads(text)


@pytest.mark.parametrize("name", RECORDINGS)
def test_runner_and_app_parse_compiled_features_alike(name: str) -> None:
    data = fixture_json(f"runner/{name}.json")
    assert devices.cpu_features(data["system_info"]) == compiled_cpu_features(data["system_info"])
    if "cpu_features" in data:
        assert devices.cpu_features(data["system_info"]) == data["cpu_features"]


def test_runner_without_llama_cpp_answers_with_an_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import fails as in a broken install
    assert devices.main([]) == 1
    out = capsys.readouterr().out
    error = json.loads(out)["error"]
    assert "llama-cpp-python could not be loaded" in error
    # and the app turns that answer into a readable error
    with pytest.raises(RunnerDevicesError, match="could not be loaded"):
        query_runner_devices(printing(out, exit_code=1))


def test_runner_that_prints_nothing_useful(tmp_path: Path) -> None:
    with pytest.raises(RunnerDevicesError, match="Segmentation fault"):
        query_runner_devices(printing("", exit_code=139, stderr="Segmentation fault\n"))
    with pytest.raises(RunnerDevicesError, match="something other than a device list"):
        query_runner_devices(printing("[1, 2]\n"))
    with pytest.raises(RunnerDevicesError, match="could not be started"):
        query_runner_devices([str(tmp_path / "no-such-runner")])


def test_runner_that_hangs_is_given_up_on() -> None:
    with pytest.raises(RunnerDevicesError, match=r"within 0\.5 s"):
        query_runner_devices([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)


def test_hearth_hardware_runner_merges_what_the_runner_prints(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(detect, "detect_hardware", lambda: load_report("2x3090"))
    text = (FIXTURES / "runner/cuda_2x3090.json").read_text()
    # The app asks the runner it would start (a frozen build's own): `<runner program> devices`.
    monkeypatch.setattr(command, "base_program", lambda: printing(text))
    assert cli.main(["--json", "--runner"]) == 0
    report = HardwareReport.from_json(json.loads(capsys.readouterr().out))
    assert [g.runner_device for g in report.gpus] == ["CUDA0", "CUDA1"]
