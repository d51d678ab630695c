"""A reason never compares two numbers that read the same (issue 25, defect 7): "keeps the compute
buffer at 514 MiB instead of 514 MiB" says nothing, and makes the user doubt the rest."""

from __future__ import annotations

import re

import pytest

from app.gguf import ModelInfo
from app.planner import Reason, Wishes, plan, wording
from app.planner.types import MiB
from tests.unit.planner.conftest import REPORT_NAMES, load_report

# "<a> instead of <b>": two figures a sentence sets against each other.
_VERSUS = re.compile(r"(\d[\d,.]*\s*[GM]iB) instead of (\d[\d,.]*\s*[GM]iB)")


def test_flash_attention_is_not_a_reason_when_it_changes_nothing_shown(
        real_models: dict[str, ModelInfo]) -> None:
    # Llama 3.1 8B at 2048 tokens: the output phase (a ubatch of 128k-token logits) is the
    # largest with flash attention and without, so both buffers are the same 266 MiB.
    p = plan(real_models["Llama-3.1-8B-Instruct"], load_report("rtx4090_24gb"),
             Wishes(context=2048))
    assert p.settings.flash_attn == "on"
    for t in p.reason_texts():
        for a, b in _VERSUS.findall(t):
            assert a != b, t
    assert not any(r.code == "flash_attn" for r in p.reasons)


def test_no_plan_sets_a_figure_against_the_same_figure(
        real_models: dict[str, ModelInfo]) -> None:
    compared = 0
    for report in REPORT_NAMES:
        hw = load_report(report)
        for m in real_models.values():
            for w in (Wishes(), Wishes(context=2048), Wishes(context=8192),
                      Wishes(cpu_only=True), Wishes(cpu_only=True, context=2048)):
                for t in plan(m, hw, w).reason_texts():
                    for a, b in _VERSUS.findall(t):
                        compared += 1
                        assert a != b, f"{m.name} on {report}, {w}: {t}"
    assert compared > 0  # where flash attention does save memory, the reason is still given


def test_flash_attention_is_still_explained_where_it_saves_memory(
        real_models: dict[str, ModelInfo]) -> None:
    # At 32k tokens the attention scores without flash attention are far larger.
    p = plan(real_models["Llama-3.1-8B-Instruct"], load_report("rtx4090_24gb"),
             Wishes(context=32768))
    fa = next(r for r in p.reasons if r.code == "flash_attn")
    assert wording.mib(fa.params["compute"]) != wording.mib(fa.params["compute_off"])
    assert "instead of" in wording.text(fa)


@pytest.mark.parametrize("on, off", [(514 * MiB, 514 * MiB),
                                     (539_000_000, 539_100_000)])
def test_the_sentence_never_compares_figures_that_read_the_same(on: int, off: int) -> None:
    # A reason recorded by another version (or built by hand) still reads sensibly.
    sentence = wording.text(Reason("flash_attn", {"compute": on, "compute_off": off}))
    assert wording.mib(on) == wording.mib(off)
    assert "instead of" not in sentence and sentence.startswith("Flash attention on")
