"""The engine's stop-string hold-back, on the pure helper (no model needed)."""

from __future__ import annotations

import pytest

from runner.holdback import overlap

llama_engine = pytest.importorskip("runner.engine")


@pytest.mark.parametrize(("text", "stop", "held"), [
    ("hello <|e", "<|end|>", 3),
    ("hello <", "<|end|>", 1),
    ("hello", "<|end|>", 0),
    ("ab", "abc", 2),
    ("xabc", "abc", 0),  # a whole match is found by find(), not held
])
def test_overlap(text: str, stop: str, held: int) -> None:
    assert overlap(text, stop) == held


def test_common_prefix() -> None:
    assert llama_engine._common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert llama_engine._common_prefix([], [1]) == 0
    assert llama_engine._common_prefix([1, 2], [1, 2]) == 2
