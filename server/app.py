"""The model server's HTTP app: OpenAI's API (and the others, server/routes_more.py) for every
model of the library, behind the runner's guards (Host check, key, body limit:
runner/guards.py), so every endpoint here inherits them.

OpenAI requests are forwarded to the named model's runner untouched (server/proxy.py). A
request's ``keep_alive`` (Ollama's name, seconds or a duration such as "10m"; 0 unloads after
it, a negative value keeps it loaded) or ``ttl`` (LM Studio's, seconds) sets how long that
model stays loaded once idle, until another request says otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from types import ModuleType
from typing import Any, TypeVar

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from runner.wire.shapes import error_body
from server import api_anthropic, api_ollama
from server.api_ollama import keep_alive_seconds
from server.manager import ContextTooLong, Lease, Manager, ModelError
from server.planning import context_needed
from server.proxy import UpstreamError, call, open_stream, raw_bytes
from server.request_error import RequestError

log = logging.getLogger(__name__)

# Nesting of a request body's JSON. A JSON schema may nest 64 levels (the runner's
# --max-schema-depth) a few levels into a body; Python's parser and encoder give up near 1000
# levels less the stack in use, so a body that parsed here could still fail to encode on its way
# to the runner (a 500), or fail to parse at all (another 500).
MAX_BODY_DEPTH = 256

# An absolute path in an error message (a library folder names the person's account): only its
# last part is shown. Not after a word, ':' or '/', so URLs are left alone.
_PATH = re.compile(r"(?<![\w:/.~])(?:/[^/\s'\"]+)+/([^/\s'\"]+)|"
                   r"\b[A-Za-z]:\\(?:[^\\\s'\"]+\\)+([^\\\s'\"]+)")

Handler = Callable[[Request], Awaitable[Response]]
T = TypeVar("T")


class BadRequest(Exception):
    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def openai_error(status: int, message: str, code: str | None, kind: str = "invalid_request_error",
                 retry_after: int | None = None) -> JSONResponse:
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    return JSONResponse(error_body(message, kind, code), status, headers=headers)


def model_error(exc: ModelError) -> JSONResponse:
    return openai_error(exc.status, model_message(exc), exc.code, exc.kind, exc.retry_after)


def model_message(exc: ModelError) -> str:
    """What a client is told of ``exc``. A name it sent comes back as sent; a failure's own
    words (an OSError's, a runner's last log line) may name the model's folder: cut to names."""
    return str(exc) if exc.code == "model_not_found" else private(str(exc))


def private(message: str) -> str:
    """``message`` with every absolute path cut to its last part (a file's name): errors go to
    other programs, to other computers too when shared, and folders name the person's account."""
    return _PATH.sub(lambda m: m.group(1) or m.group(2), message)


async def lease_model(manager: Manager, name: str, keep_alive: float | None,
                      embedding: bool = False) -> Lease:
    """``manager.lease``, raising only ModelError. Anything else is a failure the manager did
    not foresee (a damaged model file's error of another kind): logged whole here, and answered
    as a failed load in the API's own shape instead of a bare "Internal Server Error"."""
    try:
        return await manager.lease(name, keep_alive, embedding=embedding)
    except ModelError:
        raise
    except Exception as exc:
        log.exception("loading '%s' failed", name)
        raise ModelError(f"The model '{name}' could not be loaded: {exc}") from exc


async def json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        body = json.loads(raw, parse_constant=_not_json, parse_float=_finite)
    except RecursionError:
        raise BadRequest(f"The body nests JSON more than {MAX_BODY_DEPTH} levels deep.") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"The body is not JSON ({_why(exc)}): send a JSON object.") from None
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object.")
    # Only a body with that many brackets can nest that deep: most are never walked.
    if raw.count(b"[") + raw.count(b"{") > MAX_BODY_DEPTH and _deeper_than(body, MAX_BODY_DEPTH):
        raise BadRequest(f"The body nests JSON more than {MAX_BODY_DEPTH} levels deep.")
    return body


