"""Header-only models of real shapes and recorded machines, as the planner's tests use them."""

from __future__ import annotations

import pytest

from app.gguf import ModelInfo
from tests.unit.planner.conftest import load_report, real_models

__all__ = ["load_report", "real_models"]


@pytest.fixture(scope="session")
def llama8b(real_models: dict[str, ModelInfo]) -> ModelInfo:
    return real_models["Llama-3.1-8B-Instruct"]
