"""The browser's fit verdict is the planner's own plan, summed up in one phrase."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.gguf import ModelInfo, read_model
from app.hub.verdict import Fit, verdict_for
from tests.fixtures.header_only import GPT_OSS_120B, LLAMA31_8B, LLAMA31_70B, write_header_only
from tests.unit.planner.conftest import load_report


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModelInfo]:
    folder: Path = tmp_path_factory.mktemp("verdict")
    return {s.name: read_model(write_header_only(folder / f"{s.name}.gguf", s))
            for s in (LLAMA31_8B, LLAMA31_70B, GPT_OSS_120B)}


def test_an_8b_fits_a_4090_entirely(models: dict[str, ModelInfo]) -> None:
    v = verdict_for(models[LLAMA31_8B.name], load_report("rtx4090_24gb"))
    assert v.fit is Fit.GPU and v.gpu_layers == v.layers == 33
    assert v.n_ctx >= 4096
    assert v.label().startswith("Fits on the GPU")
    assert "dry run" in v.tooltip()  # the header-only plan says it was not dry-run


def test_a_70b_on_a_laptop_gpu_is_partial_or_refused(models: dict[str, ModelInfo]) -> None:
    v = verdict_for(models[LLAMA31_70B.name], load_report("rtx3060_laptop"))
    assert v.fit in (Fit.PARTIAL, Fit.NO_FIT)
    if v.fit is Fit.PARTIAL:
        assert 0 < v.gpu_layers < v.layers
        assert f"{v.gpu_layers} of {v.layers} layers" in v.label()


def test_no_gpu_means_cpu_only(models: dict[str, ModelInfo]) -> None:
    v = verdict_for(models[LLAMA31_8B.name], load_report("cpu_only_16gb"))
    assert v.fit is Fit.CPU and v.gpu_layers == 0
    assert v.label().startswith("CPU only")


def test_a_model_larger_than_the_machine_will_not_fit(models: dict[str, ModelInfo]) -> None:
    v = verdict_for(models[GPT_OSS_120B.name], load_report("cpu_only_16gb"))
    assert v.fit is Fit.NO_FIT and not v.fits and v.n_ctx == 0
    assert v.label() == "Will not fit on this computer"
    assert any("needs" in r for r in v.reasons)
