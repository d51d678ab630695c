"""The runner's HTTP API: OpenAI-compatible endpoints, health, and status.

The event loop only parses requests and forwards text: chat templates and the tokenizer run on
prompt threads (seconds for a big request), grammars on the grammar thread, and generation on the
engine's scheduler thread, which hands each piece of text over with one ``call_soon_threadsafe``.
A streamed token costs one pre-formatted SSE chunk here, nothing more. Every request first passes
runner.guards (Host, key, body size); connections are capped in runner.connections.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator
from pydantic_core import PydanticCustomError
from starlette.exceptions import HTTPException as StarletteHTTPException

from runner.connections import is_loopback_peer
from runner.grammar import (
    GrammarInvalid,
    GrammarRefused,
    GrammarWorker,
    check_grammar,
    check_schema,
    schema_grammar,
    schemas_grammar,
)
from runner.guards import Pacer, error_body, guard
from runner.image_input import IMAGE_PARTS, image_parts, load_images
from runner.limits import FLAGS, Limits
from runner.settings import LoadSettings
from runner.turn_formats import guess_format
from runner.wire.shapes import health_body

log = logging.getLogger(__name__)

T = TypeVar("T")


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
    top_k: int | None = Field(default=None, ge=0, le=1 << 20)  # clamped to the vocabulary
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


class FunctionDef(_Open):
    # OpenAI's rule for function names; they reach the chat template and the grammar.
    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-\.]+$")
    description: str | None = None
    parameters: dict[str, Any] | None = None


class Tool(_Open):
    type: Literal["function"] = "function"
    function: FunctionDef


class FunctionName(_Open):
    name: str


class NamedToolChoice(_Open):
    type: Literal["function"] = "function"
    function: FunctionName


class ChatRequest(_Sampling):
    messages: list[ChatMessage] = Field(min_length=1)
    tools: list[Tool] | None = Field(default=None, max_length=128)
    tool_choice: Literal["none", "auto", "required"] | NamedToolChoice | None = None
    parallel_tool_calls: bool | None = None
    max_completion_tokens: int | None = Field(default=None, ge=1)
    response_format: ResponseFormat | None = None
    # A GBNF grammar the reply must follow (llama-server's extension), within the limits of one
    # made from a schema.
    grammar: str | None = Field(default=None, max_length=1 << 20)
    logprobs: bool = False
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    # Variables the chat template gets (llama-server's name): {"enable_thinking": false} for
    # Qwen 3; and gpt-oss's effort. Checked by _template_variables.
    chat_template_kwargs: dict[str, Any] | None = Field(default=None, max_length=16)
    reasoning_effort: Literal["low", "medium", "high"] | None = None


class CompletionRequest(_Sampling):
    prompt: str | list[str] | list[int] | list[list[int]]
    max_tokens: int | None = Field(default=16, ge=1)  # OpenAI's default for /v1/completions
    logprobs: int | None = Field(default=None, ge=0, le=20)


class CountRequest(_Open):
    texts: list[str] = Field(max_length=1024)


class EmbeddingRequest(_Open):
    input: str | list[str] | list[int] | list[list[int]]
    model: str | None = None
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = Field(default=None, ge=1)


MAX_EMBED_INPUTS = 2048  # OpenAI's own limit per request


class VectorSearch(_Open):
    query: str = Field(max_length=65_536)
    documents: list[int] = Field(max_length=2000)
    limit: int = Field(default=64, ge=1, le=1000)


# ---- state shared by the loader thread and the handlers ------------------------------------

class RunnerState:
    """What the runner is doing: loading, ready or failed; and the engine once ready."""

    def __init__(self, settings: LoadSettings, limits: Limits | None = None) -> None:
        self.settings = settings
        self.limits = limits or Limits()
        self._grammars: GrammarWorker | None = None
        self.status: Literal["loading", "ok", "error"] = "loading"
        self.progress = 0.0
        self.message = ""
        self.model: Any = None  # engine.Model
        self.scheduler: Any = None  # engine.Scheduler
        self.formatter: Any = None
        self.tool_format: Any = None  # tools.ToolFormat | None: the template's tool-call dialect
        self.add_bos = True
        self.bos_text = ""
        self.started = time.time()
        self.exiting = threading.Event()
        self.alias = settings.alias or _basename(settings.model)
        self.load_seconds = 0.0
        self.build: dict[str, Any] = {}
        self.memory: list[dict[str, Any]] = []
        self.devices: list[dict[str, Any]] = []  # what this build's ggml sees (runner.devices)
        # "template" (the GGUF's own) or the turn format guessed from the vocabulary.
        self.chat_format = ""
        self.outbox: Any = None  # Outbox, made on the event loop at the first request
        self.connections: Any = None  # connections.ConnectionGuard, where the server counts them
        self.vectors: Any = None  # vectors.VectorIndex: --vectors-db on an embedding runner
        # Fetches an image link's bytes (runner/remote_image.py) where the person allowed links.
        self.fetch_image: Any = None
        self.pacer: Any = None  # guards.Pacer: request bodies read at a rate while generating
        self._prompts: ThreadPoolExecutor | None = None

    def ready(self, model: Any, scheduler: Any, load_seconds: float) -> None:
        from runner.template import BoundedChatFormatter

        template = model.meta("tokenizer.chat_template")
        if template:
            self.chat_format = "template"
        else:
            fmt = guess_format(lambda text: _is_special_token(model, text))
            template, self.chat_format = fmt.template, fmt.name
            log.info("the model has no chat template; using the %s turn format its vocabulary "
                     "names", fmt.name)
        from runner.tools import tool_format

        self.tool_format = tool_format(template)
        self.bos_text = model.token_text(model.bos)
        # A template from a downloaded file is untrusted: sandboxed, and bounded in time and size.
        self.formatter = BoundedChatFormatter(
            template, eos_token=model.token_text(model.eos), bos_token=self.bos_text,
            max_seconds=self.limits.max_template_seconds, max_chars=self.limits.max_prompt_chars)
        add_bos = model.meta("tokenizer.ggml.add_bos_token")
        self.add_bos = add_bos != "false"
        self.model = model
        self.scheduler = scheduler
        scheduler.turn_boundary = turn_boundary(self.formatter, model)
        self.load_seconds = load_seconds
        try:
            from runner.memory import parse_buffer_lines, with_draft

            # Measured, from llama.cpp's own buffer lines: what the planner learns from.
            self.memory = parse_buffer_lines(model.load_log)
            if scheduler.draft is not None:  # the draft model's, apart: the plan counts it apart
                self.memory = with_draft(self.memory, parse_buffer_lines(scheduler.draft.load_log))
        except Exception:
            log.warning("could not read the memory breakdown from llama.cpp's log", exc_info=True)
        self.progress = 1.0
        self.status = "ok"

    def fail(self, message: str) -> None:
        self.message = message
        self.status = "error"

    def grammars(self) -> GrammarWorker:
        """The thread that builds this runner's grammars (started at the first one)."""
        if self._grammars is None:
            self._grammars = GrammarWorker()
        return self._grammars

    def prompts(self) -> ThreadPoolExecutor:
        """The threads that render chat templates and tokenize prompts (seconds of work for a
        big request, which would stop every other client on the event loop). Several, so one
        slow template does not hold up everyone's prompts."""
        if self._prompts is None:
            self._prompts = ThreadPoolExecutor(max_workers=4, thread_name_prefix="prompt")
        return self._prompts


