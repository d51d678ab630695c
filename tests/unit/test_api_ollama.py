"""server.api_ollama: Ollama's API over OpenAI's, and the official `ollama` client against it.

The SDK tests run a stdlib HTTP server that takes the client's request through chat_request /
generate_request / embed_request, records the translation, and answers with reply() or the
stream translators fed CANNED OpenAI chunks (a text stream, a tool call whose arguments arrive
in pieces, usage): what the client parsed is what a real Ollama client would see.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import ollama
import pytest

from server import api_ollama as api
from server.api_ollama import RequestError

KEY = "k"
TEMPLATE = "{% if tools %}{{ tools | tojson }}{% endif %}{% for m in messages %}...{% endfor %}"
MODIFIED = 1_750_000_000.0
EXPIRES = 1_760_000_000.0

QWEN = {"name": "qwen3-8b", "size": 5_000_000_000, "modified": MODIFIED, "digest": "ab" * 32,
        "family": "qwen3", "parameter_size": "8.2B", "quantization": "Q4_K_M",
        "context": 32768, "loaded": True, "expires_at": EXPIRES, "size_vram": 4_500_000_000}
GEMMA = {"name": "gemma-2b", "size": 1_600_000_000, "modified": MODIFIED - 60, "digest": None,
         "family": None, "parameter_size": None, "quantization": None, "context": None,
         "loaded": False, "expires_at": None, "size_vram": 0}


# ---- canned OpenAI output ----------------------------------------------------------------------

def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None,
           text: str | None = None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
    if text is not None:
        choice["text"] = text
        return {"id": "cmpl-1", "object": "text_completion", "model": "m", "choices": [choice]}
    choice["delta"] = delta or {}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [choice]}


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion}}


TEXT_CHUNKS = [
    _chunk({"role": "assistant", "content": ""}),
    _chunk({"content": "Hello"}),
    _chunk({"content": ", wor"}),
    _chunk({"content": "ld!"}),
    _chunk({}, "stop"),
    _usage(12, 4),
]

TOOL_CHUNKS = [
    _chunk({"role": "assistant", "content": ""}),
    _chunk({"tool_calls": [{"index": 0, "id": "call_abc", "type": "function",
                            "function": {"name": "get_weather", "arguments": ""}}]}),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Par'}}]}),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'is", "unit": "c'}}]}),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'elsius"}'}}]}),
    _chunk({}, "tool_calls"),
    _usage(40, 15),
]

COMPLETION_CHUNKS = [_chunk(text="Once"), _chunk(text=" upon"), _chunk(text=" a time"),
                     _chunk(text="", finish="length"), _usage(3, 3)]

TEXT_REPLY: dict[str, Any] = {"id": "chatcmpl-2", "object": "chat.completion", "model": "m",
              "choices": [{"index": 0, "finish_reason": "stop",
                           "message": {"role": "assistant", "content": "Hello, world!"}}],
              "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}}

TOOL_REPLY: dict[str, Any] = {"id": "chatcmpl-3", "object": "chat.completion", "model": "m",
              "choices": [{"index": 0, "finish_reason": "tool_calls",
                           "message": {"role": "assistant", "content": None, "tool_calls": [
                               {"id": "call_x", "type": "function",
                                "function": {"name": "get_weather",
                                             "arguments": '{"city": "Oslo"}'}}]}}],
              "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39}}

EMBEDDINGS = {"object": "list", "model": "m",
              "data": [{"object": "embedding", "index": 1, "embedding": [0.5, 0.25]},
                       {"object": "embedding", "index": 0, "embedding": [1, -1.0]}],
              "usage": {"prompt_tokens": 5, "total_tokens": 5}}

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather in a city",
    "parameters": {"type": "object", "required": ["city"],
                   "properties": {"city": {"type": "string", "description": "The city"},
                                  "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}}


def _lines(frames: list[bytes]) -> list[dict[str, Any]]:
    for frame in frames:
        assert frame.endswith(b"\n") and frame.count(b"\n") == 1  # one NDJSON line each
    return [json.loads(f) for f in frames]


def _run(translator: api._Stream, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    frames: list[bytes] = []
    for chunk in chunks:
        frames += translator.feed(chunk)
    return _lines(frames + translator.finish())


class _Clock:
    """Monotonic nanoseconds that step by 1000 per reading."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        self.now += 1000
        return self.now


# ---- /api/chat requests ------------------------------------------------------------------------

def test_chat_request_streams_by_default_and_maps_options() -> None:
    body = {"model": "qwen3-8b:latest",
            "messages": [{"role": "system", "content": "Be brief."},
                         {"role": "user", "content": "Hi"}],
            "options": {"temperature": 0.2, "top_p": 0.9, "top_k": 40, "seed": 7,
                        "num_predict": 64, "stop": ["\n\n"], "num_ctx": 8192, "num_gpu": 99}}
    out = api.chat_request(body)
    assert out == {"model": "qwen3-8b:latest",
                   "messages": [{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "Hi"}],
                   "stream": True, "stream_options": {"include_usage": True},
                   "temperature": 0.2, "top_p": 0.9, "top_k": 40, "seed": 7,
                   "max_tokens": 64, "stop": ["\n\n"]}
    assert api.wanted_context(body) == 8192


