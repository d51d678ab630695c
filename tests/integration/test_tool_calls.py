"""Tool calls end to end: a Hermes-style chat template, a forced call, the openai client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import openai
import pytest

from tests.fixtures.models import TINY, model_path
from tests.integration.conftest import Runner, openai_client, running, streamed_call

# A trimmed Qwen 2.5 template: tools in the system turn, calls in <tool_call> tags.
HERMES_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\nYou may call these tools:\n<tools>\n"
    "{%- for tool in tools %}\n{{ tool | tojson }}{%- endfor %}\n</tools>\n"
    "Reply with <tool_call>{\"name\": ..., \"arguments\": ...}</tool_call><|im_end|>\n{% endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'assistant' and message.tool_calls %}<|im_start|>assistant"
    "{%- for tc in message.tool_calls %}\n<tool_call>\n{\"name\": \"{{ tc.function.name }}\", "
    "\"arguments\": {{ tc.function.arguments | tojson }}}\n</tool_call>{%- endfor %}<|im_end|>\n"
    "{%- elif message.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ message.content }}"
    "\n</tool_response><|im_end|>\n"
    "{%- else %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{%- endif %}"
    "{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TOOLS: list[Any] = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {
            "city": {"enum": ["Oslo", "Paris", "Lima"]}, "celsius": {"type": "boolean"}},
            "required": ["city", "celsius"]}}},
    {"type": "function", "function": {
        "name": "light_fire", "parameters": {"type": "object", "properties": {
            "size": {"enum": ["small", "big"]}}, "required": ["size"]}}},
]
ASK = [{"role": "user", "content": "what is the weather in the world ?"}]


@pytest.fixture(scope="module")
def tool_runner() -> Iterator[Runner]:
    with running(model=model_path(replace(TINY, chat_template=HERMES_TEMPLATE,
                                          name="hearth-tools"))) as r:
        yield r


@pytest.fixture
def oai(tool_runner: Runner) -> Iterator[openai.OpenAI]:
    with openai_client(tool_runner) as client:
        yield client


def _check_weather_args(arguments: str) -> None:
    args = json.loads(arguments)
    assert args["city"] in ("Oslo", "Paris", "Lima") and isinstance(args["celsius"], bool)


def test_required_tool_call(oai: openai.OpenAI) -> None:
    r = oai.chat.completions.create(model="m", messages=ASK, tools=TOOLS, tool_choice="required",  # type: ignore[arg-type]
                                    max_tokens=256, temperature=0.7, seed=1)
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    calls = choice.message.tool_calls
    assert calls and calls[0].type == "function" and calls[0].id.startswith("call_")
    assert calls[0].function.name in ("get_weather", "light_fire")  # type: ignore[union-attr]
    assert choice.message.content is None
    if calls[0].function.name == "get_weather":  # type: ignore[union-attr]
        _check_weather_args(calls[0].function.arguments)  # type: ignore[union-attr]


def test_named_tool_choice_streaming(oai: openai.OpenAI) -> None:
    stream = oai.chat.completions.create(
        model="m", messages=ASK, tools=TOOLS, max_tokens=256, stream=True,  # type: ignore[arg-type]
        tool_choice={"type": "function", "function": {"name": "get_weather"}})
    content, finish, name, arguments = streamed_call(stream)
    assert finish == "tool_calls" and name == "get_weather" and content == ""
    _check_weather_args(arguments)


def test_tool_result_round_trip(oai: openai.OpenAI) -> None:
    """A conversation that carries a call and its result renders and continues."""
    first = oai.chat.completions.create(
        model="m", messages=ASK, tools=TOOLS, max_tokens=256,  # type: ignore[arg-type]
        tool_choice={"type": "function", "function": {"name": "light_fire"}})
    call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
    follow = [*ASK, first.choices[0].message.model_dump(exclude_none=True),
              {"role": "tool", "tool_call_id": call.id, "content": "the fire is lit"}]
    r = oai.chat.completions.create(model="m", messages=follow, tools=TOOLS, max_tokens=8,  # type: ignore[arg-type]
                                    tool_choice="none")
    assert r.choices[0].message.content is not None and r.choices[0].message.tool_calls is None
    # The template saw the tools and the call: the prompt is longer than the question alone.
    bare = oai.chat.completions.create(model="m", messages=ASK, max_tokens=1)  # type: ignore[arg-type]
    assert r.usage.prompt_tokens > bare.usage.prompt_tokens + 40  # type: ignore[union-attr]


def test_auto_without_a_call_is_plain_text(oai: openai.OpenAI) -> None:
    r = oai.chat.completions.create(model="m", messages=ASK, tools=TOOLS, max_tokens=8,  # type: ignore[arg-type]
                                    temperature=0, extra_body={"ignore_eos": True})
    assert r.choices[0].finish_reason == "length" and r.choices[0].message.content


@pytest.mark.parametrize(("extra", "code"), [
    ({"tool_choice": {"type": "function", "function": {"name": "nope"}}}, None),
    ({"tools": [{"type": "function", "function": {"name": "bad name!"}}]}, "invalid_request"),
    ({"tools": [{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object", "properties": {"x": {"$ref": "#/nowhere"}}}}}],
      "tool_choice": "required"}, None),
])
def test_bad_tool_requests_are_400(tool_runner: Runner, extra: dict[str, Any], code: str | None) -> None:
    with tool_runner.client() as http:
        resp = http.post("/v1/chat/completions", json={"messages": ASK, "tools": TOOLS, **extra})
    assert resp.status_code == 400, resp.text
    assert code is None or resp.json()["error"]["code"] == code


def test_template_without_tools_refuses_them(runner: Runner) -> None:
    client = openai.OpenAI(base_url=runner.url + "/v1", api_key=runner.key, max_retries=0)
    with pytest.raises(openai.BadRequestError, match="no support for tools"):
        client.chat.completions.create(model="m", messages=ASK, tools=TOOLS, max_tokens=2)  # type: ignore[arg-type]
