"""The runner's OpenAI-compatible API, exercised over real HTTP against a real tiny model.

Two clients: httpx2 (what the app uses) and the official ``openai`` package (the proof that
other tools can talk to Hearth's runner too).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest

from app.runner_client.client import RunnerApiError, RunnerClient, iter_sse
from tests.fixtures.models import TINY, vocabulary
from tests.integration.conftest import Runner, StartRunner, openai_client

PROMPT = "the world is warm and the fire is light"
MESSAGES = [{"role": "system", "content": "be brief"},
            {"role": "user", "content": "hello model , what is the hearth ?"}]
ENDPOINTS = [("GET", "/health"), ("GET", "/v1/models"), ("GET", "/runner/status"),
             ("POST", "/v1/chat/completions"), ("POST", "/v1/completions"),
             ("GET", "/docs"), ("GET", "/openapi.json"), ("GET", "/no/such/path")]


# ---- helpers ------------------------------------------------------------------------------------

@pytest.fixture
def http(runner: Runner) -> Iterator[httpx2.Client]:
    with runner.client() as client:
        yield client


@pytest.fixture
def oai(runner: Runner) -> Iterator[openai.OpenAI]:
    with openai_client(runner) as client:
        yield client


def unique(text: str = PROMPT) -> str:
    """A prompt no other test sent, so the prompt cache cannot change what a test sees."""
    return f"{uuid.uuid4().hex[:8]} {text}"


def post(http: httpx2.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = http.post(path, json=body)
    assert resp.status_code == 200, resp.text
    data: dict[str, Any] = resp.json()
    return data


def stream_events(http: httpx2.Client, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every SSE event of a streamed request, parsed; asserts the [DONE] ending."""
    events: list[dict[str, Any]] = []
    with http.stream("POST", path, json={**body, "stream": True}) as resp:
        assert resp.status_code == 200, resp.read()
        assert resp.headers["content-type"].startswith("text/event-stream")
        datas = list(iter_sse(resp.iter_lines()))
    assert datas and datas[-1] == "[DONE]", datas[-3:]
    assert "[DONE]" not in datas[:-1]
    for data in datas[:-1]:
        events.append(json.loads(data))
    return events


def chat_text(events: list[dict[str, Any]]) -> str:
    return "".join(c["delta"].get("content") or "" for e in events for c in e["choices"])


def completion_text(events: list[dict[str, Any]]) -> str:
    return "".join(c.get("text") or "" for e in events for c in e["choices"])


def finish_reasons(events: list[dict[str, Any]]) -> list[str]:
    return [c["finish_reason"] for e in events for c in e["choices"] if c.get("finish_reason")]