def test_chat_request_without_streaming_and_without_limit() -> None:
    body = {"model": "m", "stream": False, "messages": [{"role": "user", "content": "Hi"}],
            "options": {"num_predict": -1, "stop": "END"}}
    out = api.chat_request(body)
    assert out["stream"] is False and "stream_options" not in out
    assert "max_tokens" not in out
    assert out["stop"] == ["END"]
    assert api.chat_request({**body, "stream": None})["stream"] is True  # null: Ollama's default


def test_chat_request_format_and_tools() -> None:
    base = {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}
    assert api.chat_request({**base, "format": "json"})["response_format"] == \
        {"type": "json_object"}
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert api.chat_request({**base, "format": schema})["response_format"] == \
        {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
    assert "response_format" not in api.chat_request({**base, "format": ""})
    out = api.chat_request({**base, "tools": [WEATHER_TOOL]})
    assert out["tools"] == [WEATHER_TOOL]


def _tool_history() -> dict[str, Any]:
    return {"model": "m", "messages": [
        {"role": "user", "content": "Weather in Oslo and time in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}},
            {"function": {"name": "get_time", "arguments": {"city": "Paris"}}}]},
        # Results in the other order: tool_name says which call each answers.
        {"role": "tool", "tool_name": "get_time", "content": "14:00"},
        {"role": "tool", "tool_name": "get_weather", "content": "3 C"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "mine", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}]},
        {"role": "tool", "content": "20 C"}]}


def test_options_tool_choice_is_passed_on_as_openais() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    for choice in ("auto", "none", "required"):
        out = api.chat_request({**_msg(), "tools": tools, "options": {"tool_choice": choice}})
        assert out["tool_choice"] == choice and "tool_choice" not in out.get("options", {})
    assert "tool_choice" not in api.chat_request({**_msg(), "tools": tools})


def test_tool_history_gets_stable_ids_matched_by_tool_name() -> None:
    out = api.chat_request(_tool_history())
    messages = out["messages"]
    calls = messages[1]["tool_calls"]
    assert calls == [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
        {"id": "call_2", "type": "function",
         "function": {"name": "get_time", "arguments": '{"city": "Paris"}'}}]
    assert messages[2] == {"role": "tool", "content": "14:00", "tool_call_id": "call_2",
                           "name": "get_time"}
    assert messages[3]["tool_call_id"] == "call_1"
    assert messages[4]["tool_calls"][0]["id"] == "mine"
    assert messages[4]["tool_calls"][0]["function"]["arguments"] == '{"city": "Rome"}'
    assert messages[5] == {"role": "tool", "content": "20 C", "tool_call_id": "mine"}
    # The same conversation gets the same ids (a runner's prompt cache keeps its prefix).
    assert api.chat_request(_tool_history()) == out


def test_tool_result_with_no_call_still_gets_an_id() -> None:
    out = api.chat_request({"model": "m", "messages": [{"role": "tool", "content": "x"}]})
    assert out["messages"][0]["tool_call_id"] == "call_1"


def _msg(**fields: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "Hi", **fields}]}


