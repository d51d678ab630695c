"""Forwarding a request to a model's runner, as it is or through an API translator.

OpenAI requests go through untouched, byte for byte in both directions (the hot path: one
chunk from the runner is one chunk to the client, no parsing). The other APIs are translated
(server/api_*.py): the runner's Server-Sent Events are parsed into chunks and each translator
writes its own frames. A client that goes away ends the runner's request too (the upstream
connection is closed, and the runner stops generating).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any, Protocol

import httpx2

from server.manager import Lease

log = logging.getLogger(__name__)

# A reply may take long to start (a long prompt on a CPU) and pause between tokens; only the
# connection itself must come quickly.
UPSTREAM_TIMEOUT = httpx2.Timeout(connect=10.0, read=None, write=60.0, pool=10.0)


class Translator(Protocol):
    def feed(self, chunk: dict[str, Any]) -> list[bytes]: ...
    def finish(self) -> list[bytes]: ...
    def fail(self, message: str) -> list[bytes]: ...


class UpstreamError(Exception):
    """The runner answered with an error (its status and parsed body) or not at all."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(_message(body))
        self.status = status
        self.body = body


def _message(body: dict[str, Any]) -> str:
    err = body.get("error")
    if isinstance(err, dict):
        return str(err.get("message", ""))
    return str(err or body.get("detail") or "the model's runner failed")


def _lost(exc: Exception) -> UpstreamError:
    return UpstreamError(502, {"error": {
        "message": f"The model's runner did not answer ({type(exc).__name__}); it is started "
                   "again at the next request.", "type": "server_error",
        "code": "runner_unavailable", "param": None}})


async def call(http: httpx2.AsyncClient, lease: Lease, path: str,
               body: dict[str, Any]) -> dict[str, Any]:
    """A non-streaming request; the runner's JSON answer, or UpstreamError."""
    try:
        r = await http.post(lease.url + path, json=body, headers=lease.headers,
                            timeout=UPSTREAM_TIMEOUT)
    except httpx2.HTTPError as exc:
        raise _lost(exc) from exc
    try:
        data = r.json()
    except ValueError:
        data = {"error": {"message": r.text[:500], "type": "server_error"}}
    if r.status_code >= 400 or not isinstance(data, dict):
        raise UpstreamError(r.status_code, data if isinstance(data, dict) else {})
    return data


async def open_stream(http: httpx2.AsyncClient, lease: Lease, path: str,
                      body: dict[str, Any]) -> httpx2.Response:
    """The runner's streaming answer, opened (its status read); UpstreamError when it refused.
    The caller closes it (``aclose``)."""
    request = http.build_request("POST", lease.url + path, json=body, headers=lease.headers,
                                 timeout=UPSTREAM_TIMEOUT)
    try:
        response = await http.send(request, stream=True)
    except httpx2.HTTPError as exc:
        raise _lost(exc) from exc
    if response.status_code >= 400:
        try:
            raw = await response.aread()
            data = json.loads(raw)
        except (httpx2.HTTPError, ValueError):
            data = {}
        finally:
            await response.aclose()
        raise UpstreamError(response.status_code, data if isinstance(data, dict) else {})
    return response


async def raw_bytes(response: httpx2.Response, lease: Lease) -> AsyncIterator[bytes]:
    """The runner's bytes as they come; the lease is released when the stream ends."""
    try:
        async for piece in response.aiter_raw():
            yield piece
    except httpx2.HTTPError as exc:
        log.info("a stream from %s broke: %s", lease.slot.entry.id, exc)
    finally:
        await response.aclose()
        lease.release()


async def translated(response: httpx2.Response, lease: Lease,
                     translator: Translator) -> AsyncIterator[bytes]:
    """The runner's events, each chunk through ``translator``; released at the end."""
    done = False
    try:
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                done = True
                for frame in translator.finish():
                    yield frame
                break
            try:
                chunk = json.loads(data)
            except ValueError:
                continue
            if isinstance(chunk, dict) and "error" in chunk:
                done = True
                for frame in translator.fail(_message(chunk)):
                    yield frame
                break
            if isinstance(chunk, dict):
                for frame in translator.feed(chunk):
                    yield frame
        if not done:
            for frame in translator.fail("The model's runner ended the reply early."):
                yield frame
    except httpx2.HTTPError as exc:
        for frame in translator.fail(f"The model's runner stopped answering ({exc})."):
            yield frame
    finally:
        await response.aclose()
        lease.release()
