"""Raw text prompts parse the special tokens written in them, as llama-server's do.

A prompt in the model's own turn format (``<|im_start|>user…<|im_end|>``) must reach the model as
its control tokens, one token each, not as the characters ``<``, ``|``, ``i``…: otherwise the model
cannot see the turns. The tiny test model's vocabulary ends in ChatML's two control tokens.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.fixtures.models import TINY, vocabulary
from tests.integration.conftest import Runner, running

TEXT = "user\nhello"
TURN = f"<|im_start|>{TEXT}<|im_end|>"
MARKERS = 2  # <|im_start|> and <|im_end|>: one control token each


@pytest.fixture(scope="module")
def embed_runner(tiny_model: Path) -> Iterator[Runner]:
    with running("--embedding", "--batch-size", "64", model=tiny_model) as r:
        yield r


def _completion_prompt_tokens(r: Runner, prompt: str | list[int]) -> int:
    with r.client() as http:
        resp = http.post("/v1/completions", json={"prompt": prompt, "max_tokens": 1})
    assert resp.status_code == 200, resp.text
    data: dict[str, Any] = resp.json()
    return int(data["usage"]["prompt_tokens"])


def _embedding_prompt_tokens(http: httpx2.Client, text: str) -> int:
    resp = http.post("/v1/embeddings", json={"input": text})
    assert resp.status_code == 200, resp.text
    return int(resp.json()["usage"]["prompt_tokens"])


def test_completion_prompt_parses_chatml_control_tokens(runner: Runner) -> None:
    plain = _completion_prompt_tokens(runner, TEXT)
    # llama.cpp's SPM tokenizer starts the text after a control token as it starts a prompt, so
    # the turn costs exactly the two markers more than its text.
    assert _completion_prompt_tokens(runner, TURN) == plain + MARKERS
    assert _completion_prompt_tokens(runner, TURN + "\n<|im_start|>assistant\n") > plain + MARKERS


def test_completion_token_id_prompt_is_taken_as_is(runner: Runner) -> None:
    tokens, _, _ = vocabulary(TINY.n_vocab)
    start, end = tokens.index("<|im_start|>"), tokens.index("<|im_end|>")
    ids = [1, start, tokens.index("▁the"), end]
    assert _completion_prompt_tokens(runner, ids) == len(ids)


def test_a_bos_written_in_the_prompt_is_not_doubled(runner: Runner) -> None:
    """``<s>`` (Gemma's ``<bos>``) at the start of a raw prompt stands for the BOS the model
    adds anyway, as in the chat path: not a second one."""
    assert _completion_prompt_tokens(runner, "<s>" + TURN) == \
        _completion_prompt_tokens(runner, TURN)


def test_embedding_input_parses_control_tokens(embed_runner: Runner) -> None:
    """llama-server tokenizes embedding inputs with special tokens parsed too."""
    with embed_runner.client() as http:
        plain = _embedding_prompt_tokens(http, TEXT)
        assert _embedding_prompt_tokens(http, TURN) == plain + MARKERS
