"""The offload panel's logic: pins as JSON, the keys they are saved under, the plan for a set of
pins on real model headers and recorded machines, and the bars, states and sentences shown."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest

from app.gguf import ModelInfo
from app.hardware.merge import merge_runner_devices
from app.loading import tuning
from app.loading.bar_text import header
from app.loading.tuning import (
    TuningContext,
    blamed_fields,
    device_bars,
    field_state,
    machine_key,
    measured_by_device,
    measured_text,
    merge_pins,
    model_settings_key,
    not_fit_text,
    pins_from_json,
    pins_to_json,
    recompute,
    settings_key,
    shown_fields,
)
from app.planner import wording
from app.planner.corrections import Measurement
from app.planner.types import GiB, Pins, Reason, Wishes
from tests.unit.loading.conftest import load_report
from tests.unit.loading.stand_in import recorded_devices

MIXTRAL = "Mixtral-8x7B-Instruct-v0.1"
LLAMA8B = "Llama-3.1-8B-Instruct"


def ctx_for(model: ModelInfo, report: str, **kw: object) -> TuningContext:
    return TuningContext(path=model.path or "", model=model, hardware=load_report(report),
                         **kw)  # type: ignore[arg-type]


# -- pins as JSON ---------------------------------------------------------------------------------


def test_pins_round_trip_through_json() -> None:
    pins = Pins(n_gpu_layers=20, n_ctx=8192, flash_attn="off", cache_type_k="q8_0",
                tensor_split=(3.0, 1.0), mmap=False, mlock=True, n_cpu_moe=4)
    data = pins_to_json(pins)
    assert data["schema"] == tuning.SCHEMA
    assert data["pins"]["tensor_split"] == [3.0, 1.0]  # JSON has no tuples
    assert "n_batch" not in data["pins"]  # only what is pinned
    assert pins_from_json(data) == pins
    assert pins_from_json(pins_to_json(Pins())) == Pins()
    assert pins_from_json({}) == Pins() and pins_from_json(None) == Pins()


@pytest.mark.parametrize(("name", "value"), [
    ("n_gpu_layers", -3), ("n_gpu_layers", True), ("n_ctx", 0), ("n_ctx", "4096"),
    ("flash_attn", "sometimes"), ("cache_type_v", "q3_9"), ("mmap", 1),
    ("tensor_split", [0, 0]), ("tensor_split", [1, "x"]), ("tensor_split", []),
    ("a_field_from_the_future", 1),
])
def test_a_bad_stored_pin_is_dropped_and_the_rest_kept(name: str, value: object) -> None:
    pins = pins_from_json({"schema": 1, "pins": {name: value, "n_batch": 1024}})
    assert pins == Pins(n_batch=1024)


def test_stored_pins_that_are_not_an_object_mean_none() -> None:
    assert pins_from_json({"pins": [1, 2]}) == Pins()


def test_merge_puts_the_saved_pins_over_the_wishes() -> None:
    merged = merge_pins(Pins(n_ctx=4096, n_threads=4), Pins(n_ctx=8192, mlock=True))
    assert merged == Pins(n_ctx=8192, n_threads=4, mlock=True)


# -- keys -----------------------------------------------------------------------------------------


def test_machine_key_names_the_gpus_cpu_and_ram() -> None:
    a, b = load_report("2x3090"), load_report("rtx4090_24gb")
    assert machine_key(a) == machine_key(load_report("2x3090"))
    assert machine_key(a) != machine_key(b)
    smaller = copy.deepcopy(a)
    smaller.gpus[1].total = 12 * GiB
    assert machine_key(smaller) != machine_key(a)
    # Free memory comes and goes; the key does not.
    busier = copy.deepcopy(a)
    busier.gpus[0].free -= 4 * GiB
    busier.memory.available -= 8 * GiB
    assert machine_key(busier) == machine_key(a)


def test_machine_key_is_the_same_before_and_after_the_runner_merge() -> None:
    report = load_report("2x3090")
    merged = merge_runner_devices(report, recorded_devices("cuda_2x3090"))
    assert merged.runner is not None
    assert machine_key(merged) == machine_key(report)


def test_settings_key_is_per_model_file_and_machine(tmp_path: Path) -> None:
    f = tmp_path / "m.gguf"
    f.write_bytes(b"x" * 100)
    key = model_settings_key(f)
    assert key == "m.gguf:100"
    os.utime(f, (1, 1))  # copied again: same model, same pins
    assert model_settings_key(f) == key
    assert settings_key(key, "abc") == "offload|m.gguf:100|abc"
    assert model_settings_key(tmp_path / "gone.gguf") == "gone.gguf"


# -- the plan for a set of pins -------------------------------------------------------------------


def test_recompute_keeps_the_pins_and_the_notes(real_models: dict[str, ModelInfo]) -> None:
    m = real_models[LLAMA8B]
    hw = load_report("rtx4090_24gb")
    note = Reason("stored_corrections", {"corrections": {}})
    auto = recompute(m, hw, Pins())
    assert auto.fits and auto.settings.n_gpu_layers == m.n_layer + 1
    pinned = recompute(m, hw, Pins(n_gpu_layers=20, n_ctx=8192), notes=[note],
                       wishes=Wishes(pins=Pins(n_threads=3)))
    assert pinned.settings.n_gpu_layers == 20 and pinned.settings.n_ctx == 8192
    assert pinned.settings.n_threads == 3  # the wishes' own pins stay
    assert pinned.reasons[-1] == note
    assert pinned.wishes.pins == Pins(n_gpu_layers=20, n_ctx=8192, n_threads=3)


def test_a_recompute_on_a_real_model_is_the_planner_alone(
        real_models: dict[str, ModelInfo], monkeypatch: pytest.MonkeyPatch) -> None:
    """What a move of a control costs is the planner's arithmetic on the header already read:
    no dry run, no program started, no file read (its figure, against the panel's 30 ms per move:
    tests/bench/ui.py's recompute)."""
    import builtins
    import subprocess

    def refused(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a recompute started a program or read a file")

    ctx = ctx_for(real_models["gemma-3-27b-it"], "2x3090")
    ctx.plan(Pins())  # the first plan may import what planning needs
    monkeypatch.setattr(subprocess, "Popen", refused)
    monkeypatch.setattr(builtins, "open", refused)
    for ngl in range(0, 63, 3):
        pins = Pins(n_gpu_layers=ngl)
        p = ctx.plan(pins)
        assert p.settings.n_gpu_layers == ngl
        assert len(ctx.bars(p, pins)) == len(ctx.devices)


# -- what the fields show -------------------------------------------------------------------------


def test_a_field_shows_the_planners_choice_until_pinned(real_models: dict[str, ModelInfo]) -> None:
    ctx = ctx_for(real_models[LLAMA8B], "rtx4090_24gb")
    auto = ctx.plan(Pins())
    state = field_state(auto, Pins(), "n_ctx")
    assert state == tuning.FieldState("n_ctx", auto.settings.n_ctx, False)
    pins = Pins(n_ctx=2048)
    state = field_state(ctx.plan(pins), pins, "n_ctx")
    assert state.pinned and state.value == 2048
    # One GPU: the split is llama.cpp's default, even.
    assert field_state(auto, Pins(), "tensor_split").value == (1.0,)


def test_the_fields_shown_depend_on_the_machine_and_model(
        real_models: dict[str, ModelInfo]) -> None:
    mixtral, llama = real_models[MIXTRAL], real_models[LLAMA8B]
    everything = shown_fields(mixtral, load_report("2x3090"))
    assert everything == tuning.FIELDS
    one_gpu = shown_fields(llama, load_report("rtx4090_24gb"))
    assert "n_gpu_layers" in one_gpu
    assert "tensor_split" not in one_gpu and "n_cpu_moe" not in one_gpu
    cpu = shown_fields(mixtral, load_report("cpu_only_16gb"))
    assert not {"n_gpu_layers", "tensor_split", "n_cpu_moe"} & set(cpu)
    assert "n_ctx" in cpu and "mlock" in cpu


# -- the bars -------------------------------------------------------------------------------------


def test_bars_of_a_plan_that_fits(real_models: dict[str, ModelInfo]) -> None:
    ctx = ctx_for(real_models[MIXTRAL], "2x3090")
    plan = ctx.plan(Pins())
    bars = ctx.bars(plan, Pins())
    assert [b.kind for b in bars] == ["gpu", "gpu", "cpu"]
    for bar, b in zip(bars, plan.devices, strict=True):
        parts = {s.kind: s.bytes for s in bar.segments}
        assert parts["weights"] == b.usage.weights and parts["kv"] == b.usage.kv
        assert parts["compute"] == b.usage.compute
        assert parts["others"] == b.device.total - b.device.free
        assert bar.reserve == b.device.reserve and bar.fits and bar.over == 0
        assert bar.used + bar.reserve <= bar.capacity
    assert sum(b.layers for b in bars[:2]) == plan.model.n_layer + 1
    assert "RTX 3090" in header(bars[0], gpus=True) and "of 24.0 GiB" in header(bars[0], gpus=True)
    assert header(bars[2], gpus=True).startswith("System RAM")
    assert "kept free" in bars[0].detail()


def test_every_layer_pinned_to_one_gpu_shows_that_gpu_over(
        real_models: dict[str, ModelInfo]) -> None:
    ctx = ctx_for(real_models[MIXTRAL], "2x3090")
    pins = Pins(n_gpu_layers=33, n_cpu_moe=0, tensor_split=(1.0, 0.0))
    plan = ctx.plan(pins)
    assert not plan.fits
    first, second, cpu = ctx.bars(plan, pins)
    # The planner's fallback layout is an even split; the bar shows what these flags would do.
    assert first.layers == 33 and not first.fits and first.over > 0
    assert second.layers == 0 and second.fits and second.need == 0 and cpu.fits
    assert first.detail().startswith("Does not fit: needs")
    assert blamed_fields(plan) == {"n_gpu_layers", "n_cpu_moe", "tensor_split"}
    text = not_fit_text(plan)
    assert text is not None and "n_gpu_layers=33" in text
    assert text == wording.text(next(r for r in plan.reasons if r.code == "does_not_fit"))


def test_a_cpu_only_pin_still_shows_the_gpus_empty(real_models: dict[str, ModelInfo]) -> None:
    ctx = ctx_for(real_models[LLAMA8B], "2x3090")
    plan = ctx.plan(Pins(n_gpu_layers=0))
    assert not plan.gpus  # the planner planned for the CPU alone
    bars = ctx.bars(plan, Pins(n_gpu_layers=0))
    assert [b.kind for b in bars] == ["gpu", "gpu", "cpu"]
    assert bars[0].need == 0 and bars[2].layers == plan.model.n_layer + 1


def test_quantized_v_without_flash_attention_is_red_with_the_reason(
        real_models: dict[str, ModelInfo]) -> None:
    ctx = ctx_for(real_models[LLAMA8B], "rtx4090_24gb")
    pins = Pins(flash_attn="off", cache_type_v="q8_0")
    plan = ctx.plan(pins)
    assert not plan.fits
    assert blamed_fields(plan) == {"flash_attn", "cache_type_v"}
    assert "needs flash attention" in (not_fit_text(plan) or "")
    fine = ctx.plan(Pins())
    assert not_fit_text(fine) is None and blamed_fields(fine) == frozenset()


def test_a_unified_gpu_counts_against_ram(real_models: dict[str, ModelInfo]) -> None:
    ctx = ctx_for(real_models[LLAMA8B], "m2pro_16gb")
    plan = ctx.plan(Pins())
    bars = device_bars(plan, ctx.devices)
    gpu, cpu = bars[0], bars[-1]
    shared = {s.kind: s.bytes for s in cpu.segments}.get("shared")
    assert shared == gpu.need > 0


# -- what a load measured -------------------------------------------------------------------------


def test_measurements_from_the_runner_or_the_loader() -> None:
    status = [{"device": "CPU", "weights": 100 << 20, "kv": 64 << 20, "compute": 20 << 20},
              {"device": "CUDA0", "weights": 3 * GiB, "kv": GiB, "compute": 0}]
    got = measured_by_device(status)
    assert got["CPU"].total == 184 << 20 and got["CUDA0"].weights == 3 * GiB
    recorded = measured_by_device([Measurement("CPU", 1, 2, 64 << 20, 20 << 20)])
    assert recorded["CPU"].weights is None and recorded["CPU"].kv == 64 << 20


def test_measured_text_puts_each_figure_beside_its_prediction(
        real_models: dict[str, ModelInfo]) -> None:
    ctx = ctx_for(real_models[LLAMA8B], "cpu_only_16gb")
    bar = ctx.bars(ctx.plan(Pins(n_ctx=4096)), Pins(n_ctx=4096))[-1]
    kv = {s.kind: s.bytes for s in bar.segments}["kv"]
    text = measured_text(bar, tuning.Measured("CPU", kv=kv, compute=300 << 20))
    assert text.startswith("Measured after load: KV cache 512 MiB (predicted 512 MiB)")
    assert "Weights" not in text  # the loader's records have no weights figure
