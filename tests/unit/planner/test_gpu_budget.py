"""``Wishes.gpu_budget``: an 80 GB H100 planned as if it were a 24 GB or an 8 GB card."""

from __future__ import annotations

from app.gguf import ModelInfo
from app.planner import Wishes, plan, wording
from app.planner.devices import budgeted, devices_for
from app.planner.plan import within_budget
from app.planner.types import GiB, MiB, WorkerDevice
from tests.unit.planner.conftest import load_report

QWEN32 = "Qwen2.5-32B-Instruct"  # Q4_K_M: about 18 GiB of weights, 65 layers with the output


def test_budgeted_keeps_what_other_programs_use() -> None:
    assert budgeted(80 * GiB, 79 * GiB, GiB, None) == (80 * GiB, 79 * GiB)
    assert budgeted(80 * GiB, 79 * GiB, GiB, 8 * GiB) == (8 * GiB, 7 * GiB)
    # Others use more than the budget: nothing is left, never less than nothing.
    assert budgeted(80 * GiB, 70 * GiB, 10 * GiB, 8 * GiB) == (8 * GiB, 0)
    # A budget above the card changes nothing; free never grows past what is really free.
    assert budgeted(24 * GiB, 20 * GiB, GiB, 80 * GiB) == (24 * GiB, 20 * GiB)


def test_devices_for_shrinks_this_computers_gpus_only() -> None:
    hw = load_report("h100_80gb")
    worker = WorkerDevice("10.0.0.2:50052", 0, free=70 * GiB, total=80 * GiB)
    real = devices_for(hw, GiB, workers=[worker])
    small = devices_for(hw, GiB, workers=[worker], gpu_budget=8 * GiB)
    assert [d.llama_name for d in small] == ["RPC0", "CUDA0", "CPU"]
    rpc, gpu, cpu = small
    assert rpc == real[0] and cpu == real[2]  # a worker's device and the RAM keep their size
    assert gpu.total == 8 * GiB and gpu.used_by_others == real[1].used_by_others
    assert gpu.free == 8 * GiB - real[1].used_by_others
    assert gpu.budget == gpu.free - GiB  # the margin is kept inside the budget


def test_a_24_gib_budget_holds_every_layer_and_8_gib_does_not(
        real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("h100_80gb")
    model = real_models[QWEN32]
    whole = plan(model, hw, Wishes())
    assert whole.settings.n_gpu_layers == model.n_layer + 1
    assert whole.settings.n_ctx == model.n_ctx_train  # 80 GB: room for the whole context
    assert not any(r.code == "gpu_budget" for r in whole.reasons)

    p24 = plan(model, hw, Wishes(gpu_budget=24 * 1024 * MiB))
    assert p24.fits and p24.settings.n_gpu_layers == model.n_layer + 1
    assert p24.settings.n_ctx < whole.settings.n_ctx  # the smaller card caps the context
    assert p24.gpus[0].device.total == 24 * GiB

    p8 = plan(model, hw, Wishes(gpu_budget=8192 * MiB))
    assert p8.fits and 0 < p8.settings.n_gpu_layers < model.n_layer + 1
    assert any(r.code == "partial_offload" for r in p8.reasons)
    for p in (p24, p8):
        assert within_budget([b.device for b in p.devices], [b.usage for b in p.devices])
        assert p.gpus[0].usage.total <= p.gpus[0].device.total - GiB


def test_a_plan_under_a_budget_says_so_first(real_models: dict[str, ModelInfo]) -> None:
    p = plan(real_models[QWEN32], load_report("h100_80gb"), Wishes(gpu_budget=8192 * MiB))
    assert p.reasons[0].code == "gpu_budget" and p.reasons[0].params == {"budget": 8192 * MiB}
    assert p.reason_texts()[0] == (
        "Planned as if each GPU had 8,192 MiB (--gpu-budget-mib): a test of partial offload, "
        "not the real size of the card.")
    assert p.to_json()["reason_records"][0]["code"] == "gpu_budget"
    assert "gpu_budget" in wording.known_codes()


def test_no_budget_reason_without_a_gpu(real_models: dict[str, ModelInfo]) -> None:
    p = plan(real_models[QWEN32], load_report("h100_80gb"),
             Wishes(gpu_budget=8 * GiB, cpu_only=True))
    assert not p.gpus and not any(r.code == "gpu_budget" for r in p.reasons)