@pytest.mark.parametrize(("body", "param"), [
    ({"messages": [{"role": "user", "content": "Hi"}]}, "model"),
    ({"model": 3, "messages": []}, "model"),
    ({"model": "m", "messages": []}, "messages"),
    ({"model": "m", "messages": "Hi"}, "messages"),
    ({"model": "m", "messages": ["Hi"]}, "messages[0]"),
    (_msg(role="robot"), "messages[0].role"),
    (_msg(content=["Hi"]), "messages[0].content"),
    (_msg(images=[3]), "messages[0].images"),
    (_msg(images="aGk="), "messages[0].images"),
    ({**_msg(), "tools": {"a": 1}}, "tools"),
    ({**_msg(), "tools": ["get_weather"]}, "tools[0]"),
    ({**_msg(), "tools": [{"type": "function", "function": {}}]}, "tools[0].function.name"),
    ({**_msg(), "tools": [{"type": "retrieval"}]}, "tools[0].type"),
    ({**_msg(), "tools": [{"function": {"name": "f", "parameters": "{}"}}]},
     "tools[0].function.parameters"),
    ({**_msg(), "format": "yaml"}, "format"),
    ({**_msg(), "format": ["json"]}, "format"),
    ({**_msg(), "options": [0.5]}, "options"),
    ({**_msg(), "options": {"temperature": "hot"}}, "options.temperature"),
    ({**_msg(), "options": {"temperature": True}}, "options.temperature"),
    # JSON integers have no size: one past a float's range was an OverflowError (a 500).
    ({**_msg(), "options": {"temperature": 10**400}}, "options.temperature"),
    ({**_msg(), "options": {"top_p": math.nan}}, "options.top_p"),
    ({**_msg(), "options": {"top_k": 1.5}}, "options.top_k"),
    ({**_msg(), "options": {"seed": True}}, "options.seed"),
    ({**_msg(), "options": {"num_predict": 0}}, "options.num_predict"),
    ({**_msg(), "options": {"num_predict": "10"}}, "options.num_predict"),
    ({**_msg(), "options": {"stop": [1]}}, "options.stop"),
    ({**_msg(), "options": {"num_ctx": "big"}}, "options.num_ctx"),
    ({**_msg(), "stream": "yes"}, "stream"),
    ({**_msg(), "options": {"tool_choice": "always"}}, "options.tool_choice"),
    ({**_msg(), "options": {"tool_choice": {"type": "function"}}}, "options.tool_choice"),
    ({**_msg(), "options": {"tool_choice": "required"}}, "options.tool_choice"),  # no tools
    ({**_msg(), "think": True}, "think"),
    ({**_msg(), "think": "high"}, "think"),
    ({**_msg(), "keep_alive": "soon"}, "keep_alive"),
    ({**_msg(), "keep_alive": [5]}, "keep_alive"),
    ({"model": "m", "messages": [{"role": "assistant", "tool_calls": [
        {"function": {"name": "f", "arguments": [1]}}]}]},
     "messages[0].tool_calls[0].function.arguments"),
    ({"model": "m", "messages": [{"role": "assistant", "tool_calls": [
        {"function": {"arguments": {}}}]}]}, "messages[0].tool_calls[0].function.name"),
    ({"model": "m", "messages": [{"role": "tool", "content": "x", "tool_name": 5}]},
     "messages[0].tool_name"),
])
def test_chat_request_refuses_bad_input(body: dict[str, Any], param: str) -> None:
    with pytest.raises(RequestError) as caught:
        api.chat_request(body)
    assert caught.value.param == param
    assert str(caught.value).endswith(".")  # a sentence, not a traceback fragment


def test_chat_request_refuses_a_body_that_is_not_an_object() -> None:
    with pytest.raises(RequestError, match="JSON object"):
        api.chat_request(["m"])  # type: ignore[arg-type]


def test_images_become_image_url_parts_before_the_text() -> None:
    """Ollama's base64 (no prefix) as data URLs; the runner checks the bytes and says whether
    the model sees images."""
    (message,) = api.chat_request(_msg(images=["iVBORw0KGgo=", "/9j/4AAQ"]))["messages"]
    assert message["content"] == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}},
        {"type": "text", "text": "Hi"}]
    assert api.chat_request(_msg(images=[]))["messages"][0] == {"role": "user", "content": "Hi"}
    _kind, generate = api.generate_request({"model": "m", "prompt": "x", "images": ["aGk="]})
    assert generate["messages"][-1]["content"][0]["type"] == "image_url"


# ---- keep_alive, num_ctx, load-only ------------------------------------------------------------

@pytest.mark.parametrize(("value", "seconds"), [
    (None, None), (0, 0.0), ("0", 0.0), (300, 300.0), (2.5, 2.5), ("300", 300.0),
    ("5m", 300.0), ("1h", 3600.0), ("1h30m", 5400.0), ("1.5h", 5400.0), ("500ms", 0.5),
    ("+10s", 10.0), (" 5m ", 300.0),
    (-1, math.inf), ("-1", math.inf), ("-1m", math.inf), (math.inf, math.inf),
    # Past a float's range (an OverflowError, a 500, before): longer than ever, or forever.
    (10**400, math.inf), (-(10**400), math.inf), ("9" * 400 + "h", math.inf),
])
def test_keep_alive_seconds(value: Any, seconds: float | None) -> None:
    assert api.keep_alive_seconds(value) == seconds


@pytest.mark.parametrize("value", ["soon", "5x", "", "m", "5 m", "1h-5m", "nan", "inf",
                                   True, [300], {"m": 5}, math.nan])
def test_keep_alive_garbage_is_a_request_error(value: Any) -> None:
    with pytest.raises(RequestError) as caught:
        api.keep_alive_seconds(value)
    assert caught.value.param == "keep_alive"


def test_wanted_context() -> None:
    assert api.wanted_context({"model": "m"}) is None
    assert api.wanted_context({"options": {"temperature": 1}}) is None
    assert api.wanted_context({"options": {"num_ctx": 16384}}) == 16384
    for bad in (0, -5, 1.5, True, "4096"):
        with pytest.raises(RequestError):
            api.wanted_context({"options": {"num_ctx": bad}})


@pytest.mark.parametrize(("body", "load_only"), [
    ({"model": "m"}, True),
    ({"model": "m", "prompt": ""}, True),
    ({"model": "m", "prompt": "", "keep_alive": 0}, True),
    ({"model": "m", "messages": []}, True),
    ({"model": "m", "input": ""}, True),
    ({"model": "m", "input": []}, True),
    ({"model": "m", "prompt": "Hi"}, False),
    ({"model": "m", "messages": [{"role": "user", "content": "Hi"}]}, False),
    ({"model": "m", "input": ["a"]}, False),
    ({"model": "m", "prompt": "", "images": ["aGk="]}, False),
    ({"model": "m", "messages": "Hi"}, False),
    ({"model": "m", "prompt": 5}, False),
    (["m"], False),
])
def test_is_load_only(body: Any, load_only: bool) -> None:
    assert api.is_load_only(body) is load_only