def usage_of(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    found = [e["usage"] for e in events if e.get("usage")]
    assert len(found) <= 1, found
    return found[0] if found else None


def check_usage(usage: dict[str, Any], completion_tokens: int | None = None) -> None:
    assert usage["prompt_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    assert 0 <= cached < usage["prompt_tokens"]
    if completion_tokens is not None:
        assert usage["completion_tokens"] == completion_tokens


def token_id(word: str) -> int:
    tokens, _, _ = vocabulary(TINY.n_vocab)
    return tokens.index("▁" + word)


# ---- chat ---------------------------------------------------------------------------------------

def test_chat_non_streaming(http: httpx2.Client, runner: Runner) -> None:
    data = post(http, "/v1/chat/completions",
                {"messages": MESSAGES, "max_tokens": 12, "ignore_eos": True, "temperature": 0})
    assert data["object"] == "chat.completion"
    assert data["id"].startswith("chatcmpl-")
    assert data["model"] == http.get("/v1/models").json()["data"][0]["id"]
    (choice,) = data["choices"]
    assert choice["index"] == 0
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["content"]
    assert choice["finish_reason"] == "length"
    check_usage(data["usage"], completion_tokens=12)


def test_chat_streaming_httpx(http: httpx2.Client) -> None:
    events = stream_events(http, "/v1/chat/completions", {
        "messages": MESSAGES, "max_tokens": 20, "ignore_eos": True,
        "stream_options": {"include_usage": True}})
    ids = {e["id"] for e in events}
    assert len(ids) == 1 and ids.pop().startswith("chatcmpl-")
    assert {e["object"] for e in events} == {"chat.completion.chunk"}
    assert events[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chat_text(events)
    assert finish_reasons(events) == ["length"]
    usage = usage_of(events)
    assert usage is not None
    check_usage(usage, completion_tokens=20)
    # The usage chunk comes last and has no choices, as OpenAI sends it.
    assert events[-1]["choices"] == [] and events[-1]["usage"] == usage


def test_chat_streaming_without_usage_option_sends_no_usage(http: httpx2.Client) -> None:
    events = stream_events(http, "/v1/chat/completions",
                           {"messages": MESSAGES, "max_tokens": 4, "ignore_eos": True})
    assert usage_of(events) is None
    assert finish_reasons(events) == ["length"]


def test_stream_equals_non_stream_at_temperature_0(http: httpx2.Client) -> None:
    messages = [{"role": "user", "content": unique("tell me about the fire")}]
    body = {"messages": messages, "max_tokens": 24, "ignore_eos": True, "temperature": 0}
    whole = post(http, "/v1/chat/completions", body)["choices"][0]["message"]["content"]
    streamed = chat_text(stream_events(http, "/v1/chat/completions", body))
    assert streamed == whole


def test_max_completion_tokens(http: httpx2.Client) -> None:
    data = post(http, "/v1/chat/completions",
                {"messages": MESSAGES, "max_completion_tokens": 5, "ignore_eos": True})
    assert data["usage"]["completion_tokens"] == 5
    assert data["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize("n", [1, 2, 7, 33])
def test_max_tokens_honoured(http: httpx2.Client, n: int) -> None:
    body = {"messages": MESSAGES, "max_tokens": n, "ignore_eos": True,
            "stream_options": {"include_usage": True}}
    events = stream_events(http, "/v1/chat/completions", body)
    usage = usage_of(events)
    assert usage is not None and usage["completion_tokens"] == n
    # Without ignore_eos the model may stop earlier, never later.
    data = post(http, "/v1/chat/completions", {"messages": MESSAGES, "max_tokens": n})
    assert data["usage"]["completion_tokens"] <= n


def test_chat_content_parts(http: httpx2.Client) -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "hello "},
                                             {"type": "text", "text": "world"}]}]
    data = post(http, "/v1/chat/completions", {"messages": messages, "max_tokens": 3})
    assert data["usage"]["prompt_tokens"] > 0


def test_an_image_for_a_model_without_a_projector_is_a_400_that_says_so(
        http: httpx2.Client) -> None:
    """It was dropped: the model answered the text alone as if it had seen the picture."""
    png = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8"
           "/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==")
    for part, what in (({"type": "image_url", "image_url": {"url": png}}, "an image"),
                       ({"type": "input_audio", "input_audio": {"data": "", "format": "wav"}},
                        "audio")):
        messages = [{"role": "user", "content": [{"type": "text", "text": "what is this?"},
                                                 part]}]
        resp = http.post("/v1/chat/completions", json={"messages": messages, "max_tokens": 3})
        assert resp.status_code == 400, resp.text
        error = resp.json()["error"]
        assert error["code"] == "unsupported_content", error
        assert f"messages[0].content[1] is {what}" in error["message"], error
        assert "vision projector" in error["message"], error


def test_app_client_streams(runner: Runner) -> None:
    with RunnerClient(runner.url, runner.key) as client:
        assert client.health().status == "ok"
        stream = client.stream_chat(MESSAGES, max_tokens=9, ignore_eos=True)
        text = "".join(stream)
        assert text
        assert stream.end is not None and stream.end.finish_reason == "length"
        assert stream.end.usage is not None and stream.end.usage["completion_tokens"] == 9
        with pytest.raises(RunnerApiError) as info:
            client.chat([], max_tokens=1)
        assert info.value.status == 400


# ---- completions --------------------------------------------------------------------------------

def test_completions_non_streaming(http: httpx2.Client) -> None:
    data = post(http, "/v1/completions",
                {"prompt": PROMPT, "max_tokens": 10, "ignore_eos": True})
    assert data["object"] == "text_completion"
    assert data["id"].startswith("cmpl-")
    (choice,) = data["choices"]
    assert choice["text"]
    assert choice["finish_reason"] == "length"
    check_usage(data["usage"], completion_tokens=10)


def test_completions_default_max_tokens_is_16(http: httpx2.Client) -> None:
    data = post(http, "/v1/completions", {"prompt": PROMPT, "ignore_eos": True})
    assert data["usage"]["completion_tokens"] == 16


def test_completions_streaming(http: httpx2.Client) -> None:
    events = stream_events(http, "/v1/completions", {
        "prompt": PROMPT, "max_tokens": 15, "ignore_eos": True,
        "stream_options": {"include_usage": True}})
    assert {e["object"] for e in events} == {"text_completion"}
    assert completion_text(events)
    assert finish_reasons(events) == ["length"]
    usage = usage_of(events)
    assert usage is not None
    check_usage(usage, completion_tokens=15)


