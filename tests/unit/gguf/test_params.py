"""The parameter count read from a header: every tensor's elements, as model cards count them."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from app.gguf import read_model
from tests.fixtures.header_only import LLAMA31_8B, MIXTRAL_8X7B, tensors, write_header_only


def test_llama31_8b_has_about_eight_billion_parameters(tmp_path: Path) -> None:
    model = read_model(write_header_only(tmp_path / "llama.gguf", LLAMA31_8B))
    # Meta's model card: 8.03B (embeddings and output head untied, both counted).
    assert model.n_params == pytest.approx(8.03e9, rel=0.005)


def test_the_count_is_the_sum_of_every_tensor_shape(tmp_path: Path) -> None:
    model = read_model(write_header_only(tmp_path / "mixtral.gguf", MIXTRAL_8X7B))
    expected = sum(math.prod(shape) for _, shape, _ in tensors(MIXTRAL_8X7B))
    assert model.n_params == expected
    assert model.n_params == pytest.approx(46.7e9, rel=0.01)  # "8x7B" is 46.7B in total
