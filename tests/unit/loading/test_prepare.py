"""Planning a load for the window: a real (tiny) GGUF file, a recorded machine, stored
measurements, and the dry run as a fake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.gguf import GGUFError, ModelInfo
from app.loading.measure import BuildMemo
from app.loading.prepare import combine, plan_flags, prepare_load
from app.planner import Correction, Wishes, plan
from app.planner.corrections import CorrectionStore, Measurement, model_key
from tests.fixtures.models import TINY, model_path
from tests.unit.loading.conftest import load_report


def test_plan_flags_leave_the_model_to_the_launch(llama8b: ModelInfo) -> None:
    p = plan(llama8b, load_report("rtx4090_24gb"), Wishes())
    flags = plan_flags(p, "/models/m.gguf")
    assert "--model" not in flags and "/models/m.gguf" not in flags
    assert ["--model", "/models/m.gguf", *flags] == p.runner_args("/models/m.gguf")
    assert flags[flags.index("--ctx-size") + 1] == str(p.settings.n_ctx)


def test_combine_multiplies_per_device() -> None:
    base = {"CUDA0": Correction(kv=1.1, compute=2.0), "CPU": Correction(compute=0.9)}
    out = combine(base, {"CUDA0": Correction(kv=2.0, compute=0.5, compute_extra=7)})
    assert out["CUDA0"] == Correction(kv=2.2, compute=1.0, compute_extra=7)
    assert out["CPU"] == base["CPU"]
    assert combine({}, {}) == {}


def _never() -> Any:
    raise AssertionError("a cached report was given: detection must not run")


def test_prepare_uses_stored_measurements_of_this_build(tmp_path: Path) -> None:
    path = str(model_path(TINY))
    cached = load_report("cpu_only_16gb")
    store, memo = CorrectionStore(tmp_path / "c.json"), BuildMemo(tmp_path / "b.json")

    first = prepare_load(path, cached=cached, detect=_never, wishes=Wishes(), store=store,
                         memo=memo, program="prog", probe=None)
    assert first.plan.fits and first.stored == {} and not first.detected
    assert first.hardware.memory.total > 0  # RAM measured now, not the recording's

    memo.put("prog", "b1")
    usage = first.plan.cpu.usage
    store.record(model_key(path), "b1", first.plan.settings.to_json(),
                 [Measurement("CPU", usage.kv, usage.compute, usage.kv * 2, usage.compute * 3)])
    again = prepare_load(path, cached=cached, detect=_never, wishes=Wishes(), store=store,
                         memo=memo, program="prog", probe=None)
    assert again.stored == {"CPU": Correction(kv=2.0, compute=3.0)}
    assert again.plan.cpu.usage.kv == 2 * usage.kv
    assert any("earlier load" in r for r in again.plan.reasons)
    # Another runner build measured nothing yet.
    other = prepare_load(path, cached=cached, detect=_never, wishes=Wishes(), store=store,
                         memo=memo, program="other-runner", probe=None)
    assert other.stored == {}


def test_prepare_detects_without_a_cached_report_and_confirms(tmp_path: Path) -> None:
    path = str(model_path(TINY))
    detected: list[int] = []

    def detect() -> Any:
        detected.append(1)
        return load_report("cpu_only_16gb")

    probed: list[list[str]] = []

    def probe(args: list[str]) -> dict[str, Any]:
        probed.append(args)
        return {"devices": []}  # nothing to disagree with

    out = prepare_load(path, cached=None, detect=detect, wishes=Wishes(),
                       store=CorrectionStore(tmp_path / "c.json"),
                       memo=BuildMemo(tmp_path / "b.json"), program="p", probe=probe)
    assert detected == [1] and out.detected
    assert probed == [out.plan.runner_args()]  # the dry run gets the plan's own flags
    assert "dry run" in out.plan.reasons[-1]


def test_prepare_refuses_a_file_that_is_not_a_model(tmp_path: Path) -> None:
    bad = tmp_path / "notes.gguf"
    bad.write_text("not a model\n" * 20)
    with pytest.raises(GGUFError, match="not a GGUF"):
        prepare_load(str(bad), cached=load_report("cpu_only_16gb"), detect=_never,
                     wishes=Wishes(), store=None, memo=None, program="p", probe=None)
