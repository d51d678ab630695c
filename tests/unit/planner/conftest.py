"""Shared fixtures: header-only real-shape models and recorded hardware reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.gguf import ModelInfo, read_model
from tests.fixtures.header_only import REAL_SHAPES, write_header_only

REPORTS = Path(__file__).resolve().parents[2] / "fixtures" / "hardware" / "reports"
REPORT_NAMES = ("rtx4090_24gb", "2x3090", "rtx3060_laptop", "m2pro_16gb", "cpu_only_16gb",
                "rx7900xtx")


@pytest.fixture(scope="session")
def real_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModelInfo]:
    folder = tmp_path_factory.mktemp("real-shapes")
    return {s.name: read_model(write_header_only(folder / f"{s.name}.gguf", s))
            for s in REAL_SHAPES}


def load_report(name: str):  # type: ignore[no-untyped-def]
    from app.hardware import HardwareReport

    path = REPORTS / f"{name}.json"
    if not path.exists():
        pytest.skip(f"recorded report {name} not present")
    return HardwareReport.from_json(json.loads(path.read_text()))
