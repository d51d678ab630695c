"""The runner's HTTP API: OpenAI-compatible endpoints, health, and status.

The event loop only parses requests, renders chat templates and forwards text: generation runs on
the engine's scheduler thread, which hands each piece of text over with one
``call_soon_threadsafe``. A streamed token costs one pre-formatted SSE chunk here, nothing more.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from runner.settings import LoadSettings

log = logging.getLogger(__name__)

# ChatML, llama-server's fallback when a GGUF carries no chat template.
DEFAULT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] "
    "+ '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
    "{% endif %}"
)


# ---- request models (they also make the OpenAPI document) -------------------------------------

class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ContentPart(_Open):
    type: str
    text: str | None = None


class ChatMessage(_Open):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None


class StreamOptions(_Open):
    include_usage: bool = False


class _Sampling(_Open):
    model: str | None = None
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=5.0)
    top_p: float | None = Field(default=None, ge=0.0, le=1.0)
    top_k: int | None = Field(default=None, ge=0)
    min_p: float | None = Field(default=None, ge=0.0, le=1.0)
    repeat_penalty: float | None = Field(default=None, ge=0.0, le=10.0)
    presence_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    frequency_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    seed: int | None = None
    stop: str | list[str] | None = None
    logit_bias: dict[str, float] | None = None
    n: int = Field(default=1, ge=1, le=1)
    ignore_eos: bool = False
    cache_prompt: bool = True  # llama-server's name: reuse the KV cache of a common prefix


class JsonSchemaFormat(_Open):
    name: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class ResponseFormat(_Open):
    type: Literal["text", "json_object", "json_schema"] = "text"
    json_schema: JsonSchemaFormat | None = None


class ChatRequest(_Sampling):
    messages: list[ChatMessage] = Field(min_length=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    response_format: ResponseFormat | None = None


class CompletionRequest(_Sampling):
    prompt: str | list[str]
    max_tokens: int | None = Field(default=16, ge=1)  # OpenAI's default for /v1/completions


# ---- state shared by the loader thread and the handlers ------------------------------------

class RunnerState:
    """What the runner is doing: loading, ready or failed; and the engine once ready."""

    def __init__(self, settings: LoadSettings) -> None:
        self.settings = settings
        self.status: Literal["loading", "ok", "error"] = "loading"
        self.progress = 0.0
        self.message = ""
        self.model: Any = None  # engine.Model
        self.scheduler: Any = None  # engine.Scheduler
        self.formatter: Any = None
        self.add_bos = True
        self.bos_text = ""
        self.started = time.time()
        self.exiting = threading.Event()
        self.alias = settings.alias or _basename(settings.model)
        self.load_seconds = 0.0
        self.build: dict[str, Any] = {}
        self.memory: list[dict[str, Any]] = []

    def ready(self, model: Any, scheduler: Any, load_seconds: float) -> None:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = model.meta("tokenizer.chat_template") or DEFAULT_TEMPLATE
        self.bos_text = model.token_text(model.bos)
        # The sandboxed Jinja environment: a template from a downloaded file is untrusted.
        self.formatter = Jinja2ChatFormatter(
            template=template, eos_token=model.token_text(model.eos), bos_token=self.bos_text
        )
        add_bos = model.meta("tokenizer.ggml.add_bos_token")
        self.add_bos = add_bos != "false"
        self.model = model
        self.scheduler = scheduler
        self.load_seconds = load_seconds
        try:
            from runner.memory import parse_buffer_lines

            # Measured, from llama.cpp's own buffer lines: what the planner learns from.
            self.memory = parse_buffer_lines(model.load_log)
        except Exception:
            log.warning("could not read the memory breakdown from llama.cpp's log", exc_info=True)
        self.progress = 1.0
        self.status = "ok"

    def fail(self, message: str) -> None:
        self.message = message
        self.status = "error"


class ApiError(Exception):
    def __init__(self, status: int, message: str, type_: str = "invalid_request_error",
                 code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type_
        self.code = code


def _error_body(message: str, type_: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "code": code, "param": None}}


# ---- authentication ---------------------------------------------------------------------------

class BearerAuth:
    """Pure ASGI middleware: cheaper than BaseHTTPMiddleware and keeps streaming untouched."""

    def __init__(self, app: Any, key: str | None) -> None:
        self.app = app
        self.expected = f"Bearer {key}".encode() if key else None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.expected is not None:
            got = b""
            for name, value in scope["headers"]:
                if name == b"authorization":
                    got = value
                    break
            if not hmac.compare_digest(got, self.expected):  # constant time
                body = json.dumps(_error_body(
                    "Missing or wrong API key: send 'Authorization: Bearer <key>'.",
                    "authentication_error", "invalid_api_key")).encode()
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b"Bearer"),
                ]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


# ---- the app -------------------------------------------------------------------------------

def create_app(state: RunnerState, key: str | None) -> Any:
    app = FastAPI(title="Hearth runner", version="1", docs_url="/docs", redoc_url=None)

    @app.exception_handler(ApiError)
    async def _api_error(_req: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(_error_body(exc.message, exc.type, exc.code), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_req: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
            parts.append(f"{where or 'body'}: {err.get('msg', 'invalid')}")
        return JSONResponse(_error_body("Invalid request: " + "; ".join(parts),
                                        "invalid_request_error", "invalid_request"), 400)

    @app.get("/health")
    async def health() -> JSONResponse:
        if state.status == "ok":
            return JSONResponse({"status": "ok"})
        if state.status == "error":
            return JSONResponse({"status": "error", "message": state.message}, 500)
        return JSONResponse({"status": "loading", "progress": round(state.progress, 4)}, 503)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{
            "id": state.alias, "object": "model", "created": int(state.started),
            "owned_by": "hearth", "meta": {"path": state.settings.model},
        }]}

    @app.get("/runner/status")
    async def status() -> dict[str, Any]:
        return runner_status(state)

    @app.post("/v1/chat/completions", response_model=None)
    async def chat(body: ChatRequest) -> Response:
        _require_ready(state)
        messages = [_plain_message(m) for m in body.messages]
        extra = body.model_extra or {}
        try:
            rendered = state.formatter(messages=messages, tools=extra.get("tools"),
                                       tool_choice=extra.get("tool_choice"))
        except Exception as exc:
            raise ApiError(400, f"The model's chat template could not render these messages: "
                                f"{exc}", code="template_error") from None
        prompt = rendered.prompt
        add_bos = state.add_bos and not (state.bos_text and prompt.startswith(state.bos_text))
        tokens = state.model.tokenize(prompt, add_bos=add_bos, special=True)
        max_tokens = body.max_completion_tokens or body.max_tokens
        grammar = _grammar_for(body.response_format)
        return await _generate(state, body, tokens, max_tokens, chat=True, grammar=grammar)

    @app.post("/v1/completions", response_model=None)
    async def completions(body: CompletionRequest) -> Response:
        _require_ready(state)
        prompt = body.prompt if isinstance(body.prompt, str) else "".join(body.prompt)
        tokens = state.model.tokenize(prompt, add_bos=state.add_bos, special=False)
        return await _generate(state, body, tokens, body.max_tokens, chat=False)

    return BearerAuth(app, key)


def runner_status(state: RunnerState) -> dict[str, Any]:
    out: dict[str, Any] = {
        "status": state.status,
        "model": {"path": state.settings.model, "alias": state.alias},
        "settings": state.settings.to_json(),
        "uptime_s": round(time.time() - state.started, 3),
        "build": state.build,
    }
    if state.scheduler is not None:
        sched = state.scheduler
        last = sched.last
        out["context"] = {"n_ctx": state.model.n_ctx, "n_ctx_train": state.model.n_ctx_train,
                          "slots": sched.n_slots, "per_slot": sched.slot_ctx}
        out["load_seconds"] = round(state.load_seconds, 3)
        out["memory"] = state.memory
        out["requests"] = {"total": sched.total_requests, "active": sched.active_jobs}
        out["last_request"] = {
            "prompt_tokens": last.prompt_tokens,
            "cached_tokens": last.cached_tokens,
            "completion_tokens": last.completion_tokens,
            "time_to_first_token_s": round(last.time_to_first_token_s, 6),
            "tokens_per_second": round(last.tokens_per_second, 3),
            "finish_reason": last.finish_reason,
        }
    return out


def _require_ready(state: RunnerState) -> None:
    if state.status == "loading":
        raise ApiError(503, f"The model is still loading ({state.progress:.0%}). Try again shortly.",
                       "server_error", "model_loading")
    if state.status == "error":
        raise ApiError(503, f"The model failed to load: {state.message}", "server_error",
                       "model_load_failed")


def _plain_message(m: ChatMessage) -> dict[str, Any]:
    out = dict(m.model_extra or {})
    out["role"] = m.role
    if isinstance(m.content, list):
        # Text parts only; the runner has no vision projector loaded.
        out["content"] = "".join(p.text or "" for p in m.content if p.type == "text")
    else:
        out["content"] = m.content or ""
    return out


def _grammar_for(fmt: ResponseFormat | None) -> str | None:
    """A GBNF grammar that makes the model's output valid JSON (of the schema, when given)."""
    if fmt is None or fmt.type == "text":
        return None
    from llama_cpp.llama_grammar import JSON_GBNF, json_schema_to_gbnf

    schema = fmt.json_schema.schema_ if fmt.json_schema else None
    if fmt.type == "json_object" or not schema:
        return JSON_GBNF
    try:
        return json_schema_to_gbnf(json.dumps(schema))
    except Exception as exc:
        raise ApiError(400, f"response_format.json_schema could not be turned into a grammar: {exc}",
                       code="invalid_json_schema") from None