def test_long_prompt_over_several_batches(http: httpx2.Client) -> None:
    """A prompt longer than n_batch (512) is decoded in chunks and still fits the context."""
    prompt = unique(" ".join([PROMPT] * 70))
    data = post(http, "/v1/completions", {"prompt": prompt, "max_tokens": 4, "ignore_eos": True})
    assert data["usage"]["prompt_tokens"] > 1200
    assert data["usage"]["completion_tokens"] == 4


# ---- models, status -----------------------------------------------------------------------------

def test_models(http: httpx2.Client, runner: Runner, tiny_model: object) -> None:
    data = http.get("/v1/models").json()
    assert data["object"] == "list"
    (model,) = data["data"]
    assert model["object"] == "model"
    assert model["id"] == str(tiny_model).rsplit("/", 1)[-1].removesuffix(".gguf")
    assert isinstance(model["created"], int)


def test_runner_status_fields(http: httpx2.Client, runner: Runner, tiny_model: object) -> None:
    started = time.monotonic()
    post(http, "/v1/completions", {"prompt": unique(), "max_tokens": 6, "ignore_eos": True})
    request_s = time.monotonic() - started
    status = http.get("/runner/status").json()
    assert status["status"] == "ok"
    assert status["model"]["path"] == str(tiny_model)
    settings = status["settings"]
    assert settings["model"] == str(tiny_model)
    assert settings["ctx_size"] == 4096 and settings["parallel"] == 1
    assert settings["threads"] >= 1
    assert status["context"] == {"n_ctx": 4096, "n_ctx_train": TINY.n_ctx_train, "slots": 1,
                                 "per_slot": 4096, "warming": 0}  # a completion warms nothing
    assert status["uptime_s"] > 0
    assert status["load_seconds"] > 0
    assert status["build"]["llama_cpp_python"]
    assert isinstance(status["build"]["gpu_offload"], bool)
    # The devices this build sees: on these machines, the CPU backend and its device.
    assert any(d["type"] == "cpu" for d in status["devices"]), status["devices"]
    assert "CPU" in [b["name"] if isinstance(b, dict) else b for b in status["build"]["backends"]]
    assert status["requests"]["active"] == 0
    assert status["requests"]["total"] >= 1
    last = status["last_request"]
    assert last["completion_tokens"] == 6
    assert last["finish_reason"] == "length"
    assert last["prompt_tokens"] > 0
    # In seconds, and a part of the request this client waited for (not a figure in ms).
    assert 0 < last["time_to_first_token_s"] <= request_s
    assert last["tokens_per_second"] > 0
    before = status["requests"]["total"]
    post(http, "/v1/completions", {"prompt": unique(), "max_tokens": 1})
    assert http.get("/runner/status").json()["requests"]["total"] == before + 1


# ---- authentication -----------------------------------------------------------------------------

@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
@pytest.mark.parametrize("auth", [None, "Bearer wrong-key", "Bearer", "Basic abc", "{key}",
                                  "Bearer {key}x", "Bearer x{key}", "Token {key}"])
def test_unauthorized(runner: Runner, method: str, path: str, auth: str | None) -> None:
    headers = {} if auth is None else {"Authorization": auth.format(key=runner.key)}
    body = {"messages": MESSAGES, "prompt": "x", "max_tokens": 1}
    resp = httpx2.request(method, runner.url + path, headers=headers, trust_env=False,
                          json=body if method == "POST" else None, timeout=60)
    assert resp.status_code == 401, (path, resp.text)
    assert resp.json()["error"]["code"] == "invalid_api_key"
    assert runner.key not in resp.text


def test_openai_client_wrong_key(runner: Runner) -> None:
    client = openai.OpenAI(base_url=runner.url + "/v1", api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        client.models.list()
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="x", messages=MESSAGES, max_tokens=1)  # type: ignore[arg-type]


# ---- the official openai client ------------------------------------------------------------------

def test_openai_models(oai: openai.OpenAI) -> None:
    models = oai.models.list()
    assert len(models.data) == 1
    assert models.data[0].id


def test_openai_chat(oai: openai.OpenAI) -> None:
    resp = oai.chat.completions.create(model="any", messages=MESSAGES, max_tokens=11,  # type: ignore[arg-type]
                                       extra_body={"ignore_eos": True})
    assert resp.choices[0].message.role == "assistant"
    assert resp.choices[0].message.content
    assert resp.choices[0].finish_reason == "length"
    assert resp.usage is not None
    assert resp.usage.completion_tokens == 11
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + 11


