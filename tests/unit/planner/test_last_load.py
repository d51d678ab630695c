"""The newest load's measurements, as a panel opened after that load shows them."""

from __future__ import annotations

import json
from pathlib import Path

from app.planner.corrections import CorrectionStore, Measurement

SMALL = {"n_gpu_layers": 0, "n_ctx": 2048, "n_ubatch": 512, "flash_attn": "on",
         "cache_type_k": "f16", "cache_type_v": "f16", "n_cpu_moe": 0}
BIG = {**SMALL, "n_ctx": 8192}


def test_the_newest_load_of_the_model_on_the_build(tmp_path: Path) -> None:
    store = CorrectionStore(tmp_path / "c.json")
    assert store.last_load("m.gguf:1:2", "b1") == []
    store.record("m.gguf:1:2", "b1", SMALL, [Measurement("CPU", 10, 20, 11, 21)])
    store.record("m.gguf:1:2", "b1", BIG, [Measurement("CUDA0", 30, 40, 31, 41),
                                           Measurement("CPU", 50, 60, 51, 61)])
    store.record("m.gguf:1:2", "b2", SMALL, [Measurement("CPU", 1, 2, 3, 4)])  # another build
    store.record("other.gguf:1:2", "b1", SMALL, [Measurement("CPU", 1, 2, 3, 4)])
    got = {m.device: m for m in store.last_load("m.gguf:1:2", "b1")}
    assert got == {"CUDA0": Measurement("CUDA0", 30, 40, 31, 41),
                   "CPU": Measurement("CPU", 50, 60, 51, 61)}
    # The small settings again: now they are the newest.
    store.record("m.gguf:1:2", "b1", SMALL, [Measurement("CPU", 10, 20, 12, 22)])
    assert store.last_load("m.gguf:1:2", "b1") == [Measurement("CPU", 10, 20, 12, 22)]


def test_a_damaged_entry_is_left_out(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    store = CorrectionStore(path)
    store.record("m", "b", SMALL, [Measurement("CPU", 10, 20, 11, 21),
                                   Measurement("CUDA0", 1, 2, 3, 4)])
    data = json.loads(path.read_text())
    data["entries"][-1]["measured_kv"] = "lots"
    path.write_text(json.dumps(data))
    assert store.last_load("m", "b") == [Measurement("CPU", 10, 20, 11, 21)]
