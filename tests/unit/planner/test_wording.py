"""Reasons are records; one module words them."""

from __future__ import annotations

import pytest

from app.gguf import ModelInfo
from app.planner import LaunchPlan, Pins, Reason, Wishes, next_fallback, plan, wording
from tests.unit.planner.conftest import REPORT_NAMES, load_report


def _plans(real_models: dict[str, ModelInfo]) -> list[LaunchPlan]:
    out = []
    for report in REPORT_NAMES:
        hw = load_report(report)
        for m in real_models.values():
            for w in (Wishes(), Wishes(priority="context"), Wishes(context=8192),
                      Wishes(pins=Pins(n_gpu_layers=10, n_threads=3)), Wishes(cpu_only=True)):
                p: LaunchPlan | None = plan(m, hw, w)
                while p is not None:
                    out.append(p)
                    p = next_fallback(p, "oom")
    return out


def test_every_reason_the_planner_gives_has_wording(real_models: dict[str, ModelInfo]) -> None:
    seen: set[str] = set()
    for p in _plans(real_models):
        for r in p.reasons:
            seen.add(r.code)
            assert r.code in wording.known_codes(), r
            sentence = wording.text(r)
            assert sentence and not sentence[0].islower() and sentence.endswith((".", ")")), r
        assert p.reason_texts() == [wording.text(r) for r in p.reasons]
    # The common ones, at least, were exercised.
    assert {"all_layers_fit", "partial_offload", "threads", "reserve", "fallback_ctx",
            "does_not_fit", "cpu_as_asked", "pinned"} <= seen


def test_reasons_are_data(real_models: dict[str, ModelInfo]) -> None:
    p = plan(real_models["Qwen2.5-32B-Instruct"], load_report("rtx4090_24gb"), Wishes())
    capped = next(r for r in p.reasons if r.code == "ctx_capped")
    assert capped.params["n_ctx"] == p.settings.n_ctx
    assert capped.params["layers"] == 65 and capped.params["gpus"] == ["NVIDIA GeForce RTX 4090"]
    assert capped.to_json() == {"code": "ctx_capped", "params": dict(capped.params)}


def test_an_unknown_code_still_reads(caplog: pytest.LogCaptureFixture) -> None:
    assert wording.text(Reason("from_the_future", {"x": 1})) == "from_the_future: {'x': 1}"
    assert "no wording" in caplog.text


def test_formatters() -> None:
    assert wording.join_names(["A", "A"]) == "2× A"
    assert wording.join_names(["A", "B"]) == "A + B"
    assert wording.show([1.0, 2.5]) == "1,2.5"