def test_load_reply() -> None:
    chat = api.load_reply("m", chat=True)
    assert chat["message"] == {"role": "assistant", "content": ""}
    assert (chat["done"], chat["done_reason"]) == (True, "load")
    gen = api.load_reply("m", chat=False, unload=True)
    assert (gen["response"], gen["done_reason"]) == ("", "unload")


# ---- /api/generate and /api/embed requests -----------------------------------------------------

def test_generate_request_becomes_chat() -> None:
    kind, out = api.generate_request({"model": "m", "prompt": "Why?", "system": "Be brief.",
                                      "stream": False, "format": "json",
                                      "options": {"num_predict": 10}})
    assert kind == "chat"
    assert out == {"model": "m", "messages": [{"role": "system", "content": "Be brief."},
                                              {"role": "user", "content": "Why?"}],
                   "stream": False, "response_format": {"type": "json_object"},
                   "max_tokens": 10}


def test_generate_request_raw_becomes_completion() -> None:
    kind, out = api.generate_request({"model": "m", "prompt": "<|im_start|>user", "raw": True})
    assert kind == "completions"
    # No limit asked: null, since /v1/completions would otherwise stop after 16 tokens.
    assert out == {"model": "m", "prompt": "<|im_start|>user", "stream": True,
                   "stream_options": {"include_usage": True}, "max_tokens": None}
    _, limited = api.generate_request({"model": "m", "prompt": "x", "raw": True,
                                       "options": {"num_predict": 5, "temperature": 0}})
    assert (limited["max_tokens"], limited["temperature"]) == (5, 0.0)


@pytest.mark.parametrize(("body", "param"), [
    ({"model": "m", "prompt": "def f(", "suffix": "return x"}, "suffix"),
    ({"model": "m", "prompt": "x", "template": "{{ .Prompt }}"}, "template"),
    ({"model": "m", "prompt": "x", "context": [1, 2, 3]}, "context"),
    ({"model": "m", "prompt": "x", "raw": True, "images": ["aGk="]}, "images"),
    ({"model": "m", "prompt": ["x"]}, "prompt"),
    ({"model": "m", "prompt": "x", "system": 5}, "system"),
    ({"model": "m", "prompt": "x", "raw": "yes"}, "raw"),
    ({"model": "m", "prompt": "x", "raw": True, "system": "s"}, "system"),
    ({"model": "m", "prompt": "x", "raw": True, "format": "json"}, "format"),
    ({"model": "m", "prompt": "x", "think": True}, "think"),
    ({"model": "m", "prompt": "x", "keep_alive": "later"}, "keep_alive"),
    ({"prompt": "x"}, "model"),
])
def test_generate_request_refuses(body: dict[str, Any], param: str) -> None:
    with pytest.raises(RequestError) as caught:
        api.generate_request(body)
    assert caught.value.param == param


def test_generate_request_takes_empty_suffix() -> None:
    kind, _ = api.generate_request({"model": "m", "prompt": "x", "suffix": "", "context": []})
    assert kind == "chat"


def test_embed_request() -> None:
    assert api.embed_request({"model": "m", "input": "hello"}) == \
        {"model": "m", "input": ["hello"], "encoding_format": "float"}
    out = api.embed_request({"model": "m", "input": ["a", "b"], "truncate": False,
                             "dimensions": 64, "keep_alive": "1m"})
    assert out == {"model": "m", "input": ["a", "b"], "encoding_format": "float",
                   "dimensions": 64}
    for bad in ({"model": "m", "input": [1, 2]}, {"model": "m", "input": {"a": 1}},
                {"model": "m"}, {"model": "m", "input": []},
                {"model": "m", "input": "x", "truncate": "no"},
                {"model": "m", "input": "x", "dimensions": 0}):
        with pytest.raises(RequestError):
            api.embed_request(bad)


def test_embed_reply_keeps_input_order() -> None:
    out = api.embed_reply(EMBEDDINGS, "m", elapsed_ns=2000, load_ns=500)
    assert out == {"model": "m", "embeddings": [[1.0, -1.0], [0.5, 0.25]],
                   "total_duration": 2500, "load_duration": 500, "prompt_eval_count": 5}


# ---- replies and streams -----------------------------------------------------------------------

def _created_at(frame: dict[str, Any]) -> datetime:
    stamp = datetime.fromisoformat(frame["created_at"])
    assert stamp.tzinfo is not None
    return stamp