def _sampling(body: _Sampling, n_vocab: int) -> Any:
    from runner.engine import Sampling

    s = Sampling()
    for name in ("temperature", "top_p", "top_k", "min_p", "repeat_penalty",
                 "presence_penalty", "frequency_penalty", "seed"):
        value = getattr(body, name)
        if value is not None:
            setattr(s, name, value)
    if body.logit_bias:
        bias: dict[int, float] = {}
        for tok, value in body.logit_bias.items():
            try:
                t = int(tok)
            except ValueError:
                raise ApiError(400, f"logit_bias keys must be token ids, got {tok!r}.") from None
            if not 0 <= t < n_vocab:
                raise ApiError(400, f"logit_bias token {t} is outside the vocabulary (0..{n_vocab - 1}).")
            bias[t] = max(-100.0, min(100.0, value))
        s.logit_bias = bias
    return s


async def _generate(state: RunnerState, body: _Sampling, tokens: list[int],
                    max_tokens: int | None, chat: bool, grammar: str | None = None) -> Response:
    from runner.engine import ContextLengthExceeded, EngineError, Job

    stops = [body.stop] if isinstance(body.stop, str) else list(body.stop or [])
    stops = [s for s in stops if s][:8]
    loop = asyncio.get_running_loop()
    q: asyncio.Queue[Any] = asyncio.Queue()
    put = q.put_nowait

    def on_text(text: str) -> None:
        loop.call_soon_threadsafe(put, text)

    def on_done(reason: str, usage: Any) -> None:
        loop.call_soon_threadsafe(put, (reason, usage))

    def on_error(exc: Exception) -> None:
        loop.call_soon_threadsafe(put, exc)

    sampling = _sampling(body, state.model.n_vocab)
    if body.seed is None:
        sampling.seed = state.settings.seed  # --seed is the default for requests without one
    sampling.grammar = grammar
    job = Job(prompt=tokens, on_text=on_text, on_done=on_done, on_error=on_error,
              max_tokens=max_tokens, sampling=sampling,
              stop=tuple(stops), ignore_eos=body.ignore_eos and grammar is None,
              cache_prompt=body.cache_prompt)
    try:
        state.scheduler.submit(job)
    except ContextLengthExceeded as exc:
        raise ApiError(400, str(exc), code="context_length_exceeded") from None
    except EngineError as exc:
        raise ApiError(400, str(exc)) from None

    rid = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24]
    created = int(time.time())
    model = state.alias
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        return StreamingResponse(
            _sse(q.get, job, rid, created, model, chat, include_usage),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    parts: list[str] = []
    try:
        while True:
            item = await q.get()
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, Exception):
                raise ApiError(500, str(item), "server_error", "generation_failed")
            else:
                reason, usage = item
                break
    finally:
        job.cancel()  # no-op when done; stops generation if the client went away
    text = "".join(parts)
    choice: dict[str, Any] = {"index": 0, "finish_reason": _finish(reason), "logprobs": None}
    if chat:
        choice["message"] = {"role": "assistant", "content": text}
    else:
        choice["text"] = text
    return JSONResponse({
        "id": rid, "object": "chat.completion" if chat else "text_completion",
        "created": created, "model": model, "choices": [choice],
        "usage": _usage(usage),
    })


