"""server.api_responses: OpenAI's Responses API over Chat Completions.

Pure translation tests first; then the official ``openai`` SDK, unchanged, against a stdlib HTTP
server that runs each request through ``chat_request`` and answers with ``reply`` or
``StreamTranslator`` frames made from canned Chat Completions answers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

import openai
import pydantic
import pytest

from server import api_responses as api

# ---- canned Chat Completions answers ----------------------------------------------------------

USAGE = {"prompt_tokens": 21, "completion_tokens": 7, "total_tokens": 28,
         "prompt_tokens_details": {"cached_tokens": 16}}


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000,
            "model": "runner-model",
            "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}


def _usage_chunk() -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000,
            "model": "runner-model", "choices": [], "usage": USAGE}


def text_stream(*pieces: str, finish: str = "stop") -> list[dict[str, Any]]:
    return [_chunk({"role": "assistant", "content": ""}),
            *(_chunk({"content": p}) for p in pieces),
            _chunk(finish=finish), _usage_chunk()]


def _call_delta(index: int, *, call_id: str | None = None, name: str | None = None,
                arguments: str = "") -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    call: dict[str, Any] = {"index": index, "function": function}
    if call_id is not None:
        call.update(id=call_id, type="function")
    return {"tool_calls": [call]}


CALL_STREAM = [
    _chunk({"role": "assistant", "content": None}),
    _chunk(_call_delta(0, call_id="call_abc", name="get_weather")),
    _chunk(_call_delta(0, arguments='{"ci')),
    _chunk(_call_delta(0, arguments='ty": "Par')),
    _chunk(_call_delta(0, arguments='is"}')),
    _chunk(finish="tool_calls"),
    _usage_chunk(),
]


def completion(content: str | None, *, tool_calls: list[dict[str, Any]] | None = None,
               finish: str = "stop") -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000,
            "model": "runner-model", "usage": USAGE,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}]}


def chat_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


WEATHER_TOOL: Any = {
    "type": "function", "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"], "additionalProperties": False},
    "strict": True}


# ---- reading frames -----------------------------------------------------------------------------

def events(frames: list[bytes]) -> list[dict[str, Any]]:
    """Each frame parsed; its ``event:`` line must name the type its data carries."""
    out = []
    for frame in frames:
        assert frame.endswith(b"\n\n")
        head, data = frame.decode().rstrip("\n").split("\n")
        assert head.startswith("event: ") and data.startswith("data: ")
        payload = json.loads(data[len("data: "):])
        assert payload["type"] == head[len("event: "):]
        out.append(payload)
    return out


def run_stream(chunks: list[Any], *, fail: str | None = None) -> list[dict[str, Any]]:
    translator = api.StreamTranslator("qwen")
    frames: list[bytes] = []
    for chunk in chunks:
        frames += translator.feed(chunk)
    frames += translator.fail(fail) if fail is not None else translator.finish()
    return events(frames)


# ---- request translation -------------------------------------------------------------------------

def test_string_input_and_instructions() -> None:
    chat = api.chat_request({"model": "claude-x", "input": "Hi", "instructions": "Be brief."})
    assert chat == {"model": "claude-x", "stream": False,
                    "messages": [{"role": "system", "content": "Be brief."},
                                 {"role": "user", "content": "Hi"}]}


def test_streaming_asks_for_usage() -> None:
    chat = api.chat_request({"model": "m", "input": "Hi", "stream": True})
    assert chat["stream"] is True
    assert chat["stream_options"] == {"include_usage": True}


def test_messages_of_every_role_and_part() -> None:
    chat = api.chat_request({"model": "m", "input": [
        {"role": "developer", "content": "Rules."},
        {"role": "system", "content": [{"type": "input_text", "text": "More rules."}]},
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "one "},
                     {"type": "input_text", "text": "two"}]},
        {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
         "content": [{"type": "output_text", "text": "Three.", "annotations": []}]},
    ]})
    assert chat["messages"] == [
        {"role": "system", "content": "Rules."},
        {"role": "system", "content": "More rules."},
        {"role": "user", "content": "one two"},
        {"role": "assistant", "content": "Three."},
    ]


def test_function_calls_and_outputs_become_tool_calls_and_tool_messages() -> None:
    chat = api.chat_request({"model": "m", "input": [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Checking."}]},
        {"type": "function_call", "call_id": "c1", "name": "get_weather",
         "arguments": '{"city":"Paris"}', "id": "fc_1", "status": "completed"},
        {"type": "function_call", "call_id": "c2", "name": "get_weather",
         "arguments": '{"city":"Rome"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "18C"},
        {"type": "function_call_output", "call_id": "c2",
         "output": [{"type": "input_text", "text": "21C"}]},
        {"type": "function_call", "call_id": "c3", "name": "get_time", "arguments": "{}"},
    ]})
    assert chat["messages"] == [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"type": "function", "id": "c1",
             "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
            {"type": "function", "id": "c2",
             "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "18C"},
        {"role": "tool", "tool_call_id": "c2", "content": "21C"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "id": "c3", "function": {"name": "get_time", "arguments": "{}"}}]},
    ]


def test_reasoning_items_are_dropped() -> None:
    chat = api.chat_request({"model": "m", "input": [
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "xyz"},
        {"role": "user", "content": "Hi"}]})
    assert chat["messages"] == [{"role": "user", "content": "Hi"}]


@pytest.mark.parametrize("part, param", [
    ({"type": "input_file", "file_id": "file_1"}, "input[0].content[1]"),
    ({"type": "input_image", "file_id": "file_1"}, "input[0].content[1].image_url"),
])
def test_files_are_refused(part: dict[str, Any], param: str) -> None:
    with pytest.raises(api.RequestError) as err:
        api.chat_request({"model": "m", "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Look"}, part]}]})
    assert err.value.param == param


def test_a_user_message_s_images_become_image_url_parts() -> None:
    chat = api.chat_request({"model": "m", "input": [{"role": "user", "content": [
        {"type": "input_text", "text": "Look"},
        {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "auto"}]}]})
    assert chat["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Look"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]


def test_media_in_a_function_output_is_refused() -> None:
    with pytest.raises(api.RequestError, match="input_image in user messages"):
        api.chat_request({"model": "m", "input": [
            {"type": "function_call_output", "call_id": "c1",
             "output": [{"type": "input_image", "image_url": "https://x/y.png"}]}]})


def test_flat_function_tools_become_nested() -> None:
    chat = api.chat_request({"model": "m", "input": "Hi", "tools": [
        WEATHER_TOOL, {"type": "function", "name": "now", "parameters": None}]})
    assert chat["tools"] == [
        {"type": "function", "function": {
            "name": "get_weather", "description": "The weather in a city.",
            "parameters": WEATHER_TOOL["parameters"], "strict": True}},
        {"type": "function", "function": {"name": "now"}},
    ]


@pytest.mark.parametrize("kind", ["web_search", "file_search", "computer_use_preview", "mcp"])
def test_hosted_tools_are_refused_by_name(kind: str) -> None:
    with pytest.raises(api.RequestError, match=repr(kind)) as err:
        api.chat_request({"model": "m", "input": "Hi", "tools": [WEATHER_TOOL, {"type": kind}]})
    assert err.value.param == "tools[1]"


@pytest.mark.parametrize(("choice", "expected"), [
    ("auto", "auto"), ("required", "required"), ("none", "none"),
    ({"type": "function", "name": "get_weather"},
     {"type": "function", "function": {"name": "get_weather"}}),
])
def test_tool_choice(choice: Any, expected: Any) -> None:
    chat = api.chat_request({"model": "m", "input": "Hi", "tools": [WEATHER_TOOL],
                             "tool_choice": choice, "parallel_tool_calls": False})
    assert chat["tool_choice"] == expected
    assert chat["parallel_tool_calls"] is False


@pytest.mark.parametrize("choice", [
    "sometimes", {"type": "function", "name": "missing"}, {"type": "web_search"},
    {"type": "allowed_tools", "mode": "auto", "tools": []}, ["auto"],
])
def test_bad_tool_choice(choice: Any) -> None:
    with pytest.raises(api.RequestError) as err:
        api.chat_request({"model": "m", "input": "Hi", "tools": [WEATHER_TOOL],
                          "tool_choice": choice})
    assert err.value.param == "tool_choice"


def test_sampling_fields() -> None:
    chat = api.chat_request({"model": "m", "input": "Hi", "max_output_tokens": 64,
                             "temperature": 0.2, "top_p": 1, "store": True,
                             "reasoning": {"effort": "high"}, "metadata": {"a": "b"}})
    assert chat["max_tokens"] == 64 and chat["temperature"] == 0.2 and chat["top_p"] == 1
    # store and reasoning leave no trace: nothing is stored, the runner has no effort setting.
    assert set(chat) == {"model", "messages", "stream", "max_tokens", "temperature", "top_p"}


@pytest.mark.parametrize(("fmt", "expected"), [
    ({"type": "text"}, None),
    ({"type": "json_object"}, {"type": "json_object"}),
    ({"type": "json_schema", "name": "city", "strict": True,
      "schema": {"type": "object", "properties": {"name": {"type": "string"}}}},
     {"type": "json_schema", "json_schema": {
         "name": "city", "strict": True,
         "schema": {"type": "object", "properties": {"name": {"type": "string"}}}}}),
])
def test_text_format(fmt: dict[str, Any], expected: dict[str, Any] | None) -> None:
    chat = api.chat_request({"model": "m", "input": "Hi", "text": {"format": fmt}})
    assert chat.get("response_format") == expected


@pytest.mark.parametrize(("field_", "value", "says"), [
    ("previous_response_id", "resp_1", "whole conversation in `input`"),
    ("conversation", "conv_1", "whole conversation in `input`"),
    ("prompt", {"id": "pmpt_1"}, "stored prompt"),
    ("background", True, "stores no responses"),
])
def test_stateful_features_are_refused(field_: str, value: Any, says: str) -> None:
    with pytest.raises(api.RequestError, match=says) as err:
        api.chat_request({"model": "m", "input": "Hi", field_: value})
    assert err.value.param == field_


@pytest.mark.parametrize("body", [
    [], {"input": "Hi"}, {"model": ["m"], "input": "Hi"}, {"model": "m"},
    {"model": "m", "input": 5}, {"model": "m", "input": []},
    {"model": "m", "input": ["Hi"]}, {"model": "m", "input": [{"role": "robot", "content": "x"}]},
    {"model": "m", "input": [{"role": "user", "content": None}]},
    {"model": "m", "input": [{"role": "user", "content": [{"type": "input_text", "text": 3}]}]},
    {"model": "m", "input": [{"role": "user", "content": ["text"]}]},
    {"model": "m", "input": [{"role": "user", "content": [{"type": "video"}]}]},
    {"model": "m", "input": [{"id": "msg_1"}]},
    {"model": "m", "input": [{"type": "computer_call_output", "call_id": "c"}]},
    {"model": "m", "input": [{"type": "function_call", "call_id": "c", "name": "f",
                              "arguments": {"a": 1}}]},
    {"model": "m", "input": [{"type": "function_call_output", "output": "x"}]},
    {"model": "m", "input": "Hi", "instructions": ["a"]},
    {"model": "m", "input": "Hi", "stream": "yes"},
    {"model": "m", "input": "Hi", "max_output_tokens": True},
    {"model": "m", "input": "Hi", "max_output_tokens": 1.5},
    {"model": "m", "input": "Hi", "temperature": "hot"},
    {"model": "m", "input": "Hi", "tools": {"type": "function"}},
    {"model": "m", "input": "Hi", "tools": ["get_weather"]},
    {"model": "m", "input": "Hi", "tools": [{"type": "function", "name": 3}]},
    {"model": "m", "input": "Hi", "tools": [{"type": "function", "name": "f", "parameters": "x"}]},
    {"model": "m", "input": "Hi", "tools": [{"type": "function", "name": "f", "strict": "yes"}]},
    {"model": "m", "input": "Hi", "parallel_tool_calls": 1},
    {"model": "m", "input": "Hi", "text": "json"},
    {"model": "m", "input": "Hi", "text": {"format": {"type": "json_schema", "name": "x"}}},
    {"model": "m", "input": "Hi", "text": {"format": {"type": "json_schema", "schema": {}}}},
    {"model": "m", "input": "Hi", "text": {"format": {"type": "yaml"}}},
])
def test_wrong_shapes_are_request_errors(body: Any) -> None:
    with pytest.raises(api.RequestError) as err:
        api.chat_request(body)
    assert str(err.value).endswith(".")


# ---- non-streaming reply ------------------------------------------------------------------------

def test_reply_text() -> None:
    resp = api.reply(completion("Hello!"), "qwen")
    assert resp["id"].startswith("resp_") and resp["object"] == "response"
    assert resp["status"] == "completed" and resp["incomplete_details"] is None
    assert resp["model"] == "qwen" and resp["created_at"] == 1700000000
    [item] = resp["output"]
    assert item["type"] == "message" and item["id"].startswith("msg_")
    assert item["role"] == "assistant" and item["status"] == "completed"
    assert item["content"] == [{"type": "output_text", "text": "Hello!", "annotations": [],
                                "logprobs": []}]
    assert resp["usage"] == {"input_tokens": 21, "output_tokens": 7, "total_tokens": 28,
                             "input_tokens_details": {"cached_tokens": 16,
                                                      "cache_write_tokens": 0},
                             "output_tokens_details": {"reasoning_tokens": 0}}


def test_reply_tool_calls_without_text() -> None:
    resp = api.reply(completion(None, finish="tool_calls", tool_calls=[
        chat_call("call_1", "get_weather", '{"city":"Paris"}'),
        chat_call("call_2", "get_weather", '{"city":"Rome"}')]), "qwen")
    assert [i["type"] for i in resp["output"]] == ["function_call", "function_call"]
    first = resp["output"][0]
    assert first["id"].startswith("fc_") and first["call_id"] == "call_1"
    assert first["name"] == "get_weather" and first["arguments"] == '{"city":"Paris"}'
    assert first["status"] == "completed"


def test_reply_cut_by_the_token_limit_is_incomplete() -> None:
    resp = api.reply(completion("Once upon", finish="length"), "qwen")
    assert resp["status"] == "incomplete"
    assert resp["incomplete_details"] == {"reason": "max_output_tokens"}
    assert resp["output"][0]["status"] == "incomplete"


def test_reply_survives_a_malformed_completion() -> None:
    resp = api.reply({"choices": "nope", "usage": [1]}, "qwen")
    assert resp["output"][0]["content"][0]["text"] == "" and resp["usage"] is None


# ---- streaming -----------------------------------------------------------------------------------

def test_text_stream_events_in_order() -> None:
    evs = run_stream(text_stream("Hel", "lo, ", "world!"))
    assert [e["sequence_number"] for e in evs] == list(range(len(evs)))
    assert [e["type"] for e in evs] == [
        "response.created", "response.in_progress", "response.output_item.added",
        "response.content_part.added", "response.output_text.delta",
        "response.output_text.delta", "response.output_text.delta", "response.output_text.done",
        "response.content_part.done", "response.output_item.done", "response.completed"]
    assert evs[0]["response"]["status"] == "in_progress" and evs[0]["response"]["output"] == []
    ids = {e["response"]["id"] for e in evs if "response" in e}
    assert len(ids) == 1
    item_id = evs[2]["item"]["id"]
    assert evs[2]["item"]["content"] == [] and evs[2]["item"]["status"] == "in_progress"
    assert evs[3]["part"] == {"type": "output_text", "text": "", "annotations": [],
                              "logprobs": []}
    deltas = [e for e in evs if e["type"] == "response.output_text.delta"]
    assert all(d["item_id"] == item_id and d["output_index"] == 0 and d["content_index"] == 0
               and d["logprobs"] == [] for d in deltas)
    assert "".join(d["delta"] for d in deltas) == "Hello, world!"
    assert evs[7]["text"] == "Hello, world!"
    final = evs[-1]["response"]
    assert final["status"] == "completed" and final["usage"]["output_tokens"] == 7
    assert final["output"] == [evs[9]["item"]]
    assert final["output"][0]["content"][0]["text"] == "Hello, world!"


def test_split_tool_call_stream() -> None:
    evs = run_stream(CALL_STREAM)
    kinds = [e["type"] for e in evs]
    assert kinds == ["response.created", "response.in_progress", "response.output_item.added",
                     *["response.function_call_arguments.delta"] * 3,
                     "response.function_call_arguments.done", "response.output_item.done",
                     "response.completed"]
    added = evs[2]["item"]
    assert added["type"] == "function_call" and added["call_id"] == "call_abc"
    assert added["name"] == "get_weather" and added["arguments"] == ""
    assert evs[6]["arguments"] == '{"city": "Paris"}'
    done = evs[7]["item"]
    assert done["id"] == added["id"] and done["status"] == "completed"
    assert evs[-1]["response"]["output"] == [done]


def test_text_then_calls_and_a_late_name() -> None:
    evs = run_stream([
        _chunk({"content": "Let me check."}),
        _chunk(_call_delta(0, call_id="c1", name="get_weather", arguments='{"city":"Paris"}')),
        # The second call's name comes after its first arguments: buffered until named.
        _chunk(_call_delta(1, call_id="c2", arguments='{"city":')),
        _chunk(_call_delta(1, name="get_weather", arguments='"Rome"}')),
        _chunk(finish="tool_calls"),
    ])
    kinds = [e["type"] for e in evs]
    # The text item closes before the first call opens.
    assert kinds.index("response.output_item.done") < kinds.index("response.output_item.added", 3)
    output = evs[-1]["response"]["output"]
    assert [(o["type"], o.get("call_id"), o.get("arguments")) for o in output] == [
        ("message", None, None), ("function_call", "c1", '{"city":"Paris"}'),
        ("function_call", "c2", '{"city":"Rome"}')]
    assert evs[-1]["response"]["usage"] is None
    second = [e for e in evs if e["type"] == "response.output_item.added"][2]["item"]
    assert second["name"] == "get_weather" and second["call_id"] == "c2"


def test_length_ends_incomplete() -> None:
    evs = run_stream(text_stream("Once", " upon", finish="length"))
    assert evs[-1]["type"] == "response.incomplete"
    assert evs[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    assert evs[-1]["response"]["output"][0]["status"] == "incomplete"


def test_fail_mid_stream() -> None:
    evs = run_stream(text_stream("Par")[:2], fail="The model runner stopped.")
    assert [e["type"] for e in evs[-2:]] == ["error", "response.failed"]
    assert evs[-2]["message"] == "The model runner stopped."
    failed = evs[-1]["response"]
    assert failed["status"] == "failed"
    assert failed["error"] == {"code": "server_error", "message": "The model runner stopped."}
    assert failed["output"][0]["status"] == "incomplete"


def test_fail_before_any_chunk_still_opens_the_response() -> None:
    evs = run_stream([], fail="No runner.")
    assert [e["type"] for e in evs] == ["response.created", "response.in_progress", "error",
                                        "response.failed"]


def test_nothing_after_the_end() -> None:
    translator = api.StreamTranslator("qwen")
    assert translator.finish()
    assert translator.feed(_chunk({"content": "late"})) == []
    assert translator.finish() == [] and translator.fail("x") == []


def test_garbage_chunks_do_not_crash() -> None:
    evs = run_stream([{"choices": "x"}, {"choices": [None, {"delta": "x"}]},
                      {"choices": [{"delta": {"tool_calls": ["x", {"index": "a"}]}}]},
                      {"usage": "many"}, _chunk({"content": "ok"})])
    [item] = evs[-1]["response"]["output"]  # the empty, nameless call is not surfaced
    assert item["content"][0]["text"] == "ok"


def test_a_call_whose_name_never_came_is_still_surfaced() -> None:
    evs = run_stream([_chunk(_call_delta(0, call_id="c1", arguments="{}"))])
    [item] = evs[-1]["response"]["output"]
    assert (item["call_id"], item["name"], item["arguments"]) == ("c1", "", "{}")


def test_error_body() -> None:
    assert api.error_body(404, "No model named x.", "model_not_found") == {"error": {
        "message": "No model named x.", "type": "invalid_request_error",
        "code": "model_not_found", "param": None}}
    assert api.error_body(503, "Busy.")["error"]["type"] == "server_error"


# ---- the official SDK against a stdlib server ---------------------------------------------------

Answer = Callable[[dict[str, Any]], Any]


@dataclass
class FakeServer:
    url: str
    seen: list[dict[str, Any]] = field(default_factory=list)
    answer: Answer = lambda chat: completion("unset")
    fail_after: int | None = None  # stream: fail() after this many chunks


def _handler(state: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/responses":
                self._json(404, api.error_body(404, "Not here."))
                return
            try:
                chat = api.chat_request(body)
            except api.RequestError as exc:
                self._json(400, api.error_body(400, str(exc), "invalid_request", exc.param))
                return
            state.seen.append(chat)
            answer = state.answer(chat)
            if chat["stream"]:
                self._stream(chat["model"], answer)
            else:
                self._json(200, api.reply(answer, chat["model"]))

        def _stream(self, model: str, chunks: list[dict[str, Any]]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            translator = api.StreamTranslator(model)
            for n, chunk in enumerate(chunks):
                if n == state.fail_after:
                    self.wfile.write(b"".join(translator.fail("The model runner stopped.")))
                    return
                self.wfile.write(b"".join(translator.feed(chunk)))
            self.wfile.write(b"".join(translator.finish()))

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    state = FakeServer("")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def client(fake: FakeServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=fake.url, api_key="k", max_retries=0) as sdk:
        yield sdk


def test_sdk_text(fake: FakeServer, client: openai.OpenAI) -> None:
    fake.answer = lambda chat: completion("Bonjour !")
    resp = client.responses.create(model="qwen", input="Say hello in French.",
                                   instructions="Be brief.", max_output_tokens=32)
    assert resp.output_text == "Bonjour !"
    assert resp.status == "completed" and resp.model == "qwen" and resp.id.startswith("resp_")
    assert resp.usage is not None
    usage = resp.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (21, 7, 28)
    assert resp.usage.input_tokens_details.cached_tokens == 16
    assert fake.seen[0]["messages"] == [{"role": "system", "content": "Be brief."},
                                        {"role": "user", "content": "Say hello in French."}]
    assert fake.seen[0]["max_tokens"] == 32 and fake.seen[0]["stream"] is False


def test_sdk_function_call(fake: FakeServer, client: openai.OpenAI) -> None:
    fake.answer = lambda chat: completion(None, finish="tool_calls", tool_calls=[
        chat_call("call_9", "get_weather", '{"city": "Paris"}')])
    resp = client.responses.create(model="qwen", input="Weather in Paris?",
                                   tools=[WEATHER_TOOL], tool_choice="required")
    [call] = resp.output
    assert call.type == "function_call"
    assert (call.name, call.call_id) == ("get_weather", "call_9")
    assert json.loads(call.arguments) == {"city": "Paris"}
    assert resp.output_text == ""
    chat = fake.seen[0]
    assert chat["tools"][0]["function"]["name"] == "get_weather"
    assert chat["tools"][0]["function"]["parameters"] == WEATHER_TOOL["parameters"]
    assert chat["tool_choice"] == "required"


def test_sdk_function_output_round_trip(fake: FakeServer, client: openai.OpenAI) -> None:
    """The SDK's own output items sent back as input, with the function's output."""
    fake.answer = lambda chat: completion(None, finish="tool_calls", tool_calls=[
        chat_call("call_9", "get_weather", '{"city": "Paris"}')])
    question: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.responses.create(model="qwen", input=question, tools=[WEATHER_TOOL])
    fake.answer = lambda chat: completion("18 °C and sunny.")
    second = client.responses.create(
        model="qwen", tools=[WEATHER_TOOL],
        input=[*question, *cast(list[Any], first.output),
               {"type": "function_call_output", "call_id": "call_9", "output": "18C, sun"}])
    assert second.output_text == "18 °C and sunny."
    assert fake.seen[1]["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "id": "call_9",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_9", "content": "18C, sun"},
    ]


def test_sdk_raw_stream(fake: FakeServer, client: openai.OpenAI) -> None:
    fake.answer = lambda chat: text_stream("Hel", "lo, ", "world!")
    deltas, kinds, final = [], [], None
    for event in client.responses.create(model="qwen", input="Hi", stream=True):
        kinds.append(event.type)
        if event.type == "response.output_text.delta":
            deltas.append(event.delta)
        if event.type == "response.completed":
            final = event.response
    assert deltas == ["Hel", "lo, ", "world!"]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert final is not None and final.output_text == "Hello, world!"
    assert final.usage is not None and final.usage.output_tokens == 7
    assert fake.seen[0]["stream_options"] == {"include_usage": True}


def test_sdk_stream_helper(fake: FakeServer, client: openai.OpenAI) -> None:
    fake.answer = lambda chat: text_stream("Hel", "lo, ", "world!")
    with client.responses.stream(model="qwen", input="Hi") as stream:
        snapshots = [e.snapshot for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert snapshots == ["Hel", "Hello, ", "Hello, world!"]
    assert final.output_text == "Hello, world!" and final.status == "completed"


def test_sdk_streamed_function_call_split_arguments(fake: FakeServer,
                                                    client: openai.OpenAI) -> None:
    fake.answer = lambda chat: CALL_STREAM
    with client.responses.stream(model="qwen", input="Weather in Paris?",
                                 tools=[WEATHER_TOOL]) as stream:
        pieces = [e.delta for e in stream if e.type == "response.function_call_arguments.delta"]
        final = stream.get_final_response()
    assert pieces == ['{"ci', 'ty": "Par', 'is"}']
    [call] = final.output
    assert call.type == "function_call" and call.name == "get_weather"
    assert call.call_id == "call_abc" and call.arguments == '{"city": "Paris"}'
    # A strict tool's arguments are parsed by the SDK itself.
    assert call.parsed_arguments == {"city": "Paris"}


def test_sdk_json_schema_format(fake: FakeServer, client: openai.OpenAI) -> None:
    class City(pydantic.BaseModel):
        name: str
        population: int

    fake.answer = lambda chat: completion('{"name": "Paris", "population": 2100000}')
    resp = client.responses.parse(model="qwen", input="Largest French city?", text_format=City)
    assert resp.output_parsed == City(name="Paris", population=2100000)
    fmt = fake.seen[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "City"
    assert fmt["json_schema"]["strict"] is True
    assert set(fmt["json_schema"]["schema"]["properties"]) == {"name", "population"}


def test_sdk_incomplete_stream(fake: FakeServer, client: openai.OpenAI) -> None:
    fake.answer = lambda chat: text_stream("Once", " upon", finish="length")
    last = list(client.responses.create(model="qwen", input="A story", stream=True))[-1]
    assert last.type == "response.incomplete"
    assert last.response.incomplete_details is not None
    assert last.response.incomplete_details.reason == "max_output_tokens"


def test_sdk_failed_stream(fake: FakeServer, client: openai.OpenAI) -> None:
    fake.answer = lambda chat: text_stream("Hel", "lo")
    fake.fail_after = 2
    evs = list(client.responses.create(model="qwen", input="Hi", stream=True))
    error, failed = evs[-2], evs[-1]
    assert error.type == "error" and error.message == "The model runner stopped."
    assert failed.type == "response.failed" and failed.response.error is not None
    assert failed.response.error.message == "The model runner stopped."


@pytest.mark.parametrize(("kwargs", "says", "param"), [
    ({"previous_response_id": "resp_1"}, "stores no responses", "previous_response_id"),
    ({"tools": [{"type": "web_search"}]}, "'web_search'", "tools[0]"),
])
def test_sdk_sees_request_errors(client: openai.OpenAI, kwargs: dict[str, Any], says: str,
                                 param: str) -> None:
    with pytest.raises(openai.BadRequestError, match=says) as err:
        client.responses.create(model="qwen", input="Hi", **kwargs)
    assert err.value.param == param and err.value.code == "invalid_request"


def test_sdk_file_input_is_refused(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="input_file"):
        client.responses.create(model="qwen", input=[{"role": "user", "content": [
            {"type": "input_file", "file_id": "file_1"}]}])
