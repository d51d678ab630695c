"""Several machines: RPC workers' devices are planned like GPUs, before this computer's, and the
plan says which layers each machine holds; a lost worker falls back to this computer alone."""

from __future__ import annotations

import itertools

from app.gguf import ModelInfo
from app.loading.flags import plan_args
from app.loading.ladder import classify_failure
from app.planner import Wishes, next_fallback, plan, wording
from app.planner.devices import devices_for
from app.planner.types import GiB, WorkerDevice
from runner.wire.exits import ExitCode
from tests.unit.planner.conftest import load_report

TWO = (WorkerDevice("192.168.1.20:50052", 0, 30 * GiB, 32 * GiB),
       WorkerDevice("192.168.1.21:50052", 0, 12 * GiB, 16 * GiB))


def test_worker_devices_come_first_named_as_llama_cpp_names_them() -> None:
    hw = load_report("rtx3060_laptop")
    devs = devices_for(hw, GiB, workers=TWO)
    assert [d.llama_name for d in devs] == ["RPC0", "RPC1", "CUDA0", "CPU"]
    assert [d.worker for d in devs] == ["192.168.1.20:50052", "192.168.1.21:50052", "", ""]
    # A worker may lend a CPU's RAM: it keeps at least the RAM headroom, not just 1 GiB.
    assert devs[1].budget == 12 * GiB - max(2 * GiB, int(16 * GiB * 0.1))
    assert devices_for(hw, GiB, cpu_only=True, workers=TWO)[0].kind == "cpu"


def test_a_model_too_big_for_one_machine_is_split_and_explained_per_machine(
        real_models: dict[str, ModelInfo]) -> None:
    model = real_models["Llama-3.1-70B-Instruct"]
    hw = load_report("rtx3060_laptop")
    alone = plan(model, hw, Wishes(context=4096))
    split = plan(model, hw, Wishes(context=4096), workers=TWO)
    assert split.fits and split.settings.n_gpu_layers > alone.settings.n_gpu_layers
    per_device = [b.usage.layers for b in split.devices]
    assert per_device[0] > 0 and per_device[1] > 0  # both workers hold layers
    assert sum(per_device[:3]) == split.settings.n_gpu_layers
    # The flags name the workers in device order and split the layers over all three devices.
    args = plan_args(split, "/models/70b.gguf")
    assert args[args.index("--rpc") + 1] == "192.168.1.20:50052,192.168.1.21:50052"
    assert len(args[args.index("--tensor-split") + 1].split(",")) == 3
    # The reason names each machine with its layer range, in llama.cpp's order.
    reason = next(r for r in split.reasons if r.code == "split_machines")
    parts = reason.params["parts"]
    assert [p["machine"] for p in parts] == ["", "192.168.1.20:50052", "192.168.1.21:50052", ""]
    assert parts[0]["first"] == 0 and parts[-1]["output"]
    for a, b in itertools.pairwise(parts):
        assert b["first"] == a["last"] + 1
    text = wording.text(reason)
    assert "on 192.168.1.20:50052 (RPC0)" in text and "this computer's RAM" in text
    assert text.startswith("Split over several machines: layer")


def test_a_plan_that_fits_here_uses_no_worker_for_nothing(
        real_models: dict[str, ModelInfo]) -> None:
    model = real_models["Llama-3.1-8B-Instruct"]
    p = plan(model, load_report("rtx4090_24gb"), Wishes(context=8192), workers=TWO)
    # The local GPU is filled first (the output head stays on this computer), and the idle
    # workers are not even named to llama.cpp (each would be held for nothing).
    assert p.devices[0].device.llama_name == "CUDA0"
    assert p.devices[0].usage.layers == model.n_layer + 1
    assert not any(b.device.worker for b in p.devices)
    assert "--rpc" not in plan_args(p, "/m.gguf")
    assert not any(r.code == "split_machines" for r in p.reasons)


def test_a_lost_worker_falls_back_to_this_computer_alone(
        real_models: dict[str, ModelInfo]) -> None:
    model = real_models["Qwen2.5-32B-Instruct"]
    hw = load_report("rtx4090_24gb")
    split = plan(model, hw, Wishes(context=32768), workers=TWO)
    assert "--rpc" in plan_args(split, "/m.gguf")
    local = next_fallback(split, "worker_lost")
    assert local is not None
    assert all(not b.device.worker for b in local.devices)
    assert "--rpc" not in (args := plan_args(local, "/m.gguf"))
    assert "--tensor-split" not in args  # one local GPU left
    here = {b.device.llama_name: b.usage.layers for b in split.devices}
    assert here["RPC0"] > 0
    assert local.settings.n_gpu_layers == local.devices[0].usage.layers == here["CUDA0"]
    assert wording.text(local.reasons[-1]) == (
        "A worker stopped answering: loading again on this computer alone, without "
        "192.168.1.21:50052.")
    assert next_fallback(local, "worker_lost") is None  # taken once


def test_the_runner_exit_for_a_lost_worker_is_its_own_failure_kind() -> None:
    assert classify_failure(ExitCode.WORKER_LOST, False, "", on_gpu=False) == "worker_lost"
    msg = "m.gguf: the worker at 10.0.0.5:50052 cannot be reached (Connection refused)"
    assert classify_failure(ExitCode.LOAD_FAILED, False, msg, on_gpu=True) == "worker_lost"
    assert classify_failure(ExitCode.LOAD_FAILED, False, "m.gguf: not a GGUF file",
                            on_gpu=True) is None
