"""A base model without a chat template chats in its own turn format, not ChatML's.

The test model has Gemma's turn markers as control tokens and no chat template, like a Gemma
base conversion: the runner must render ``<start_of_turn>``, never ``<|im_start|>`` (which such a
vocabulary spells out as characters), and the reply shows no marker.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fixtures.models import GEMMA_BASE, TINY, model_path
from tests.integration.conftest import Runner, running


@pytest.fixture(scope="module")
def gemma_base() -> Iterator[Runner]:
    with running(model=model_path(GEMMA_BASE)) as r:
        yield r


def _chat(r: Runner) -> dict:  # type: ignore[type-arg]
    with r.client() as http:
        resp = http.post("/v1/chat/completions", json={
            "messages": [{"role": "user", "content": "hello there"}], "max_tokens": 24,
            "seed": 1})
    assert resp.status_code == 200, resp.text
    return resp.json()  # type: ignore[no-any-return]


def test_the_vocabulary_picks_gemma_and_the_prompt_uses_its_markers(gemma_base: Runner) -> None:
    with gemma_base.client() as http:
        status = http.get("/runner/status").json()
    assert status["chat_format"] == "gemma"
    reply = _chat(gemma_base)
    # The chat prompt is exactly Gemma's turn format (raw completion prompts parse the markers as
    # the control tokens they are); ChatML's markers would be spelled out here, far longer.
    gemma = "<start_of_turn>user\nhello there<end_of_turn>\n<start_of_turn>model\n"
    chatml = "<|im_start|>user\nhello there<|im_end|>\n<|im_start|>assistant\n"
    with gemma_base.client() as http:
        counts = [http.post("/v1/completions", json={"prompt": p, "max_tokens": 1})
                  .json()["usage"]["prompt_tokens"] for p in (gemma, chatml)]
    assert reply["usage"]["prompt_tokens"] == counts[0] < counts[1]
    text = reply["choices"][0]["message"]["content"]
    assert "<start_of_turn>" not in text and "<end_of_turn>" not in text
    assert "<|im_end|>" not in text


def test_a_model_with_its_own_template_keeps_it(runner: Runner) -> None:
    with runner.client() as http:
        assert http.get("/runner/status").json()["chat_format"] == "template"
    assert TINY.chat_template is not None