def test_openai_chat_streaming(oai: openai.OpenAI) -> None:
    stream = oai.chat.completions.create(
        model="any", messages=MESSAGES, max_tokens=17, stream=True,  # type: ignore[arg-type]
        stream_options={"include_usage": True}, extra_body={"ignore_eos": True})
    text, reasons, usage = [], [], None
    for chunk in stream:
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            if choice.finish_reason:
                reasons.append(choice.finish_reason)
        if chunk.usage:
            usage = chunk.usage
    assert "".join(text)
    assert reasons == ["length"]
    assert usage is not None and usage.completion_tokens == 17
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_openai_completions(oai: openai.OpenAI) -> None:
    resp = oai.completions.create(model="any", prompt=PROMPT, max_tokens=9,
                                  extra_body={"ignore_eos": True})
    assert resp.choices[0].text
    assert resp.choices[0].finish_reason == "length"
    assert resp.usage is not None and resp.usage.completion_tokens == 9


def test_openai_completions_streaming(oai: openai.OpenAI) -> None:
    stream = oai.completions.create(model="any", prompt=PROMPT, max_tokens=13, stream=True,
                                    stream_options={"include_usage": True},
                                    extra_body={"ignore_eos": True})
    text, usage = [], None
    for chunk in stream:
        text += [c.text for c in chunk.choices]
        if chunk.usage:
            usage = chunk.usage
    assert "".join(text)
    assert usage is not None and usage.completion_tokens == 13


def test_openai_context_length_error(start_runner: StartRunner) -> None:
    small = start_runner("--ctx-size", "256")
    client = openai.OpenAI(base_url=small.url + "/v1", api_key=small.key, max_retries=0)
    with pytest.raises(openai.BadRequestError) as info:
        client.completions.create(model="any", prompt=" ".join([PROMPT] * 60), max_tokens=4)
    assert info.value.code == "context_length_exceeded"
    # The runner is fine afterwards.
    ok = client.completions.create(model="any", prompt=PROMPT, max_tokens=4)
    assert ok.usage is not None and ok.usage.completion_tokens <= 4


# ---- stop strings -------------------------------------------------------------------------------

def _greedy(http: httpx2.Client, path: str, body: dict[str, Any]) -> str:
    data = post(http, path, {**body, "temperature": 0, "ignore_eos": True})
    choice = data["choices"][0]
    return str(choice["text"] if "text" in choice else choice["message"]["content"])


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("stop_len", [1, 3, 8])
def test_stop_string_cuts_the_text(http: httpx2.Client, stream: bool, stop_len: int) -> None:
    prompt = unique()
    body = {"prompt": prompt, "max_tokens": 40}
    full = _greedy(http, "/v1/completions", body)
    assert len(full) > 20, full
    # A stop string starting in the middle of the text, likely spanning token boundaries.
    start = len(full) // 2
    stop = full[start:start + stop_len]
    expected = full[: full.find(stop)]
    req = {**body, "temperature": 0, "ignore_eos": True, "stop": [stop, "\x00never"]}
    if stream:
        events = stream_events(http, "/v1/completions", req)
        text = completion_text(events)
        assert finish_reasons(events) == ["stop"]
    else:
        data = post(http, "/v1/completions", req)
        text = data["choices"][0]["text"]
        assert data["choices"][0]["finish_reason"] == "stop"
    assert text == expected


def test_stop_string_that_never_matches_loses_no_text(http: httpx2.Client) -> None:
    """Text held back because it might start a stop string is sent once it cannot."""
    body = {"prompt": unique(), "max_tokens": 30}
    full = _greedy(http, "/v1/completions", body)
    # Every last character of the text starts this stop string, so the runner holds it back.
    stop = full[-1] + "\x00\x01"
    text = completion_text(stream_events(http, "/v1/completions", {
        **body, "temperature": 0, "ignore_eos": True, "stop": stop}))
    assert text == full


def _text_ending_in_eos(http: httpx2.Client) -> tuple[dict[str, Any], str]:
    """A greedy request whose output ends by EOS after some text, made by biasing EOS.

    Greedy output before EOS is the unbiased output, and EOS first wins where its gap to the
    best token is smallest; just above that smallest gap it wins there and nowhere earlier.
    """
    eos = 2
    for _ in range(8):
        body: dict[str, Any] = {"prompt": unique(), "max_tokens": 40, "temperature": 0}

        def run(bias: float, body: dict[str, Any] = body) -> dict[str, Any]:
            return post(http, "/v1/completions", {**body, "logit_bias": {str(eos): bias}})

        lo, hi = 0.0, 100.0
        if run(hi)["choices"][0]["text"] == "" and run(lo)["choices"][0]["finish_reason"] \
                == "length":
            for _ in range(20):  # smallest bias that makes EOS win within 40 tokens
                mid = (lo + hi) / 2
                if run(mid)["choices"][0]["finish_reason"] == "stop":
                    hi = mid
                else:
                    lo = mid
            data = run(hi)
            if data["choices"][0]["finish_reason"] == "stop" and data["choices"][0]["text"]:
                return {**body, "logit_bias": {str(eos): hi}}, data["choices"][0]["text"]
    pytest.skip("could not make this model end early with some text")


