"""The model server's other APIs end to end, each through its official client unchanged:
Anthropic's Messages (``anthropic``), OpenAI's Responses (``openai``) and Ollama's (``ollama``),
served by real runners on tiny models. Tool calls use a tiny model with a Hermes chat template
and a forced tool choice, so a call comes whatever the random weights say."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import anthropic
import ollama
import openai
import pytest

from tests.fixtures.models import TINY, model_path
from tests.integration.server_rig import KEY, Server, add_model, running
from tests.integration.test_tool_calls import HERMES_TEMPLATE

pytestmark = pytest.mark.timeout(300)

WEATHER = {"type": "object", "properties": {"city": {"enum": ["Oslo", "Paris", "Lima"]}},
           "required": ["city"]}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("server-apis")
    add_model(home, "tools.gguf", model_path(replace(TINY, chat_template=HERMES_TEMPLATE,
                                                     name="hearth-tools")))
    with running(home, "--no-dry-run", models=("alpha.gguf",)) as s:
        yield s


@pytest.fixture
def claude(server: Server) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=server.url, api_key=KEY, max_retries=0,
                             timeout=120) as client:
        yield client


def _city(args: dict[str, Any]) -> None:
    assert args["city"] in ("Oslo", "Paris", "Lima"), args


# ---- Anthropic Messages ------------------------------------------------------------------------


def test_anthropic_messages_reply_and_stream(claude: anthropic.Anthropic) -> None:
    message = claude.messages.create(model="alpha", max_tokens=8, system="Be brief.",
                                     messages=[{"role": "user", "content": "hello"}])
    assert message.role == "assistant" and message.model == "alpha"
    assert message.content[0].type == "text" and message.content[0].text
    assert message.stop_reason == "max_tokens" and message.usage.output_tokens == 8
    with claude.messages.stream(model="alpha", max_tokens=8,
                                messages=[{"role": "user", "content": "hello"}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text and final.content[0].text == text  # type: ignore[union-attr]
    assert final.usage.input_tokens > 0


def test_anthropic_tool_use_streamed_and_whole(claude: anthropic.Anthropic) -> None:
    tools: Any = [{"name": "get_weather", "description": "Weather in a city",
                   "input_schema": WEATHER}]
    ask: Any = [{"role": "user", "content": "weather?"}]
    message = claude.messages.create(model="tools", max_tokens=128, tools=tools, messages=ask,
                                     tool_choice={"type": "any"})
    assert message.stop_reason == "tool_use"
    (use,) = [b for b in message.content if b.type == "tool_use"]
    assert use.name == "get_weather"
    _city(use.input)  # type: ignore[arg-type]
    with claude.messages.stream(model="tools", max_tokens=128, tools=tools, messages=ask,
                                tool_choice={"type": "tool", "name": "get_weather"}) as stream:
        final = stream.get_final_message()
    (use,) = [b for b in final.content if b.type == "tool_use"]
    _city(use.input)  # type: ignore[arg-type]
    # The result goes back, and the model answers in text.
    follow = claude.messages.create(model="tools", max_tokens=8, tools=tools, messages=[
        *ask, {"role": "assistant", "content": final.content},  # type: ignore[list-item]
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                      "content": "sunny"}]}], tool_choice={"type": "none"})
    assert follow.content[0].type == "text"


def test_anthropic_errors_come_in_anthropics_shape(claude: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.NotFoundError) as err:
        claude.messages.create(model="no-such-model", max_tokens=8,
                               messages=[{"role": "user", "content": "hello"}])
    assert err.value.body["error"]["type"] == "not_found_error"  # type: ignore[index]
    with pytest.raises(anthropic.BadRequestError):
        claude.messages.create(model="alpha", max_tokens=8, messages=[{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "AAAA"}}]}])


# ---- OpenAI Responses --------------------------------------------------------------------------


def test_openai_responses_reply_stream_and_function_call(server: Server) -> None:
    client = openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0, timeout=120)
    with client:
        r = client.responses.create(model="alpha", input="hello", max_output_tokens=8,
                                    instructions="Be brief.")
        assert r.output_text and r.status == "incomplete"
        # The tiny model never stops by itself: its replies end at max_output_tokens, which
        # the Responses API reports as "incomplete" (no response.completed event, as OpenAI's).
        events = list(client.responses.create(model="alpha", input="hello", stream=True,
                                              max_output_tokens=8))
        deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
        assert events[0].type == "response.created"
        assert events[-1].type == "response.incomplete"
        final = events[-1].response  # type: ignore[union-attr]
        assert "".join(deltas) == final.output_text != ""
        tools: Any = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]
        r = client.responses.create(model="tools", input="weather?", tools=tools,
                                    tool_choice="required", max_output_tokens=128)
        (call,) = [o for o in r.output if o.type == "function_call"]
        assert call.name == "get_weather"
        _city(json.loads(call.arguments))
        r2 = client.responses.create(model="tools", tools=tools, tool_choice="none",
                                     max_output_tokens=8, input=[
            {"role": "user", "content": "weather?"},
            {"type": "function_call", "call_id": call.call_id, "name": call.name,
             "arguments": call.arguments},
            {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}])
        assert r2.output_text


# ---- Ollama ------------------------------------------------------------------------------------


def test_ollama_chat_generate_embed_and_listings(server: Server) -> None:
    client = ollama.Client(host=server.url, headers={"Authorization": f"Bearer {KEY}"})
    parts = [p.message.content for p in client.chat(
        model="alpha:latest", messages=[{"role": "user", "content": "hello"}], stream=True,
        options={"num_predict": 6})]
    assert "".join(p or "" for p in parts)
    whole = client.chat(model="alpha", messages=[{"role": "user", "content": "hello"}],
                        options={"num_predict": 6})
    assert whole.message.content and whole.done and whole.eval_count == 6
    generated = "".join(p.response for p in client.generate(
        model="alpha", prompt="hello", stream=True, options={"num_predict": 6}))
    assert generated
    embedded = client.embed(model="alpha", input=["one", "two"])
    assert len(embedded.embeddings) == 2 and len(embedded.embeddings[0]) > 0
    names = {m.model for m in client.list().models}
    assert {"alpha.gguf:latest", "tools.gguf:latest"} <= names
    assert {m.model for m in client.ps().models} >= {"alpha.gguf:latest"}
    shown = client.show("tools")
    assert "tools" in (shown.capabilities or [])
    with pytest.raises(ollama.ResponseError) as err:
        client.chat(model="no-such-model", messages=[{"role": "user", "content": "hi"}])
    assert err.value.status_code == 404


def test_ollama_keep_alive_zero_unloads(server: Server, tmp_path: Path) -> None:
    client = ollama.Client(host=server.url, headers={"Authorization": f"Bearer {KEY}"})
    client.generate(model="alpha", prompt="hi", options={"num_predict": 2})
    assert "alpha.gguf" in server.resident()
    client.generate(model="alpha", keep_alive=0)  # Ollama's "unload it"
    assert "alpha.gguf" not in server.resident()


def test_ollama_tool_calls_streamed_and_whole(server: Server) -> None:
    """Ollama's API cannot require a call; Hearth's ``options.tool_choice`` can (the tiny model
    never chooses one by itself). The official client reads the calls, streamed and whole, and
    sends the tool's result back."""
    client = ollama.Client(host=server.url, headers={"Authorization": f"Bearer {KEY}"})
    tools: Any = [{"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city.", "parameters": WEATHER}}]
    ask = [{"role": "user", "content": "weather?"}]
    chunks = list(client.chat(model="tools", messages=ask, tools=tools, stream=True,
                              options={"tool_choice": "required", "num_predict": 128}))
    calls = [c for chunk in chunks for c in chunk.message.tool_calls or []]
    assert [c.function.name for c in calls] == ["get_weather"], chunks
    _city(dict(calls[0].function.arguments))
    assert chunks[-1].done
    whole = client.chat(model="tools", messages=ask, tools=tools,
                        options={"tool_choice": "required", "num_predict": 128})
    (call,) = whole.message.tool_calls or []
    assert call.function.name == "get_weather"
    _city(dict(call.function.arguments))
    answered = client.chat(model="tools", tools=tools, options={"tool_choice": "none",
                                                                "num_predict": 4}, messages=[
        *ask, {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": "sunny", "tool_name": "get_weather"}])
    assert answered.message.content and not answered.message.tool_calls
    with pytest.raises(ollama.ResponseError) as err:
        client.chat(model="tools", messages=ask, options={"tool_choice": "required"})
    assert err.value.status_code == 400 and "tools" in str(err.value)