class ApiError(Exception):
    def __init__(self, status: int, message: str, type_: str = "invalid_request_error",
                 code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type_
        self.code = code


_error_body = error_body


# ---- the app -------------------------------------------------------------------------------

def create_app(state: RunnerState, key: str | None, loopback_only: bool = True) -> Any:
    """The runner's ASGI app behind runner.guards' Host check (``loopback_only``: bound to
    loopback), key and body limit."""
    app = FastAPI(title="Hearth runner", version="1", docs_url="/docs", redoc_url=None)
    app.router.route_class = _json_off_loop_route(state)

    @app.exception_handler(ApiError)
    async def _api_error(_req: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(_error_body(exc.message, exc.type, exc.code), status_code=exc.status)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(req: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Starlette's own errors (unknown path, wrong method, unparsable body) in OpenAI's shape.
        message = {404: f"No such endpoint: {req.method} {req.url.path}.",
                   405: f"{req.method} is not allowed on {req.url.path}."}.get(
            exc.status_code, str(exc.detail))
        return JSONResponse(_error_body(message, "invalid_request_error", None),
                            status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(req: Request, exc: RequestValidationError) -> JSONResponse:
        over = next((e for e in exc.errors() if e.get("type") == "too_many_messages"), None)
        if over is not None:
            log.info("refused a chat request: %s", over["msg"],
                     extra={"event": "too_many_messages"})
            return JSONResponse(_error_body(over["msg"], "invalid_request_error",
                                            "too_many_messages"), 400)
        ctype = req.headers.get("content-type", "")
        if req.method == "POST" and "json" not in ctype.lower():
            # Deliberate (FastAPI's strict content type): a web page can POST to localhost
            # without a CORS preflight only when the body is not declared as JSON.
            return JSONResponse(_error_body(
                f"The body must be JSON sent with 'Content-Type: application/json' (got "
                f"{ctype or 'no Content-Type'}). With curl: -H 'Content-Type: application/json'.",
                "invalid_request_error", "invalid_content_type"), 400)
        parts = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
            parts.append(f"{where or 'body'}: {err.get('msg', 'invalid')}")
        return JSONResponse(_error_body("Invalid request: " + "; ".join(parts),
                                        "invalid_request_error", "invalid_request"), 400)

    @app.get("/health")
    async def health() -> JSONResponse:
        body, status = health_body(state.status, state.progress, state.message)
        return JSONResponse(body, status)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        # The file's name, never its folder: the path names the person's account and folders,
        # and a shared runner answers other devices too.
        return {"object": "list", "data": [{
            "id": state.alias, "object": "model", "created": int(state.started),
            "owned_by": "hearth", "meta": {"file": _file_name(state.settings.model)},
        }]}

    @app.get("/runner/status")
    async def status(request: Request) -> dict[str, Any]:
        peer = (request.client.host, request.client.port) if request.client else None
        return runner_status(state, local=is_loopback_peer(peer))

    async def chat(body: ChatRequest, request: Request) -> Response:
        _require_generation(state)
        images = _image_parts(state, body.messages)
        mark = f"<hearth-image-{uuid.uuid4().hex}>" if images else ""
        messages = [_plain_message(m, mark) for m in body.messages]
        if state.tool_format == "harmony":
            from runner.harmony import template_messages

            messages = template_messages(messages)
        tools = [_template_tool(t) for t in body.tools] if body.tools else None
        tool_stream, tool_grammar = _tool_setup(state, body, tools)
        choice = body.tool_choice.model_dump() if isinstance(body.tool_choice, NamedToolChoice) \
            else body.tool_choice
        variables = _template_variables(body)
        tokens, media = await _off_loop(
            state, lambda: _chat_tokens(state, messages, tools, choice, images, mark,
                                        variables))
        max_tokens = body.max_completion_tokens or body.max_tokens
        grammar = tool_grammar or _format_grammar(body.response_format, state.limits) \
            or _raw_grammar(body.grammar, state.limits)
        logprobs = (body.top_logprobs or 0) if body.logprobs else None
        return await _generate(state, request, body, tokens, max_tokens, chat=True,
                               grammar=grammar, logprobs=logprobs, tools=tool_stream,
                               media=media)

    # The body's model carries this runner's --max-messages: FastAPI reads it from here.
    chat.__annotations__["body"] = _chat_request_model(state.limits.max_messages)
    app.post("/v1/chat/completions", response_model=None)(chat)

    @app.post("/runner/tokens", response_model=None)
    async def count_tokens(body: CountRequest) -> dict[str, Any]:
        """How many tokens each text is for this model (no special tokens added): what fits
        its context is counted here, not guessed. A count at or above ``context`` means "at
        least that many" (a longer text is not tokenized to the end)."""
        _require_ready(state)
        context = state.scheduler.slot_ctx
        counts = await _off_loop(state, lambda: [_count(state, t, context) for t in body.texts])
        return {"counts": counts, "context": context}

    @app.post("/v1/completions", response_model=None)
    async def completions(body: CompletionRequest, request: Request) -> Response:
        _require_generation(state)
        prompts = await _off_loop(state, lambda: _prompt_tokens(state, body.prompt))
        if len(prompts) == 1:
            return await _generate(state, request, body, prompts[0], body.max_tokens, chat=False,
                                   logprobs=body.logprobs)
        if body.stream:
            raise ApiError(400, "Streaming takes one prompt at a time; send the prompts as "
                                "separate requests, or without stream.", code="unsupported")
        # Several prompts: one choice each, generated side by side in the slots (or queued).
        replies = await asyncio.gather(*(
            _generate(state, request, body, tokens, body.max_tokens, chat=False,
                      logprobs=body.logprobs) for tokens in prompts))
        first: dict[str, Any] = json.loads(bytes(replies[0].body))
        usage = first["usage"]
        for i, reply in enumerate(replies[1:], start=1):
            data = json.loads(bytes(reply.body))
            first["choices"].append({**data["choices"][0], "index": i})
            for k in ("prompt_tokens", "completion_tokens", "total_tokens"):
                usage[k] += data["usage"][k]
            usage["prompt_tokens_details"]["cached_tokens"] += \
                data["usage"]["prompt_tokens_details"]["cached_tokens"]
        return JSONResponse(first)

    @app.post("/runner/vectors/search", response_model=None)
    async def vector_search(body: VectorSearch, request: Request) -> dict[str, Any]:
        """The passages of Hearth's index most like ``query`` (runner/vectors.py): for this
        computer only, from a runner started with ``--vectors-db``."""
        peer = (request.client.host, request.client.port) if request.client else None
        if not is_loopback_peer(peer):
            raise ApiError(403, "Vector search is for Hearth on this computer only.",
                           code="forbidden")
        _require_ready(state)
        if state.vectors is None:
            raise ApiError(400, "This runner was not started with --vectors-db.",
                           code="vectors_not_enabled")
        from runner.vectors import embedder

        embed = embedder(state.model, state.scheduler)

        def search() -> list[tuple[int, float]]:
            (query,) = embed([body.query])
            return state.vectors.search(query, body.documents, body.limit, embed)

        return {"results": [list(r) for r in await _off_loop(state, search)]}

    @app.post("/v1/embeddings")
    async def embeddings(body: EmbeddingRequest) -> JSONResponse:
        _require_ready(state)
        return await _embeddings(state, body)

    state.pacer = Pacer(state.limits.body_rate_mib * 2**20, lambda: bool(
        state.scheduler is not None and state.scheduler.active_jobs > 0))
    return guard(app, state.limits, key, loopback_only, state.pacer)


# Bodies smaller than this are parsed on the event loop: a thread costs more than they do.
PARSE_OFF_LOOP_BYTES = 256 * 1024


def _json_off_loop_route(state: RunnerState) -> type[APIRoute]:
    """Routes whose big JSON bodies are parsed on a prompt thread with pydantic's parser. Every
    parser holds the GIL while it makes the objects, but Python's json module took 100 ms for a
    32 MiB body (80 ms of it with every client waiting) and pydantic's takes 19 ms; on the
    thread, the event loop's own share of the work goes on around it."""
    class OffLoopJsonRequest(Request):
        async def body(self) -> bytes:
            if not hasattr(self, "_body"):
                # runner.guards.BodyLimit sends the body in one message: take it as it is
                # (Starlette would join it with the empty end of its stream: a copy).
                chunks = [chunk async for chunk in self.stream() if chunk]
                self._body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
            return self._body

        async def json(self) -> Any:
            if not hasattr(self, "_json"):
                body = await self.body()
                self._json = await _off_loop(state, lambda: _parse_json(body)) \
                    if len(body) > PARSE_OFF_LOOP_BYTES else json.loads(body)
            return self._json

    class OffLoopJsonRoute(APIRoute):
        def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
            handler = super().get_route_handler()

            async def handle(request: Request) -> Response:
                return await handler(OffLoopJsonRequest(request.scope, request.receive))

            return handle

    return OffLoopJsonRoute


def _parse_json(body: bytes) -> Any:
    """``body`` as JSON, as Python's json module reads it (NaN and Infinity included)."""
    from pydantic_core import from_json

    try:
        return from_json(body, allow_inf_nan=True, cache_strings=False)
    except ValueError:
        # Not JSON, or JSON only Python's reader takes (lone surrogates): its error, with the
        # position, is what the client gets.
        return json.loads(body)


def _chat_request_model(max_messages: int) -> type[ChatRequest]:
    """ChatRequest that counts the messages before validating any (a million empty ones fit in
    a 32 MiB body, and validating them takes the event loop a second)."""
    def count(value: Any) -> Any:
        if isinstance(value, list) and len(value) > max_messages:
            raise PydanticCustomError(
                "too_many_messages",
                "This request has {n} messages; this runner takes at most {limit} per request "
                "({flag}). Send a shorter conversation.",
                {"n": len(value), "limit": max_messages, "flag": FLAGS["max_messages"]})
        return value

    return create_model(
        "ChatRequest", __base__=ChatRequest,
        __validators__={"count_messages": field_validator("messages", mode="before")(count)})


async def _off_loop(state: RunnerState, work: Callable[[], T]) -> T:
    """``work()`` on a prompt thread: templates and the tokenizer take seconds for a big
    request, and the event loop serves everyone (``/health`` included) meanwhile."""
    return await asyncio.wrap_future(state.prompts().submit(work))


def _chat_tokens(state: RunnerState, messages: list[dict[str, Any]], tools: Any, choice: Any,
                 images: list[tuple[str, str]], mark: str,
                 variables: dict[str, Any] | None = None) -> tuple[list[int], Any]:
    """The prompt's tokens for a chat request (on a prompt thread), and with images the
    MediaPrompt that holds them (runner/vision.py). ``mark`` stands for each image in
    ``messages``: unique to the request, so no text can pose as an image."""
    from runner.template import TemplateRefused
    from runner.vision import ImageRefused

    _refuse_overlong_user_text(state, messages)
    try:
        prompt = _render_chat(state.formatter, messages, tools, choice, variables)
    except TemplateRefused as exc:
        log.info("chat template refused: %s", exc, extra={"event": "template_refused"})
        raise ApiError(400, str(exc), code=exc.code) from None
    except Exception as exc:
        raise ApiError(400, f"The model's chat template could not render these messages: "
                            f"{_short(str(exc), 300)}", code="template_error") from None
    add_bos = state.add_bos and not (state.bos_text and prompt.startswith(state.bos_text))
    if not images:
        return _bounded_tokens(state, prompt, add_bos), None
    vision = state.model.vision
    try:
        loaded = load_images(images, state.fetch_image)
        prompt = vision.neutral(prompt).replace(mark, vision.marker)
        media = vision.tokenize(prompt, loaded, add_bos)
    except ImageRefused as exc:
        raise ApiError(400, str(exc), code="invalid_image") from None
    return media.tokens, media


def _refuse_overlong_user_text(state: RunnerState, messages: list[dict[str, Any]]) -> None:
    """Refuse a prompt that cannot fit before the template renders it, where the person's own
    messages prove it: templates drop or rewrite other roles' text (reasoning, a system message
    the model has no place for) but put every user message in the prompt, and no token stands
    for more text than the vocabulary's longest. Rendering a 32 MiB message only to refuse it
    costs 70 ms or more of CPU and several copies of it. Characters count as bytes here: UTF-8
    has at least as many, so the bound only gets looser."""
    from runner.engine import ContextLengthExceeded

    chars = 0
    for m in messages:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(len(part["text"]) for part in content
                         if isinstance(part, dict) and isinstance(part.get("text"), str))
    context = state.scheduler.slot_ctx
    least = state.model.least_tokens(chars, context)
    if least >= context:
        raise ApiError(400, str(ContextLengthExceeded(least, context, at_least=True)),
                       code="context_length_exceeded")


def _bounded_tokens(state: RunnerState, text: str, add_bos: bool) -> list[int]:
    """``text``'s tokens, refused with a 400 where they cannot fit a slot's context."""
    from runner.engine import ContextLengthExceeded

    try:
        tokens: list[int] = state.model.tokenize(text, add_bos=add_bos, special=True,
                                                 context=state.scheduler.slot_ctx)
    except ContextLengthExceeded as exc:
        raise ApiError(400, str(exc), code="context_length_exceeded") from None
    return tokens


def _count(state: RunnerState, text: str, context: int) -> int:
    from runner.engine import ContextLengthExceeded

    try:
        return len(state.model.tokenize(text, add_bos=False, special=False, context=context))
    except ContextLengthExceeded as exc:
        return exc.n_prompt


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _embed_inputs(state: RunnerState, raw: list[Any]) -> list[list[int]]:
    """The token lists to embed (on a prompt thread: tokenizing 2048 inputs takes a while)."""
    from runner.engine import ContextLengthExceeded

    model = state.model
    most = state.scheduler.max_embed_tokens
    inputs: list[list[int]] = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            try:
                tokens = _text_tokens(state, item, most + 1) if item else []
            except ContextLengthExceeded as exc:
                raise ApiError(400, f"Input {i} is {'at least ' if exc.at_least else ''}"
                                    f"{exc.n_prompt} tokens long; this runner embeds at most "
                                    f"{most} tokens at once.",
                               code="context_length_exceeded") from None
        else:
            tokens = list(item)
            bad = next((t for t in tokens if not 0 <= t < model.n_vocab), None)
            if bad is not None:
                raise ApiError(400, f"input {i}: token {bad} is outside the vocabulary "
                                    f"(0..{model.n_vocab - 1}).")
        if not tokens:
            raise ApiError(400, f"input {i} is empty.")
        inputs.append(tokens)
    return inputs


async def _embeddings(state: RunnerState, body: EmbeddingRequest) -> JSONResponse:
    import base64

    from runner.engine import ContextLengthExceeded, EmbedJob, EngineError

    if not state.settings.embedding:
        raise ApiError(400, "This model was loaded for chat, not for embeddings. Load it with "
                            "--embedding to use /v1/embeddings.", code="embeddings_not_enabled")
    model = state.model
    raw: list[Any] = [body.input] if isinstance(body.input, str) else list(body.input)
    if not raw:
        raise ApiError(400, "input is empty: send a string, a list of strings or token ids.")
    if all(isinstance(x, int) for x in raw):
        raw = [raw]  # one input given as token ids
    if len(raw) > MAX_EMBED_INPUTS:
        raise ApiError(400, f"At most {MAX_EMBED_INPUTS} inputs per request, got {len(raw)}.")
    inputs = await _off_loop(state, lambda: _embed_inputs(state, raw))
    n_embd = model.n_embd
    if body.dimensions is not None and body.dimensions != n_embd:
        raise ApiError(400, f"This model's embeddings have {n_embd} dimensions; it cannot "
                            f"make {body.dimensions}.", code="unsupported_dimensions")
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: bool = False) -> None:
        if not fut.done():
            (fut.set_exception if error else fut.set_result)(value)

    def done(vectors: list[Any]) -> None:
        loop.call_soon_threadsafe(settle, vectors)

    def failed(exc: Exception) -> None:
        loop.call_soon_threadsafe(settle, exc, True)

    job = EmbedJob(inputs, on_done=done, on_error=failed)
    try:
        state.scheduler.submit_embed(job)
    except ContextLengthExceeded as exc:
        raise ApiError(400, f"An input is {exc.n_prompt} tokens long; this runner embeds at most "
                            f"{exc.n_ctx} tokens at once.", code="context_length_exceeded") from None
    try:
        vectors = await fut
    except EngineError as exc:
        raise ApiError(500, str(exc), "server_error", "embedding_failed") from None
    data = [{"object": "embedding", "index": i,
             "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode()
             if body.encoding_format == "base64" else v.tolist()}
            for i, v in enumerate(vectors)]
    n = sum(len(t) for t in inputs)
    return JSONResponse({"object": "list", "data": data, "model": state.alias,
                         "usage": {"prompt_tokens": n, "total_tokens": n}})


def _is_special_token(model: Any, text: str) -> bool:
    """The vocabulary has ``text`` as one token (a turn marker, not spelled out in pieces)."""
    tokens = model.tokenize(text, add_bos=False, special=True)
    return len(tokens) == 1 and model.token_text(tokens[0]) == text


def runner_status(state: RunnerState, local: bool = True) -> dict[str, Any]:
    """What the runner is doing. ``local``: asked from this computer (the app); another device
    gets the model's file name in place of its path."""
    settings = state.settings.to_json()
    path = state.settings.model if local else _file_name(state.settings.model)
    settings["model"] = path
    if not local:  # the files beside the model are named, not placed, too
        for key in ("mmproj", "draft_model"):
            if settings.get(key):
                settings[key] = _file_name(settings[key])
    out: dict[str, Any] = {
        "status": state.status,
        "model": {"path": path, "alias": state.alias},
        "settings": settings,
        "uptime_s": round(time.time() - state.started, 3),
        "build": state.build,
        "devices": state.devices,
        "limits": state.limits.to_json(),
    }
    if state.connections is not None:
        out["connections"] = state.connections.status()  # the cap in effect, and its use
    if state.scheduler is not None:
        sched = state.scheduler
        last = sched.last
        out["context"] = {"n_ctx": state.model.n_ctx, "n_ctx_train": state.model.n_ctx_train,
                          "slots": sched.n_slots, "per_slot": sched.slot_ctx,
                          # a chat's next turn boundary, still to decode in idle slots
                          "warming": sched.warming()}
        out["load_seconds"] = round(state.load_seconds, 3)
        out["chat_format"] = state.chat_format
        out["memory"] = state.memory
        out["requests"] = {"total": sched.total_requests, "active": sched.active_jobs,
                           "building_grammar": bool(state._grammars and state._grammars.building),
                           "paced_body_bytes": state.pacer.paced_bytes if state.pacer else 0}
        out["threads"] = sched.tuner.status()
        draft = state.settings.draft_model
        out["speculative"] = None if sched.spec is None else sched.spec_counts.to_json(
            sched.spec, None if draft is None else draft if local else _file_name(draft),
            sched.speculating, sched.trial.to_json() if sched.trial is not None else None)
        out["speed_trial"] = None if sched.speed is None else sched.speed.to_json()
        vision = state.model.vision
        out["vision"] = None if vision is None else {
            "projector": vision.path if local else _file_name(vision.path),
            "image_links": state.fetch_image is not None}
        out["last_request"] = {
            "prompt_tokens": last.prompt_tokens,
            "cached_tokens": last.cached_tokens,
            "completion_tokens": last.completion_tokens,
            "time_to_first_token_s": round(last.time_to_first_token_s, 6),
            "tokens_per_second": round(last.tokens_per_second, 3),
            "finish_reason": last.finish_reason,
        }
    return out


MAX_PROMPTS = 64


def _prompt_tokens(state: RunnerState, prompt: str | list[str] | list[int] | list[list[int]]
                   ) -> list[list[int]]:
    """OpenAI's four prompt shapes as token lists: text, texts, token ids, lists of token ids."""
    model = state.model
    items: list[Any] = [prompt] if isinstance(prompt, str) else list(prompt)
    if not items:
        raise ApiError(400, "prompt is empty.")
    if all(isinstance(x, int) for x in items):
        items = [items]
    if len(items) > MAX_PROMPTS:
        raise ApiError(400, f"At most {MAX_PROMPTS} prompts per request, got {len(items)}.")
    out: list[list[int]] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            out.append(_bounded_text_tokens(state, item))
            continue
        bad = next((t for t in item if not 0 <= t < model.n_vocab), None)
        if bad is not None:
            raise ApiError(400, f"prompt {i}: token {bad} is outside the vocabulary "
                                f"(0..{model.n_vocab - 1}).")
        out.append(list(item))
    return out


def _text_tokens(state: RunnerState, text: str, context: int) -> list[int]:
    """A raw text prompt or embedding input, tokenized as llama-server does (parse_special):
    ``<|im_start|>`` or ``<start_of_turn>`` written in the text become the control tokens they
    name, so a prompt in the model's own turn format reaches it as turns, not as characters.
    Raises ContextLengthExceeded at ``context`` tokens or more."""
    # As in the chat path: a BOS written at the start stands for the one the model adds, not a
    # second one (llama-server would send two and warn).
    add_bos = state.add_bos and not (state.bos_text and text.startswith(state.bos_text))
    tokens: list[int] = state.model.tokenize(text, add_bos=add_bos, special=True,
                                             context=context)
    return tokens


def _bounded_text_tokens(state: RunnerState, text: str) -> list[int]:
    """A raw text prompt's tokens, refused with a 400 where they cannot fit a slot's context."""
    from runner.engine import ContextLengthExceeded

    try:
        return _text_tokens(state, text, state.scheduler.slot_ctx)
    except ContextLengthExceeded as exc:
        raise ApiError(400, str(exc), code="context_length_exceeded") from None


def _require_generation(state: RunnerState) -> None:
    _require_ready(state)
    if state.settings.embedding:
        raise ApiError(400, "This runner was loaded with --embedding: it serves /v1/embeddings "
                            "only. Load the model again without it to chat.",
                       code="generation_not_enabled")


def _require_ready(state: RunnerState) -> None:
    if state.status == "loading":
        raise ApiError(503, f"The model is still loading ({state.progress:.0%}). Try again shortly.",
                       "server_error", "model_loading")
    if state.status == "error":
        raise ApiError(503, f"The model failed to load: {state.message}", "server_error",
                       "model_load_failed")


def _tool_setup(state: RunnerState, body: ChatRequest, tools: list[dict[str, Any]] | None
                ) -> tuple[Any, GrammarSource | None]:
    """The reader of this request's reply (tool calls, gpt-oss's channels), and a grammar when
    a call is required."""
    from runner.harmony import HarmonyStream
    from runner.tools import ToolStream, tool_names

    fmt = state.tool_format
    if not tools or body.tool_choice == "none":
        # gpt-oss writes its channels whatever the request: its replies are always read.
        return (HarmonyStream([]) if fmt == "harmony" else None), None
    if fmt is None:
        raise ApiError(400, "This model's chat template has no support for tools, so it would "
                            "not know how to call them. Use a model made for tool calling, or "
                            "send the request without tools.", code="tools_not_supported")
    names = tool_names(tools)
    only = body.tool_choice.function.name if isinstance(body.tool_choice, NamedToolChoice) else None
    if only is not None and only not in names:
        raise ApiError(400, f"tool_choice names {only!r}, which is not among the tools sent.")
    reader = HarmonyStream(names) if fmt == "harmony" else ToolStream(fmt, names)
    if only is None and body.tool_choice != "required":
        return reader, None
    limits = state.limits

    def grammar() -> str:
        with _grammar_errors("invalid_tool_schema"):
            # Each tool's own parameters first, so a refusal names the tool it is in.
            for i, tool in enumerate(tools):
                check_schema(tool["function"].get("parameters") or {}, limits,
                             f"tools[{i}].function.parameters")
            return _call_grammar(tools, fmt, only, limits)

    return reader, grammar


def _call_grammar(tools: list[dict[str, Any]], fmt: Any, only: str | None,
                  limits: Limits) -> str:
    """A grammar for one call of one of ``tools`` (or of ``only``) in the format's markup."""
    from runner.tools import forced_call_schema, wrap_grammar

    if fmt != "harmony":
        call = schema_grammar(forced_call_schema(tools, fmt, only), limits,
                              "the tools' parameters")
        return wrap_grammar(call, fmt)
    from runner.harmony import call_grammar

    # The name is in the header, the arguments alone are the message: a rule for each tool's.
    chosen = [t["function"] for t in tools if only is None or t["function"]["name"] == only]
    rules, gbnf = schemas_grammar(
        {f"tool-{i}-args": fn.get("parameters") or {"type": "object"}
         for i, fn in enumerate(chosen)}, limits, "the tools' parameters")
    return call_grammar({fn["name"]: rules[f"tool-{i}-args"] for i, fn in enumerate(chosen)},
                        gbnf)


PREFILL_MARK = "\u2063hearth-prefill\u2063"  # text no template changes and no reply contains


# What the template's own variables are: a request's chat_template_kwargs may not replace them.
_TEMPLATE_OWN = frozenset({
    "messages", "tools", "tool_choice", "eos_token", "bos_token", "raise_exception",
    "add_generation_prompt", "functions", "function_call", "strftime_now"})
_TEMPLATE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def _template_variables(body: ChatRequest) -> dict[str, Any]:
    """The request's ``chat_template_kwargs`` (and ``reasoning_effort``) as variables for the
    chat template: names that are identifiers and not the template's own, values that are
    plain JSON scalars (a template is untrusted code; what it is handed stays small)."""
    out: dict[str, Any] = {}
    for name, value in (body.chat_template_kwargs or {}).items():
        if not _TEMPLATE_NAME.match(name) or name in _TEMPLATE_OWN:
            raise ApiError(400, f"chat_template_kwargs may not set {name[:64]!r}: give names "
                                "of the template's own options, such as enable_thinking.")
        if (value is not None and not isinstance(value, (bool, int, float, str))) or \
                (isinstance(value, str) and len(value) > 256):
            raise ApiError(400, f"chat_template_kwargs[{name!r}] must be true, false, a number "
                                "or a short string.")
        out[name] = value
    if body.reasoning_effort is not None:
        out["reasoning_effort"] = body.reasoning_effort
    return out


def _render_chat(formatter: Any, messages: list[dict[str, Any]], tools: Any, choice: Any,
                 variables: dict[str, Any] | None = None) -> str:
    """The prompt for ``messages`` (``variables``: more for the template, _template_variables).
    A conversation that ends with an assistant message with text is a reply to go on with
    (Continue, as llama-server does): the prompt ends inside that reply, not after it, so the
    model continues the same turn instead of starting a new one."""
    extra = variables or {}
    last = messages[-1] if messages else None
    if not (last and last["role"] == "assistant" and isinstance(last.get("content"), str)
            and last["content"] and not last.get("tool_calls")):
        return str(formatter(messages=messages, tools=tools, tool_choice=choice, **extra).prompt)
    marked = [*messages[:-1], {**last, "content": PREFILL_MARK}]
    rendered = str(formatter(messages=marked, tools=tools, tool_choice=choice, **extra).prompt)
    cut = rendered.rfind(PREFILL_MARK)
    if cut < 0:  # a template that drops the last assistant message: answer anew
        return str(formatter(messages=messages[:-1], tools=tools, tool_choice=choice,
                             **extra).prompt)
    return rendered[:cut] + last["content"]


def _plain_message(m: ChatMessage, mark: str) -> dict[str, Any]:
    """The message as the chat template takes it: content as one string, each image part
    ``mark`` (parts other than text and images were refused by _image_parts)."""
    out = dict(m.model_extra or {})
    out["role"] = m.role
    if isinstance(out.get("tool_calls"), list):
        out["tool_calls"] = [_template_call(c) for c in out["tool_calls"]]
    if isinstance(m.content, list):
        out["content"] = "".join((p.text or "") if p.type == "text" else mark
                                 for p in m.content if p.type == "text" or p.type in IMAGE_PARTS)
    else:
        out["content"] = m.content or ""
    return out


# What a part that is not text is, in the words of the refusal.
_PART_KINDS = {"image_url": "an image", "image": "an image", "input_image": "an image",
               "input_audio": "audio", "audio": "audio", "file": "a file",
               "input_file": "a file", "video_url": "a video"}


def _image_parts(state: RunnerState, messages: Sequence[ChatMessage]) -> list[tuple[str, str]]:
    """The request's image parts (where, url) for a model that sees images. A part the model
    cannot take (an image for a model loaded with no vision projector, audio) is refused, not
    dropped: a reply to the text alone would describe a picture it never saw."""
    from runner.vision import ImageRefused

    sees = state.model.vision is not None
    for i, m in enumerate(messages):
        if not isinstance(m.content, list):
            continue
        for j, part in enumerate(m.content):
            if part.type == "text" or (sees and part.type in IMAGE_PARTS):
                continue
            what = _PART_KINDS.get(part.type, f"a part of type {part.type[:40]!r}")
            why = ("this model takes text and images (image_url parts)" if sees else
                   "this model takes text only: it was loaded without a vision projector (an "
                   "mmproj file), so it cannot see images. Send text only, or load a model with "
                   "image input")
            raise ApiError(400, f"messages[{i}].content[{j}] is {what}, and {why}.",
                           code="unsupported_content")
    try:
        return image_parts(messages) if sees else []
    except ImageRefused as exc:
        raise ApiError(400, str(exc), code="invalid_image") from None


def _template_tool(tool: Tool) -> dict[str, Any]:
    # As llama-server hands tools to templates: each function with a description and parameters,
    # which templates such as gpt-oss's read unguarded (an MCP tool may have neither).
    out = tool.model_dump(exclude_none=True)
    out["function"] = {"description": "", "parameters": {}, **out["function"]}
    return out


def _template_call(call: Any) -> Any:
    # Chat templates write `arguments | tojson`: give them the object, not OpenAI's JSON text.
    if isinstance(call, dict) and isinstance(call.get("function"), dict):
        fn = dict(call["function"])
        if isinstance(fn.get("arguments"), str):
            try:
                fn["arguments"] = json.loads(fn["arguments"])
            except ValueError:
                pass
        return {**call, "function": fn}
    return call


# Makes a request's GBNF grammar; runs on the grammar thread, never on the event loop.
GrammarSource = Callable[[], str]


def _format_grammar(fmt: ResponseFormat | None, limits: Limits) -> GrammarSource | None:
    """A grammar that makes the model's output valid JSON (of the schema, when given)."""
    if fmt is None or fmt.type == "text":
        return None
    from llama_cpp.llama_grammar import JSON_GBNF

    schema = fmt.json_schema.schema_ if fmt.json_schema else None
    if fmt.type == "json_object" or not schema:
        return lambda: str(JSON_GBNF)

    def grammar() -> str:
        with _grammar_errors("invalid_json_schema"):
            return schema_grammar(schema, limits, "response_format.json_schema.schema")

    return grammar


def _raw_grammar(gbnf: str | None, limits: Limits) -> GrammarSource | None:
    if not gbnf:
        return None

    def grammar() -> str:
        with _grammar_errors("invalid_grammar"):
            check_grammar(gbnf, limits, "the request's grammar")
        return gbnf

    return grammar


@contextmanager
def _grammar_errors(invalid_code: str) -> Iterator[None]:
    """A schema's grammar refused: the request's fault, a 400 that says why."""
    try:
        yield
    except GrammarRefused as exc:
        log.info("grammar refused: %s", exc, extra={"event": "grammar_refused"})
        raise ApiError(400, str(exc), code="grammar_too_large") from None
    except GrammarInvalid as exc:
        raise ApiError(400, str(exc), code=invalid_code) from None


async def _grammar_sampler(state: RunnerState, sampling: Any, grammar: GrammarSource) -> Any:
    """The request's sampler chain with its grammar, made on the grammar thread: converting a
    schema and parsing its grammar are neither the event loop's work nor the scheduler's."""
    from runner.engine import GrammarError

    model = state.model

    def build() -> Any:
        sampling.grammar = grammar()
        return model.make_sampler(sampling)

    future = state.grammars().submit(build)
    try:
        return await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        # The client left: a chain finished after this point has no job to own it.
        future.add_done_callback(
            lambda f: model.free_sampler(f.result()) if not f.cancelled() and
            f.exception() is None else None)
        raise
    except GrammarError as exc:
        raise ApiError(400, f"{exc}. The schema may use a regular-expression feature grammars "
                            "lack (such as \\d or \\w in a pattern: write [0-9] or "
                            "[A-Za-z0-9_]).", code="invalid_grammar") from None


def _sampling(body: _Sampling, n_vocab: int) -> Any:
    from runner.engine import Sampling

    s = Sampling()
    for name in ("temperature", "top_p", "top_k", "min_p", "repeat_penalty",
                 "presence_penalty", "frequency_penalty", "seed"):
        value = getattr(body, name)
        if value is not None:
            setattr(s, name, value)
    s.top_k = min(s.top_k, n_vocab)
    # Logits must stay finite: a repeat penalty of 0 divides them by zero and a temperature near 0
    # overflows them, the probabilities become NaN, and a grammar (response_format) then aborts
    # the whole process on the token drawn from them. A penalty of 0 means "off" here, as 1 does;
    # temperatures that small are greedy in all but name.
    if s.repeat_penalty == 0.0:
        s.repeat_penalty = 1.0
    s.repeat_penalty = max(s.repeat_penalty, 0.01)
    if s.temperature < 1e-3:
        s.temperature = 0.0
    if body.logit_bias:
        bias: dict[int, float] = {}
        for tok, value in body.logit_bias.items():
            try:
                t = int(tok)
            except ValueError:
                raise ApiError(400, f"logit_bias keys must be token ids, got {tok!r}.") from None
            if not 0 <= t < n_vocab:
                raise ApiError(400, f"logit_bias token {t} is outside the vocabulary (0..{n_vocab - 1}).")
            if not math.isfinite(value):
                # NaN would pass the clamp below as +100: the token forced, silently.
                raise ApiError(400, f"logit_bias for token {t} is {value}; send a number from "
                                    "-100 to 100.")
            bias[t] = max(-100.0, min(100.0, value))
        s.logit_bias = bias
    return s


class _Logprob(dict[str, Any]):
    """One token's entry in OpenAI's chat logprobs format (a queue item of its own type)."""


def _logprob_sink(model: Any, put: Callable[[Any], None]) -> Callable[..., None]:
    # Runs on the scheduler thread, which owns the model's token-piece cache.
    def entry(tok: int, lp: float) -> dict[str, Any]:
        raw = model.piece(tok)
        return {"token": raw.decode("utf-8", errors="replace"), "logprob": lp, "bytes": list(raw)}

    def sink(tok: int, lp: float, top: list[tuple[int, float]]) -> None:
        item = _Logprob(entry(tok, lp))
        item["top_logprobs"] = [entry(t, v) for t, v in top]
        put(item)

    return sink


def _completion_logprobs(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The legacy /v1/completions shape of the same entries."""
    offsets, at = [], 0
    for e in entries:
        offsets.append(at)
        at += len(e["token"])
    return {"tokens": [e["token"] for e in entries],
            "token_logprobs": [e["logprob"] for e in entries],
            "top_logprobs": [{t["token"]: t["logprob"] for t in e["top_logprobs"]} for e in entries],
            "text_offset": offsets}


def _logprobs_field(entries: list[dict[str, Any]], chat: bool) -> dict[str, Any]:
    return {"content": entries} if chat else _completion_logprobs(entries)


async def _generate(state: RunnerState, request: Request, body: _Sampling, tokens: list[int],
                    max_tokens: int | None, chat: bool, grammar: GrammarSource | None = None,
                    logprobs: int | None = None, tools: Any = None, media: Any = None
                    ) -> Response:
    from runner.engine import ContextLengthExceeded, EngineError, Job

    stops = [body.stop] if isinstance(body.stop, str) else list(body.stop or [])
    stops = [s for s in stops if s][:8]
    q: asyncio.Queue[Any] = asyncio.Queue()
    put = q.put_nowait
    add = _outbox(state).add

    def on_text(text: str) -> None:
        add(put, text)

    def on_done(reason: str, usage: Any) -> None:
        add(put, (reason, usage))

    def on_error(exc: Exception) -> None:
        add(put, exc)

    sampling = _sampling(body, state.model.n_vocab)
    if body.seed is None:
        sampling.seed = state.settings.seed  # --seed is the default for requests without one
    sampler = await _grammar_sampler(state, sampling, grammar) if grammar is not None else None
    job = Job(prompt=tokens, on_text=on_text, on_done=on_done, on_error=on_error,
              max_tokens=max_tokens, sampling=sampling,
              stop=tuple(stops), ignore_eos=body.ignore_eos and grammar is None,
              cache_prompt=body.cache_prompt, logprobs=logprobs,
              warm_next_turn=chat and body.cache_prompt, sampler=sampler, media=media)
    if logprobs is not None:
        def put_logprob(item: Any) -> None:
            add(put, item)

        job.on_logprob = _logprob_sink(state.model, put_logprob)
    try:
        state.scheduler.submit(job)
    except ContextLengthExceeded as exc:
        state.model.free_sampler(sampler)
        raise ApiError(400, str(exc), code="context_length_exceeded") from None
    except EngineError as exc:
        state.model.free_sampler(sampler)
        raise ApiError(400, str(exc)) from None

    rid = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24]
    created = int(time.time())
    model = state.alias
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        return StreamingResponse(
            _sse(q.get, job, rid, created, model, chat, include_usage, tools),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    parts: list[str] = []
    entries: list[dict[str, Any]] = []
    watch = asyncio.ensure_future(_cancel_on_disconnect(request, job))
    try:
        while True:
            item = await q.get()
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, _Logprob):
                entries.append(item)
            elif isinstance(item, Exception):
                raise ApiError(500, str(item), "server_error", "generation_failed")
            else:
                reason, usage = item
                break
    finally:
        watch.cancel()
        job.cancel()  # no-op when done
    text = "".join(parts)
    calls: list[Any] = []
    if tools is not None:
        text, calls = tools.whole(text)
    choice: dict[str, Any] = {"index": 0,
                              "finish_reason": "tool_calls" if calls else _finish(reason),
                              "logprobs": _logprobs_field(entries, chat) if logprobs is not None else None}
    if chat:
        choice["message"] = {"role": "assistant", "content": text or (None if calls else "")}
        if calls:
            choice["message"]["tool_calls"] = [c.to_openai() for c in calls]
    else:
        choice["text"] = text
    return JSONResponse({
        "id": rid, "object": "chat.completion" if chat else "text_completion",
        "created": created, "model": model, "choices": [choice],
        "usage": _usage(usage),
    })


class Outbox:
    """The scheduler's events for the event loop, handed over once per step, not per token.

    One ``call_soon_threadsafe`` (one wake-up of the loop, one write to its self-pipe) carries
    every stream's piece of the step. And where llama.cpp's threads take every core, the
    scheduler waits (at most ``WAIT_S``) until the loop has written them before the next
    step: llama.cpp waits for its slowest thread at every operation, so sending while it
    decodes would preempt one of its threads and stall them all; sending between steps
    costs only the sending.
    """

    WAIT_S = 0.05

    def __init__(self, loop: asyncio.AbstractEventLoop, busy_cores: Callable[[], bool]) -> None:
        self.loop = loop
        self.busy_cores = busy_cores
        self.items: list[tuple[Callable[[Any], None], Any]] = []
        self._written = threading.Event()

    def add(self, put: Callable[[Any], None], item: Any) -> None:
        """On the scheduler thread: ``put(item)`` on the loop after this step."""
        self.items.append((put, item))

    def flush(self) -> None:
        """On the scheduler thread, after each step."""
        if not self.items:
            return
        items, self.items = self.items, []
        wait = self.busy_cores()
        if wait:
            self._written.clear()
        try:
            self.loop.call_soon_threadsafe(self._deliver, items, wait)
        except RuntimeError:  # the loop is closed: the runner is exiting
            return
        if wait:
            self._written.wait(self.WAIT_S)

    def _deliver(self, items: list[tuple[Callable[[Any], None], Any]], signal: bool) -> None:
        for put, item in items:
            put(item)
        if signal:
            # After the streams' tasks that these puts woke: they write, then wait again.
            self.loop.call_soon(self._written.set)


def _outbox(state: RunnerState) -> Outbox:
    box: Outbox | None = getattr(state, "outbox", None)
    if box is None:
        sched = state.scheduler
        cores = _usable_cores()
        # With every layer on a GPU, llama.cpp's CPU threads idle through each step: waiting
        # for the loop's writes then only delays the next step (measured on an H100: 4
        # streams at 0.92x llama-server with the wait, docs/gpu.md).
        gpu_only = _gpu_only(state)
        box = Outbox(asyncio.get_running_loop(),
                     lambda: not gpu_only and sched.threads_in_use() >= cores)
        state.outbox = box
        sched.after_step = box.flush
    return box


def _gpu_only(state: RunnerState) -> bool:
    """Whether the load left no layer's work to the CPU: a GPU holds weights, the CPU holds
    no KV cache (a layer's KV lives on its device) and no experts were kept in RAM."""
    gpu_weights = sum(d.get("weights", 0) for d in state.memory if d.get("device") != "CPU")
    cpu_kv = sum(d.get("kv", 0) for d in state.memory if d.get("device") == "CPU")
    return gpu_weights > 0 and cpu_kv == 0 and state.settings.n_cpu_moe == 0


def _usable_cores() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS, Windows
        return os.cpu_count() or 1


async def _cancel_on_disconnect(request: Request, job: Any) -> None:
    """A client that gives up on a non-streaming reply frees its slot at once.

    The body has been read, so the next ASGI message can only be the disconnect; the server
    delivers it as soon as the socket closes, while the handler is still waiting for tokens.
    (Streaming responses get the same from Starlette, which cancels the SSE generator.)
    """
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            job.cancel()
            return


def _finish(reason: str) -> str:
    return "length" if reason == "length" else "stop"


def _usage(u: Any) -> dict[str, Any]:
    return {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
            "total_tokens": u.prompt_tokens + u.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cached_tokens}}


async def _sse(get: Callable[[], Awaitable[Any]], job: Any, rid: str, created: int, model: str,
               chat: bool, include_usage: bool, tools: Any = None) -> AsyncIterator[bytes]:
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
                if tools is not None and not (item := tools.feed(item)):
                    continue
                yield b"data: " + pre + dumps(item).encode() + post
                continue
            if isinstance(item, _Logprob):
                # Its own chunk, ahead of the token's text (which a stop string may hold back).
                lp = dumps(_logprobs_field([item], chat))
                empty = '"delta": {"content": ""}' if chat else '"text": ""'
                yield (f'data: {head}, "choices": [{{"index": 0, {empty}, "logprobs": {lp}, '
                       f'"finish_reason": null}}]}}\n\n').encode()
                continue
            if isinstance(item, Exception):
                err = _error_body(str(item), "server_error", "generation_failed")
                yield b"data: " + json.dumps(err).encode() + b"\n\n"
                break
            reason, usage = item
            finish = _finish(reason)
            if tools is not None:
                rest, calls = tools.finish()
                if rest:
                    yield b"data: " + pre + dumps(rest).encode() + post
                if calls:
                    finish = "tool_calls"
                    delta_calls = dumps({"tool_calls": [c.to_openai(i) for i, c in enumerate(calls)]})
                    yield (f'data: {head}, "choices": [{{"index": 0, "delta": {delta_calls}, '
                           f'"finish_reason": null}}]}}\n\n').encode()
            delta = '"delta": {}, ' if chat else '"text": "", '
            yield (f'data: {head}, "choices": [{{"index": 0, {delta}"finish_reason": '
                   f'"{finish}"}}]}}\n\n').encode()
            if include_usage:
                yield (f'data: {head}, "choices": [], "usage": {dumps(_usage(usage))}}}\n\n').encode()
            break
        yield b"data: [DONE]\n\n"
    finally:
        # Reached on normal end and when the client disconnects (the task is cancelled):
        # the scheduler sees the flag before its next token and frees the slot.
        job.cancel()


def turn_boundary(formatter: Any, model: Any) -> list[int]:
    """The tokens the chat template puts between an assistant reply and the next user message's
    text, whatever that text is; [] when the template does not say (or fails to render).

    Two renderings that differ only in the last user message agree up to that message: what
    they share after the reply is the boundary.
    """
    def render(last: str) -> str:
        messages = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": _REPLY},
                    {"role": "user", "content": last}]
        return str(formatter(messages=messages, tools=None, tool_choice=None).prompt)

    try:
        one, two = render("1"), render("2")
    except Exception:
        log.info("no turn boundary: the chat template did not render a plain conversation")
        return []
    same = next((i for i, (a, b) in enumerate(zip(one, two, strict=False)) if a != b),
                min(len(one), len(two)))
    shared = one[:same]
    at = shared.find(_REPLY)
    if at < 0:
        return []
    text = shared[at + len(_REPLY):]
    return model.tokenize(text, add_bos=False, special=True) if text else []


_REPLY = "Hearth reply"


def _file_name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _basename(path: str) -> str:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name[:-5] if name.lower().endswith(".gguf") else name
