"""The other APIs on the model server: Anthropic's Messages, OpenAI's Responses, Ollama's.

Each is translated to Chat Completions (server/api_*.py, pure) and forwarded to the named
model's runner like an OpenAI request; replies and streams are translated back. Errors come in
each API's own shape, so its official client raises what it would raise against the real thing.
Also here: ``/hearth/adopt`` (server/adopt.py), the window handing over its own model.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from server import api_anthropic, api_ollama, api_responses
from server.adopt import adopter
from server.app import BadRequest, Handler, answer, json_body, keep_alive, lease_model, model_message
from server.manager import Lease, Manager, ModelError
from server.proxy import Translator, translated
from server.request_error import RequestError

SSE = "text/event-stream"
NDJSON = "application/x-ndjson"


def _error(api: ModuleType, status: int, message: str, code: str | None = None,
           retry_after: int | None = None) -> JSONResponse:
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    return JSONResponse(api.error_body(status, message, code), status, headers=headers)


class _Refused(Exception):
    def __init__(self, response: Response) -> None:
        self.response = response


async def _translated_request(request: Request, api: ModuleType,
                              to_chat: Callable[[dict[str, Any]], Any]) -> tuple[Any, float | None]:
    """The request's body translated, and its keep_alive; _Refused with the API's error."""
    try:
        body = await json_body(request)
        alive = keep_alive(body)
        return to_chat(body), alive
    except (BadRequest, RequestError) as exc:
        raise _Refused(_error(api, 400, str(exc), "invalid_request")) from None


async def _lease(manager: Manager, api: ModuleType, name: str, alive: float | None,
                 embedding: bool = False) -> Lease:
    try:
        return await lease_model(manager, name, alive, embedding=embedding)
    except ModelError as exc:
        raise _Refused(_error(api, exc.status, model_message(exc), exc.code,
                              exc.retry_after)) from None


async def _answer(request: Request, api: ModuleType, manager: Manager, lease: Lease, path: str,
                  chat: dict[str, Any], stream: Translator | None, media: str,
                  reply: Callable[[dict[str, Any]], dict[str, Any]]) -> Response:
    """Forward ``chat`` to the runner; the reply (or the stream) through the API's translator,
    refusals in the API's shape."""

    def error(status: int, message: str, _upstream: dict[str, Any] | None,
              refused: ModelError | None) -> Response:
        if refused is not None:
            return _error(api, refused.status, model_message(refused), refused.code,
                          refused.retry_after)
        return _error(api, status, message)

    streamer = None if stream is None else \
        (lambda response, held: translated(response, held, stream))
    return await answer(request, manager, lease, path, chat, streamer, media, reply, error)


def _sse_api(manager: Manager, api: ModuleType) -> Handler:
    """Anthropic Messages or OpenAI Responses: one chat request, SSE or one JSON reply."""

    async def handle(request: Request) -> Response:
        try:
            chat, alive = await _translated_request(request, api, api.chat_request)
            name = chat["model"]
            lease = await _lease(manager, api, name, alive)
        except _Refused as refused:
            return refused.response
        stream = api.StreamTranslator(name) if chat.get("stream") else None
        return await _answer(request, api, manager, lease, "/v1/chat/completions", chat, stream,
                             SSE,
                             lambda data: api.reply(data, name))

    return handle


# ---- Ollama ------------------------------------------------------------------------------------


def _ollama_models(manager: Manager, entries: list[Any]) -> list[dict[str, Any]]:
    """The library as api_ollama's model dicts (what /api/tags, /api/ps and /api/show read)."""
    now_mono, now = time.monotonic(), time.time()
    slots = {s.entry.id: s for s in manager.models() if s.resident and not s.embedding}
    out = []
    for e in entries:
        slot = slots.get(e.id)
        expires = None
        if slot is not None and not math.isinf(slot.idle_s):
            expires = now + max(0.0, slot.idle_s - (now_mono - slot.last_used))
        size_vram = sum(v for k, v in slot.planned.need.items() if k != "cpu") \
            if slot is not None and slot.planned else 0
        out.append({
            "name": e.id, "size": e.size, "modified": e.modified, "digest": e.sha256,
            "family": e.architecture, "quantization": e.quantization, "context": e.context,
            "parameter_size": _parameter_size(e.parameters), "loaded": slot is not None,
            "expires_at": expires, "size_vram": size_vram,
        })
    return out


def _parameter_size(parameters: int | None) -> str | None:
    if not parameters:
        return None
    if parameters >= 10**9:
        return f"{parameters / 10**9:.1f}B"
    return f"{parameters / 10**6:.0f}M"


