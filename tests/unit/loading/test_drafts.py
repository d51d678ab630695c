"""A draft model for speculative decoding: found among the models on this computer by its
tokenizer, counted in the plan where the runner puts it, explained, handed to the runner with
a measurement the first time, and then used or left out as this computer measured."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from app.gguf import ModelInfo, read_model
from app.gguf.model import DraftInfo
from app.loading.drafts import DraftSense, attach_draft, record_trial
from app.loading.flags import plan_args
from app.planner import Wishes, plan
from app.planner.speculation import SpecMemory, can_draft, pair_key, pick_draft
from app.planner.wording import text as reason_text
from tests.fixtures.models import TINY, model_path
from tests.fixtures.speculative import DRAFT, TARGET
from tests.unit.loading.conftest import load_report

# A target big enough beside the one-layer draft (a draft is at most a quarter of its size).
BIG = replace(TARGET, n_layer=12, inert_layers=11, name="hearth-spec-target-12")
RUNTIME = "cpu-build"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("library")
    out = {}
    for name, spec in (("target", BIG), ("draft", DRAFT),
                       ("other", replace(TINY, n_vocab=520, name="hearth-other-vocab"))):
        out[name] = folder / f"{name}.gguf"
        shutil.copy(model_path(spec), out[name])
    return out


def sense(files: dict[str, Path], tmp_path: Path) -> DraftSense:
    return DraftSense(lambda: [str(p) for p in files.values()],
                      SpecMemory(tmp_path / "spec.json"), "this-pc")


def test_the_tokenizer_says_who_can_draft_for_whom(files: dict[str, Path]) -> None:
    target, draft, other = (read_model(files[k]) for k in ("target", "draft", "other"))
    assert target.vocab and target.vocab == draft.vocab and other.vocab != target.vocab
    assert can_draft(draft, target)
    assert not can_draft(target, draft)  # bigger than a quarter of the model
    assert not can_draft(other, target) and not can_draft(target, target)
    smaller = replace(draft, total_bytes=draft.total_bytes // 2, paths=("/x/smaller.gguf",))
    assert pick_draft(target, [draft, smaller, other]) == smaller
    assert pick_draft(draft, [target, other]) is None


def test_the_first_load_measures_and_the_next_uses_what_was_measured(
        files: dict[str, Path], tmp_path: Path) -> None:
    s = sense(files, tmp_path)
    target = read_model(files["target"])
    first, why = attach_draft(target, s, RUNTIME)
    assert why is None and first.draft is not None and first.draft.gain is None
    assert first.draft.path == str(files["draft"])
    args = plan_args(plan(first, load_report("cpu_only_16gb"), Wishes()))
    assert args[args.index("--spec-draft-model") + 1] == str(files["draft"])
    assert "--spec-measure" in args
    # The runner measured it worth keeping: the next load uses it without measuring.
    status = {"speculative": {"measured": {"gain": 1.42, "kept": True}}}
    assert record_trial(first, s, RUNTIME, status) == 1.42
    again, _ = attach_draft(target, s, RUNTIME)
    assert again.draft is not None and again.draft.gain == 1.42
    args = plan_args(plan(again, load_report("cpu_only_16gb"), Wishes()))
    assert "--spec-draft-model" in args and "--spec-measure" not in args
    # Another runtime or computer measures again.
    assert attach_draft(target, s, "cuda-build")[0].draft.gain is None  # type: ignore[union-attr]


def test_a_draft_that_did_not_pay_is_left_out_with_its_figure(files: dict[str, Path],
                                                               tmp_path: Path) -> None:
    s = sense(files, tmp_path)
    target = read_model(files["target"])
    first, _ = attach_draft(target, s, RUNTIME)
    record_trial(first, s, RUNTIME, {"speculative": {"measured": {"gain": 0.71, "kept": False}}})
    model, why = attach_draft(target, s, RUNTIME)
    assert model.draft is None and why is not None and why.code == "draft_left_out"
    text = reason_text(why)
    assert "draft.gguf" in text and "0.71" in text
    assert "--spec-draft-model" not in plan_args(plan(model, load_report("cpu_only_16gb"),
                                                      Wishes()))


def test_nothing_is_recorded_without_a_measurement(files: dict[str, Path],
                                                   tmp_path: Path) -> None:
    s = sense(files, tmp_path)
    first, _ = attach_draft(read_model(files["target"]), s, RUNTIME)
    for status in ({}, {"speculative": None}, {"speculative": {"measured": None}},
                   {"speculative": {"measured": {"gain": "fast"}}}):
        assert record_trial(first, s, RUNTIME, status) is None
    assert not (tmp_path / "spec.json").exists()


def test_the_plan_counts_the_draft_where_the_runner_puts_it(llama8b: ModelInfo,
                                                            files: dict[str, Path]) -> None:
    draft = replace(read_model(files["draft"]), total_bytes=500 * 2**20)
    report = load_report("rtx4090_24gb")
    alone = plan(llama8b, report, Wishes())
    drafting = plan(replace(llama8b, draft=DraftInfo(draft, 1.3)), report, Wishes())
    gpu, cpu = drafting.devices[0].usage, drafting.devices[-1].usage
    # All of it on the GPU but its token embeddings, which stay in RAM as the model's own do.
    assert gpu.draft > 500 * 2**20 and cpu.draft == draft.input_bytes > 0
    assert gpu.total - gpu.draft <= alone.devices[0].usage.total
    reason = next(r for r in drafting.reasons if r.code == "draft")
    assert reason.params["where"] == drafting.devices[0].device.name
    assert reason.params["bytes"] == gpu.draft  # the sentence and the bar agree
    assert "1.30×" in reason_text(reason)
    on_cpu = plan(replace(llama8b, draft=DraftInfo(draft)), report, Wishes(cpu_only=True))
    assert on_cpu.devices[-1].usage.draft > 500 * 2**20
    assert "measures" in reason_text(next(r for r in on_cpu.reasons if r.code == "draft"))


def test_pairs_are_told_apart_by_file_runtime_and_computer(files: dict[str, Path]) -> None:
    target, draft = read_model(files["target"]), read_model(files["draft"])
    keys = {pair_key(target, draft, "a", "pc"), pair_key(target, draft, "b", "pc"),
            pair_key(target, draft, "a", "laptop"), pair_key(draft, target, "a", "pc")}
    assert len(keys) == 4


def test_the_offload_panel_s_bar_shows_the_draft(llama8b: ModelInfo, files: dict[str, Path]
                                                 ) -> None:
    from app.loading.tuning import device_bars

    draft = replace(read_model(files["draft"]), total_bytes=500 * 2**20)
    drafting = plan(replace(llama8b, draft=DraftInfo(draft, 1.3)), load_report("rtx4090_24gb"),
                    Wishes())
    bars = device_bars(drafting)
    gpu = next(b for b in bars if b.kind == "gpu")
    seg = next(s for s in gpu.segments if s.kind == "draft")
    assert seg.bytes == drafting.devices[0].usage.draft
    assert all(s.kind != "draft" for b in device_bars(plan(llama8b, load_report(
        "rtx4090_24gb"), Wishes())) for s in b.segments)


def test_a_draft_that_would_push_layers_off_the_gpu_is_left_out(tmp_path: Path) -> None:
    """Llama 3.1 70B on two 24 GB cards with its 8B as the draft: 5 GiB for the draft would
    move three of the model's layers to the CPU, which costs more than drafting can win."""
    from app.loading.prepare import prepare_load
    from tests.fixtures.header_only import REAL_SHAPES, write_header_only
    from tests.gui.screenshot_offload import recorded_machine

    def header(name: str) -> str:
        shape = next(s for s in REAL_SHAPES if s.name == name)
        return str(write_header_only(tmp_path / f"{name}-Q4_K_M.gguf", shape))

    big, small = header("Llama-3.1-70B-Instruct"), header("Llama-3.1-8B-Instruct")
    hw, find_build = recorded_machine("2x3090", "cuda_2x3090")
    drafts = DraftSense(lambda: [small], SpecMemory(tmp_path / "spec.json"), "pc")
    prepared = prepare_load(big, cached=hw, detect=lambda: hw, wishes=Wishes(), store=None,
                            build=find_build(None), probe=None, drafts=drafts)
    result = prepared.plan
    assert result.model.draft is None and result.fits
    assert result.settings.n_gpu_layers == result.model.n_layer + 1  # all of it on the GPUs
    why = next(r for r in result.reasons if r.code == "draft_no_room")
    assert why.params["layers"] > 0 and "8B" in reason_text(why)
    assert "--spec-draft-model" not in plan_args(result)


