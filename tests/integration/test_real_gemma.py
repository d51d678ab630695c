"""The real Gemma 3 270M base file (no chat template) chats in Gemma's turn format.

The file is not in the repository (DESIGN.md: four PyPI wheels, ``tests/.models`` is ignored);
the test is skipped where it is missing and marked slow.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.conftest import running

REAL = Path(__file__).resolve().parents[1] / ".models" / "gemma-3-270m-q4_k_m.gguf"
MARKERS = ("<start_of_turn>", "<end_of_turn>", "<|im_start|>", "<|im_end|>", "<eos>")


@pytest.mark.slow
@pytest.mark.skipif(not REAL.exists(), reason="the real Gemma 3 270M file is not in tests/.models")
def test_the_real_gemma_base_file_chats_in_its_own_format_without_markers() -> None:
    with running(model=REAL) as r, r.client() as http:
        assert http.get("/runner/status").json()["chat_format"] == "gemma"
        for question in ("What is the capital of France?", "Say hello."):
            resp = http.post("/v1/chat/completions", json={
                "messages": [{"role": "user", "content": question}], "max_tokens": 48,
                "temperature": 0})
            assert resp.status_code == 200, resp.text
            body = resp.json()["choices"][0]
            text = body["message"]["content"]
            assert text.strip() and not any(m in text for m in MARKERS), text
