"""server.api_anthropic: Anthropic's Messages API over OpenAI Chat Completions.

The unit tests pin the translation rules; the SDK tests run the official ``anthropic`` client,
unchanged, against a stdlib HTTP server that translates its requests with ``chat_request`` and
answers with ``reply`` / ``StreamTranslator`` output made from canned runner chunks.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import pytest

from server.api_anthropic import RequestError, StreamTranslator, chat_request, error_body, reply

# ---- canned runner output ---------------------------------------------------------------------


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None,
           usage: dict[str, int] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                           "model": "runner-model", "choices": []}
    if usage is not None:
        out["usage"] = {**usage, "total_tokens": sum(usage.values())}
    else:
        out["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    return out


def _args(index: int, text: str) -> dict[str, Any]:
    return _chunk({"tool_calls": [{"index": index, "function": {"arguments": text}}]})


def _call_start(index: int, call_id: str, name: str) -> dict[str, Any]:
    return _chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                   "function": {"name": name, "arguments": ""}}]})


USAGE = {"prompt_tokens": 12, "completion_tokens": 4}

TEXT_STREAM = [
    _chunk({"role": "assistant", "content": ""}),
    _chunk({"content": "Hello"}),
    _chunk({"content": ", wor"}),
    _chunk({"content": "ld!"}),
    _chunk({}, finish="stop"),
    _chunk(usage=USAGE),
]

# Text, then two tool calls whose JSON arguments arrive in pieces that are not JSON on their own.
TOOL_STREAM = [
    _chunk({"role": "assistant", "content": ""}),
    _chunk({"content": "Let me check."}),
    _call_start(0, "call_weather", "get_weather"),
    _args(0, '{"city"'),
    _args(0, ': "Par'),
    _args(0, 'is", "days": '),
    _args(0, "3}"),
    _call_start(1, "call_time", "get_time"),
    _args(1, '{"tz": '),
    _args(1, '"CET"}'),
    _chunk({}, finish="tool_calls"),
    _chunk(usage={"prompt_tokens": 30, "completion_tokens": 21}),
]


def _completion(message: dict[str, Any], finish: str,
                usage: dict[str, int] | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "runner-model",
            "choices": [{"index": 0, "message": {"role": "assistant", **message},
                         "finish_reason": finish}],
            "usage": {**(usage or USAGE), "total_tokens": 16}}


TEXT_COMPLETION = _completion({"content": "Hi there."}, "stop")
TOOL_COMPLETION = _completion(
    {"content": "Checking.", "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Oslo", "days": 2}'}}]},
    "tool_calls", {"prompt_tokens": 50, "completion_tokens": 9})

WEATHER_TOOL: anthropic.types.ToolParam = {
    "name": "get_weather", "description": "The forecast for a city.",
    "input_schema": {"type": "object",
                     "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                     "required": ["city"]}}


def _base(**extra: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 64,
            "messages": [{"role": "user", "content": "Hi"}], **extra}


def _events(frames: list[bytes]) -> list[tuple[str, dict[str, Any]]]:
    """SSE frames -> (event, data) pairs, checking each frame's shape on the way."""
    out = []
    for frame in frames:
        text = frame.decode()
        assert text.endswith("\n\n") and text.count("\n") == 3, frame
        event_line, data_line = text.split("\n")[:2]
        assert event_line.startswith("event: ") and data_line.startswith("data: ")
        data = json.loads(data_line.removeprefix("data: "))
        assert data["type"] == event_line.removeprefix("event: ")
        out.append((data["type"], data))
    return out


