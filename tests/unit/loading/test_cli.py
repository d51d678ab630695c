"""``hearth plan`` plans exactly as the window does (defect 6): the same preparation, the same
stored measurements, the same runner build."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.__main__ import main
from app.gguf import ModelInfo
from app.loading.confirm import run_probe
from app.loading.prepare import prepare_load
from app.planner import Wishes
from app.planner.corrections import CorrectionStore, Measurement, model_key
from app.runner_client.build import BuildCache, detect_runner_build
from app.runtimes.select import RuntimeSelection
from tests.unit.loading.conftest import load_report
from tests.unit.loading.stand_in import RUNNER_FIXTURES, make_stand_in

REPORTS = RUNNER_FIXTURES.parent / "reports"


def _file(model: ModelInfo) -> str:
    assert model.path is not None
    return model.path


def _hearth_plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    rc = main(["plan", *argv, "--json"])
    out = capsys.readouterr().out
    return rc, json.loads(out)


@pytest.mark.parametrize("dry_run", [False, True], ids=["no-probe", "dry-run"])
def test_hearth_plan_applies_the_measurements_the_window_applies(
        dry_run: bool, llama8b: ModelInfo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HEARTH_HOME", str(tmp_path / "home"))  # an empty store and cache
    make_stand_in(tmp_path / "runner", monkeypatch, devices="cpu_only_build")
    small = load_report("cpu_only_16gb")
    monkeypatch.setattr("app.hardware.detect_hardware", lambda: small)
    path = _file(llama8b)

    def window(store: CorrectionStore | None) -> Any:
        # What app/services/loader.py runs off the GUI thread (with no cached report yet):
        # the chosen runtime's build, whose notes say why it serves.
        build = RuntimeSelection().chosen_build(None, lambda: small)
        return prepare_load(path, cached=None, detect=lambda: small, wishes=Wishes(),
                            store=store, build=build, probe=run_probe if dry_run else None)

    raw = window(None).plan
    # An earlier load of this model on this build measured three times the predicted KV cache.
    build = detect_runner_build(cache=BuildCache())
    assert build.key is not None
    usage = raw.cpu.usage
    CorrectionStore().record(model_key(path), build.key, raw.settings.to_json(),
                             [Measurement("CPU", usage.kv, usage.compute, usage.kv * 3,
                                          usage.compute)])
    gui = window(CorrectionStore())
    assert gui.stored and gui.plan.settings.n_ctx < raw.settings.n_ctx

    args = [path] if dry_run else [path, "--no-probe"]
    rc, out = _hearth_plan(capsys, *args)
    assert rc == 0
    assert out["settings"] == gui.plan.settings.to_json() != raw.settings.to_json()
    assert out["reasons"] == gui.plan.reason_texts()
    assert out["reason_records"] == [r.to_json() for r in gui.plan.reasons]
    assert out["measured"]["CPU"]["kv"] == pytest.approx(3.0)
    assert out["runner"]["build"] == build.key
    assert any("earlier load" in r for r in out["reasons"])
    if dry_run:
        assert out["reasons"][-1].startswith("Checked with llama.cpp's dry run")

    # Asked to, it plans from the file alone, as the window did before any load.
    rc, bare = _hearth_plan(capsys, *args, "--ignore-measurements")
    assert bare["settings"] == raw.settings.to_json()


def test_hearth_plan_for_a_recorded_machine_and_runner_build(
        capsys: pytest.CaptureFixture[str], llama8b: ModelInfo) -> None:
    # Defect 5 on the command line: two RTX 3090s, a CPU-only runner build.
    rc, out = _hearth_plan(capsys, _file(llama8b), "--hardware", str(REPORTS / "2x3090.json"),
                           "--runner-json", str(RUNNER_FIXTURES / "cpu_only_build.json"))
    assert rc == 0 and out["settings"]["n_gpu_layers"] == 0
    assert [d["kind"] for d in out["devices"]] == ["cpu"]
    assert out["reasons"][0].startswith("This runner build has no CUDA support")
    assert out["probe"].startswith("Not checked with the dry run")
    rc, cuda = _hearth_plan(capsys, _file(llama8b), "--hardware", str(REPORTS / "2x3090.json"),
                            "--runner-json", str(RUNNER_FIXTURES / "cuda_2x3090.json"))
    assert [d["llama_name"] for d in cuda["devices"]] == ["CUDA0", "CUDA1", "CPU"]
    # Without the runner's word a recorded machine is planned for every GPU it has.
    rc, machine = _hearth_plan(capsys, _file(llama8b), "--hardware", str(REPORTS / "2x3090.json"))
    assert machine["settings"]["n_gpu_layers"] == llama8b.n_layer + 1
    assert not any("runner" in r for r in machine["reasons"])


def test_hearth_plan_text_and_errors(capsys: pytest.CaptureFixture[str], llama8b: ModelInfo,
                                     tmp_path: Path) -> None:
    rc = main(["plan", _file(llama8b), "--hardware", str(REPORTS / "rtx4090_24gb.json")])
    text = capsys.readouterr().out
    assert rc == 0 and "Fits." in text and "- Not checked with the dry run" in text
    assert main(["plan", _file(llama8b), "--ctx", "lots"]) == 2
    assert "--ctx takes" in capsys.readouterr().err
    bad = tmp_path / "notes.gguf"
    bad.write_text("not a model\n" * 20)
    assert main(["plan", str(bad), "--hardware", str(REPORTS / "rtx4090_24gb.json")]) == 2


def test_hearth_plan_gpu_budget_and_experts_reach_the_wishes(
        capsys: pytest.CaptureFixture[str], real_models: dict[str, ModelInfo]) -> None:
    # An 80 GB H100 planned as an 8 GB card, as the GPU check tests partial offload.
    h100 = str(REPORTS / "h100_80gb.json")
    qwen = _file(real_models["Qwen2.5-32B-Instruct"])
    rc, whole = _hearth_plan(capsys, qwen, "--hardware", h100)
    rc8, small = _hearth_plan(capsys, qwen, "--hardware", h100, "--gpu-budget-mib", "8192")
    assert rc == rc8 == 0
    assert whole["settings"]["n_gpu_layers"] == 65 > small["settings"]["n_gpu_layers"] > 0
    assert small["devices"][0]["total"] == 8192 << 20
    assert small["reason_records"][0] == {"code": "gpu_budget", "params": {"budget": 8192 << 20}}
    assert small["reasons"][0].startswith("Planned as if each GPU had 8,192 MiB")
    assert small["runner_args"][small["runner_args"].index("--n-gpu-layers") + 1] == \
        str(small["settings"]["n_gpu_layers"])

    mixtral = _file(real_models["Mixtral-8x7B-Instruct-v0.1"])
    rc, free = _hearth_plan(capsys, mixtral, "--hardware", h100)
    rc4, pinned = _hearth_plan(capsys, mixtral, "--hardware", h100, "--n-cpu-moe", "4")
    assert rc == rc4 == 0 and free["settings"]["n_cpu_moe"] == 0
    assert pinned["settings"]["n_cpu_moe"] == 4
    assert {"code": "pinned", "params": {"pins": {"n_cpu_moe": 4}}} in pinned["reason_records"]


@pytest.mark.parametrize("flag, value, message", [
    ("--gpu-budget-mib", "0", "--gpu-budget-mib takes a whole number of at least 1 (e.g. "
                              "--gpu-budget-mib 8192), not 0."),
    ("--gpu-budget-mib", "-8192", "--gpu-budget-mib takes a whole number of at least 1"),
    ("--n-cpu-moe", "-1", "--n-cpu-moe takes a whole number of at least 0"),
])
def test_hearth_plan_refuses_a_bad_budget(flag: str, value: str, message: str,
                                          capsys: pytest.CaptureFixture[str],
                                          llama8b: ModelInfo) -> None:
    from app.cli.plan import main as plan_main

    rc = plan_main([_file(llama8b), "--hardware", str(REPORTS / "h100_80gb.json"), flag, value])
    assert rc == 2
    assert message in capsys.readouterr().err


def test_hearth_plan_budget_must_be_a_number(capsys: pytest.CaptureFixture[str],
                                             llama8b: ModelInfo) -> None:
    from app.cli.plan import main as plan_main

    with pytest.raises(SystemExit) as exited:  # argparse's own usage error
        plan_main([_file(llama8b), "--gpu-budget-mib", "8GB"])
    assert exited.value.code == 2
    assert "--gpu-budget-mib: invalid int value: '8GB'" in capsys.readouterr().err
