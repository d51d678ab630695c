"""``POST /hearth/adopt``: the Hearth window's own loaded model, served here under its id.

The window loads with its own pipeline (its plan, the offload panel's pins, the fallback ladder,
every number explained) and its own runner. When a server runs, the window hands that runner
over: requests naming the model go to it, no second copy is loaded, and the one address and key
serve the window's model too. The window's runner stays the window's: never stopped, evicted or
reloaded here, and forgotten when it stops answering.

Only a program on this computer may hand a runner over, and only one on this computer's loopback
that answers ``/health`` to the key it came with: otherwise a key holder elsewhere could make
this server a relay to any address.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.remote.share import is_loopback
from server.app import BadRequest, Handler, json_body, model_error, openai_error
from server.catalog import Catalog, Entry
from server.manager import Manager, ModelError

MAX_KEY_CHARS = 512


def adopter(manager: Manager) -> Handler:
    async def adopt(request: Request) -> Response:
        if not is_loopback(request.client.host if request.client else ""):
            return openai_error(403, "Only a program on this computer may hand a model over.",
                                "forbidden", "permission_error")
        try:
            path, url, key = _fields(await json_body(request))
        except BadRequest as exc:
            return openai_error(400, str(exc), "invalid_request")
        entry = await asyncio.to_thread(_entry_at, manager.catalog, path)
        if entry is None:
            return openai_error(404, "That file is not in the library's folders: only models "
                                "of the library are served here.", "model_not_found")
        try:
            await manager.adopt(entry, url, key)
        except ModelError as exc:
            return model_error(exc)
        return JSONResponse({"model": entry.id})

    return adopt


def _fields(body: dict[str, Any]) -> tuple[str, str, str]:
    path, url, key = body.get("path"), body.get("url"), body.get("key")
    if not isinstance(path, str) or not path or "\0" in path:
        raise BadRequest("'path' must be the model file's path.", "path")
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS:
        raise BadRequest("'key' must be the runner's key.", "key")
    if not isinstance(url, str):
        raise BadRequest("'url' must be the runner's address.", "url")
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or not is_loopback(parts.hostname or "") or not port or \
            parts.path.strip("/") or parts.query or parts.username or parts.password:
        raise BadRequest("'url' must be a runner's address on this computer's loopback, as "
                         "http://127.0.0.1:PORT.", "url")
    return path, f"http://{parts.netloc}", key


def _entry_at(catalog: Catalog, path: str) -> Entry | None:
    """The library's model stored at ``path`` (the same file, however the path is spelled)."""
    try:
        wanted = os.stat(path)
    except (OSError, ValueError):
        return None
    for entry in catalog.entries():
        try:
            if os.path.samestat(os.stat(entry.path), wanted):
                return entry
        except OSError:
            continue
    return None