def _stream(chunks: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    translator = StreamTranslator("claude-x")
    frames = [f for chunk in chunks for f in translator.feed(chunk)] + translator.finish()
    return _events(frames)


# ---- request: system and messages --------------------------------------------------------------

def test_system_as_a_string_and_as_text_blocks() -> None:
    assert chat_request(_base(system="Be brief."))["messages"][0] == \
        {"role": "system", "content": "Be brief."}
    blocks = [{"type": "text", "text": "You are a helper."},
              {"type": "text", "text": "Answer in French.", "cache_control": {"type": "ephemeral"}}]
    assert chat_request(_base(system=blocks))["messages"][0] == \
        {"role": "system", "content": "You are a helper.\n\nAnswer in French."}
    assert chat_request(_base(system=""))["messages"][0]["role"] == "user"


@pytest.mark.parametrize("system", [5, {"text": "x"}, [{"type": "image"}], ["plain"],
                                    [{"type": "text", "text": ["x"]}]])
def test_a_system_prompt_of_the_wrong_shape_is_refused(system: Any) -> None:
    with pytest.raises(RequestError):
        chat_request(_base(system=system))


def test_the_request_keeps_model_max_tokens_and_plain_messages() -> None:
    body = _base(messages=[
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]},
        {"role": "user", "content": [{"type": "text", "text": "One"},
                                     {"type": "text", "text": "Two",
                                      "cache_control": {"type": "ephemeral"}}]},
    ], metadata={"user_id": "u-1"}, thinking={"type": "enabled", "budget_tokens": 1024})
    assert chat_request(body) == {
        "model": "claude-sonnet-4-5", "max_tokens": 64, "stream": False,
        "messages": [{"role": "user", "content": "Hi"},
                     {"role": "assistant", "content": "Hello."},
                     {"role": "user", "content": "One\n\nTwo"}]}


def test_system_messages_among_the_turns_are_kept_in_place() -> None:
    body = _base(system="Top.", messages=[
        {"role": "system", "content": [{"type": "text", "text": "Also this."}]},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "system", "content": "Now answer in French."},
        {"role": "user", "content": "Bye"}])
    assert chat_request(body)["messages"] == [
        {"role": "system", "content": "Top.\n\nAlso this."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "system", "content": "Now answer in French."},
        {"role": "user", "content": "Bye"}]


def test_consecutive_turns_of_one_role_are_combined() -> None:
    body = _base(messages=[
        {"role": "user", "content": "One"},
        {"role": "user", "content": [{"type": "text", "text": "Two"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "And"},
            {"type": "tool_use", "id": "b", "name": "g", "input": {"x": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "1"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "2"},
                                     {"type": "text", "text": "Done?"}]},
        {"role": "user", "content": "Sure?"}])
    messages = chat_request(body)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert messages[0]["content"] == "One\n\nTwo"
    assert messages[1]["content"] == "And"
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["a", "b"]
    assert messages[4]["content"] == "Done?\n\nSure?"


def test_streaming_asks_the_runner_for_usage() -> None:
    out = chat_request(_base(stream=True))
    assert out["stream"] is True and out["stream_options"] == {"include_usage": True}


def test_assistant_tool_use_becomes_openai_tool_calls() -> None:
    body = _base(messages=[
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hm", "signature": "sig"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
             "input": {"city": "Oslo", "note": "Ø"}}]},
        {"role": "user", "content": "And the time?"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_2", "name": "now", "input": {}}]},
    ])
    messages = chat_request(body)["messages"]
    assert messages[1] == {"role": "assistant", "content": "Checking.", "tool_calls": [
        {"id": "toolu_1", "type": "function",
         "function": {"name": "get_weather",
                      "arguments": json.dumps({"city": "Oslo", "note": "Ø"}, ensure_ascii=False)}}]}
    assert json.loads(messages[1]["tool_calls"][0]["function"]["arguments"]) == \
        {"city": "Oslo", "note": "Ø"}
    assert messages[3]["content"] == ""
    assert messages[3]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_tool_results_become_tool_messages_ahead_of_the_text() -> None:
    body = _base(messages=[
        {"role": "user", "content": "Go"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "f", "input": {}},
            {"type": "tool_use", "id": "b", "name": "g", "input": {}},
            {"type": "tool_use", "id": "c", "name": "h", "input": {}}]},
        {"role": "user", "content": [
            {"type": "text", "text": "Here you go."},
            {"type": "tool_result", "tool_use_id": "a", "content": "12 °C"},
            {"type": "tool_result", "tool_use_id": "b",
             "content": [{"type": "text", "text": "line 1"}, {"type": "text", "text": "line 2"}]},
            {"type": "tool_result", "tool_use_id": "c", "content": "no such file",
             "is_error": True, "cache_control": {"type": "ephemeral"}}]},
    ])
    assert chat_request(body)["messages"][2:] == [
        {"role": "tool", "tool_call_id": "a", "content": "12 °C"},
        {"role": "tool", "tool_call_id": "b", "content": "line 1\n\nline 2"},
        {"role": "tool", "tool_call_id": "c", "content": "Error: no such file"},
        {"role": "user", "content": "Here you go."}]


