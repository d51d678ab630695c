"""A small typed client for the runner's HTTP API (no Qt).

Every failure becomes a :class:`RunnerError` whose ``str()`` is a sentence the chat window can
show as it is: the GUI never has to interpret an httpx exception.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.chat.toolcalls import MAX_ARGUMENTS, MAX_CALLS
from app.i18n import T_, TextError
from app.runner_client.lines import LineTooLong, bounded_lines
from runner.wire.shapes import read_error, read_health

if TYPE_CHECKING:  # imported where it is used: the window's start need not wait for it
    import httpx2

log = logging.getLogger(__name__)

# The longest line of an event stream read whole. A piece of a reply is a few bytes; a tool call
# or a whole answer in one event a few hundred kilobytes. A longer line is an error, not memory.
MAX_SSE_LINE_BYTES = 4 * 2**20


class RunnerError(TextError):
    """Something went wrong talking to the runner; ``str()`` says what and what to do (Hearth's
    own sentences are :class:`app.i18n.Text`; the runner's API messages stay English)."""


class RunnerUnreachable(RunnerError):
    """Nothing answers at the runner's address: it has exited or is not started."""


class RunnerAuthError(RunnerError):
    """The runner refused our key (another process on that port, or a restarted runner)."""


class RunnerApiError(RunnerError):
    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True)
class Health:
    status: str  # "loading" | "ok" | "error"
    progress: float = 0.0
    message: str = ""


@dataclass(frozen=True)
class StreamEnd:
    finish_reason: str
    usage: dict[str, Any] | None
    # The tool calls the reply ended with (OpenAI's ``tool_calls`` entries, whole), if any.
    tool_calls: tuple[dict[str, Any], ...] = ()


class ToolCallPieces:
    """A streamed reply's ``tool_calls`` gathered: OpenAI streams each call by its ``index``,
    its id and name once and its arguments in pieces. Bounded as everything the model writes:
    at most :data:`~app.chat.toolcalls.MAX_CALLS` calls and
    :data:`~app.chat.toolcalls.MAX_ARGUMENTS` characters of arguments each (the rest is
    dropped; a cut call's arguments are no JSON, which the tool's check then refuses)."""

    def __init__(self) -> None:
        self._calls: dict[int, dict[str, Any]] = {}

    def add(self, deltas: Any) -> None:
        if not isinstance(deltas, list):
            return
        for n, d in enumerate(deltas):
            if not isinstance(d, dict):
                continue
            index: int = d["index"] if isinstance(d.get("index"), int) else n
            given = d.get("id") if isinstance(d.get("id"), str) else ""
            if "index" not in d and given and index in self._calls and \
                    self._calls[index]["id"] not in ("", given):
                # A server that sends each call whole in a chunk of its own, without the
                # index: a new id is a new call, not more of the last one.
                index = max(self._calls) + 1
            call = self._calls.get(index)
            if call is None:
                if len(self._calls) >= MAX_CALLS:
                    continue
                call = self._calls[index] = {"id": "", "type": "function",
                                             "function": {"name": "", "arguments": ""}}
            if isinstance(d.get("id"), str) and d["id"]:
                call["id"] = d["id"][:64]
            fn = d.get("function")
            if isinstance(fn, dict):
                if isinstance(fn.get("name"), str) and fn["name"]:
                    call["function"]["name"] = fn["name"][:128]
                args = fn.get("arguments")
                if isinstance(args, dict):
                    args = json.dumps(args)
                if isinstance(args, str):
                    have = call["function"]["arguments"]
                    call["function"]["arguments"] = (have + args)[:MAX_ARGUMENTS]

    def calls(self) -> tuple[dict[str, Any], ...]:
        return tuple(self._calls[i] for i in sorted(self._calls))