def test_reply_text() -> None:
    out = api.reply(TEXT_REPLY, "qwen3-8b:latest", elapsed_ns=9000)
    _created_at(out)
    assert out["message"] == {"role": "assistant", "content": "Hello, world!"}
    assert {k: out[k] for k in ("model", "done", "done_reason", "prompt_eval_count",
                                "eval_count", "eval_duration", "total_duration")} == \
        {"model": "qwen3-8b:latest", "done": True, "done_reason": "stop",
         "prompt_eval_count": 12, "eval_count": 4, "eval_duration": 9000, "total_duration": 9000}


def test_reply_tool_call_and_length() -> None:
    out = api.reply(TOOL_REPLY, "m")
    assert out["message"]["content"] == ""
    assert out["message"]["tool_calls"] == [
        {"id": "call_x", "function": {"index": 0, "name": "get_weather",
                                      "arguments": {"city": "Oslo"}}}]
    assert out["done_reason"] == "stop"
    cut = {**TEXT_REPLY, "choices": [{**TEXT_REPLY["choices"][0], "finish_reason": "length"}]}
    assert api.reply(cut, "m")["done_reason"] == "length"


def test_reply_keeps_unparseable_call_as_text() -> None:
    bad = json.loads(json.dumps(TOOL_REPLY))
    bad["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"city": Oslo'
    out = api.reply(bad, "m")
    assert "tool_calls" not in out["message"]
    assert json.loads(out["message"]["content"]) == \
        {"name": "get_weather", "arguments": '{"city": Oslo'}


def test_generate_reply_from_chat_and_completion() -> None:
    assert api.generate_reply(TEXT_REPLY, "m")["response"] == "Hello, world!"
    completion = {"object": "text_completion",
                  "choices": [{"index": 0, "text": "Once", "finish_reason": "length"}],
                  "usage": {"prompt_tokens": 2, "completion_tokens": 1}}
    out = api.generate_reply(completion, "m")
    assert (out["response"], out["done_reason"], out["eval_count"]) == ("Once", "length", 1)
    assert "message" not in out


def test_stream_text_frames_and_done_line() -> None:
    clock = _Clock()
    lines = _run(api.StreamTranslator("m", load_ns=7, clock=clock), TEXT_CHUNKS)
    assert [line["message"]["content"] for line in lines[:-1]] == ["Hello", ", wor", "ld!"]
    assert all(line["done"] is False and line["model"] == "m" for line in lines[:-1])
    assert all(line["message"]["role"] == "assistant" for line in lines)
    for line in lines:
        _created_at(line)
    done = lines[-1]
    # Clock readings: start 1000, first text 2000, end 3000.
    assert {k: v for k, v in done.items() if k != "created_at"} == {
        "model": "m", "message": {"role": "assistant", "content": ""}, "done": True,
        "done_reason": "stop", "total_duration": 2007, "load_duration": 7,
        "prompt_eval_count": 12, "prompt_eval_duration": 1000, "eval_count": 4,
        "eval_duration": 1000}


def test_stream_holds_tool_call_until_complete() -> None:
    translator = api.StreamTranslator("m")
    for chunk in TOOL_CHUNKS[:5]:
        assert translator.feed(chunk) == []  # arguments still arriving: nothing to send yet
    lines = _lines(translator.feed(TOOL_CHUNKS[5]))
    assert lines[0]["message"] == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_abc", "function": {"index": 0, "name": "get_weather",
                                        "arguments": {"city": "Paris", "unit": "celsius"}}}]}
    assert lines[0]["done"] is False
    assert translator.feed(TOOL_CHUNKS[6]) == []
    (done,) = _lines(translator.finish())
    assert (done["done"], done["done_reason"], done["eval_count"]) == (True, "stop", 15)