def test_a_family_s_sizes_pad_their_vocabularies_differently_and_still_pair(
        tmp_path: Path) -> None:
    # Qwen 2.5: 151,936 ids in the 1.5B, 152,064 in the 32B (padding), the same tokens before.
    from tests.fixtures import header_only as h

    def header(shape: h.Shape) -> ModelInfo:
        return read_model(h.write_header_only(tmp_path / f"{shape.name}.gguf", shape))

    small, big = header(h.QWEN25_1_5B), header(h.QWEN25_32B)
    assert small.n_vocab != big.n_vocab and small.vocab == big.vocab
    assert can_draft(small, big)
    assert header(h.LLAMA31_8B).vocab != big.vocab


def test_a_draft_the_runner_refused_is_left_out_saying_so(files: dict[str, Path],
                                                          tmp_path: Path) -> None:
    s = sense(files, tmp_path)
    target = read_model(files["target"])
    first, _ = attach_draft(target, s, RUNTIME)
    refused = {"gain": 0.0, "kept": False, "refused": "its tokens differ"}
    assert record_trial(first, s, RUNTIME, {"speculative": {"measured": refused}}) == 0.0
    model, why = attach_draft(target, s, RUNTIME)
    assert model.draft is None and why is not None and why.code == "draft_refused"
    assert "draft.gguf" in reason_text(why)