def test_a_tool_result_without_content_is_empty_and_no_user_message_follows() -> None:
    body = _base(messages=[{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "a"}]}])
    assert chat_request(body)["messages"] == [{"role": "tool", "tool_call_id": "a", "content": ""}]


@pytest.mark.parametrize("block", [
    {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}},
    {"type": "tool_result", "tool_use_id": "a", "content": [
        {"type": "image", "source": {"type": "url", "url": "https://example.org/a.png"}}]},
    {"type": "image", "source": {"type": "file", "file_id": "f"}},
])
def test_documents_and_images_out_of_place_are_refused(block: dict[str, Any]) -> None:
    with pytest.raises(RequestError) as caught:
        chat_request(_base(messages=[{"role": "user", "content": [block]}]))
    param = caught.value.param
    assert param is not None and param.startswith("messages[0].content[0]")


def test_a_user_turn_s_images_become_image_url_parts_in_order() -> None:
    """The runner decides whether the model sees them (a text model answers 400 with why)."""
    body = _base(messages=[{"role": "user", "content": [
        {"type": "text", "text": "Compare"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": "iVBORw0KGgo="}},
        {"type": "image", "source": {"type": "url", "url": "https://example.org/b.jpg"}}]}])
    (message,) = [m for m in chat_request(body)["messages"] if m["role"] == "user"]
    assert message["content"] == [
        {"type": "text", "text": "Compare"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "image_url", "image_url": {"url": "https://example.org/b.jpg"}}]


@pytest.mark.parametrize("messages, match", [
    (None, "messages"),
    ([], "messages"),
    ("Hi", "messages"),
    (["Hi"], "messages"),
    ([{"role": "developer", "content": "x"}], "system"),
    ([{"role": "system", "content": [{"type": "image"}]}], "text blocks only"),
    ([{"role": "user", "content": 5}], "string or a list"),
    ([{"role": "user", "content": [{"type": "audio"}]}], '"audio"'),
    ([{"role": "user", "content": [{"type": "server_tool_use"}]}], "does not take"),
    ([{"role": "user", "content": [{"text": "no type"}]}], "type"),
    ([{"role": "user", "content": ["bare string"]}], "content block"),
    ([{"role": "user", "content": [{"type": "text", "text": None}]}], "text must be a string"),
    ([{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]}],
     "user turn"),
    ([{"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "a"}]}],
     "assistant turn"),
    ([{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f",
                                         "input": "[1]"}]}], "input"),
    ([{"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}], "id"),
    ([{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "input": {}}]}], "name"),
    ([{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}], "tool_use_id"),
    ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": 3}]}],
     "content"),
    ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a",
                                    "is_error": "yes"}]}], "is_error"),
])
def test_malformed_messages_are_refused_with_a_sentence(messages: Any, match: str) -> None:
    with pytest.raises(RequestError, match=match):
        chat_request(_base(messages=messages))


# ---- request: settings, tools, tool_choice -----------------------------------------------------

def test_max_tokens_is_required_and_must_be_a_positive_whole_number() -> None:
    body = _base()
    del body["max_tokens"]
    with pytest.raises(RequestError, match="max_tokens") as caught:
        chat_request(body)
    assert caught.value.param == "max_tokens"
    for bad in (0, -1, 1.5, True, "64", [64]):
        with pytest.raises(RequestError, match="max_tokens"):
            chat_request(_base(max_tokens=bad))


def test_sampling_settings_and_stop_sequences_are_carried() -> None:
    out = chat_request(_base(temperature=0.2, top_p=0.9, top_k=40, stop_sequences=["\n\nHuman:"]))
    assert (out["temperature"], out["top_p"], out["top_k"], out["stop"]) == \
        (0.2, 0.9, 40, ["\n\nHuman:"])
    assert "stop" not in chat_request(_base(stop_sequences=[]))


@pytest.mark.parametrize("field, value", [
    ("temperature", "hot"), ("temperature", True), ("top_p", [0.5]), ("top_k", 2.5),
    ("top_k", False), ("stop_sequences", "END"), ("stop_sequences", ["END", 3]),
    ("stream", "yes"), ("model", None), ("model", ["a"]), ("tools", {"name": "f"}),
    ("tool_choice", "auto"), ("output_config", "json"),
])
def test_settings_of_the_wrong_type_are_refused(field: str, value: Any) -> None:
    body = _base(**{field: value})
    if value is None:
        del body[field]
    with pytest.raises(RequestError):
        chat_request(body)


