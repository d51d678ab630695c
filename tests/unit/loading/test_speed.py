"""Speed settings tuned once per model and computer, on the app's side: the first load asks the
runner to measure the settings its plan has memory for, the verdict is kept, and later loads
plan from it (the person's pins first), leaving it out where it would cost context or layers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.loading.flags import plan_args
from app.loading.prepare import Prepared, prepare_load
from app.loading.speed import SpeedSense, record_speed
from app.planner import Wishes
from app.planner.speed import SpeedMemory, placement, speed_key
from app.planner.types import Pins
from app.planner.wording import text as reason_text
from tests.fixtures.header_only import LLAMA31_8B, LLAMA31_70B, write_header_only
from tests.gui.screenshot_offload import recorded_machine

RUNTIME_MACHINE = ("h100_80gb", "cuda_h100")


def chosen(fa: str = "off", kv: str = "f16", ub: int = 1024, nb: int = 2048,
           gain: float = 1.2) -> dict[str, Any]:
    """/runner/status speed_trial once done, as runner/speed_trial.py writes it
    (tests/unit/test_speed_trial.py checks the two sides agree)."""
    return {"speed_trial": {"state": "done", "why": None, "gain": gain, "chosen": {
        "flash_attn": fa, "cache_type": kv, "n_ubatch": ub, "n_batch": nb}}}


@pytest.fixture
def llama8b(tmp_path: Path) -> str:
    return str(write_header_only(tmp_path / "Llama-3.1-8B-Instruct-Q4_K_M.gguf", LLAMA31_8B))


def prepare(path: str, sense: SpeedSense | None, wishes: Wishes | None = None,
            machine: tuple[str, str] = RUNTIME_MACHINE) -> Prepared:
    hw, find_build = recorded_machine(*machine)
    return prepare_load(path, cached=hw, detect=lambda: hw, wishes=wishes or Wishes(),
                        store=None, build=find_build(None), probe=None, speed=sense)


def sense(tmp_path: Path, measure: bool = True) -> SpeedSense:
    return SpeedSense(SpeedMemory(tmp_path / "speed.json"), "this-pc", measure)


def codes(p: Prepared) -> set[str]:
    return {r.code for r in p.plan.reasons}


def test_the_first_load_measures_and_the_next_plans_from_what_was_measured(
        llama8b: str, tmp_path: Path) -> None:
    s = sense(tmp_path)
    first = prepare(llama8b, s)
    args = plan_args(first.plan)
    spec = args[args.index("--tune-speed") + 1]
    # An 80 GB card holds flash attention off (a larger compute buffer), a q8_0 cache and
    # larger micro-batches beside the model, and a trial context of each.
    assert spec == "fa=off;kv=q8_0;ub=256,1024,2048"
    assert "speed_measuring" in codes(first)
    assert "5 seconds" in reason_text(next(r for r in first.plan.reasons
                                           if r.code == "speed_measuring"))
    verdict = record_speed(first.plan, s, first.build.key, chosen())
    assert verdict is not None and verdict.tuned is not None

    second = prepare(llama8b, s)
    st = second.plan.settings
    assert (st.flash_attn, st.cache_type_k, st.n_ubatch, st.n_batch) == ("off", "f16", 1024, 2048)
    assert (st.n_ctx, st.n_gpu_layers) == (first.plan.settings.n_ctx,
                                           first.plan.settings.n_gpu_layers)
    assert "--tune-speed" not in plan_args(second.plan)
    why = next(r for r in second.plan.reasons if r.code == "speed_tuned")
    assert "flash attention off" in reason_text(why) and "1.20×" in reason_text(why)
    assert "1024" in reason_text(why)


def test_what_is_kept_is_per_model_runtime_computer_and_placement(llama8b: str,
                                                                   tmp_path: Path) -> None:
    s = sense(tmp_path)
    first = prepare(llama8b, s)
    record_speed(first.plan, s, first.build.key, chosen())
    on_cpu = prepare(llama8b, s, Wishes(cpu_only=True, context=8192))
    assert placement(on_cpu.plan) == "cpu" and placement(first.plan) == "gpu"
    assert "--tune-speed" in plan_args(on_cpu.plan)  # the CPU's fastest are its own
    assert on_cpu.plan.settings.flash_attn == "on"
    model = first.plan.model
    keys = {speed_key(model, "cuda", "pc", "gpu"), speed_key(model, "cpu", "pc", "gpu"),
            speed_key(model, "cuda", "laptop", "gpu"), speed_key(model, "cuda", "pc", "cpu")}
    assert len(keys) == 4


def test_pinned_settings_are_neither_measured_nor_replaced(llama8b: str,
                                                          tmp_path: Path) -> None:
    s = sense(tmp_path)
    pinned = Wishes(pins=Pins(flash_attn="on"))
    first = prepare(llama8b, s, pinned)
    args = plan_args(first.plan)
    assert "fa=" not in args[args.index("--tune-speed") + 1]
    record_speed(first.plan, s, first.build.key, chosen(fa="off", ub=1024))
    st = prepare(llama8b, s, pinned).plan.settings
    assert st.flash_attn == "on" and st.n_ubatch == 1024  # the pin, and what was measured
    everything = Wishes(pins=Pins(flash_attn="on", cache_type_k="f16", cache_type_v="f16",
                                  n_ubatch=512))
    assert "--tune-speed" not in plan_args(prepare(llama8b, sense(tmp_path / "b"),
                                                   everything).plan)


def test_a_measured_setting_that_would_cost_context_is_left_out(llama8b: str,
                                                                tmp_path: Path) -> None:
    s = sense(tmp_path)
    machine = ("rtx4090_24gb", "cuda_h100")
    bare = prepare(llama8b, s, machine=machine)
    # Measured on a roomier load of the same placement: without flash attention the compute
    # buffer at this context would take the room the context needs on a 24 GB card.
    record_speed(bare.plan, s, bare.build.key, chosen(fa="off", ub=512))
    again = prepare(llama8b, s, machine=machine)
    assert again.plan.settings.flash_attn == "on"
    assert again.plan.settings.n_ctx == bare.plan.settings.n_ctx
    why = next(r for r in again.plan.reasons if r.code == "speed_left_out")
    assert "would cost context" in reason_text(why)


def test_no_room_beside_a_model_that_fills_the_cards_measures_nothing(tmp_path: Path) -> None:
    big = str(write_header_only(tmp_path / "Llama-3.1-70B-Instruct-Q4_K_M.gguf", LLAMA31_70B))
    got = prepare(big, sense(tmp_path), machine=("2x3090", "cuda_2x3090"))
    assert got.plan.fits and not got.plan.tune
    assert "--tune-speed" not in plan_args(got.plan) and "speed_measuring" not in codes(got)


def test_the_model_server_uses_the_window_s_verdicts_and_measures_none(llama8b: str,
                                                                      tmp_path: Path) -> None:
    server = sense(tmp_path, measure=False)
    assert "--tune-speed" not in plan_args(prepare(llama8b, server).plan)
    window = sense(tmp_path)
    first = prepare(llama8b, window)
    record_speed(first.plan, window, first.build.key, chosen(fa="on", kv="q8_0", ub=512))
    st = prepare(llama8b, server).plan.settings
    assert (st.cache_type_k, st.cache_type_v) == ("q8_0", "q8_0")
    # Chosen for speed, not for room: the sentence for a cache quantized to fit is not given.
    assert "kv_quantized" not in codes(prepare(llama8b, server))


def test_a_trial_that_could_not_tell_is_kept_and_said(llama8b: str, tmp_path: Path) -> None:
    s = sense(tmp_path)
    first = prepare(llama8b, s)
    assert record_speed(first.plan, s, first.build.key, {"speed_trial": {"state": "measuring"}}) \
        is None
    slow = {"speed_trial": {"state": "done", "why": "too slow to measure within 5 s",
                            "chosen": None, "gain": None}}
    assert record_speed(first.plan, s, first.build.key, slow) is not None
    again = prepare(llama8b, s)
    assert "--tune-speed" not in plan_args(again.plan)
    why = next(r for r in again.plan.reasons if r.code == "speed_unmeasured")
    assert "too slow" in reason_text(why)


def test_a_damaged_file_costs_a_measurement_not_a_load(llama8b: str, tmp_path: Path) -> None:
    s = sense(tmp_path)
    first = prepare(llama8b, s)
    key = speed_key(first.plan.model, first.build.key or "", "this-pc", "gpu")
    for body in ("not json", json.dumps({"schema": 1, "entries": [
            {"key": key, "chosen": {"flash_attn": "sideways", "cache_type": "f16",
                                    "n_ubatch": 512, "n_batch": 512}, "gain": 2}]})):
        (tmp_path / "speed.json").write_text(body)
        assert s.memory.lookup(key) is None
        assert "--tune-speed" in plan_args(prepare(llama8b, s).plan)


def test_the_panel_says_which_settings_were_measured(llama8b: str, tmp_path: Path) -> None:
    from app.loading.tuning import field_states

    s = sense(tmp_path)
    first = prepare(llama8b, s)
    assert not any(f.measured for f in field_states(first.plan, Pins()).values())
    record_speed(first.plan, s, first.build.key, chosen(fa="off", ub=1024))
    fields = field_states(prepare(llama8b, s).plan, Pins())
    assert {n for n, f in fields.items() if f.measured} == {"flash_attn", "n_ubatch"}
    pinned = field_states(prepare(llama8b, s).plan, Pins(n_ubatch=256))
    assert pinned["n_ubatch"].pinned and not pinned["n_ubatch"].measured