def test_stream_flushes_calls_at_finish_without_finish_reason() -> None:
    lines = _run(api.StreamTranslator("m"), TOOL_CHUNKS[:5])
    assert lines[0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert lines[1]["done"] is True and lines[1]["eval_count"] == 0


def test_stream_two_calls_in_order() -> None:
    chunks = [_chunk({"tool_calls": [
        {"index": 1, "id": "b", "function": {"name": "second", "arguments": "{}"}},
        {"index": 0, "id": "a", "function": {"name": "first", "arguments": '{"x": 1}'}}]}),
        _chunk({}, "tool_calls")]
    lines = _run(api.StreamTranslator("m"), chunks)
    calls = lines[0]["message"]["tool_calls"]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == \
        [("a", "first", {"x": 1}), ("b", "second", {})]


def test_stream_failure_is_an_error_line_and_ends_the_stream() -> None:
    translator = api.StreamTranslator("m")
    translator.feed(TEXT_CHUNKS[1])
    assert _lines(translator.fail("The model's runner stopped.")) == \
        [{"error": "The model's runner stopped."}]
    assert translator.feed(TEXT_CHUNKS[2]) == []
    assert translator.finish() == []
    assert translator.fail("again") == []


def test_stream_upstream_error_chunk_becomes_error_line() -> None:
    translator = api.StreamTranslator("m")
    err = {"error": {"message": "Generation failed.", "type": "server_error", "code": "x"}}
    assert _lines(translator.feed(err)) == [{"error": "Generation failed."}]
    assert translator.finish() == []


def test_generate_stream_from_completion_chunks() -> None:
    lines = _run(api.GenerateStreamTranslator("m"), COMPLETION_CHUNKS)
    assert [line["response"] for line in lines] == ["Once", " upon", " a time", ""]
    assert "message" not in lines[0]
    assert (lines[-1]["done"], lines[-1]["done_reason"], lines[-1]["eval_count"]) == \
        (True, "length", 3)


def test_generate_stream_from_chat_chunks() -> None:
    lines = _run(api.GenerateStreamTranslator("m"), TEXT_CHUNKS)
    assert "".join(line["response"] for line in lines) == "Hello, world!"
    assert lines[-1]["prompt_eval_count"] == 12


def test_stream_lines_are_compact_utf8() -> None:
    (frame,) = api.StreamTranslator("m").feed(_chunk({"content": "café\n"}))
    assert "café".encode() in frame and frame.endswith(b"}\n")


def test_error_body() -> None:
    assert api.error_body(404, "No model named x.", "model_not_found") == \
        {"error": "No model named x."}


# ---- tags, ps, show, version -------------------------------------------------------------------

def test_strip_latest() -> None:
    assert api.strip_latest("qwen3-8b:latest") == "qwen3-8b"
    assert api.strip_latest("qwen3-8b") == "qwen3-8b"
    assert api.strip_latest("qwen3:8b") == "qwen3:8b"
    assert api.strip_latest("latest") == "latest"


def test_tags_lists_every_model_with_a_tag() -> None:
    out = api.tags([QWEN, GEMMA])
    first, second = out["models"]
    assert first == {"name": "qwen3-8b:latest", "model": "qwen3-8b:latest", "size": 5_000_000_000,
                     "digest": "ab" * 32, "modified_at": "2025-06-15T15:06:40Z",
                     "details": {"parent_model": "", "format": "gguf", "family": "qwen3",
                                 "families": ["qwen3"], "parameter_size": "8.2B",
                                 "quantization_level": "Q4_K_M"}}
    assert second["name"] == "gemma-2b:latest" and second["digest"] == ""
    assert second["details"]["families"] is None
    assert api.tags([{**QWEN, "name": "hf.co/org/repo:Q8_0"}])["models"][0]["name"] == \
        "hf.co/org/repo:Q8_0"


def test_ps_lists_only_loaded_models() -> None:
    pinned = {**GEMMA, "loaded": True, "expires_at": None, "size_vram": 10}
    out = api.ps([QWEN, GEMMA, pinned])
    assert [m["name"] for m in out["models"]] == ["qwen3-8b:latest", "gemma-2b:latest"]
    first, second = out["models"]
    assert first["expires_at"] == "2025-10-09T08:53:20Z"
    assert (first["size_vram"], first["context_length"]) == (4_500_000_000, 32768)
    assert second["expires_at"].startswith("9999-") and "context_length" not in second
    # A keep_alive of 10**15 seconds is past the year 9999: no date says it (a 500 before).
    for far in (1e15, 1e300):
        (shown,) = api.ps([{**QWEN, "expires_at": far}])["models"]
        assert shown["expires_at"] == "9999-12-31T23:59:59Z"


def test_show_is_honest() -> None:
    out = api.show(QWEN, TEMPLATE)
    assert out["capabilities"] == ["completion", "tools"]
    assert out["model_info"] == {"general.architecture": "qwen3", "qwen3.context_length": 32768}
    assert out["template"] == TEMPLATE and out["details"]["quantization_level"] == "Q4_K_M"
    bare = api.show(GEMMA, None)
    assert bare["capabilities"] == ["completion"] and bare["model_info"] == {}
    assert api.show(QWEN, "{{ messages }}")["capabilities"] == ["completion"]


def test_version_passes_clients_minimums() -> None:
    version = api.version()["version"]
    parts = tuple(int(p) for p in version.split("."))
    assert parts >= (0, 6, 4)  # VS Code Copilot's minimum
    assert parts < (0, 9, 0)  # "think" arrived in 0.9.0 and is not served


# ---- the official ollama client ----------------------------------------------------------------

class _Server(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[tuple[str, dict[str, Any]]]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, translator: api._Stream, chunks: list[dict[str, Any]],
                fail_at: int | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.end_headers()  # HTTP/1.0: the body ends when the connection closes
        for i, chunk in enumerate(chunks):
            frames = translator.fail("The model's runner stopped.") if i == fail_at \
                else translator.feed(chunk)
            for frame in frames:
                self.wfile.write(frame)
                self.wfile.flush()
        for frame in translator.finish():
            self.wfile.write(frame)

    def _authorized(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {KEY}":
            return True
        self._send(401, api.error_body(401, "Send the server's key as a Bearer token."))
        return False

    def do_GET(self) -> None:
        if not self._authorized():
            return
        routes = {"/api/tags": lambda: api.tags([QWEN, GEMMA]),
                  "/api/ps": lambda: api.ps([QWEN, GEMMA]),
                  "/api/version": api.version}
        route = routes.get(self.path)
        if route is None:
            self._send(404, api.error_body(404, "No such endpoint."))
            return
        self._send(200, route())

    def do_POST(self) -> None:
        if not self._authorized():
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append((self.path, body))
        handlers = {"/api/chat": self._chat, "/api/generate": self._generate,
                    "/api/embed": self._embed, "/api/show": self._show}
        try:
            handlers[self.path](body)
        except RequestError as exc:
            self._send(400, api.error_body(400, str(exc)))

    def _chat(self, body: dict[str, Any]) -> None:
        request = api.chat_request(body)
        self.server.seen.append(("openai", request))
        tools = "tools" in request
        if not request["stream"]:
            self._send(200, api.reply(TOOL_REPLY if tools else TEXT_REPLY, body["model"]))
            return
        fail_at = 2 if body["model"] == "broken" else None
        self._stream(api.StreamTranslator(body["model"]), TOOL_CHUNKS if tools else TEXT_CHUNKS,
                     fail_at)

    def _generate(self, body: dict[str, Any]) -> None:
        kind, request = api.generate_request(body)
        self.server.seen.append((kind, request))
        chunks = COMPLETION_CHUNKS if kind == "completions" else TEXT_CHUNKS
        if request["stream"]:
            self._stream(api.GenerateStreamTranslator(body["model"]), chunks)
        else:
            self._send(200, api.generate_reply(TEXT_REPLY, body["model"]))

    def _embed(self, body: dict[str, Any]) -> None:
        self.server.seen.append(("openai", api.embed_request(body)))
        self._send(200, api.embed_reply(EMBEDDINGS, body["model"]))

    def _show(self, body: dict[str, Any]) -> None:
        models = {m["name"]: m for m in (QWEN, GEMMA)}
        model = models.get(api.strip_latest(str(body.get("model"))))
        if model is None:
            self._send(404, api.error_body(404, f"model '{body.get('model')}' not found"))
            return
        self._send(200, api.show(model, TEMPLATE))


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.seen = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture
def client(server: _Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[ollama.Client]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy", "OLLAMA_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    server.seen.clear()
    host, port = server.server_address[:2]
    with ollama.Client(host=f"http://{host!s}:{port}",
                       headers={"Authorization": f"Bearer {KEY}"}) as sdk:
        yield sdk


def _openai(server: _Server) -> dict[str, Any]:
    (request,) = [body for kind, body in server.seen if kind in ("openai", "chat", "completions")]
    return request


def test_sdk_chat(client: ollama.Client, server: _Server) -> None:
    response = client.chat("qwen3-8b:latest", messages=[{"role": "user", "content": "Hi"}],
                           stream=False, options={"temperature": 0.1, "num_predict": 32},
                           keep_alive="10m")
    assert isinstance(response, ollama.ChatResponse)
    assert response.message.role == "assistant"
    assert response.message.content == "Hello, world!"
    assert (response.done, response.done_reason) == (True, "stop")
    assert (response.prompt_eval_count, response.eval_count) == (12, 4)
    assert response.model == "qwen3-8b:latest"
    request = _openai(server)
    assert request["stream"] is False and request["max_tokens"] == 32
    assert request["model"] == "qwen3-8b:latest"  # the server resolves names, not this module


def test_sdk_chat_stream(client: ollama.Client, server: _Server) -> None:
    parts = list(client.chat("qwen3-8b", messages=[{"role": "user", "content": "Hi"}],
                             stream=True))
    assert all(isinstance(p, ollama.ChatResponse) for p in parts)
    assert "".join(p.message.content or "" for p in parts) == "Hello, world!"
    assert [p.done for p in parts] == [False] * (len(parts) - 1) + [True]
    last = parts[-1]
    assert (last.done_reason, last.prompt_eval_count, last.eval_count) == ("stop", 12, 4)
    assert last.total_duration is not None and last.eval_duration is not None
    assert last.total_duration >= last.eval_duration >= 0
    assert _openai(server)["stream_options"] == {"include_usage": True}


def get_weather(city: str, unit: str = "celsius") -> str:
    """Get the current weather in a city.

    Args:
      city: The city
      unit: celsius or fahrenheit
    """
    return f"3 {unit} in {city}"


def test_sdk_chat_stream_tool_call(client: ollama.Client, server: _Server) -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Oslo?"},
               {"role": "assistant", "content": "", "tool_calls": [
                   {"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]},
               {"role": "tool", "tool_name": "get_weather", "content": "3 C"},
               {"role": "user", "content": "And in Paris?"}]
    parts = list(client.chat("qwen3-8b", messages=history, tools=[get_weather], stream=True))
    calls = [c for p in parts for c in (p.message.tool_calls or [])]
    assert len(calls) == 1
    assert calls[0].function.name == "get_weather"
    assert calls[0].function.arguments == {"city": "Paris", "unit": "celsius"}
    assert parts[-1].done and parts[-1].eval_count == 15
    request = _openai(server)
    assert request["tools"][0]["function"]["name"] == "get_weather"
    # The SDK makes a tool of the function (and calls every parameter required).
    assert "city" in request["tools"][0]["function"]["parameters"]["required"]
    assistant, tool = request["messages"][1], request["messages"][2]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"city": "Oslo"}
    assert tool["tool_call_id"] == assistant["tool_calls"][0]["id"]


def test_sdk_chat_tool_call_not_streamed(client: ollama.Client) -> None:
    response = client.chat("qwen3-8b", messages=[{"role": "user", "content": "Oslo?"}],
                           tools=[WEATHER_TOOL], stream=False)
    (call,) = response.message.tool_calls or []
    assert (call.function.name, call.function.arguments) == ("get_weather", {"city": "Oslo"})


def test_sdk_chat_format_schema(client: ollama.Client, server: _Server) -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    client.chat("qwen3-8b", messages=[{"role": "user", "content": "ok?"}], format=schema,
                stream=False)
    assert _openai(server)["response_format"]["json_schema"]["schema"] == schema


def test_sdk_generate_stream(client: ollama.Client, server: _Server) -> None:
    parts = list(client.generate("qwen3-8b", prompt="Hi", system="Be brief.", stream=True))
    assert all(isinstance(p, ollama.GenerateResponse) for p in parts)
    assert "".join(p.response or "" for p in parts) == "Hello, world!"
    assert parts[-1].done and parts[-1].done_reason == "stop" and parts[-1].eval_count == 4
    assert _openai(server)["messages"] == [{"role": "system", "content": "Be brief."},
                                           {"role": "user", "content": "Hi"}]


def test_sdk_generate_raw_stream(client: ollama.Client, server: _Server) -> None:
    parts = list(client.generate("qwen3-8b", prompt="Once", raw=True, stream=True))
    assert "".join(p.response or "" for p in parts) == "Once upon a time"
    assert parts[-1].done_reason == "length"
    assert server.seen[-1][0] == "completions"


def test_sdk_generate_not_streamed(client: ollama.Client) -> None:
    response = client.generate("qwen3-8b", prompt="Hi", stream=False)
    assert (response.response, response.done) == ("Hello, world!", True)


def test_sdk_embed(client: ollama.Client, server: _Server) -> None:
    response = client.embed("qwen3-8b", input=["first", "second"])
    assert isinstance(response, ollama.EmbedResponse)
    assert [list(v) for v in response.embeddings] == [[1.0, -1.0], [0.5, 0.25]]
    assert response.prompt_eval_count == 5
    assert _openai(server)["input"] == ["first", "second"]


def test_sdk_list(client: ollama.Client) -> None:
    models = client.list().models
    assert [m.model for m in models] == ["qwen3-8b:latest", "gemma-2b:latest"]
    first = models[0]
    assert first.size == 5_000_000_000 and first.digest == "ab" * 32
    assert first.modified_at == datetime.fromtimestamp(MODIFIED, UTC)
    assert first.details is not None
    assert (first.details.family, first.details.parameter_size,
            first.details.quantization_level) == ("qwen3", "8.2B", "Q4_K_M")


def test_sdk_ps(client: ollama.Client) -> None:
    (model,) = client.ps().models
    assert model.model == "qwen3-8b:latest"
    assert model.expires_at == datetime.fromtimestamp(EXPIRES, UTC)
    assert (model.size_vram, model.context_length) == (4_500_000_000, 32768)


def test_sdk_show(client: ollama.Client) -> None:
    shown = client.show("qwen3-8b:latest")
    assert shown.capabilities == ["completion", "tools"]
    assert shown.modelinfo is not None
    assert shown.modelinfo["general.architecture"] == "qwen3"
    assert shown.modelinfo["qwen3.context_length"] == 32768
    assert shown.template == TEMPLATE
    assert shown.details is not None and shown.details.format == "gguf"
    with pytest.raises(ollama.ResponseError) as caught:
        client.show("nothing")
    assert caught.value.status_code == 404 and caught.value.error == "model 'nothing' not found"


def test_sdk_sees_request_errors(client: ollama.Client) -> None:
    with pytest.raises(ollama.ResponseError) as caught:
        client.generate("qwen3-8b", prompt="What is this?", raw=True,
                        images=[b"\x89PNG fake"])
    assert caught.value.status_code == 400
    assert "images" in caught.value.error and "Leave out 'raw'" in caught.value.error


def test_sdk_sees_a_failure_mid_stream(client: ollama.Client) -> None:
    parts = client.chat("broken", messages=[{"role": "user", "content": "Hi"}], stream=True)
    with pytest.raises(ollama.ResponseError, match="runner stopped"):
        for _ in parts:
            pass


def test_sdk_needs_the_key(server: _Server) -> None:
    host, port = server.server_address[:2]
    with ollama.Client(host=f"http://{host!s}:{port}",
                       headers={"Authorization": "Bearer wrong"}) as sdk, \
            pytest.raises(ollama.ResponseError) as caught:
        sdk.list()
    assert caught.value.status_code == 401
