"""An HTTP client for an OpenAI-compatible server the user added (no Qt).

The same job as app/runner_client/client.py's RunnerClient, for a server Hearth does not run:
every failure becomes a :class:`RemoteError` whose ``str()`` names the server, says what went
wrong in a person's words and what to do; ``code`` tells the window which kind it was (a model
that is gone makes it refresh the list). Kinds told apart:

- unreachable: connection refused, a name that does not resolve, a timeout;
- TLS: a certificate this computer does not trust, or https:// spoken to a plain-HTTP server;
- a refused key (401, 403), a model the server no longer has (404 naming the model);
- a server that does not stream: it answers a streaming request with one JSON body. Hearth
  takes that whole answer (``RemoteStream.streamed`` is then False) rather than failing;
- anything that is not an OpenAI API (an HTML page, a 404 for the endpoint itself).

Certificates are checked against this computer's trusted certificates as well as certifi's
(a company or home CA installed in the system is trusted, as in a browser).
"""

from __future__ import annotations

import errno
import json
import logging
import socket
import ssl
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import certifi

from app.i18n import T_, TextError
from app.runner_client.client import MAX_SSE_LINE_BYTES, StreamEnd, ToolCallPieces, iter_sse
from app.runner_client.lines import LineTooLong, bounded_lines
from runner.wire.shapes import read_error

if TYPE_CHECKING:  # imported where it is used: the window's start need not wait for it
    import httpx2

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 10.0
LIST_TIMEOUT_S = 15.0
# Between two pieces of a reply: a long prompt on a slow server may take minutes before the
# first token; Stop is always there for the impatient.
READ_TIMEOUT_S = 300.0
# What a server may send in one body that is read whole. A reply that is not streamed comes as
# one JSON body: 16 MiB is a few million words, far past any context; the list of models is
# names; an error's explanation is a sentence (only its first bytes are read).
MAX_WHOLE_REPLY_BYTES = 16 * 2**20
MAX_LIST_BYTES = 8 * 2**20
MAX_ERROR_BYTES = 64 * 1024


class RemoteError(TextError):
    """Talking to a server failed; ``str()`` is a sentence for the user (an
    :class:`app.i18n.Text` the window translates)."""


    code = "error"


class ServerUnreachable(RemoteError):
    code = "unreachable"


class ServerTLSError(RemoteError):
    code = "tls"


class ServerAuthError(RemoteError):
    code = "auth"


class ModelGone(RemoteError):
    code = "model_gone"


class ServerApiError(RemoteError):
    """The server answered with an error of its own (its message is kept)."""

    code = "api"

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class NotAnApiError(RemoteError):
    """What answered is not an OpenAI-compatible API at that address."""

    code = "not_api"


def _ssl_context() -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=certifi.where())
    try:
        ctx.load_default_certs()  # the system's own trusted certificates too
    except (OSError, ssl.SSLError) as exc:  # a broken system store must not stop certifi's
        log.info("system certificates not loaded: %s", exc)
    return ctx


