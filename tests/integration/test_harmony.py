"""gpt-oss's channel format through the real runner: a generated model with gpt-oss's markers
in its vocabulary (llama.cpp treats them as it treats gpt-oss's own) and gpt-oss's own chat
template. A forced call is written in the channels and read back as a tool call; a round trip
with the thinking folded renders; a tool with no description still renders."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.fixtures.models import TINY, model_path
from tests.integration.conftest import openai_client, running, streamed_call

TEMPLATE = (Path(__file__).parents[1] / "fixtures" / "templates" / "gpt-oss.jinja").read_text()
MARKERS = ("<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>",
           "<|call|>")
TOOLS: list[Any] = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {
            "city": {"enum": ["Oslo", "Paris", "Lima"]}}, "required": ["city"]}}},
    # No description and no parameters, as some MCP servers' tools come.
    {"type": "function", "function": {"name": "light_fire"}},
]
ASK = [{"role": "user", "content": "what is the weather in the world ?"}]


@pytest.fixture(scope="module")
def oai() -> Iterator[openai.OpenAI]:
    spec = replace(TINY, chat_template=TEMPLATE, markers=MARKERS, name="hearth-harmony")
    with running(model=model_path(spec)) as r, openai_client(r) as client:
        yield client


def test_a_forced_call_is_read_from_the_channels(oai: openai.OpenAI) -> None:
    r = oai.chat.completions.create(model="m", messages=ASK, tools=TOOLS, tool_choice="required",  # type: ignore[arg-type]
                                    max_tokens=128, temperature=0.7, seed=3)
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    call = choice.message.tool_calls[0]  # type: ignore[index]
    assert call.function.name in ("get_weather", "light_fire")  # type: ignore[union-attr]
    args = json.loads(call.function.arguments)  # type: ignore[union-attr]
    assert isinstance(args, dict)
    if call.function.name == "get_weather":  # type: ignore[union-attr]
        assert args["city"] in ("Oslo", "Paris", "Lima")
    assert not choice.message.content


def test_a_named_call_streams_as_a_tool_call(oai: openai.OpenAI) -> None:
    stream = oai.chat.completions.create(
        model="m", messages=ASK, tools=TOOLS, max_tokens=128, stream=True,  # type: ignore[arg-type]
        tool_choice={"type": "function", "function": {"name": "get_weather"}})
    content, finish, name, arguments = streamed_call(stream)
    assert (finish, name, content) == ("tool_calls", "get_weather", "")
    assert json.loads(arguments)["city"] in ("Oslo", "Paris", "Lima")


def test_a_round_trip_with_folded_thinking_renders_as_gpt_oss_expects(
        oai: openai.OpenAI) -> None:
    # What the app sends back: the thinking folded in <think>, in the call's message and in an
    # earlier answer. gpt-oss's template wants it in "thinking" (it drops an earlier answer's,
    # and renders a call's as its analysis): the runner moves it there.
    def prompt_tokens(earlier: dict[str, Any], calling: dict[str, Any]) -> int:
        call = {"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
        messages: list[Any] = [
            {"role": "user", "content": "hello"}, {"role": "assistant", **earlier}, *ASK,
            {"role": "assistant", **calling, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]
        r = oai.chat.completions.create(model="m", messages=messages, tools=TOOLS, max_tokens=1,  # type: ignore[arg-type]
                                        extra_body={"reasoning_effort": "low"})
        assert r.usage is not None
        return r.usage.prompt_tokens

    folded = prompt_tokens({"content": "<think>They greet.</think>\n\nHello!"},
                           {"content": "<think>Use the tool.</think>"})
    as_gpt_oss_wants = prompt_tokens({"content": "Hello!"},
                                     {"content": "", "thinking": "Use the tool."})
    assert folded == as_gpt_oss_wants


def test_a_reply_without_tools_shows_no_markup(oai: openai.OpenAI) -> None:
    r = oai.chat.completions.create(model="m", messages=ASK, max_tokens=16, temperature=0,  # type: ignore[arg-type]
                                    extra_body={"ignore_eos": True})
    content = r.choices[0].message.content or ""
    assert content and "<|" not in content