def test_the_body_must_be_an_object() -> None:
    with pytest.raises(RequestError, match="JSON object"):
        chat_request([])  # type: ignore[arg-type]


def test_tools_become_openai_function_tools() -> None:
    bare = {"name": "now", "input_schema": {"type": "object", "properties": {}}}
    out = chat_request(_base(tools=[WEATHER_TOOL, {**bare, "type": "custom"}]))
    assert out["tools"] == [
        {"type": "function", "function": {"name": "get_weather",
                                          "description": "The forecast for a city.",
                                          "parameters": WEATHER_TOOL["input_schema"]}},
        {"type": "function", "function": {"name": "now", "parameters": bare["input_schema"]}}]
    assert "tools" not in chat_request(_base(tools=[]))


@pytest.mark.parametrize("tool, match", [
    ({"type": "bash_20250124", "name": "bash"}, "built-in"),
    ({"type": "web_search_20250305", "name": "web_search"}, "built-in"),
    ({"name": "f"}, "input_schema"),
    ({"name": "f", "input_schema": "{}"}, "input_schema"),
    ({"input_schema": {}}, "name"),
    ({"name": "f", "description": 3, "input_schema": {}}, "description"),
    ("f", "object"),
])
def test_tools_that_cannot_be_served_are_refused(tool: Any, match: str) -> None:
    with pytest.raises(RequestError, match=match):
        chat_request(_base(tools=[tool]))


@pytest.mark.parametrize("choice, expected", [
    ({"type": "auto"}, {"tool_choice": "auto"}),
    ({"type": "any"}, {"tool_choice": "required"}),
    ({"type": "none"}, {"tool_choice": "none"}),
    ({"type": "tool", "name": "get_weather"},
     {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}),
    ({"type": "auto", "disable_parallel_tool_use": True},
     {"tool_choice": "auto", "parallel_tool_calls": False}),
    ({"type": "any", "disable_parallel_tool_use": False},
     {"tool_choice": "required", "parallel_tool_calls": True}),
])
def test_tool_choice_maps_to_openai(choice: dict[str, Any], expected: dict[str, Any]) -> None:
    out = chat_request(_base(tools=[WEATHER_TOOL], tool_choice=choice))
    assert {k: out[k] for k in ("tool_choice", "parallel_tool_calls") if k in out} == expected


@pytest.mark.parametrize("choice", [{"type": "tool"}, {"type": "tool", "name": 3},
                                    {"type": "sometimes"}, {},
                                    {"type": "auto", "disable_parallel_tool_use": "yes"}])
def test_a_bad_tool_choice_is_refused(choice: dict[str, Any]) -> None:
    with pytest.raises(RequestError, match="tool_choice"):
        chat_request(_base(tools=[WEATHER_TOOL], tool_choice=choice))


def test_structured_output_becomes_a_json_schema_response_format() -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    expected = {"type": "json_schema",
                "json_schema": {"name": "output", "schema": schema, "strict": True}}
    fmt = {"type": "json_schema", "schema": schema}
    assert chat_request(_base(output_config={"format": fmt, "effort": "low"}))[
        "response_format"] == expected
    assert chat_request(_base(output_format=fmt))["response_format"] == expected
    assert "response_format" not in chat_request(_base(output_config={"effort": "low"}))
    with pytest.raises(RequestError, match="json_schema"):
        chat_request(_base(output_config={"format": {"type": "json_schema", "schema": "x"}}))


# ---- reply -------------------------------------------------------------------------------------

def test_a_text_reply() -> None:
    out = reply(TEXT_COMPLETION, "claude-x")
    assert out["id"].startswith("msg_") and len(out["id"]) > 10
    assert {k: v for k, v in out.items() if k != "id"} == {
        "type": "message", "role": "assistant", "model": "claude-x",
        "content": [{"type": "text", "text": "Hi there."}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 4}}


def test_a_tool_use_reply_parses_the_arguments() -> None:
    out = reply(TOOL_COMPLETION, "claude-x")
    assert out["content"] == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "call_1", "name": "get_weather",
         "input": {"city": "Oslo", "days": 2}}]
    assert out["stop_reason"] == "tool_use"


