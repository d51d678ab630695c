"""The plan as the runner's flags: what the dry run and the launch both start with."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.gguf import ModelInfo
from app.loading.flags import plan_args, plan_flags
from app.planner import Wishes, plan, plan_for_devices
from app.planner.types import Device, GiB, PlannerError
from tests.unit.loading.conftest import load_report


def test_plan_flags_leave_the_model_to_the_launch(llama8b: ModelInfo) -> None:
    p = plan(llama8b, load_report("rtx4090_24gb"), Wishes())
    flags = plan_flags(p, "/models/m.gguf")
    assert "--model" not in flags and "/models/m.gguf" not in flags
    assert ["--model", "/models/m.gguf", *flags] == plan_args(p, "/models/m.gguf")
    assert flags[flags.index("--ctx-size") + 1] == str(p.settings.n_ctx)
    assert plan_args(p)[1] == llama8b.path


def test_two_gpus_get_a_tensor_split(real_models: dict[str, ModelInfo]) -> None:
    p = plan(real_models["Llama-3.1-70B-Instruct"], load_report("2x3090"), Wishes())
    args = plan_args(p)
    assert args[args.index("--tensor-split") + 1] == ",".join(
        str(int(x)) for x in p.settings.tensor_split)


def test_plan_args_parse_with_the_runner_flags(real_models: dict[str, ModelInfo]) -> None:
    from runner.memory import build_parser
    from runner.settings import settings_from_args

    p = plan(real_models["Mixtral-8x7B-Instruct-v0.1"], load_report("rtx4090_24gb"), Wishes())
    args = build_parser().parse_args(plan_args(p))
    ls = settings_from_args(args)
    s = p.settings
    assert (ls.ctx_size, ls.n_gpu_layers, ls.batch_size, ls.ubatch_size) == (
        s.n_ctx, s.n_gpu_layers, s.n_batch, s.n_ubatch)
    assert (ls.threads, ls.flash_attn, ls.cache_type_k, ls.cache_type_v) == (
        s.n_threads, s.flash_attn, s.cache_type_k, s.cache_type_v)
    assert args.n_cpu_moe == s.n_cpu_moe


def test_bytes_only_plan_has_no_runner_args(real_models: dict[str, ModelInfo]) -> None:
    m = replace(real_models["Llama-3.1-8B-Instruct"], paths=())
    cpu = Device("CPU", "cpu", "cpu", 0, 64 * GiB, 64 * GiB, 0, 2 * GiB, llama_name="CPU")
    p = plan_for_devices(m, [cpu], 4, Wishes())
    with pytest.raises(PlannerError, match="download"):
        plan_args(p)