class RunnerClient:
    """Synchronous client; use one per thread (the chat worker has its own)."""

    def __init__(self, base_url: str, key: str | None, timeout: float = 5.0) -> None:
        import httpx2

        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        # Reads can wait for a long prompt to be processed; connecting must not.
        self._http = httpx2.Client(base_url=self.base_url, headers=headers,
                                   timeout=httpx2.Timeout(timeout, read=None), trust_env=False)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RunnerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- calls --------------------------------------------------------------------------------

    def health(self) -> Health:
        resp = self._request("GET", "/health", expect=(200, 500, 503))
        got = read_health(_json(resp), resp.status_code)
        return Health(status=got.status, progress=got.progress, message=got.message)

    def status(self) -> dict[str, Any]:
        return _json(self._request("GET", "/runner/status"))

    def models(self) -> list[dict[str, Any]]:
        return list(_json(self._request("GET", "/v1/models")).get("data", []))

    def count_tokens(self, texts: Sequence[str]) -> tuple[list[int], int]:
        """Each text's tokens for the loaded model, and its context (a count at or above the
        context means "at least that many"): Hearth's runner's ``/runner/tokens``."""
        data = _json(self._request("POST", "/runner/tokens", json={"texts": list(texts)}))
        counts, context = data.get("counts"), data.get("context")
        if not isinstance(counts, list) or len(counts) != len(texts) or \
                not all(isinstance(n, int) for n in counts) or not isinstance(context, int):
            raise RunnerError(T_("The runner at {url} answered a token count Hearth does not "
                                 "understand.", url=self.base_url))
        return counts, context

    def vector_search(self, query: str, documents: Sequence[int], limit: int) -> list[int]:
        """The passages of Hearth's index most like ``query``, best first, as their rows in the
        index: an embedding runner's ``/runner/vectors/search``."""
        data = _json(self._request("POST", "/runner/vectors/search", json={
            "query": query, "documents": list(documents), "limit": limit}))
        results = data.get("results")
        if not isinstance(results, list) or not all(
                isinstance(r, list) and len(r) == 2 and isinstance(r[0], int) for r in results):
            raise RunnerError(T_("The runner at {url} answered a search Hearth does not "
                                 "understand.", url=self.base_url))
        return [r[0] for r in results]

    def chat(self, messages: list[dict[str, Any]], **params: Any) -> dict[str, Any]:
        body = {"messages": messages, "stream": False, **params}
        return _json(self._request("POST", "/v1/chat/completions", json=body))

    def stream_chat(self, messages: list[dict[str, Any]], **params: Any) -> ChatStream:
        """Open a streaming chat; iterate the result for text deltas, then read ``.end``."""
        import httpx2

        body = {"messages": messages, "stream": True,
                "stream_options": {"include_usage": True}, **params}
        request = self._http.build_request("POST", "/v1/chat/completions", json=body)
        try:
            resp = self._http.send(request, stream=True)
        except httpx2.HTTPError as exc:
            raise _transport_error(self.base_url, exc) from None
        if resp.status_code != 200:
            resp.read()
            resp.close()
            raise _api_error(resp)
        return ChatStream(resp, self.base_url)

    def _request(self, method: str, path: str, expect: tuple[int, ...] = (200,),
                 **kwargs: Any) -> httpx2.Response:
        import httpx2

        try:
            resp = self._http.request(method, path, **kwargs)
        except httpx2.HTTPError as exc:
            raise _transport_error(self.base_url, exc) from None
        if resp.status_code not in expect:
            raise _api_error(resp)
        return resp


class ChatStream:
    """Iterates text deltas of a streamed chat completion. ``close()`` stops the generation."""

    def __init__(self, resp: httpx2.Response, base_url: str) -> None:
        self._resp = resp
        self._base_url = base_url
        self.end: StreamEnd | None = None

    def __iter__(self) -> Iterator[str]:
        import httpx2

        finish = ""
        usage = None
        calls = ToolCallPieces()
        try:
            for data in iter_sse(bounded_lines(self._resp.iter_bytes(), MAX_SSE_LINE_BYTES)):
                if data == "[DONE]":
                    break
                event = json.loads(data)
                err = read_error(event)
                if err is not None:
                    raise RunnerApiError(500, err.message or "generation failed", err.code)
                if event.get("usage"):
                    usage = event["usage"]
                for choice in event.get("choices", ()):
                    delta = choice.get("delta", {})
                    text = delta.get("content")
                    if text:
                        yield text
                    if "tool_calls" in delta:
                        calls.add(delta["tool_calls"])
                    if choice.get("finish_reason"):
                        finish = choice["finish_reason"]
        except httpx2.HTTPError as exc:
            raise _transport_error(self._base_url, exc) from None
        except LineTooLong as exc:
            raise RunnerError(T_("The runner sent {error} in one piece of its reply; Hearth stopped "
                                 "reading it. Restart the model.", error=str(exc))) from None
        finally:
            self._resp.close()
        self.end = StreamEnd(finish or "stop", usage, calls.calls())

    def close(self) -> None:
        self._resp.close()


def iter_sse(lines: Iterator[str]) -> Iterator[str]:
    """The ``data:`` payloads of a server-sent event stream (multi-line data joined)."""
    buf: list[str] = []
    for line in lines:
        if not line:
            if buf:
                yield "\n".join(buf)
                buf = []
            continue
        if line.startswith(":"):
            continue  # comment / keep-alive
        field, _, value = line.partition(":")
        if field == "data":
            buf.append(value[1:] if value.startswith(" ") else value)
    if buf:
        yield "\n".join(buf)


def _json(resp: httpx2.Response) -> dict[str, Any]:
    try:
        body = resp.json()
    except ValueError:
        raise RunnerError(T_("The runner sent a reply that is not JSON (HTTP {status}).",
                             status=resp.status_code)) \
            from None
    if not isinstance(body, dict):
        raise RunnerError(T_("The runner sent an unexpected reply."))
    return body


def _api_error(resp: httpx2.Response) -> RunnerError:
    if resp.status_code == 401:
        return RunnerAuthError(T_("The runner refused Hearth's key. Another program may be using that "
                                  "port; restart the model."))
    message: str = T_("The runner answered HTTP {status}.", status=resp.status_code)
    code = None
    try:
        err = read_error(resp.json())
    except ValueError:
        err = None
    if err is not None:
        message, code = err.message or message, err.code
    return RunnerApiError(resp.status_code, message, code)


def _transport_error(base_url: str, exc: httpx2.HTTPError) -> RunnerError:
    import httpx2

    if isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout):
        return RunnerUnreachable(T_("The model runner is not answering at {base_url}. It may have "
                                    "stopped: load the model again.", base_url=base_url))
    if isinstance(exc, httpx2.RemoteProtocolError | httpx2.ReadError):
        return RunnerUnreachable(T_("The model runner closed the connection (it may have crashed or "
                                    "been stopped). Load the model again to continue."))
    return RunnerError(T_("Talking to the model runner failed: {error}", error=str(exc)))
