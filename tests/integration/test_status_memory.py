"""/runner/status reports the memory llama.cpp really allocated, per device."""

from __future__ import annotations

from typing import Any

from tests.fixtures.models import TINY


def test_status_memory_matches_llama_cpp_buffers(runner: Any) -> None:
    with runner.client() as http:
        status = http.get("/runner/status").json()
    memory = {m["device"]: m for m in status["memory"]}
    assert "CPU" in memory
    cpu = memory["CPU"]
    n_ctx = status["context"]["n_ctx"]
    head_dim = TINY.n_embd // TINY.n_head
    # KV cache: layers x cells x kv heads x (K + V) x f16 bytes (the formula in docs/architecture.md).
    expected_kv = TINY.n_layer * n_ctx * TINY.n_head_kv * (head_dim * 2 + head_dim * 2)
    assert abs(cpu["kv"] - expected_kv) <= 1024 * 1024 // 100 + 1  # the log rounds to 0.01 MiB
    assert cpu["weights"] > 0 and cpu["compute"] > 0
    assert status["settings"]["ctx_size"] == n_ctx