def _finish(reason: str) -> str:
    return "length" if reason == "length" else "stop"


def _usage(u: Any) -> dict[str, Any]:
    return {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
            "total_tokens": u.prompt_tokens + u.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cached_tokens}}


async def _sse(get: Callable[[], Awaitable[Any]], job: Any, rid: str, created: int, model: str,
               chat: bool, include_usage: bool) -> AsyncIterator[bytes]:
    """Server-sent events. Each piece of text is spliced into a pre-built JSON template."""
    obj = "chat.completion.chunk" if chat else "text_completion"
    head = json.dumps({"id": rid, "object": obj, "created": created, "model": model})[:-1]
    if chat:
        pre = (head + ', "choices": [{"index": 0, "delta": {"content": ').encode()
        post = b'}, "finish_reason": null}]}\n\n'
        first = head + ', "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, ' \
                       '"finish_reason": null}]}'
        yield b"data: " + first.encode() + b"\n\n"
    else:
        pre = (head + ', "choices": [{"index": 0, "text": ').encode()
        post = b', "finish_reason": null}]}\n\n'
    dumps = json.dumps
    try:
        while True:
            item = await get()
            if isinstance(item, str):
                yield b"data: " + pre + dumps(item).encode() + post
                continue
            if isinstance(item, Exception):
                err = _error_body(str(item), "server_error", "generation_failed")
                yield b"data: " + json.dumps(err).encode() + b"\n\n"
                break
            reason, usage = item
            delta = '"delta": {}, ' if chat else '"text": "", '
            yield (f'data: {head}, "choices": [{{"index": 0, {delta}"finish_reason": '
                   f'"{_finish(reason)}"}}]}}\n\n').encode()
            if include_usage:
                yield (f'data: {head}, "choices": [], "usage": {dumps(_usage(usage))}}}\n\n').encode()
            break
        yield b"data: [DONE]\n\n"
    finally:
        # Reached on normal end and when the client disconnects (the task is cancelled):
        # the scheduler sees the flag before its next token and frees the slot.
        job.cancel()


def _basename(path: str) -> str:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name[:-5] if name.lower().endswith(".gguf") else name
