"""The load ladder: which failures it retries, that it always ends, and what it records."""

from __future__ import annotations

import pytest

from app.gguf import ModelInfo
from app.loading.ladder import LadderState, LoadLadder, classify_failure, uses_gpu
from app.planner import LaunchPlan, Reason, Wishes, plan
from tests.unit.loading.conftest import load_report


@pytest.mark.parametrize(("code", "crashed", "message", "on_gpu", "kind"), [
    (4, False, "failed to allocate", False, "oom"),
    (4, False, "failed to allocate", True, "oom"),
    (3, False, "ggml_cuda_init: CUDA error: unspecified launch failure", True, "device"),
    (3, False, "vk::Queue::submit: ErrorDeviceLost", True, "device"),
    (3, False, "ggml_metal_init: error: failed to create command queue", True, "device"),
    (3, False, "CUDA error", False, None),  # on the CPU already: nothing to fall back to
    (3, False, "m.gguf: unknown model architecture 'llamaX'", True, None),
    (3, False, "/models/cuda-notes.gguf is not a GGUF model", True, None),
    (3, False, "cuda-notes.gguf: unknown model architecture", True, None),
    (None, True, "", True, "device"),  # crashed while loading on a GPU
    (None, True, "", False, None),
    (2, False, "no API key", True, None),
    (5, False, "port in use", True, None),
    (None, False, "The model runner could not be started", True, None),
])
def test_classify_failure(code: int | None, crashed: bool, message: str, on_gpu: bool,
                          kind: str | None) -> None:
    assert classify_failure(code, crashed, message, on_gpu, "/models/cuda-notes.gguf") == kind


def _gpu_plan(model: ModelInfo) -> LaunchPlan:
    return plan(model, load_report("rtx4090_24gb"), Wishes())


def test_out_of_memory_ladder_shrinks_and_ends(llama8b: ModelInfo) -> None:
    first = _gpu_plan(llama8b)
    assert uses_gpu(first)
    ladder = LoadLadder(first)
    tried = [first]
    while (nxt := ladder.failed("oom")) is not None:
        assert ladder.plan is nxt and ladder.active
        tried.append(nxt)
    assert ladder.state is LadderState.FAILED and ladder.exhausted
    assert ladder.attempts == len(tried) <= ladder.max_attempts
    ctxs = [p.settings.n_ctx for p in tried]
    assert ctxs == sorted(ctxs, reverse=True)
    assert ladder.steps == [p.reason_texts()[-1] for p in tried[1:]]
    assert ladder.steps[0] == (f"Out of memory: retrying with a context of {ctxs[1]} instead of "
                               f"{ctxs[0]}.")
    assert all(s.startswith("Out of memory") for s in ladder.steps)
    assert ladder.plan.settings.n_gpu_layers == 0  # the last step is the CPU
    assert ladder.failed("oom") is None  # once failed, it stays failed


def test_device_error_goes_to_the_cpu_once(llama8b: ModelInfo) -> None:
    ladder = LoadLadder(_gpu_plan(llama8b))
    cpu = ladder.failed("device")
    assert cpu is not None and cpu.settings.n_gpu_layers == 0 and not uses_gpu(cpu)
    assert ladder.steps == ["The GPU reported an error; retrying on the CPU only."]
    assert ladder.failed("device") is None and ladder.exhausted


def test_not_retryable_failure_ends_at_once(llama8b: ModelInfo) -> None:
    ladder = LoadLadder(_gpu_plan(llama8b))
    assert ladder.failed(None) is None
    assert ladder.state is LadderState.FAILED and not ladder.exhausted and ladder.steps == []


def test_cap_holds_even_for_a_step_function_that_never_ends(llama8b: ModelInfo) -> None:
    first = _gpu_plan(llama8b)

    def forever(p: LaunchPlan, _kind: str) -> LaunchPlan:
        return p.explained(Reason("fallback_kv", {"cache_type": "q8_0"}))

    ladder = LoadLadder(first, max_attempts=5, step=forever)
    n = 0
    while ladder.failed("oom") is not None:
        n += 1
        assert n < 100
    assert ladder.attempts == 5 and n == 4 and ladder.exhausted
    with pytest.raises(ValueError):
        LoadLadder(first, max_attempts=0)


def test_loaded_and_cancelled_ladders_do_not_retry(llama8b: ModelInfo) -> None:
    done = LoadLadder(_gpu_plan(llama8b))
    done.loaded()
    assert done.state is LadderState.LOADED and done.failed("oom") is None
    assert done.state is LadderState.LOADED  # a later death is not a load failure
    gone = LoadLadder(_gpu_plan(llama8b))
    assert gone.failed("oom") is not None
    gone.cancel()
    assert gone.state is LadderState.CANCELLED and not gone.active
    assert gone.failed("oom") is None and len(gone.steps) == 1
    gone.loaded()
    assert gone.state is LadderState.CANCELLED