@pytest.mark.parametrize("arguments, expected", [
    ("", {}), (None, {}), ({"a": 1}, {"a": 1}), (json.dumps('{"a": 1}'), {"a": 1}),
])
def test_arguments_that_are_empty_or_encoded_twice_still_give_an_object(
        arguments: Any, expected: dict[str, Any]) -> None:
    chat = _completion({"content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}]},
        "tool_calls")
    assert reply(chat, "m")["content"] == [{"type": "tool_use", "id": "c", "name": "f",
                                            "input": expected}]


@pytest.mark.parametrize("arguments", ['{"city": "Os', "[1, 2]", "42", 7])
def test_arguments_that_are_not_an_object_give_empty_input_and_a_note(arguments: Any) -> None:
    chat = _completion({"content": "", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": arguments}}]},
        "tool_calls")
    note, block = reply(chat, "m")["content"]
    assert block["type"] == "tool_use" and block["input"] == {}
    assert block["id"].startswith("toolu_")  # the runner gave none
    assert note["type"] == "text" and "get_weather" in note["text"]
    assert str(arguments) in note["text"]


@pytest.mark.parametrize("finish, called, expected", [
    ("stop", False, "end_turn"), ("length", False, "max_tokens"), ("tool_calls", True, "tool_use"),
    ("stop", True, "tool_use"), ("content_filter", False, "refusal"), (None, False, "end_turn"),
    ("length", True, "max_tokens"),
])
def test_finish_reasons_map_to_stop_reasons(finish: str | None, called: bool,
                                            expected: str) -> None:
    message: dict[str, Any] = {"content": "x"}
    if called:
        message["tool_calls"] = [{"id": "c", "type": "function",
                                  "function": {"name": "f", "arguments": "{}"}}]
    chat = _completion(message, "stop")
    chat["choices"][0]["finish_reason"] = finish
    assert reply(chat, "m")["stop_reason"] == expected


def test_a_reply_from_a_strange_completion_does_not_crash() -> None:
    chats: list[dict[str, Any]] = [
        {}, {"choices": []}, {"choices": ["x"]}, {"choices": [{"message": "x"}]},
        {"choices": [{"message": {"content": 5, "tool_calls": "x"}}], "usage": "x"}]
    for chat in chats:
        out = reply(chat, "m")
        assert out["content"] == [] and out["usage"] == {"input_tokens": 0, "output_tokens": 0}


# ---- streaming ---------------------------------------------------------------------------------

def test_a_text_stream_in_anthropics_order() -> None:
    events = _stream(TEXT_STREAM)
    assert [name for name, _ in events] == [
        "message_start", "ping", "content_block_start", "content_block_delta",
        "content_block_delta", "content_block_delta", "content_block_stop", "message_delta",
        "message_stop"]
    start = events[0][1]["message"]
    assert start["id"].startswith("msg_") and start["model"] == "claude-x"
    assert (start["content"], start["stop_reason"], start["usage"]) == \
        ([], None, {"input_tokens": 0, "output_tokens": 0})
    assert events[2][1] == {"type": "content_block_start", "index": 0,
                            "content_block": {"type": "text", "text": ""}}
    assert [e["delta"] for _, e in events[3:6]] == [
        {"type": "text_delta", "text": t} for t in ("Hello", ", wor", "ld!")]
    assert {e["index"] for _, e in events[2:7]} == {0}
    assert events[7][1] == {"type": "message_delta",
                            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                            "usage": {"output_tokens": 4, "input_tokens": 12}}
    assert events[8][1] == {"type": "message_stop"}


def test_a_tool_stream_gives_each_block_its_index() -> None:
    events = _stream(TOOL_STREAM)
    blocks = [(name, e.get("index")) for name, e in events if name.startswith("content_block")]
    assert blocks == [("content_block_start", 0), ("content_block_delta", 0),
                      ("content_block_stop", 0),
                      ("content_block_start", 1)] + [("content_block_delta", 1)] * 4 + [
                      ("content_block_stop", 1),
                      ("content_block_start", 2)] + [("content_block_delta", 2)] * 2 + [
                      ("content_block_stop", 2)]
    starts = [e["content_block"] for name, e in events if name == "content_block_start"]
    assert starts[1:] == [
        {"type": "tool_use", "id": "call_weather", "name": "get_weather", "input": {}},
        {"type": "tool_use", "id": "call_time", "name": "get_time", "input": {}}]
    parts = [e["delta"] for name, e in events
             if name == "content_block_delta" and e["index"] == 1]
    assert all(p["type"] == "input_json_delta" for p in parts)
    assert json.loads("".join(p["partial_json"] for p in parts)) == {"city": "Paris", "days": 3}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert events[-2][1]["usage"] == {"output_tokens": 21, "input_tokens": 30}


def test_arguments_before_the_name_wait_for_it() -> None:
    chunks = [_chunk({"tool_calls": [{"index": 0, "id": "c1",
                                      "function": {"arguments": '{"a"'}}]}),
              _chunk({"tool_calls": [{"index": 0,
                                      "function": {"name": "f", "arguments": ": 1}"}}]}),
              _chunk({}, finish="tool_calls")]
    events = _stream(chunks)
    assert [n for n, _ in events] == ["message_start", "ping", "content_block_start",
                                      "content_block_delta", "content_block_stop",
                                      "message_delta", "message_stop"]
    assert events[2][1]["content_block"]["name"] == "f"
    assert events[3][1]["delta"] == {"type": "input_json_delta", "partial_json": '{"a": 1}'}
    # No usage chunk came: the counts are 0 and input_tokens is left to message_start's.
    assert events[5][1]["usage"] == {"output_tokens": 0}


def test_an_empty_stream_still_opens_and_closes_the_message() -> None:
    translator = StreamTranslator("m")
    assert [n for n, _ in _events(translator.finish())] == \
        ["message_start", "ping", "message_delta", "message_stop"]
    assert translator.finish() == [] and translator.feed(TEXT_STREAM[1]) == []


def test_fail_sends_an_error_event_and_ends_the_stream() -> None:
    translator = StreamTranslator("m")
    translator.feed(TEXT_STREAM[1])
    assert _events(translator.fail("The runner stopped.")) == [
        ("error", {"type": "error",
                   "error": {"type": "api_error", "message": "The runner stopped."}})]
    assert translator.finish() == [] and translator.fail("again") == []


def test_a_runner_error_chunk_becomes_the_error_event() -> None:
    translator = StreamTranslator("m")
    frames = translator.feed({"error": {"message": "generation failed", "type": "server_error"}})
    assert _events(frames)[0][1]["error"] == {"type": "api_error", "message": "generation failed"}


def test_text_after_a_tool_call_opens_a_new_block() -> None:
    events = _stream([_call_start(0, "c", "f"), _args(0, "{}"), _chunk({"content": "Done."}),
                      _chunk({}, finish="stop")])
    starts = [(e["index"], e["content_block"]["type"]) for n, e in events
              if n == "content_block_start"]
    assert starts == [(0, "tool_use"), (1, "text")]
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


# ---- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("status, kind", [
    (400, "invalid_request_error"), (401, "authentication_error"), (403, "permission_error"),
    (404, "not_found_error"), (413, "request_too_large"), (422, "invalid_request_error"),
    (429, "rate_limit_error"), (500, "api_error"), (502, "api_error"), (503, "overloaded_error"),
])
def test_error_body_types_by_status(status: int, kind: str) -> None:
    assert error_body(status, "Nope.") == {"type": "error",
                                           "error": {"type": kind, "message": "Nope."}}


