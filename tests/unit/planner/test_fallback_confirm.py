"""The fallback ladder, the corrections store and the dry-run confirmation (fake probe)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.gguf import ModelInfo
from app.planner import Correction, LaunchPlan, Wishes, next_fallback, plan
from app.planner.confirm import ProbeUnavailableError, confirm
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
    assert q.reasons[-1].startswith("Out of memory")
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


def _fake_probe(factor: float) -> Any:
    calls: list[list[str]] = []

    def probe(args: list[str]) -> dict[str, Any]:
        calls.append(args)
        ctx = int(args[args.index("--ctx-size") + 1])
        kv = 64 * 8 * 128 * 2 * 2 * ctx  # Qwen 32B f16 KV per token × ctx
        return {"devices": [{"device": "CUDA0", "weights": 0, "kv": int(kv * factor),
                             "compute": 332398592}]}

    probe.calls = calls  # type: ignore[attr-defined]
    return probe


def test_confirm_agrees_or_corrects(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("rtx4090_24gb")
    m = real_models["Qwen2.5-32B-Instruct"]

    def replan(corr: Any) -> LaunchPlan:
        return plan(m, hw, Wishes(), corr)

    first = replan({})
    ok = confirm(replan, first, _fake_probe(1.0))
    assert ok.confirmed and ok.plan.settings == first.settings
    assert "matches" in ok.plan.reasons[-1]
    probe = _fake_probe(1.25)
    fixed = confirm(replan, first, probe)
    assert fixed.confirmed
    assert fixed.corrections["CUDA0"].kv == pytest.approx(1.25, rel=0.01)
    assert fixed.plan.settings.n_ctx < first.settings.n_ctx
    assert len(probe.calls) == 2


def test_confirm_fails_soft(real_models: dict[str, ModelInfo]) -> None:
    hw = load_report("rtx4090_24gb")
    m = real_models["Llama-3.1-8B-Instruct"]
    first = plan(m, hw, Wishes())

    def broken(args: list[str]) -> dict[str, Any]:
        raise ProbeUnavailableError("no runner installed")

    c = confirm(lambda corr: plan(m, hw, Wishes(), corr), first, broken)
    assert not c.confirmed and c.plan is first and "no runner" in c.note