class RemoteClient:
    """Synchronous client for one server; one per thread (the chat worker makes its own)."""

    def __init__(self, base_url: str, key: str | None, *, name: str = "",
                 timeout: float = LIST_TIMEOUT_S, read_timeout: float | None = READ_TIMEOUT_S,
                 verify: ssl.SSLContext | bool | None = None) -> None:
        import httpx2

        self.base_url = base_url.rstrip("/")
        self.name = name or (urlsplit(self.base_url).hostname or self.base_url)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._list_timeout = timeout
        # trust_env: a proxy or SSL_CERT_FILE the user set for every program applies here too
        # (unlike the runner on loopback, a remote server may well be behind a proxy).
        self._http = httpx2.Client(
            base_url=self.base_url + "/", headers=headers, trust_env=True,
            timeout=httpx2.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT_S),
                                   read=read_timeout),
            verify=_ssl_context() if verify is None else verify)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RemoteClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- calls --------------------------------------------------------------------------------

    def models(self) -> list[str]:
        """The ids of the models the server offers, sorted (GET {base}/models)."""
        import httpx2

        request = self._http.build_request("GET", "models", timeout=self._list_timeout)
        try:
            resp = self._http.send(request, stream=True)
            try:
                if resp.status_code != 200:
                    raise self._status_error(resp, "models")
                raw = read_capped(resp, MAX_LIST_BYTES, self.name, T_("its list of models"))
            finally:
                resp.close()
        except httpx2.HTTPError as exc:
            raise transport_error(self.name, self.base_url, exc) from None
        body = _json_body(raw, resp, self.name, self.base_url)
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise NotAnApiError(T_("{name} answered {base_url}/models without a list of models. Check "
                                   "the address: it usually ends in /v1.", name=self.name,
                                   base_url=self.base_url))
        ids = {str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")}
        return sorted(ids, key=str.casefold)

    def stream_chat(self, messages: list[dict[str, Any]], model: str,
                    **params: Any) -> RemoteStream:
        """Open a streaming chat with ``model``; iterate the result for text, then read
        ``.end``. A server that answers with one JSON body instead gives that text at once."""
        import httpx2

        body = {"model": model, "messages": messages, "stream": True,
                "stream_options": {"include_usage": True}, **params}
        request = self._http.build_request("POST", "chat/completions", json=body)
        try:
            resp = self._http.send(request, stream=True)
        except httpx2.HTTPError as exc:
            raise transport_error(self.name, self.base_url, exc) from None
        if resp.status_code != 200:
            try:
                raise self._status_error(resp, "chat", model)
            except httpx2.HTTPError as exc:
                raise transport_error(self.name, self.base_url, exc) from None
            finally:
                resp.close()
        return RemoteStream(resp, self.name, self.base_url)

    # ---- errors -------------------------------------------------------------------------------

    def _status_error(self, resp: httpx2.Response, what: str, model: str = "") -> RemoteError:
        """The error for a streamed response that is not a 200 (reads its first bytes)."""
        status = resp.status_code
        message, code = _error_of(_head_of(resp, MAX_ERROR_BYTES))
        detail: str = T_(" It said: {message}", message=message) if message else ""
        if status == 401:
            return ServerAuthError(T_("{name} refused the API key (HTTP 401). Check the key in "
                                      "Settings → Servers.{detail}", name=self.name, detail=detail))
        if status == 403:
            return ServerAuthError(T_("{name} refused access (HTTP 403): the key may not be allowed to "
                                      "use this.{detail}", name=self.name, detail=detail))
        if model and (code == "model_not_found" or (status == 404 and "model" in message.lower())):
            return ModelGone(T_("{name} no longer offers the model “{model}”. Its list of models has "
                                "been refreshed: pick another one.", name=self.name, model=model))
        if status == 404:
            where = f"{self.base_url}/{'models' if what == 'models' else 'chat/completions'}"
            return NotAnApiError(T_("{name} has no OpenAI-compatible API at {where} (HTTP 404). Check "
                                    "the address in Settings → Servers: it usually ends in /v1.",
                                    name=self.name, where=where))
        if status == 429:
            return ServerApiError(T_("{name} is busy or your quota is used up (HTTP 429). Try again "
                                     "later.{detail}", name=self.name, detail=detail), status)
        if status >= 500:
            return ServerApiError(T_("{name} had a problem of its own (HTTP {status}).{detail}",
                                     name=self.name, status=status, detail=detail),
                                  status)
        return ServerApiError(T_("{name} refused the request (HTTP {status}).{detail}", name=self.name,
                                 status=status, detail=detail), status)


class RemoteStream:
    """Iterates the text of a chat reply. ``close()`` stops it (the server sees the disconnect).

    ``streamed`` is False when the server sent the whole reply as one JSON body."""

    def __init__(self, resp: httpx2.Response, name: str, base_url: str) -> None:
        self._resp = resp
        self._name = name
        self._base_url = base_url
        ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
        self.streamed = ctype != "application/json"
        self._ctype = ctype
        self.end: StreamEnd | None = None

    def __iter__(self) -> Iterator[str]:
        import httpx2

        try:
            if not self.streamed:
                yield from self._whole()
            elif self._ctype != "text/event-stream":
                raise NotAnApiError(
                    T_("{name} did not answer like an OpenAI-compatible API (it sent {ctype}). Check "
                       "the address in Settings → Servers: it usually ends in /v1.", name=self._name,
                       ctype=self._ctype or T_("no content type")))
            else:
                yield from self._events()
        except httpx2.HTTPError as exc:
            raise transport_error(self._name, self._base_url, exc, during=True) from None
        except LineTooLong as exc:
            raise NotAnApiError(T_("{name} sent {error} in one piece of its reply; Hearth stopped "
                                   "reading it there. Ask again, or check the server.", name=self._name,
                                   error=str(exc))) \
                from None
        finally:
            self._resp.close()

    def _events(self) -> Iterator[str]:
        finish, usage = "", None
        calls = ToolCallPieces()
        for data in iter_sse(bounded_lines(self._resp.iter_bytes(), MAX_SSE_LINE_BYTES)):
            if data == "[DONE]":
                break
            try:
                event = json.loads(data)
            except ValueError:
                raise NotAnApiError(T_("{name} sent a piece of the reply that is not JSON.",
                                       name=self._name)) from None
            if not isinstance(event, dict):
                continue
            err = read_error(event)
            if err is not None:
                raise ServerApiError(T_("{name} stopped the reply with an error: {message}",
                                        name=self._name, message=err.message), 200)
            if event.get("usage"):
                usage = event["usage"]
            for choice in event.get("choices") or ():
                if not isinstance(choice, dict):
                    continue
                delta = choice.get("delta") or {}
                text = delta.get("content") if isinstance(delta, dict) else None
                if text:
                    yield str(text)
                if isinstance(delta, dict) and "tool_calls" in delta:
                    calls.add(delta["tool_calls"])
                if choice.get("finish_reason"):
                    finish = str(choice["finish_reason"])
        self.end = StreamEnd(finish or "stop", usage, calls.calls())

    def _whole(self) -> Iterator[str]:
        """A server that does not stream: the whole reply in one chat completion body."""
        raw = read_capped(self._resp, MAX_WHOLE_REPLY_BYTES, self._name, T_("one reply"))
        body = _json_body(raw, self._resp, self._name, self._base_url)
        choices = body.get("choices") if isinstance(body, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise NotAnApiError(T_("{name} answered without a chat reply. Check the address in "
                                   "Settings → Servers: it usually ends in /v1.", name=self._name))
        log.info("%s does not stream; its whole reply came at once", self._name)
        choice = choices[0]
        message: dict[str, Any] = choice["message"] if isinstance(choice.get("message"), dict) \
            else {}
        text = message.get("content")
        if text:
            yield str(text)
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else None
        calls = ToolCallPieces()
        calls.add(message.get("tool_calls"))  # whole calls: each its own index
        self.end = StreamEnd(str(choice.get("finish_reason") or "stop"), usage, calls.calls())

    def close(self) -> None:
        self._resp.close()


# ---- classification ------------------------------------------------------------------------


def read_capped(resp: httpx2.Response, cap: int, name: str, what: str) -> bytes:
    """A streamed response's body, or NotAnApiError as soon as it is over ``cap`` bytes (a
    declared length over it is refused before anything is read): read whole, a server's
    answer of any size would be held in memory, then parsed and rendered."""
    declared = resp.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise _too_big(name, what, cap)
    body = bytearray()
    for chunk in resp.iter_bytes():
        body += chunk
        if len(body) > cap:
            raise _too_big(name, what, cap)
    return bytes(body)


def _too_big(name: str, what: str, cap: int) -> NotAnApiError:
    return NotAnApiError(T_("{name} sent more than {most} MiB as {what}; Hearth stopped reading it "
                            "there. Check the server, or ask for a shorter reply.", name=name,
                            most=cap // 2**20, what=what))


def _head_of(resp: httpx2.Response, cap: int) -> bytes:
    """The first ``cap`` bytes of a streamed body (an error's explanation; the rest is not
    read)."""
    head = bytearray()
    for chunk in resp.iter_bytes():
        head += chunk
        if len(head) >= cap:
            break
    return bytes(head[:cap])


def _json_body(raw: bytes, resp: httpx2.Response, name: str, base_url: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        ctype = resp.headers.get("content-type", "") or "no content type"
        raise NotAnApiError(T_("{name} did not answer like an OpenAI-compatible API (it sent {ctype}, "
                               "not JSON). Check the address in Settings → Servers: it usually ends in "
                               "/v1.", name=name, ctype=ctype.split(";")[0])) from None


def _error_of(raw: bytes) -> tuple[str, str]:
    """The server's own error message and code, if its body ``raw`` says them."""
    try:
        body = json.loads(raw)
    except ValueError:
        return "", ""
    err = read_error(body, limit=500)
    return (err.message, err.code or "") if err is not None else ("", "")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        seen.add(id(at))
        yield at
        at = at.__cause__ or at.__context__


def transport_error(name: str, base_url: str, exc: httpx2.HTTPError,
                    during: bool = False) -> RemoteError:
    """The sentence for a failure below HTTP (network, DNS, TLS, timeouts)."""
    import httpx2

    host = urlsplit(base_url).hostname or base_url
    chain = list(_chain(exc))
    verify = next((e for e in chain if isinstance(e, ssl.SSLCertVerificationError)), None)
    if verify is not None or "CERTIFICATE_VERIFY_FAILED" in str(exc):
        why = getattr(verify, "verify_message", "") or "certificate verify failed"
        return ServerTLSError(
            T_("The certificate of {name} ({host}) is not trusted: {why}. If this is your own server "
               "with a self-signed certificate, add it to this computer's trusted certificates, or use "
               "http:// on a network you trust.", name=name, host=host, why=why))
    tls = next((e for e in chain if isinstance(e, ssl.SSLError)), None)
    if tls is not None:
        reason = getattr(tls, "reason", None) or str(tls)
        hint = (" It may serve plain HTTP: try the address with http://."
                if base_url.startswith("https:") else "")
        return ServerTLSError(f"A secure (TLS) connection to {name} ({host}) failed: {reason}."
                              + hint)
    if isinstance(exc, httpx2.ConnectTimeout):
        return ServerUnreachable(T_("{name} ({host}) did not answer within {seconds:.0f} s. "
                                    "Check that it is on and that this computer can reach its network.",
                                    name=name, host=host, seconds=CONNECT_TIMEOUT_S))
    if isinstance(exc, httpx2.TimeoutException):
        return ServerUnreachable(T_("{name} stopped answering (no data for a long time). Try again; if "
                                    "it keeps happening, the server may be overloaded.", name=name))
    if isinstance(exc, httpx2.ConnectError):
        if any(isinstance(e, socket.gaierror) for e in chain):
            return ServerUnreachable(T_("Hearth could not find the server “{host}” (the name does not "
                                        "resolve). Check the address and your network connection.",
                                        host=host))
        refused = any(isinstance(e, ConnectionRefusedError) or
                      getattr(e, "errno", None) == errno.ECONNREFUSED for e in chain)
        if refused:
            return ServerUnreachable(T_("Nothing answers at {base_url}: {name} may be off, or "
                                        "listening on another port.", base_url=base_url, name=name))
        return ServerUnreachable(T_("{name} cannot be reached at {base_url} ({error}). Check the address "
                                    "and your network connection.", name=name, base_url=base_url,
                                    error=str(exc)))
    if isinstance(exc, httpx2.RemoteProtocolError | httpx2.ReadError | httpx2.WriteError):
        if during:
            return ServerUnreachable(T_("The connection to {name} was lost during the reply. Try "
                                        "again.", name=name))
        return ServerUnreachable(T_("The connection to {name} was lost. Try again.", name=name))
    return RemoteError(T_("Talking to {name} failed: {error}", name=name, error=str(exc)))
