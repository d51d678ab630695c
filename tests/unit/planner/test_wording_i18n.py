"""Issue 27: every reason a plan gives is a translatable :class:`app.i18n.Text`.

The window shows ``ui_text(reason)``; here a fake language stands in for Qt's catalog: every
sentence, and every piece nested in one (sizes, device lists, the thread count), must change
when translated, and its English value must not.
"""

from __future__ import annotations

from app.gguf import ModelInfo
from app.hub.verdict import verdict_for
from app.i18n import Text
from app.loading import text as load_text
from app.planner import LaunchPlan, Reason, wording
from tests.unit.planner.conftest import load_report
from tests.unit.planner.test_wording import _plans

MARK = "[xx] "


def fake(template: str, n: int) -> str:
    return MARK + template


def _check(sentence: object) -> str:
    assert isinstance(sentence, Text), f"not translatable: {sentence!r}"
    english = str.__str__(sentence)
    translated = sentence.translated(fake)
    assert str.__str__(sentence) == english
    assert translated.startswith(MARK) and translated != english, translated
    assert "{" not in translated, translated  # every placeholder filled in the translation too
    assert translated.replace(MARK, "").replace("[xx]", "") == english, (translated, english)
    return translated


def test_every_reason_of_every_plan_is_translatable(real_models: dict[str, ModelInfo]) -> None:
    codes: set[str] = set()
    plans: list[LaunchPlan] = _plans(real_models)
    for p in plans:
        for r, sentence in zip(p.reasons, p.reason_texts(), strict=True):
            codes.add(r.code)
            _check(sentence)
    assert {"all_layers_fit", "partial_offload", "threads", "reserve", "fallback_ctx",
            "does_not_fit", "pinned"} <= codes


def test_nested_pieces_are_translated_too(real_models: dict[str, ModelInfo]) -> None:
    partial = next(s for p in _plans(real_models)
                   for r, s in zip(p.reasons, p.reason_texts(), strict=True)
                   if r.code == "partial_offload")
    assert _check(partial).count(MARK) == 3  # the sentence and its two sizes


def test_reasons_from_elsewhere_keep_their_translation() -> None:
    """A ``why`` that is itself a Text (a runtime's failed self-test, a worker's problem) ends
    another sentence without its full stop, in English and in the translation."""
    why = wording.T_("the check could not run ({error})", error="timed out")
    for code in ("worker_unavailable", "runtime_skipped", "runner_unknown"):
        sentence = wording.text(Reason(code, {"endpoint": "h:1", "runtime": "cuda12",
                                              "why": why}))
        assert _check(sentence).count(MARK) == 2
    split = wording.text(Reason("split_machines", {"parts": [
        {"first": 0, "last": 9, "machine": "", "device": "CUDA0"},
        {"first": 10, "last": 9, "machine": "h:1", "device": "CPU"}]}))
    assert split == "Split over several machines: layers 0–9 on this computer's CUDA0; the " \
                    "output layer on h:1 (CPU)."
    _check(split)


def test_the_status_lines_and_verdicts_are_translatable(real_models: dict[str, ModelInfo]) -> None:
    p = next(p for p in _plans(real_models) if p.fits and p.gpus)
    for sentence in (load_text.summary(p), load_text.loading_text("M", p),
                     load_text.ready_text("M", p), load_text.reasons_text(p),
                     load_text.gave_up_text("out of memory", p, 2, True),
                     load_text.died_text(""), load_text.planning_text("M")):
        _check(sentence)
    model = next(iter(real_models.values()))
    v = verdict_for(model, load_report("rtx4090_24gb"))
    _check(v.label())
    _check(v.tooltip())