def test_stop_prefix_held_at_eos_is_not_lost(http: httpx2.Client) -> None:
    """The model ends (EOS) while the text's tail looks like the start of a stop string: that
    tail is ordinary text and must reach the client."""
    body, text = _text_ending_in_eos(http)
    stop = text[-1] + "\x00\x01"  # never matches; its first character is the text's last
    for stream in (False, True):
        req = {**body, "stop": [stop]}
        if stream:
            events = stream_events(http, "/v1/completions", req)
            got, reason = completion_text(events), finish_reasons(events)[0]
        else:
            data = post(http, "/v1/completions", req)
            got, reason = data["choices"][0]["text"], data["choices"][0]["finish_reason"]
        assert reason == "stop"
        assert got == text


# ---- errors -------------------------------------------------------------------------------------

def test_context_length_exceeded(start_runner: StartRunner) -> None:
    small = start_runner("--ctx-size", "256")
    with small.client() as http:
        long_prompt = " ".join([PROMPT] * 60)
        for path, body in [("/v1/completions", {"prompt": long_prompt}),
                           ("/v1/chat/completions",
                            {"messages": [{"role": "user", "content": long_prompt}]})]:
            for stream in (False, True):
                resp = http.post(path, json={**body, "max_tokens": 4, "stream": stream})
                assert resp.status_code == 400, resp.text
                err = resp.json()["error"]
                assert err["code"] == "context_length_exceeded"
                assert "256" in err["message"]
        ok = post(http, "/v1/completions", {"prompt": PROMPT, "max_tokens": 4,
                                            "ignore_eos": True})
        assert ok["usage"]["completion_tokens"] == 4
        # Generation that runs into the end of the context stops with "length", not an error.
        data = post(http, "/v1/completions", {"prompt": PROMPT, "max_tokens": 1000,
                                              "ignore_eos": True})
        assert data["choices"][0]["finish_reason"] == "length"
        usage = data["usage"]
        assert usage["prompt_tokens"] + usage["completion_tokens"] <= 256


@pytest.mark.parametrize("raw", [b"{not json", b"", b"[]", b'"text"', b"null", b"\xff\xfe",
                                 b'{"messages": "hi"}', b'{"messages": []}',
                                 b'{"messages": [{"role": "wizard", "content": "x"}]}',
                                 b'{"messages": [{"content": "x"}]}',
                                 b'{"messages": [{"role": "user", "content": "x"}], '
                                 b'"max_tokens": -1}',
                                 b'{"messages": [{"role": "user", "content": "x"}], '
                                 b'"temperature": "hot"}',
                                 b'{"messages": [{"role": "user", "content": "x"}], "n": 3}',
                                 b'{"messages": [{"role": "user", "content": "x"}], '
                                 b'"logit_bias": {"abc": 1}}',
                                 b'{"messages": [{"role": "user", "content": "x"}], '
                                 b'"logit_bias": {"999999": 1}}'])
def test_malformed_chat_request_is_4xx(http: httpx2.Client, raw: bytes) -> None:
    resp = http.post("/v1/chat/completions", content=raw,
                     headers={"Content-Type": "application/json"})
    assert 400 <= resp.status_code < 500, (raw, resp.status_code, resp.text)
    assert resp.json()["error"]["message"]


@pytest.mark.parametrize("raw", [b"{", b'{"prompt": 5}', b'{"max_tokens": 3}',
                                 b'{"prompt": "x", "max_tokens": 0}'])
def test_malformed_completion_request_is_4xx(http: httpx2.Client, raw: bytes) -> None:
    resp = http.post("/v1/completions", content=raw, headers={"Content-Type": "application/json"})
    assert 400 <= resp.status_code < 500, (raw, resp.status_code, resp.text)


def test_wrong_method(http: httpx2.Client) -> None:
    assert http.get("/v1/chat/completions").status_code == 405


# ---- prompt cache -------------------------------------------------------------------------------

