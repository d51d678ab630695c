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
from app.runtimes import select
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
        build = select.chosen_build(None, lambda: small)
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
