"""Log-probabilities in both OpenAI shapes, checked against what greedy decoding must pick."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator

import openai
import pytest

from tests.integration.conftest import Runner, openai_client

MESSAGES = [{"role": "user", "content": "hello model , what is the hearth ?"}]


@pytest.fixture
def oai(runner: Runner) -> Iterator[openai.OpenAI]:
    with openai_client(runner) as client:
        yield client


def test_chat_logprobs_describe_the_greedy_reply(oai: openai.OpenAI) -> None:
    r = oai.chat.completions.create(model="m", messages=MESSAGES, max_tokens=12, temperature=0,
                                    logprobs=True, top_logprobs=3, extra_body={"ignore_eos": True})
    content = r.choices[0].logprobs.content  # type: ignore[union-attr]
    assert content is not None and len(content) == 12 == r.usage.completion_tokens  # type: ignore[union-attr]
    assert "".join(e.token for e in content) == r.choices[0].message.content
    for e in content:
        assert bytes(e.bytes or []).decode("utf-8", "replace") == e.token
        assert len(e.top_logprobs) == 3
        lps = [t.logprob for t in e.top_logprobs]
        assert lps == sorted(lps, reverse=True) and all(lp <= 0 for lp in lps)
        # Greedy: the chosen token is the likeliest one, with the same log-probability.
        assert e.top_logprobs[0].token == e.token and math.isclose(lps[0], e.logprob)
        assert sum(math.exp(lp) for lp in lps) <= 1.0 + 1e-6


def test_chat_logprobs_stream_matches_non_stream(oai: openai.OpenAI) -> None:
    msgs = [{"role": "user", "content": f"{uuid.uuid4().hex[:6]} tell me of the fire"}]
    whole = oai.chat.completions.create(model="m", messages=msgs, max_tokens=8, temperature=0,  # type: ignore[arg-type]
                                        logprobs=True, extra_body={"ignore_eos": True})
    streamed = []
    for chunk in oai.chat.completions.create(model="m", messages=msgs, max_tokens=8,  # type: ignore[arg-type]
                                             temperature=0, logprobs=True, stream=True,
                                             extra_body={"ignore_eos": True}):
        if chunk.choices and chunk.choices[0].logprobs and chunk.choices[0].logprobs.content:
            streamed += [(e.token, round(e.logprob, 4)) for e in chunk.choices[0].logprobs.content]
    content = whole.choices[0].logprobs.content  # type: ignore[union-attr]
    assert content is not None
    assert streamed == [(e.token, round(e.logprob, 4)) for e in content]


def test_no_logprobs_unless_asked(oai: openai.OpenAI) -> None:
    r = oai.chat.completions.create(model="m", messages=MESSAGES, max_tokens=4)  # type: ignore[arg-type]
    assert r.choices[0].logprobs is None


def test_completions_logprobs_legacy_shape(oai: openai.OpenAI) -> None:
    r = oai.completions.create(model="m", prompt="the fire is", max_tokens=6, temperature=0,
                               logprobs=2, extra_body={"ignore_eos": True})
    lp = r.choices[0].logprobs
    assert lp is not None and lp.tokens is not None and lp.token_logprobs is not None
    assert "".join(lp.tokens) == r.choices[0].text and len(lp.tokens) == 6
    assert lp.text_offset == [sum(len(t) for t in lp.tokens[:i]) for i in range(6)]
    for tok, value, top in zip(lp.tokens, lp.token_logprobs, lp.top_logprobs or [], strict=True):
        assert len(top) <= 2 and max(top.values()) == pytest.approx(value) and tok in top


def test_top_logprobs_out_of_range_is_400(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError):
        oai.chat.completions.create(model="m", messages=MESSAGES, max_tokens=2,  # type: ignore[arg-type]
                                    logprobs=True, top_logprobs=21)