def test_prompt_cache_reuses_identical_prefix(http: httpx2.Client) -> None:
    prompt = unique(" ".join([PROMPT] * 8))
    first = post(http, "/v1/completions", {"prompt": prompt, "max_tokens": 3})["usage"]
    second = post(http, "/v1/completions", {"prompt": prompt + " and the world",
                                            "max_tokens": 3})["usage"]
    assert second["prompt_tokens"] > first["prompt_tokens"]
    assert second["prompt_tokens_details"]["cached_tokens"] >= first["prompt_tokens"] - 1
    assert second["prompt_tokens_details"]["cached_tokens"] > \
        first["prompt_tokens_details"]["cached_tokens"]


def _wait_warmed(http: httpx2.Client, timeout_s: float = 30.0) -> None:
    """Until no idle slot has a chat's next turn boundary left to decode (a hang guard only)."""
    deadline = time.monotonic() + timeout_s
    while (warming := http.get("/runner/status").json()["context"]["warming"]) > 0:
        assert time.monotonic() < deadline, f"{warming} tokens still to warm after {timeout_s} s"
        time.sleep(0.01)


def test_prompt_cache_in_a_chat_conversation(http: httpx2.Client) -> None:
    """A chat re-sends its history each turn; only the new suffix should need decoding."""
    history = [{"role": "user", "content": unique("hello , who are you ?")}]
    first = post(http, "/v1/chat/completions", {"messages": history, "max_tokens": 8,
                                                "ignore_eos": True})
    history += [first["choices"][0]["message"],
                {"role": "user", "content": "and what is the fire ?"}]
    # While the runner is idle it decodes the reply's last token and the template's turn
    # boundary ("<|im_end|>\n<|im_start|>user\n", 8 tokens here) ahead. A question sent at once
    # can overtake that (its prompt then decodes those tokens itself): wait until they are in.
    _wait_warmed(http)
    second = post(http, "/v1/chat/completions", {"messages": history, "max_tokens": 4})
    # The reply's tokens were decoded into the slot as they were generated, the boundary while
    # idle: only the new user message and the generation prompt are left.
    reused = second["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert reused >= first["usage"]["prompt_tokens"] + first["usage"]["completion_tokens"] + 8


# ---- sampling -----------------------------------------------------------------------------------

def _sample(http: httpx2.Client, prompt: str, **params: Any) -> str:
    data = post(http, "/v1/completions",
                {"prompt": prompt, "max_tokens": 32, "ignore_eos": True, **params})
    return str(data["choices"][0]["text"])


def test_same_seed_same_output(http: httpx2.Client) -> None:
    prompt = unique()
    a = _sample(http, prompt, temperature=1.0, seed=1234)
    _sample(http, unique(), temperature=1.0, seed=99)  # something else in between
    b = _sample(http, prompt, temperature=1.0, seed=1234)
    assert a == b
    others = {_sample(http, prompt, temperature=1.0, seed=s) for s in (1, 2, 3)}
    assert len(others | {a}) > 1, "different seeds should sample differently"


def test_temperature_0_is_deterministic(http: httpx2.Client) -> None:
    prompt = unique()
    outputs = {_sample(http, prompt, temperature=0, seed=s) for s in (1, 2, 3)}
    outputs.add(_sample(http, prompt, temperature=0))
    assert len(outputs) == 1


def test_unseeded_sampling_varies(http: httpx2.Client) -> None:
    prompt = unique()
    assert len({_sample(http, prompt, temperature=1.5) for _ in range(3)}) > 1


def test_logit_bias_forces_a_token(http: httpx2.Client) -> None:
    the = token_id("the")
    data = post(http, "/v1/completions", {"prompt": PROMPT, "max_tokens": 5, "ignore_eos": True,
                                          "logit_bias": {str(the): 100}})
    assert data["choices"][0]["text"] == " the" * 5


def test_server_seed_flag_is_the_default_seed(start_runner: StartRunner) -> None:
    """``--seed N`` ("default sampling seed") makes unseeded requests reproducible, as in
    llama-server."""
    r = start_runner("--seed", "42")
    with r.client() as http:
        outputs = {_sample(http, PROMPT, temperature=1.0) for _ in range(3)}
    assert len(outputs) == 1, outputs


# ---- parallel slots -----------------------------------------------------------------------------

def test_parallel_slots_serve_two_streams_at_once(start_runner: StartRunner) -> None:
    r = start_runner("--parallel", "2", "--ctx-size", "1024", "--alias", "fireside-7b")
    status = httpx2.get(r.url + "/runner/status", headers=r.headers, trust_env=False).json()
    assert status["context"]["slots"] == 2 and status["context"]["per_slot"] == 512
    models = httpx2.get(r.url + "/v1/models", headers=r.headers, trust_env=False).json()
    assert [m["id"] for m in models["data"]] == ["fireside-7b"]
    times: dict[str, list[float]] = {"a": [], "b": []}

    def read(name: str, prompt: str) -> None:
        body = {"prompt": prompt, "max_tokens": 400, "ignore_eos": True, "stream": True}
        with r.client() as http, http.stream("POST", "/v1/completions", json=body) as resp:
            for data in iter_sse(resp.iter_lines()):
                if data != "[DONE]":
                    times[name].append(time.perf_counter())

    threads = [threading.Thread(target=read, args=("a", unique())),
               threading.Thread(target=read, args=("b", unique()))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(times["a"]) >= 400 and len(times["b"]) >= 400
    # Interleaved, not one after the other: each started before the other finished.
    assert times["b"][0] < times["a"][-1] and times["a"][0] < times["b"][-1]


def test_a_new_chat_takes_an_empty_slot_not_a_long_conversation(start_runner: StartRunner) -> None:
    """With free slots, a new chat that shares only the template's first tokens with a cached
    conversation must not evict it: that conversation's next turn would decode it all again."""
    r = start_runner("--parallel", "2", "--ctx-size", "4096")
    with r.client() as http:
        chat = [{"role": "user", "content": unique(" ".join([PROMPT] * 20))}]
        first = post(http, "/v1/chat/completions", {"messages": chat, "max_tokens": 16,
                                                     "ignore_eos": True})
        chat.append({"role": "assistant", "content": first["choices"][0]["message"]["content"]})
        other = post(http, "/v1/chat/completions", {
            "messages": [{"role": "user", "content": unique()}], "max_tokens": 4})
        assert other["usage"]["prompt_tokens_details"]["cached_tokens"] == 0  # an empty slot
        chat.append({"role": "user", "content": "and then ?"})
        _wait_warmed(http)  # the first chat's turn boundary, decoded ahead in its slot
        second = post(http, "/v1/chat/completions", {"messages": chat, "max_tokens": 4})
        reused = second["usage"]["prompt_tokens_details"]["cached_tokens"]
        assert reused >= first["usage"]["prompt_tokens"] + 16


@pytest.mark.parametrize("auth", ["bearer {key}", "BEARER {key}", "Bearer  {key}"])
def test_bearer_scheme_is_case_insensitive(runner: Runner, auth: str) -> None:
    resp = httpx2.get(runner.url + "/v1/models", headers={"Authorization": auth.format(key=runner.key)},
                      trust_env=False, timeout=60)
    assert resp.status_code == 200, resp.text


def test_top_k_beyond_the_vocabulary(http: httpx2.Client) -> None:
    body = {"messages": MESSAGES, "max_tokens": 2, "top_k": 100_000}
    assert post(http, "/v1/chat/completions", body)["usage"]["completion_tokens"] >= 1
    resp = http.post("/v1/chat/completions", json={**body, "top_k": 2**40})
    assert resp.status_code == 400 and "top_k" in resp.json()["error"]["message"]


def test_json_body_without_content_type_is_refused_with_the_fix(runner: Runner) -> None:
    """curl -d sends application/x-www-form-urlencoded. Refused on purpose: a web page can send
    such a body to localhost without a CORS preflight. The message says what to send."""
    body = json.dumps({"messages": MESSAGES, "max_tokens": 2}).encode()
    for headers in ({}, {"Content-Type": "application/x-www-form-urlencoded"}):
        resp = httpx2.post(runner.url + "/v1/chat/completions", content=body, trust_env=False,
                           headers={**runner.headers, **headers}, timeout=30)
        assert resp.status_code == 400, (headers, resp.text)
        assert "Content-Type: application/json" in resp.json()["error"]["message"]


@pytest.mark.parametrize("penalty", [{"repeat_penalty": 1.8}, {"frequency_penalty": 1.5},
                                     {"presence_penalty": 1.5}])
def test_penalties_change_a_repetitive_reply(http: httpx2.Client, penalty: dict[str, float]) -> None:
    """Greedy decoding of the tiny model loops on a few words; a penalty must break the loop."""
    prompt = unique()
    plain = _sample(http, prompt, temperature=0, max_tokens=48)
    assert len(set(plain.split())) < len(plain.split()), "expected a repetitive greedy reply"
    penalised = _sample(http, prompt, temperature=0, max_tokens=48, **penalty)
    assert penalised != plain
    assert len(set(penalised.split())) > len(set(plain.split()))


@pytest.mark.parametrize("extreme", [{"repeat_penalty": 0.0}, {"repeat_penalty": 1e-40},
                                     {"temperature": 1e-30}])
def test_extreme_sampling_values_with_a_grammar_do_not_abort(
        http: httpx2.Client, runner: Runner, extreme: dict[str, float]) -> None:
    """Found by the fuzzer: a repeat penalty with a grammar aborted the runner (the prompt was fed
    to the grammar while priming the penalties, and llama.cpp threw a C++ exception). Penalty 0
    and tiny temperatures would make the logits infinite, with the same end."""
    body = {"messages": [{"role": "user", "content": unique("json please")},
                         {"role": "assistant", "content": None}],
            "response_format": {"type": "json_object"}, "max_tokens": 24, **extreme}
    for _ in range(3):
        resp = http.post("/v1/chat/completions", json=body)
        assert resp.status_code == 200, resp.text
    assert runner.process.poll() is None
    assert http.get("/health").status_code == 200


def test_one_refused_prompt_cancels_the_others(start_runner: StartRunner) -> None:
    """Several prompts in one request: when one is refused, the others stop generating too
    rather than holding a slot for thousands of tokens nobody will read. (Each prompt's
    disconnect watcher sees the finished error response as its client leaving.)"""
    r = start_runner("--ctx-size", "4096")
    with r.client() as http:
        body = {"prompt": [unique(), " ".join([PROMPT] * 600)], "max_tokens": 4000,
                "ignore_eos": True}
        resp = http.post("/v1/completions", json=body)
        assert resp.status_code == 400 and resp.json()["error"]["code"] == "context_length_exceeded"
        # A hang guard: what shows the others stopped is how they finished, below.
        deadline = time.monotonic() + 30
        while http.get("/runner/status").json()["requests"]["active"] and time.monotonic() < deadline:
            time.sleep(0.02)
        status = http.get("/runner/status").json()
        assert status["requests"]["active"] == 0
        # Cancelled in its slot, or before it was admitted ("": no request ever finished).
        assert status["last_request"]["finish_reason"] in ("cancelled", "")
        assert status["last_request"]["completion_tokens"] < 1000


def test_completions_prompt_shapes(oai: openai.OpenAI, http: httpx2.Client) -> None:
    """OpenAI's four prompt shapes; several prompts give one choice each, in order."""
    texts = [unique("the fire is"), unique("the world was"), unique("hello model")]
    many = oai.completions.create(model="m", prompt=texts, max_tokens=5, temperature=0,
                                  extra_body={"ignore_eos": True})
    assert [c.index for c in many.choices] == [0, 1, 2]
    alone = [oai.completions.create(model="m", prompt=t, max_tokens=5, temperature=0,
                                    extra_body={"ignore_eos": True}) for t in texts]
    assert [c.text for c in many.choices] == [a.choices[0].text for a in alone]
    assert many.usage.completion_tokens == 15  # type: ignore[union-attr]
    assert many.usage.prompt_tokens == sum(a.usage.prompt_tokens for a in alone)  # type: ignore[union-attr]
    ids = [1, *(token_id(w) for w in ("the", "of", "is"))]
    by_ids = oai.completions.create(model="m", prompt=ids, max_tokens=5, temperature=0)
    assert by_ids.usage.prompt_tokens == len(ids)  # type: ignore[union-attr]
    two = oai.completions.create(model="m", prompt=[ids[:2], ids], max_tokens=5, temperature=0)
    assert len(two.choices) == 2 and two.choices[1].text == by_ids.choices[0].text
    for bad in ([], [[]], [0, 10**6], ["a"] * 65):
        assert http.post("/v1/completions", json={"prompt": bad}).status_code == 400, bad
    resp = http.post("/v1/completions", json={"prompt": texts, "stream": True})
    assert resp.status_code == 400 and "one prompt" in resp.json()["error"]["message"]


def test_the_runner_counts_tokens_for_what_fits_its_context(runner: Runner) -> None:
    """/runner/tokens (issue 30): documents are fitted to the context with the model's own
    tokenizer. A text longer than the context is counted "at least" without being tokenized to
    its end."""
    with RunnerClient(runner.url, runner.key) as client:
        (one, two, long), context = client.count_tokens(["hello", "hello hello", "hello " * 50_000])
        status = client.status()
    assert 0 < one < two <= 2 * one + 1
    assert long >= context > two
    with runner.client() as http:
        too_many = http.post("/runner/tokens", json={"texts": ["x"] * 2000})
        assert too_many.status_code == 400
    assert status["requests"]["active"] == 0