def test_error_body_keeps_the_code() -> None:
    assert error_body(400, "Too big.", "insufficient_memory")["error"] == {
        "type": "invalid_request_error", "message": "Too big.", "code": "insufficient_memory"}


# ---- the official SDK against a stdlib server --------------------------------------------------

class _Upstream:
    """What the fake server answers next, and what it was sent."""

    def __init__(self) -> None:
        self.answer: tuple[str, Any] = ("reply", TEXT_COMPLETION)
        self.seen: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        upstream = self.server.upstream
        upstream.paths.append(self.path)
        upstream.headers.append({k.lower(): v for k, v in self.headers.items()})
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        try:
            chat = chat_request(body)
        except RequestError as e:
            self._json(400, error_body(400, str(e)))
            return
        upstream.seen.append(chat)
        kind, payload = upstream.answer
        if kind == "status":
            status, message = payload
            self._json(status, error_body(status, message))
        elif kind == "reply":
            assert chat["stream"] is False
            self._json(200, reply(payload, body["model"]))
        else:
            assert chat["stream"] is True
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            translator = StreamTranslator(body["model"])
            for chunk in payload:
                for frame in translator.feed(chunk):
                    self.wfile.write(frame)
            closing = translator.fail("The runner stopped.") if kind == "fail" \
                else translator.finish()
            self.wfile.write(b"".join(closing))

    def _json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest's output clean
        pass


