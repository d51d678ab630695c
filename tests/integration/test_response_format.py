"""response_format: the runner enforces JSON (and JSON schemas) with a llama.cpp grammar, so
even a random-weight model can only answer with valid JSON of the requested shape."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}, "mood": {"enum": ["warm", "cold"]}},
    "required": ["ok", "mood"],
    "additionalProperties": False,
}


@pytest.fixture
def oai(runner: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=runner.url + "/v1", api_key=runner.key, max_retries=0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_json_schema_is_enforced(oai: openai.OpenAI, seed: int) -> None:
    reply = oai.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "status?"}], seed=seed, max_tokens=64,
        response_format={"type": "json_schema",
                         "json_schema": {"name": "status", "schema": SCHEMA}})
    data = json.loads(reply.choices[0].message.content or "")
    assert set(data) == {"ok", "mood"}
    assert isinstance(data["ok"], bool) and data["mood"] in ("warm", "cold")
    assert reply.choices[0].finish_reason == "stop"


def test_without_format_the_model_rambles(oai: openai.OpenAI) -> None:
    # The control: the same model, unconstrained, does not produce that JSON by chance.
    reply = oai.chat.completions.create(model="m", messages=[{"role": "user", "content": "status?"}],
                                        seed=1, max_tokens=32)
    with pytest.raises(ValueError):
        json.loads(reply.choices[0].message.content or "")


def test_json_object_streams_valid_json_prefix(oai: openai.OpenAI) -> None:
    stream = oai.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "json"}], seed=5, max_tokens=24,
        response_format={"type": "json_object"}, stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text.lstrip().startswith(("{", "["))


def test_bad_schema_is_a_400(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError):
        oai.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}],
            response_format={"type": "json_schema",
                             "json_schema": {"name": "bad", "schema": {"type": "no-such-type"}}})
