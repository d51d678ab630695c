"""The fallback ladder and the corrections store (the dry run's tests: tests/unit/loading)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.gguf import ModelInfo
from app.planner import Correction, LaunchPlan, Wishes, next_fallback, plan
from app.planner.corrections import CorrectionStore, Measurement
from tests.unit.planner.conftest import load_report


@pytest.mark.parametrize("name", ["Mixtral-8x7B-Instruct-v0.1", "Llama-3.1-8B-Instruct"])
def test_ladder_shrinks_and_ends(name: str, real_models: dict[str, ModelInfo]) -> None:
    p: LaunchPlan | None = plan(real_models[name], load_report("rtx4090_24gb"), Wishes())
    seen = []
    steps = 0
    while p is not None:
        s = p.settings
        key = (s.n_ctx, s.cache_type_k, s.n_gpu_layers, s.n_cpu_moe)
        assert key not in seen, "the ladder repeated a plan"
        seen.append(key)
        p = next_fallback(p, "oom")
        steps += 1
        assert steps < 50
    last = seen[-1]
    assert last[2] == 0  # it ends on the CPU
    ctxs = [k[0] for k in seen]
    assert ctxs == sorted(ctxs, reverse=True)


def test_ladder_explains_each_step(real_models: dict[str, ModelInfo]) -> None:
    p = plan(real_models["Llama-3.1-8B-Instruct"], load_report("rtx4090_24gb"), Wishes())
    q = next_fallback(p, "oom")
    assert q is not None and q.settings.n_ctx == p.settings.n_ctx // 2
    assert q.reason_texts()[-1].startswith("Out of memory")
    assert q.reasons[-1].code == "fallback_ctx"
    assert q.reasons[-1].params == {"n_ctx": q.settings.n_ctx, "was": p.settings.n_ctx}
    assert q.fallback_steps == ("ctx",)
    d = next_fallback(p, "device")
    assert d is not None and d.settings.n_gpu_layers == 0
    assert next_fallback(d, "device") is None
    # the breakdown follows the new settings
    assert d.gpus[0].usage.total == 0


def test_corrections_store_roundtrip(tmp_path: Path) -> None:
    store = CorrectionStore(tmp_path / "c.json")
    settings = {"n_gpu_layers": 33, "n_ctx": 8192}
    store.record("m.gguf:1:2", "b1", settings, [Measurement("CUDA0", 100, 200, 110, 300)])
    c = store.corrections("m.gguf:1:2", "b1", settings)
    assert c["CUDA0"] == Correction(kv=1.1, compute=1.5)
    assert store.corrections("m.gguf:1:2", "other-build") == {}
    # absurd measurements are not applied
    store.record("m.gguf:1:2", "b1", {"n_ctx": 1}, [Measurement("CPU", 100, 100, 10_000, 1)])
    assert "CPU" not in store.corrections("m.gguf:1:2", "b1")
    (tmp_path / "c.json").write_text("{not json")
    assert store.corrections("m.gguf:1:2", "b1") == {}


def test_corrections_change_the_plan(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("rtx4090_24gb")
    m = real_models["Qwen2.5-32B-Instruct"]
    base = plan(m, hw, Wishes())
    worse = plan(m, hw, Wishes(), {"CUDA0": Correction(kv=1.3, compute=2.0)})
    assert worse.settings.n_ctx < base.settings.n_ctx
