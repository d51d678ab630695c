"""What the window says about a plan, a retry and a failure."""

from __future__ import annotations

from app.gguf import ModelInfo
from app.loading import text
from app.planner import Pins, Reason, Wishes, next_fallback, plan
from tests.unit.loading.conftest import load_report


def test_layers_and_summary(llama8b: ModelInfo, real_models: dict[str, ModelInfo]) -> None:
    full = plan(llama8b, load_report("rtx4090_24gb"), Wishes())
    assert text.layers_text(full) == "33/33 layers on the GPU"
    assert text.summary(full) == f"33/33 layers on the GPU, context {full.settings.n_ctx}"
    cpu = plan(llama8b, load_report("rtx4090_24gb"), Wishes(cpu_only=True))
    assert text.layers_text(cpu) == "on the CPU"
    part = plan(llama8b, load_report("rtx4090_24gb"), Wishes(pins=Pins(n_gpu_layers=20)))
    assert text.layers_text(part) == "20/33 layers on the GPU"
    two = plan(real_models["Llama-3.1-70B-Instruct"], load_report("2x3090"), Wishes())
    assert text.layers_text(two).endswith("layers on 2 GPUs")

    kv = full
    while kv is not None and "kv" not in kv.fallback_steps:
        kv = next_fallback(kv, "oom")
    assert kv is not None and text.summary(kv).endswith(", KV cache q8_0")


def test_status_lines(llama8b: ModelInfo) -> None:
    p = plan(llama8b, load_report("rtx4090_24gb"), Wishes())
    n = p.settings.n_ctx
    assert text.planning_text("m.gguf") == "Planning how to load m.gguf…"
    assert text.runner_state_text("starting", "m.gguf", p) == \
        f"Loading m.gguf — 33/33 layers on the GPU, context {n}…"
    assert text.runner_state_text("loading", "m.gguf", None) == "Loading m.gguf…"
    assert text.runner_state_text("ready", "m.gguf", p) == \
        f"m.gguf is ready — 33/33 layers on the GPU, context {n}."
    assert text.runner_state_text("stopped", "m.gguf", p) == "No model loaded."
    assert text.runner_state_text("stopping", "m.gguf", p) == "Unloading…"
    assert text.runner_state_text("failed", "m.gguf", p) is None


def test_reasons_list(llama8b: ModelInfo) -> None:
    p = plan(llama8b, load_report("rtx4090_24gb"), Wishes())
    q = next_fallback(p, "oom")
    assert q is not None
    lines = text.reasons_text(q, [q.reason_texts()[-1]]).splitlines()
    assert lines == [f"• {r}" for r in q.reason_texts()]  # the step is a reason: not twice
    assert text.reasons_text(p, ["Extra step."]).splitlines()[-1] == "• Extra step."


def test_failure_texts(llama8b: ModelInfo, real_models: dict[str, ModelInfo]) -> None:
    p = plan(llama8b, load_report("rtx4090_24gb"), Wishes(cpu_only=True))
    assert text.gave_up_text("m.gguf: unknown architecture", p, 0, False) == \
        "m.gguf: unknown architecture."
    msg = text.gave_up_text("Out of memory.", p, 3, True)
    assert msg.startswith("Out of memory. Hearth retried 3 times with smaller settings, down to "
                          "on the CPU, context")
    assert msg.endswith("close other programs and load it again.")
    assert "retried 1 time " in text.gave_up_text("x", p, 1, True)
    assert "no smaller settings" in text.gave_up_text("x", p, 0, True)
    assert text.died_text("The model runner stopped unexpectedly: it crashed.") == (
        "The model runner stopped unexpectedly: it crashed. Restart the model to continue; the "
        "conversation is kept.")
    huge = plan(real_models["Llama-3.1-70B-Instruct"], load_report("cpu_only_16gb"), Wishes())
    assert not huge.fits
    assert text.does_not_fit_text(huge) == f"Not loaded: {huge.reason_texts()[-1]}"
    assert "needs" in huge.reason_texts()[-1]
    # A note added after the planner's verdict (stored measurements, the dry run) is not why.
    noted = huge.explained(Reason("stored_corrections", {"corrections": {}}))
    assert text.does_not_fit_text(noted) == text.does_not_fit_text(huge)