class _Server(ThreadingHTTPServer):
    upstream: _Upstream


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture()
def upstream(server: _Server) -> _Upstream:
    server.upstream = _Upstream()
    return server.upstream


@pytest.fixture()
def client(server: _Server) -> anthropic.Anthropic:
    port = server.server_address[1]
    return anthropic.Anthropic(base_url=f"http://127.0.0.1:{port}", api_key="k", max_retries=0)


def test_sdk_create_text(client: anthropic.Anthropic, upstream: _Upstream) -> None:
    message = client.messages.create(model="local-model", max_tokens=100,
                                     system="Be brief.",
                                     messages=[{"role": "user", "content": "Hi"}],
                                     stop_sequences=["STOP"], metadata={"user_id": "u-1"},
                                     # anthropic 2.x dropped the sampling keywords from create()
                                     extra_body={"temperature": 0.3})
    assert isinstance(message, anthropic.types.Message)
    assert message.id.startswith("msg_") and message.model == "local-model"
    assert [b.type for b in message.content] == ["text"]
    assert isinstance(message.content[0], anthropic.types.TextBlock)
    assert message.content[0].text == "Hi there."
    assert (message.stop_reason, message.stop_sequence) == ("end_turn", None)
    assert (message.usage.input_tokens, message.usage.output_tokens) == (12, 4)
    # anthropic 2.x sends api_key as a Bearer token, not x-api-key: the server must take both.
    assert upstream.paths == ["/v1/messages"]
    assert upstream.headers[0]["authorization"] == "Bearer k"
    assert "anthropic-version" in upstream.headers[0]
    assert upstream.seen == [{
        "model": "local-model", "max_tokens": 100, "stream": False, "temperature": 0.3,
        "stop": ["STOP"],
        "messages": [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "Hi"}]}]


def test_sdk_create_tool_use(client: anthropic.Anthropic, upstream: _Upstream) -> None:
    upstream.answer = ("reply", TOOL_COMPLETION)
    message = client.messages.create(model="claude-x", max_tokens=100, tools=[WEATHER_TOOL],
                                     tool_choice={"type": "any"},
                                     messages=[{"role": "user", "content": "Oslo weather?"}])
    text, call = message.content
    assert isinstance(text, anthropic.types.TextBlock) and text.text == "Checking."
    assert isinstance(call, anthropic.types.ToolUseBlock)
    assert (call.id, call.name, call.input) == \
        ("call_1", "get_weather", {"city": "Oslo", "days": 2})
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (50, 9)
    chat = upstream.seen[0]
    assert chat["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": "The forecast for a city.",
        "parameters": WEATHER_TOOL["input_schema"]}}]
    assert chat["tool_choice"] == "required"


def test_sdk_stream_text(client: anthropic.Anthropic, upstream: _Upstream) -> None:
    upstream.answer = ("stream", TEXT_STREAM)
    with client.messages.stream(model="claude-x", max_tokens=50,
                                messages=[{"role": "user", "content": "Say hello"}]) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert pieces == ["Hello", ", wor", "ld!"]
    assert [b.type for b in final.content] == ["text"]
    assert isinstance(final.content[0], anthropic.types.TextBlock)
    assert final.content[0].text == "Hello, world!"
    assert final.stop_reason == "end_turn"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (12, 4)
    assert upstream.seen[0]["stream_options"] == {"include_usage": True}


def test_sdk_stream_tool_use_split_over_chunks(client: anthropic.Anthropic,
                                               upstream: _Upstream) -> None:
    upstream.answer = ("stream", TOOL_STREAM)
    with client.messages.stream(model="claude-x", max_tokens=200, tools=[WEATHER_TOOL],
                                messages=[{"role": "user", "content": "Paris, and the time"}]
                                ) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_message()
    assert kinds.count("input_json") == 6 and "text" in kinds
    assert [b.type for b in final.content] == ["text", "tool_use", "tool_use"]
    text, weather, clock = final.content
    assert isinstance(text, anthropic.types.TextBlock) and text.text == "Let me check."
    assert isinstance(weather, anthropic.types.ToolUseBlock)
    assert isinstance(clock, anthropic.types.ToolUseBlock)
    assert (weather.id, weather.name, weather.input) == \
        ("call_weather", "get_weather", {"city": "Paris", "days": 3})
    assert (clock.name, clock.input) == ("get_time", {"tz": "CET"})
    assert final.stop_reason == "tool_use"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (30, 21)


