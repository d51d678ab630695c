"""Plans for real model shapes on recorded hardware: within budget, and not conservative."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.gguf import ModelInfo
from app.planner import LaunchPlan, Pins, Wishes, plan
from app.planner.devices import ram_headroom
from app.planner.memory import predict_counts
from app.planner.plan import within_budget
from app.planner.types import GiB, PlanDoesNotFitError
from tests.unit.planner.conftest import REPORT_NAMES, load_report


def _usages(p: LaunchPlan, **changes: object) -> list:  # type: ignore[type-arg]
    s = replace(p.settings, **changes)  # type: ignore[arg-type]
    counts = [b.usage.layers for b in p.gpus]
    # usage.layers counts the output head with the GPU that holds it: that is the ngl share
    return predict_counts(p.model, s, [b.device for b in p.devices], counts)


def _counts(p: LaunchPlan) -> list[int]:
    return [b.usage.layers for b in p.gpus]


def assert_tight(p: LaunchPlan, ctx_fixed: bool = False) -> None:
    """One more layer, one fewer expert on the CPU, or 256 more context would not fit."""
    devices = [b.device for b in p.devices]
    s, m = p.settings, p.model
    counts = _counts(p)
    if p.gpus and s.n_gpu_layers < m.n_layer + 1:
        for g in range(len(counts)):
            more = list(counts)
            more[g] += 1
            assert not within_budget(devices, predict_counts(m, s, devices, more)), \
                f"one more layer on GPU {g} would still fit"
    if p.gpus and s.n_cpu_moe > 0:
        fewer = replace(s, n_cpu_moe=s.n_cpu_moe - 1)
        assert not within_budget(devices, predict_counts(m, fewer, devices, counts)), \
            "one more layer's experts on the GPU would still fit"
    if s.n_ctx < m.n_ctx_train and not ctx_fixed:
        bigger = replace(s, n_ctx=s.n_ctx + 256)
        assert not within_budget(devices, predict_counts(m, bigger, devices, counts)), \
            "256 more context would still fit"


@pytest.mark.parametrize("report", REPORT_NAMES)
def test_real_shapes_on_recorded_hardware(report: str, real_models: dict[str, ModelInfo]) -> None:
    hw = load_report(report)
    for name, model in real_models.items():
        p = plan(model, hw, Wishes())
        for b in p.devices:
            assert b.device.budget == max(0, b.device.free - b.device.reserve)
        if not p.fits:
            assert "needs" in p.reason_texts()[-1], name
            with pytest.raises(PlanDoesNotFitError):
                p.ensure_fits()
            continue
        assert within_budget([b.device for b in p.devices], [b.usage for b in p.devices]), name
        for b in p.gpus:
            assert b.usage.total <= b.device.free - Wishes().margin, (name, b.device.name)
        assert p.settings.n_ctx >= min(4096, model.n_ctx_train)
        assert_tight(p)
        texts = p.reason_texts()
        assert texts and all(r.endswith((".", ")")) for r in texts), texts


def test_expected_outcomes_on_a_4090(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("rtx4090_24gb")
    llama8 = plan(real_models["Llama-3.1-8B-Instruct"], hw, Wishes())
    assert llama8.settings.n_gpu_layers == 33 and llama8.settings.n_ctx == 131072
    qwen = plan(real_models["Qwen2.5-32B-Instruct"], hw, Wishes())
    assert qwen.settings.n_gpu_layers == 65
    assert 4096 <= qwen.settings.n_ctx < 32768
    assert any("Context capped at" in r and "65 layers" in r for r in qwen.reason_texts())
    # MoE: experts go to the CPU before any whole layer does
    mix = plan(real_models["Mixtral-8x7B-Instruct-v0.1"], hw, Wishes())
    assert mix.settings.n_gpu_layers == 33 and mix.settings.n_cpu_moe > 0
    big = plan(real_models["gpt-oss-120b"], hw, Wishes())
    assert big.settings.n_gpu_layers == 37 and 0 < big.settings.n_cpu_moe <= 36
    seventy = plan(real_models["Llama-3.1-70B-Instruct"], hw, Wishes())
    assert 0 < seventy.settings.n_gpu_layers < 81


def test_two_gpus_split_the_layers(real_models: dict[str, ModelInfo]) -> None:
    p = plan(real_models["Llama-3.1-70B-Instruct"], load_report("2x3090"), Wishes())
    assert p.fits and p.settings.n_gpu_layers == 81
    assert len(p.settings.tensor_split) == 2 and all(x > 0 for x in p.settings.tensor_split)
    assert sum(p.settings.tensor_split) == 81


def test_context_first_keeps_context(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("rtx4090_24gb")
    m = real_models["Qwen2.5-32B-Instruct"]
    speed = plan(m, hw, Wishes(priority="speed"))
    ctx = plan(m, hw, Wishes(priority="context"))
    assert ctx.settings.n_ctx == 32768 > speed.settings.n_ctx
    assert ctx.settings.n_gpu_layers < speed.settings.n_gpu_layers
    assert_tight(ctx)


def test_fixed_context_and_max(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("rtx4090_24gb")
    m = real_models["Llama-3.1-70B-Instruct"]
    p = plan(m, hw, Wishes(context=8192))
    assert p.settings.n_ctx == 8192
    assert_tight(p, ctx_fixed=True)
    mx = plan(m, hw, Wishes(context="max"))
    assert mx.settings.n_ctx == 131072
    assert mx.settings.n_gpu_layers < p.settings.n_gpu_layers


def test_pins_stay_pinned(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("rtx4090_24gb")
    m = real_models["Qwen2.5-32B-Instruct"]
    p = plan(m, hw, Wishes(pins=Pins(n_gpu_layers=40, cache_type_k="q8_0", cache_type_v="q8_0")))
    assert p.fits
    assert p.settings.n_gpu_layers == 40
    assert p.settings.cache_type_k == "q8_0"
    assert any("Pinned by you" in r for r in p.reason_texts())
    # the context grows into the room the pinned layers leave
    assert p.settings.n_ctx == 32768 or not within_budget(
        [b.device for b in p.devices], _usages(p, n_ctx=p.settings.n_ctx + 256))


def test_pins_that_cannot_fit_say_so(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("rtx4090_24gb")
    m = real_models["Llama-3.1-70B-Instruct"]
    p = plan(m, hw, Wishes(pins=Pins(n_gpu_layers=81, n_ctx=32768)))
    assert not p.fits
    assert p.settings.n_gpu_layers == 81 and p.settings.n_ctx == 32768
    why = p.reason_texts()[-1]
    assert "pinned" in why and "n_gpu_layers=81" in why
    assert p.reasons[-1].code == "does_not_fit"
    assert p.reasons[-1].params["pinned"] == {"n_gpu_layers": 81, "n_ctx": 32768}
    bad = plan(m, hw, Wishes(pins=Pins(flash_attn="off", cache_type_v="q8_0")))
    assert not bad.fits and "flash attention" in bad.reason_texts()[-1]


def test_quantized_kv_only_when_allowed(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("rtx3060_laptop")
    m = real_models["Llama-3.1-8B-Instruct"]
    assert plan(m, hw, Wishes()).settings.cache_type_k == "q8_0"
    p = plan(m, hw, Wishes(allow_quantized_kv=False))
    assert p.settings.cache_type_k == "f16"
    assert_tight(p)


def test_cpu_only_keeps_headroom(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("cpu_only_16gb")
    p = plan(real_models["Llama-3.1-8B-Instruct"], hw, Wishes())
    assert p.fits and p.settings.n_gpu_layers == 0
    cpu = p.cpu
    assert cpu.device.reserve == max(2 * GiB, int(hw.memory.total * 0.1))
    assert cpu.usage.total <= hw.memory.available - ram_headroom(hw.memory.total)
    assert p.settings.n_threads == hw.cpu.physical_cores
    assert_tight(p)


def test_performance_cores_set_threads(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("m2pro_16gb")
    p = plan(real_models["Llama-3.1-8B-Instruct"], hw, Wishes())
    assert p.settings.n_threads == hw.cpu.performance_cores
    # unified memory: GPU and CPU use come out of the same RAM
    assert p.fits
    assert sum(b.usage.total for b in p.devices) <= hw.memory.available - ram_headroom(
        hw.memory.total)


def test_margin_is_configurable(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("rtx4090_24gb")
    m = real_models["Qwen2.5-32B-Instruct"]
    tight = plan(m, hw, Wishes(margin=256 << 20))
    loose = plan(m, hw, Wishes(margin=3 * GiB))
    assert tight.settings.n_ctx > loose.settings.n_ctx


def test_json_shape(real_models: dict[str, ModelInfo]) -> None:
    p = plan(real_models["gemma-3-27b-it"], load_report("2x3090"), Wishes())
    j = p.to_json()
    for key in ("n_gpu_layers", "n_ctx", "n_batch", "n_ubatch", "n_threads", "flash_attn",
                "cache_type_k", "cache_type_v", "tensor_split"):
        assert key in j["settings"]
    for d in j["devices"]:
        assert {"name", "total", "free"} <= set(d)
        assert all(isinstance(d["predicted"][k], int) for k in ("weights", "kv", "compute"))
    assert isinstance(j["reasons"], list) and j["reasons"]
    assert [r["code"] for r in j["reason_records"]] == [r.code for r in p.reasons]
    assert j["reasons"] == p.reason_texts()
