"""A vision projector beside a model: found, read, counted where libmtmd puts it, explained, and
handed to the runner."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from app.gguf import ModelInfo, read_model
from app.gguf.errors import GGUFError
from app.gguf.projector import ProjectorInfo, read_projector
from app.library.scan import projector_beside
from app.loading.flags import plan_args
from app.loading.prepare import attach_projector
from app.planner import Wishes, plan
from app.planner.types import GiB
from tests.fixtures.vision import VISION_PROJECTOR, vision_pair
from tests.unit.loading.conftest import load_report


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    model, projector = vision_pair()
    folder = tmp_path_factory.mktemp("vision-model")
    # Two projectors, as a repo offering two precisions: the first by name is the one.
    shutil.copy(projector, folder / "mmproj-model-f16.gguf")
    shutil.copy(projector, folder / "mmproj-model-f32.gguf")
    shutil.copy(model, folder / "model-Q8_0.gguf")
    return folder / "model-Q8_0.gguf", folder / "mmproj-model-f16.gguf"


def test_the_projector_beside_a_model_is_found_and_read(pair: tuple[Path, Path]) -> None:
    model, projector = pair
    assert projector_beside(model) == projector
    info = read_projector(projector)
    assert (info.projector_type, info.image_size, info.patch_size) == (
        "gemma3", VISION_PROJECTOR.image_size, VISION_PROJECTOR.patch_size)
    assert info.projection_dim == read_model(model).n_embd
    assert info.weight_bytes > 0


def test_a_model_alone_in_its_folder_has_none(tmp_path: Path) -> None:
    model, _ = vision_pair()
    shutil.copy(model, tmp_path / "m.gguf")
    assert projector_beside(tmp_path / "m.gguf") is None


def test_a_chat_model_is_not_a_projector(pair: tuple[Path, Path]) -> None:
    with pytest.raises(GGUFError, match="not a vision projector"):
        read_projector(pair[0])


def test_a_projector_for_another_width_is_left_out_with_a_reason(pair: tuple[Path, Path]
                                                                 ) -> None:
    model = read_model(pair[0])
    wide = replace(model, n_embd=model.n_embd * 2)
    kept, why = attach_projector(wide, pair[1])
    assert kept.projector is None and why is not None and why.code == "projector_other_model"
    attached, none = attach_projector(model, pair[1])
    assert none is None and attached.projector is not None


def _big_projector(path: str) -> ProjectorInfo:
    # Gemma 3's real projector: 896-pixel images in patches of 14, 1152 wide, 16 heads.
    return ProjectorInfo(path=path, weight_bytes=851 * 2**20, projector_type="gemma3",
                         image_size=896, patch_size=14, n_embd=1152, n_ff=4304, n_head=16,
                         projection_dim=0)


def test_the_plan_counts_the_projector_on_the_gpu_with_the_layers(llama8b: ModelInfo) -> None:
    report = load_report("rtx4090_24gb")
    alone = plan(llama8b, report, Wishes())
    seeing = plan(replace(llama8b, projector=_big_projector("/m/mmproj.gguf")), report, Wishes())
    gpu, cpu = seeing.devices[0].usage, seeing.devices[-1].usage
    assert gpu.projector > 851 * 2**20 and cpu.projector == 0
    assert gpu.total - gpu.projector <= alone.devices[0].usage.total
    reason = next(r for r in seeing.reasons if r.code == "projector")
    assert reason.params["where"] == seeing.devices[0].device.name
    args = plan_args(seeing)
    assert args[args.index("--mmproj") + 1] == "/m/mmproj.gguf"
    assert "--mmproj" not in plan_args(alone)


def test_on_the_cpu_the_projector_is_counted_in_ram(llama8b: ModelInfo) -> None:
    seeing = plan(replace(llama8b, projector=_big_projector("/m/p.gguf")),
                  load_report("rtx4090_24gb"), Wishes(cpu_only=True))
    assert seeing.devices[-1].usage.projector > 851 * 2**20
    assert next(r for r in seeing.reasons if r.code == "projector").params["where"] is None


def test_without_flash_attention_the_encoder_needs_its_attention_scores() -> None:
    p = _big_projector("x")
    # Gemma 3's encoder without flash attention: the scores of 16 heads over 4,097 patches.
    assert 1 * GiB < p.compute_bytes(False) < 2 * GiB
    assert p.compute_bytes(True) < p.compute_bytes(False) // 3


def test_the_dry_run_s_measured_encoder_replaces_the_estimate(pair: tuple[Path, Path]) -> None:
    """The plan counts what the dry run's real projector load allocated, and says so; a
    measurement within the tolerance changes nothing."""
    from app.loading.prepare import measured_projector, prepare_load
    from tests.unit.loading.test_prepare import CPU_BUILD

    model, _projector = pair
    asked: list[list[str]] = []

    def probe(args: list[str], *_a: object, **_k: object) -> dict[str, object]:
        asked.append(args)
        return {"devices": [], "projector": {"compute": 300 * 2**20, "weights": 1}}

    prepared = prepare_load(str(model), cached=load_report("cpu_only_16gb"),
                            detect=lambda: None, wishes=Wishes(), store=None, build=CPU_BUILD,
                            probe=probe)
    assert "--mmproj" in asked[0]
    cpu = prepared.plan.devices[-1].usage
    assert cpu.projector >= 300 * 2**20
    reason = next(r for r in prepared.plan.reasons if r.code == "projector_measured")
    assert reason.params["compute"] == 300 * 2**20
    assert any("dry run loaded the vision projector" in t for t in prepared.plan.reason_texts())
    info = prepared.plan.model
    assert info.projector is not None
    close = {"projector": {"compute": info.projector.compute_bytes(False)}}
    assert measured_projector(info, close) is None
    assert measured_projector(info, {}) is None
