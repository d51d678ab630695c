"""The model server's HTTP app: OpenAI's API (and the others, server/routes_more.py) for every
model of the library, behind the runner's guards (Host check, key, body limit:
runner/guards.py), so every endpoint here inherits them.

OpenAI requests are forwarded to the named model's runner untouched (server/proxy.py). A
request's ``keep_alive`` (Ollama's name, seconds or a duration such as "10m"; 0 unloads after
it, a negative value keeps it loaded) or ``ttl`` (LM Studio's, seconds) sets how long that
model stays loaded once idle, until another request says otherwise.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from runner.wire.shapes import error_body
from server.api_ollama import keep_alive_seconds
from server.manager import Lease, Manager, ModelError
from server.planning import context_needed
from server.proxy import UpstreamError, call, open_stream, raw_bytes
from server.request_error import RequestError

log = logging.getLogger(__name__)

# The fields this server reads and the runner does not take.
_OURS = ("keep_alive", "ttl")

Handler = Callable[[Request], Awaitable[Response]]


class BadRequest(Exception):
    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def openai_error(status: int, message: str, code: str | None, kind: str = "invalid_request_error",
                 retry_after: int | None = None) -> JSONResponse:
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    return JSONResponse(error_body(message, kind, code), status, headers=headers)


def model_error(exc: ModelError) -> JSONResponse:
    return openai_error(exc.status, str(exc), exc.code, exc.kind, exc.retry_after)


async def json_body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body())
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("The body is not JSON: send a JSON object.") from None
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object.")
    return body


def model_name(body: dict[str, Any]) -> str:
    name = body.get("model")
    if not isinstance(name, str) or not name.strip():
        raise BadRequest("Name the model: 'model' must be one of the ids GET /v1/models lists.",
                         "model")
    return name.strip()


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
            data = await call(http, lease, path, body)
            lease.release()
            return JSONResponse(reply(data))
        except UpstreamError as exc:
            tokens = context_outgrown(exc) if attempt < 3 else None
            if tokens is None:
                lease.release()
                return error(exc.status, str(exc), exc.body, None)
        try:
            lease = await manager.lease_larger(lease, tokens, reply_room(body))
        except ModelError as exc:
            return error(exc.status, str(exc), None, exc)
    raise AssertionError("unreachable: the third attempt returns")


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
        for field in _OURS:
            body.pop(field, None)
        try:
            lease = await manager.lease(name, alive, embedding=embedding)
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
                "memory": s.planned.need if s.planned else {},
                "requests": s.busy,
                "idle_s": round(now - s.last_used, 1) if s.resident and not s.busy else 0.0,
                "unload_after_s": None if math.isinf(s.idle_s) else s.idle_s,
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
    ]


def create_app(manager: Manager, extra: list[Route] | None = None) -> Starlette:
    app = Starlette(routes=[*routes(manager), *(extra or [])])

    async def not_found(request: Request, exc: Exception) -> Response:
        return openai_error(404, f"No endpoint {request.method} {request.url.path} here.",
                            "not_found")

    app.add_exception_handler(404, not_found)
    app.add_exception_handler(405, not_found)
    return app