def _ollama_chat(manager: Manager, generate: bool) -> Handler:
    api = api_ollama

    async def handle(request: Request) -> Response:
        started = time.monotonic_ns()
        try:
            body = await json_body(request)
            if api.is_load_only(body):
                return await _load_only(manager, body, chat=not generate)
            alive = keep_alive(body)
            if generate:
                kind, chat = api.generate_request(body)
            else:
                kind, chat = "chat", api.chat_request(body)
        except (BadRequest, RequestError) as exc:
            return _error(api, 400, str(exc))
        name = chat["model"]
        try:
            lease = await _lease(manager, api, name, alive)
        except _Refused as refused:
            return refused.response
        load_ns = time.monotonic_ns() - started
        path = "/v1/completions" if kind == "completions" else "/v1/chat/completions"
        translator_type = api.GenerateStreamTranslator if generate else api.StreamTranslator
        stream = translator_type(name, load_ns=load_ns) if chat.get("stream") else None
        done = api.generate_reply if generate else api.reply
        return await _answer(request, api, manager, lease, path, chat, stream, NDJSON,
                             lambda data: done(data, name, load_ns=load_ns,
                                               elapsed_ns=time.monotonic_ns() - started))

    return handle


async def _load_only(manager: Manager, body: dict[str, Any], chat: bool) -> Response:
    """Ollama's "load this model" (no prompt, no messages), or with keep_alive 0 "unload it"."""
    api = api_ollama
    raw = body.get("model")
    if not isinstance(raw, str) or not raw:
        raise BadRequest("'model' is required: name the model to load, as /api/tags lists it.",
                         "model")
    name = api.strip_latest(raw)
    alive = keep_alive(body)
    if alive == 0:
        entry = await asyncio.to_thread(manager.catalog.resolve, name)
        if entry is not None:
            await manager.unload(entry.id)
        return JSONResponse(api.load_reply(name, chat=chat, unload=True))
    try:
        lease = await _lease(manager, api, name, alive)
    except _Refused as refused:
        return refused.response
    lease.release()
    return JSONResponse(api.load_reply(name, chat=chat))


def _ollama_embed(manager: Manager) -> Handler:
    api = api_ollama

    async def handle(request: Request) -> Response:
        started = time.monotonic_ns()
        try:
            body, alive = await _translated_request(request, api, api.embed_request)
            name = body["model"]
            lease = await _lease(manager, api, name, alive, embedding=True)
        except _Refused as refused:
            return refused.response
        load_ns = time.monotonic_ns() - started
        return await _answer(request, api, manager, lease, "/v1/embeddings", body, None, NDJSON,
                             lambda data: api.embed_reply(
                                 data, name, load_ns=load_ns,
                                 elapsed_ns=time.monotonic_ns() - started))

    return handle


def _ollama_listing(manager: Manager, loaded_only: bool) -> Handler:
    async def handle(request: Request) -> Response:
        entries = await asyncio.to_thread(manager.catalog.entries)
        models = _ollama_models(manager, entries)
        return JSONResponse(api_ollama.ps(models) if loaded_only else api_ollama.tags(models))

    return handle


def _ollama_show(manager: Manager) -> Handler:
    async def handle(request: Request) -> Response:
        try:
            body = await json_body(request)
        except BadRequest as exc:
            return _error(api_ollama, 400, str(exc))
        name = body.get("model") or body.get("name")
        if not isinstance(name, str) or not name:
            return _error(api_ollama, 400, "Name the model: 'model' must be a model's name.")
        entry = await asyncio.to_thread(manager.catalog.resolve, api_ollama.strip_latest(name))
        if entry is None:
            return _error(api_ollama, 404, f"model '{name}' not found")
        template = await asyncio.to_thread(_chat_template, str(entry.path))
        (model,) = _ollama_models(manager, [entry])
        model["vision"] = await asyncio.to_thread(_sees, str(entry.path))
        return JSONResponse(api_ollama.show(model, template))

    return handle


def _sees(path: str) -> bool:
    """A vision projector loads with the model: one chosen for it, or one beside it."""
    from app.library.projectors import ProjectorChoices

    return ProjectorChoices().for_model(path) is not None


def _chat_template(path: str) -> str | None:
    from app.gguf import GGUFError, read_model

    try:
        return read_model(path).chat_template or None
    except (GGUFError, OSError):
        return None


def more_routes(manager: Manager) -> list[Route]:
    async def ollama_root(request: Request) -> Response:
        return PlainTextResponse("Ollama is running")  # what Ollama's clients look for

    async def ollama_version(request: Request) -> Response:
        return JSONResponse(api_ollama.version())

    return [
        Route("/v1/messages", _sse_api(manager, api_anthropic), methods=["POST"]),
        Route("/v1/responses", _sse_api(manager, api_responses), methods=["POST"]),
        Route("/", ollama_root, methods=["GET", "HEAD"]),
        Route("/api/version", ollama_version, methods=["GET"]),
        Route("/api/tags", _ollama_listing(manager, loaded_only=False), methods=["GET"]),
        Route("/api/ps", _ollama_listing(manager, loaded_only=True), methods=["GET"]),
        Route("/api/show", _ollama_show(manager), methods=["POST"]),
        Route("/api/chat", _ollama_chat(manager, generate=False), methods=["POST"]),
        Route("/api/generate", _ollama_chat(manager, generate=True), methods=["POST"]),
        Route("/api/embed", _ollama_embed(manager), methods=["POST"]),
        Route("/hearth/adopt", adopter(manager), methods=["POST"]),
    ]