def test_sdk_create_stream_true_gives_the_raw_events(client: anthropic.Anthropic,
                                                     upstream: _Upstream) -> None:
    upstream.answer = ("stream", TOOL_STREAM)
    events = list(client.messages.create(model="claude-x", max_tokens=200, stream=True,
                                         messages=[{"role": "user", "content": "Go"}]))
    assert events[0].type == "message_start" and events[-1].type == "message_stop"
    assert "ping" not in [e.type for e in events]  # the SDK swallows it
    partial = [e.delta.partial_json for e in events
               if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
               and e.index == 1]
    assert len(partial) == 4 and json.loads("".join(partial)) == {"city": "Paris", "days": 3}
    delta = events[-2]
    assert delta.type == "message_delta" and delta.delta.stop_reason == "tool_use"


def test_sdk_tool_result_round_trip(client: anthropic.Anthropic, upstream: _Upstream) -> None:
    message = client.messages.create(
        model="claude-x", max_tokens=100, tools=[WEATHER_TOOL],
        system=[{"type": "text", "text": "You help with weather."},
                {"type": "text", "text": "Use tools.", "cache_control": {"type": "ephemeral"}}],
        messages=[
            {"role": "user", "content": "Weather in Oslo and Bergen?"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Checking both."},
                {"type": "tool_use", "id": "toolu_a", "name": "get_weather",
                 "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "toolu_b", "name": "get_weather",
                 "input": {"city": "Bergen"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a",
                 "content": [{"type": "text", "text": "12 °C, rain"}]},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "station offline",
                 "is_error": True},
                {"type": "text", "text": "Summarize, please."}]},
        ])
    assert isinstance(message.content[0], anthropic.types.TextBlock)
    assert message.content[0].text == "Hi there."
    assert upstream.seen[0]["messages"] == [
        {"role": "system", "content": "You help with weather.\n\nUse tools."},
        {"role": "user", "content": "Weather in Oslo and Bergen?"},
        {"role": "assistant", "content": "Checking both.", "tool_calls": [
            {"id": "toolu_a", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
            {"id": "toolu_b", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Bergen"}'}}]},
        {"role": "tool", "tool_call_id": "toolu_a", "content": "12 °C, rain"},
        {"role": "tool", "tool_call_id": "toolu_b", "content": "Error: station offline"},
        {"role": "user", "content": "Summarize, please."}]


def test_sdk_sees_a_document_refused_as_a_bad_request(client: anthropic.Anthropic,
                                                      upstream: _Upstream) -> None:
    document: anthropic.types.DocumentBlockParam = {
        "type": "document", "source": {"type": "text", "media_type": "text/plain",
                                       "data": "notes"}}
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model="claude-x", max_tokens=10,
                               messages=[{"role": "user", "content": [document]}])
    assert caught.value.status_code == 400
    body = caught.value.body
    assert isinstance(body, dict) and body["error"]["type"] == "invalid_request_error"
    assert "Send a document's content as text" in body["error"]["message"]
    assert upstream.seen == []


@pytest.mark.parametrize("status, error, kind", [
    (404, anthropic.NotFoundError, "not_found_error"),
    (503, anthropic.InternalServerError, "overloaded_error"),
    (401, anthropic.AuthenticationError, "authentication_error"),
])
def test_sdk_maps_error_bodies(client: anthropic.Anthropic, upstream: _Upstream, status: int,
                               error: type[anthropic.APIStatusError], kind: str) -> None:
    upstream.answer = ("status", (status, "No model is named claude-x."))
    with pytest.raises(error) as caught:
        client.messages.create(model="claude-x", max_tokens=10,
                               messages=[{"role": "user", "content": "Hi"}])
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["error"] == {"type": kind, "message": "No model is named claude-x."}


def test_sdk_raises_on_a_failure_mid_stream(client: anthropic.Anthropic,
                                            upstream: _Upstream) -> None:
    upstream.answer = ("fail", TEXT_STREAM[:3])
    pieces: list[str] = []
    with pytest.raises(anthropic.APIStatusError, match=r"The runner stopped\."), \
            client.messages.stream(model="claude-x", max_tokens=50,
                                   messages=[{"role": "user", "content": "Hi"}]) as stream:
        pieces.extend(stream.text_stream)
    assert pieces == ["Hello", ", wor"]