def _not_json(constant: str) -> Any:
    # Python's parser takes NaN and Infinity; JSON has neither, and the encoder that forwards the
    # body to the runner refuses them (a 500).
    raise ValueError(f"{constant} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400: Infinity by another name
        raise ValueError(f"{text[:40]} is too large a number")
    return value


def _why(exc: Exception) -> str:
    return "not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc)[:200]


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and objects more than ``limit`` levels (level by level:
    no recursion)."""
    level = [value]
    for _ in range(limit):
        inner: list[Any] = []
        for node in level:
            children = node.values() if isinstance(node, dict) else node
            inner.extend(c for c in children if isinstance(c, dict | list))
        if not inner:
            return False
        level = inner
    return True


def model_name(body: dict[str, Any]) -> str:
    name = body.get("model")
    if not isinstance(name, str) or not name.strip():
        raise BadRequest("Name the model: 'model' must be one of the ids GET /v1/models lists.",
                         "model")
    return name  # as sent, as the other APIs take it: "alpha\n" is no model


def keep_alive(body: dict[str, Any]) -> float | None:
    """The request's keep_alive / ttl in seconds, taken out of ``body`` (None: not given)."""
    ttl = body.pop("ttl", None)
    value = body.pop("keep_alive", None)
    try:
        if value is not None:
            return keep_alive_seconds(value)
        if ttl is not None:
            return keep_alive_seconds(ttl)
    except RequestError as exc:
        raise BadRequest(str(exc), "keep_alive") from None
    return None


Streamer = Callable[[httpx2.Response, Lease], AsyncIterator[bytes]]
# A refusal in the API's shape: (status, message, the runner's body or None, the server's own
# refusal or None).
ErrorMaker = Callable[[int, str, "dict[str, Any] | None", "ModelError | None"], Response]


def context_outgrown(exc: UpstreamError) -> int | None:
    """The prompt's length when the runner refused it as longer than its context, else None."""
    err = exc.body.get("error")
    if exc.status == 400 and isinstance(err, dict) and \
            err.get("code") == "context_length_exceeded":
        return context_needed(str(err.get("message", "")))
    return None


def past_training(lease: Lease, tokens: int) -> bool:
    """Whether a ``tokens``-long prompt is longer than the model's trained context: no context
    is grown past it. The model reads no further well, and such a prompt (a megabyte of tool
    schema in a request is a million tokens) would load a context as large and keep the model's
    runner reading it for hours, every other request to the model waiting."""
    trained = lease.slot.entry.context
    return trained is not None and trained > 0 and tokens > trained


def reply_room(body: dict[str, Any]) -> int:
    """Tokens to leave for the reply when a context grows: what the request asks for, else 1024."""
    for name in ("max_completion_tokens", "max_tokens"):
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return min(value, 32768)
    return 1024


async def answer(request: Request, manager: Manager, lease: Lease, path: str,
                 body: dict[str, Any], stream: Streamer | None, media: str,
                 reply: Callable[[dict[str, Any]], dict[str, Any]],
                 error: ErrorMaker) -> Response:
    """Forward ``body`` to the lease's runner: its stream through ``stream``, or its JSON
    through ``reply``. A prompt longer than the loaded context loads the model again with a
    larger one (Manager.lease_larger, at most twice); other refusals go back through
    ``error``."""
    http = request.app.state.http
    for attempt in (1, 2, 3):  # a context may grow twice: a first count can be a lower bound
        try:
            if stream is not None:
                response = await open_stream(http, lease, path, body)
                return StreamingResponse(stream(response, lease), media_type=media,
                                         headers={"Cache-Control": "no-cache"})
            data = await unless_gone(request, call(http, lease, path, body))
            lease.release()
            if data is None:  # nobody to answer: the runner's request was ended with it
                log.info("a client left before its reply from %s: its request was ended",
                         lease.slot.entry.id)
                return Response(status_code=499)
            return JSONResponse(reply(data))
        except UpstreamError as exc:
            tokens = context_outgrown(exc) if attempt < 3 else None
            if tokens is None:
                lease.release()
                return error(exc.status, str(exc), exc.body, None)
            if past_training(lease, tokens):
                lease.release()
                too_long = ContextTooLong(
                    f"The prompt is {tokens} tokens long: it does not fit the context "
                    f"'{lease.slot.entry.id}' was trained for ({lease.slot.entry.context} "
                    "tokens). Shorten the conversation.")
                return error(too_long.status, str(too_long), None, too_long)
        try:
            lease = await manager.lease_larger(lease, tokens, reply_room(body))
        except ModelError as exc:
            return error(exc.status, str(exc), None, exc)
    raise AssertionError("unreachable: the third attempt returns")


async def unless_gone(request: Request, work: Awaitable[T]) -> T | None:
    """``work``'s result, or None when the client goes away first: ``work`` is then cancelled,
    which closes its connection to the runner, and the runner stops generating (as a streamed
    reply's does). Without this a client that gave up would hold the model busy, unevictable,
    until its whole reply was made."""
    task = asyncio.ensure_future(work)

    async def gone() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    watcher = asyncio.ensure_future(gone())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # the server is stopping: the runner's request ends too
        task.cancel()
        raise
    finally:
        watcher.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return None


def forwarder(manager: Manager, path: str, embedding: bool = False) -> Handler:
    """An OpenAI endpoint: the body goes to the named model's runner as it is."""

    def error(status: int, message: str, upstream: dict[str, Any] | None,
              refused: ModelError | None) -> Response:
        if refused is not None:
            return model_error(refused)
        return JSONResponse(upstream, status) if upstream is not None else \
            openai_error(status, message, None)

    async def forward(request: Request) -> Response:
        try:
            body = await json_body(request)
            name = model_name(body)
            alive = keep_alive(body)
        except BadRequest as exc:
            return openai_error(400, str(exc), "invalid_request", "invalid_request_error")
        try:
            lease = await lease_model(manager, name, alive, embedding=embedding)
        except ModelError as exc:
            return model_error(exc)
        return await answer(request, manager, lease, path, body,
                            raw_bytes if body.get("stream") is True else None,
                            "text/event-stream", lambda data: data, error)

    return forward


def models_list(manager: Manager) -> Handler:
    async def models(request: Request) -> Response:
        import asyncio

        entries = await asyncio.to_thread(request.app.state.catalog.entries)
        loaded = {s.entry.id for s in manager.models() if s.resident}
        # Names, sizes and where they come from; never a path (it names the person's account).
        return JSONResponse({"object": "list", "data": [{
            "id": e.id, "object": "model", "created": int(e.modified), "owned_by": "hearth",
            "meta": {"loaded": e.id in loaded, "size": e.size, "source": e.source},
        } for e in sorted(entries, key=lambda e: e.id.lower())]})

    return models


def resident_list(manager: Manager) -> Handler:
    """What is loaded now, for the window and for people: memory, idle time, requests."""

    async def resident(request: Request) -> Response:
        now = time.monotonic()
        out = []
        for s in manager.models():
            out.append({
                "id": s.name,
                "model": s.entry.id,
                "state": "loaded" if s.resident else ("unloading" if s.stopping else "loading"),
                "memory": s.held,  # measured by its runner once loaded, else predicted
                "predicted": s.planned.need if s.planned else {},
                "requests": s.busy,
                "idle_s": round(now - s.last_used, 1) if s.resident and not s.busy else 0.0,
                "unload_after_s": None if math.isinf(s.idle_s) else s.idle_s,
                "pinned": math.isinf(s.idle_s),
                "window": s.adopted,  # the Hearth window's model: unloaded there
            })
        return JSONResponse({"models": out})

    return resident


def unloader(manager: Manager) -> Handler:
    async def unload(request: Request) -> Response:
        try:
            name = model_name(await json_body(request))
        except BadRequest as exc:
            return openai_error(400, str(exc), "invalid_request")
        if not await manager.unload(name):
            return openai_error(404, f"'{name}' is not loaded.", "model_not_loaded")
        return JSONResponse({"unloaded": name})

    return unload


def keeper(manager: Manager) -> Handler:
    """``{"model": id, "pinned": true|false}``: pin a loaded model (never unloaded for being
    idle) or give it its idle time-out again (the window's Pin)."""

    async def keep(request: Request) -> Response:
        try:
            body = await json_body(request)
            name = model_name(body)
        except BadRequest as exc:
            return openai_error(400, str(exc), "invalid_request")
        pinned = body.get("pinned")
        if not isinstance(pinned, bool):
            return openai_error(400, "'pinned' must be true or false.", "invalid_request")
        if not manager.keep(name, math.inf if pinned else None):
            return openai_error(404, f"'{name}' is not loaded.", "model_not_loaded")
        return JSONResponse({"model": name, "pinned": pinned})

    return keep


def routes(manager: Manager) -> list[Route]:
    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return [
        Route("/health", health, methods=["GET"]),
        Route("/v1/models", models_list(manager), methods=["GET"]),
        Route("/v1/chat/completions", forwarder(manager, "/v1/chat/completions"),
              methods=["POST"]),
        Route("/v1/completions", forwarder(manager, "/v1/completions"), methods=["POST"]),
        Route("/v1/embeddings", forwarder(manager, "/v1/embeddings", embedding=True),
              methods=["POST"]),
        Route("/hearth/models", resident_list(manager), methods=["GET"]),
        Route("/hearth/unload", unloader(manager), methods=["POST"]),
        Route("/hearth/keep", keeper(manager), methods=["POST"]),
    ]


def create_app(manager: Manager, extra: list[Route] | None = None) -> Starlette:
    app = Starlette(routes=[*routes(manager), *(extra or [])])

    async def not_found(request: Request, exc: Exception) -> Response:
        message = f"No endpoint {request.method} {request.url.path} here."
        api = _api_of(request.url.path)
        if api is None:
            return openai_error(404, message, "not_found")
        return JSONResponse(api.error_body(404, message, "not_found"), 404)

    app.add_exception_handler(404, not_found)
    app.add_exception_handler(405, not_found)
    return app


def error_shape(scope: MutableMapping[str, Any], status: int, message: str, code: str,
                type_: str) -> dict[str, Any]:
    """A refusal of the runner's guards (key, Host, body size and time) in the shape the
    request's API reads: a Claude or Ollama client shown "wrong key" in OpenAI's shape would
    report an unreadable error instead."""
    api = _api_of(str(scope.get("path", "")))
    return error_body(message, type_, code) if api is None else \
        api.error_body(status, message, code)


def _api_of(path: str) -> ModuleType | None:
    """The API whose error shape a path's clients read (None: OpenAI's), so that a client of
    Ollama's or Anthropic's API asking for an endpoint this server lacks still gets an error it
    parses."""
    if path == "/" or path.startswith("/api/"):
        return api_ollama
    if path.startswith("/v1/messages"):
        return api_anthropic
    return None
