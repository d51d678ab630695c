"""Plans for the devices the runner build drives, not for every GPU the machine has (defect 5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.gguf import ModelInfo
from app.hardware import merge_runner_devices
from app.planner import Wishes, plan
from app.planner.devices import choose_gpus, devices_for
from tests.unit.planner.conftest import load_report

RUNNER = Path(__file__).resolve().parents[2] / "fixtures" / "hardware" / "runner"


def runner_json(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RUNNER / f"{name}.json").read_text())
    return data


def test_a_cpu_only_build_on_two_3090s_plans_for_the_cpu(real_models: dict[str, ModelInfo]) -> None:
    # Today's dev install on an NVIDIA PC: the machine has two GPUs, the runner build none.
    hw = merge_runner_devices(load_report("2x3090"), runner_json("cpu_only_build"))
    assert choose_gpus(hw) == [] and [d.kind for d in devices_for(hw, 1 << 30)] == ["cpu"]
    p = plan(real_models["Llama-3.1-8B-Instruct"], hw, Wishes())
    assert p.fits and p.gpus == []
    assert p.settings.n_gpu_layers == 0 and p.settings.tensor_split == ()
    first = p.reasons[0]
    assert first.code == "build_without_gpu"
    assert first.params == {"gpus": ["NVIDIA GeForce RTX 3090"] * 2, "backends": ["cuda"],
                            "cause": "no_support"}
    assert p.reason_texts()[0].startswith(
        "This runner build has no CUDA support: running on the CPU.")
    assert "2× NVIDIA GeForce RTX 3090" in p.reason_texts()[0]
    assert not any("GPU that llama.cpp can use" in t for t in p.reason_texts())


def test_a_model_too_big_for_the_cpu_says_the_gpus_are_not_used(
        real_models: dict[str, ModelInfo]) -> None:
    hw = merge_runner_devices(load_report("2x3090"), runner_json("cpu_only_build"))
    hw.memory.available = hw.memory.total = 32 << 30  # a 70B model no longer fits in RAM
    p = plan(real_models["Llama-3.1-70B-Instruct"], hw, Wishes())
    assert not p.fits
    assert [r.code for r in p.reasons] == ["build_without_gpu", "does_not_fit"]


def test_a_cuda_build_uses_both_gpus_as_before(real_models: dict[str, ModelInfo]) -> None:
    machine = load_report("2x3090")
    hw = merge_runner_devices(machine, runner_json("cuda_2x3090"))
    m = real_models["Llama-3.1-70B-Instruct"]
    p = plan(m, hw, Wishes())
    assert [b.device.llama_name for b in p.gpus] == ["CUDA0", "CUDA1"]
    assert p.settings.n_gpu_layers == 81 and len(p.settings.tensor_split) == 2
    # The same plan as for the machine alone: the runner's word only narrows the devices.
    assert p.settings == plan(m, machine, Wishes()).settings
    assert not any(r.code in ("build_without_gpu", "gpus_not_driven") for r in p.reasons)


def test_a_gpu_the_build_does_not_see_is_left_out_and_named(
        real_models: dict[str, ModelInfo]) -> None:
    # A CUDA build that sees only the first card (CUDA_VISIBLE_DEVICES, a driver problem).
    one = runner_json("cuda_2x3090")
    one["devices"] = [d for d in one["devices"] if d["name"] != "CUDA1"]
    hw = merge_runner_devices(load_report("2x3090"), one)
    p = plan(real_models["Llama-3.1-8B-Instruct"], hw, Wishes())
    assert [b.device.llama_name for b in p.gpus] == ["CUDA0"]
    left = [r for r in p.reasons if r.code == "gpus_not_driven"]
    assert len(left) == 1 and left[0].params["cause"] == "not_seen"
    assert "The NVIDIA GeForce RTX 3090 is not used: the runner does not see it" in \
        p.reason_texts()[0]


def test_cpu_only_wish_on_a_cpu_build_says_as_asked(real_models: dict[str, ModelInfo]) -> None:
    hw = merge_runner_devices(load_report("2x3090"), runner_json("cpu_only_build"))
    p = plan(real_models["Llama-3.1-8B-Instruct"], hw, Wishes(cpu_only=True))
    assert p.reasons[0].code == "cpu_as_asked"


def test_without_the_runners_word_every_gpu_counts(real_models: dict[str, ModelInfo]) -> None:
    # A recorded report never merged (hearth plan --hardware without --runner-json).
    p = plan(real_models["Llama-3.1-70B-Instruct"], load_report("2x3090"), Wishes())
    assert len(p.gpus) == 2
