"""Streaming a chat reply off the GUI thread.

A worker QObject lives in its own QThread and owns an httpx client per request. Deltas leave it
as queued signals; the chat session coalesces them on a timer so a fast model cannot flood the
event loop.

Each request carries its own :class:`~app.jobs.CancelToken`, made on the GUI thread when the
request is sent: Stop pressed before the worker has even started the request still stops it (a
shared flag that the worker cleared on start lost such a Stop). Cancelling closes the response,
and the runner stops generating when the client disconnects.

How a stream ends is typed (:class:`StreamEnded`, :class:`StreamFailure`): "the runner went away"
is told apart from "the runner answered with an error" by the exception, not by timing.

A request whose :class:`~app.chat.source.ReplySource` names a server goes to that server through
app/remote/client.py (with the model's id in the body) instead of the runner; its failures are
:attr:`FailureKind.SERVER` with the server's error ``code`` ("model_gone", "auth", ...).
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.chat.source import ReplySource
from app.i18n import T_
from app.jobs import CancelToken
from app.loading.endpoint import ChatEndpoint
from app.remote.client import RemoteClient, RemoteError
from app.runner_client import RunnerClient, RunnerError, RunnerUnreachable
from app.storage.images import ImageStore, inline_images

log = logging.getLogger(__name__)

_ids = itertools.count(1)


@dataclass(frozen=True)
class ChatRequest:
    """One reply to stream: where, with which key, what to send. ``source`` names a server
    the user added (``url`` is then its base URL) or the local model; None: the runner."""

    url: str
    key: str
    messages: list[dict[str, Any]]
    params: dict[str, Any] = field(default_factory=dict)
    id: int = field(default_factory=lambda: next(_ids))
    token: CancelToken = field(default_factory=CancelToken, compare=False, repr=False)
    source: ReplySource | None = None
    # Where the images the messages name are read (on the worker thread, just before sending).
    images: ImageStore | None = field(default=None, compare=False, repr=False)

    @staticmethod
    def to(endpoint: ChatEndpoint, messages: list[dict[str, Any]],
           params: dict[str, Any], images: ImageStore | None = None) -> ChatRequest:
        """A request for ``endpoint`` (app/services/active_model.py's, made when the model was
        put in use)."""
        return ChatRequest(endpoint.url, endpoint.key, messages, params, source=endpoint.source,
                           images=images)

    @property
    def endpoint(self) -> ChatEndpoint:
        """Where it goes, as one value (no source: the local runner)."""
        return ChatEndpoint(self.url, self.key, self.source or ReplySource(""))

    @property
    def remote(self) -> bool:
        return self.endpoint.is_remote


@dataclass(frozen=True)
class StreamDelta:
    request: int
    text: str


@dataclass(frozen=True)
class StreamEnded:
    """The stream ended normally or by Stop: ``reason`` is "stop", "length" or "stopped"."""

    request: int
    reason: str
    usage: dict[str, Any] | None = None
    streamed: bool = True  # False: the server sent the whole reply at once (it does not stream)
    tool_calls: tuple[dict[str, Any], ...] = ()  # the calls the reply ended with (OpenAI's)


class FailureKind(Enum):
    RUNNER_GONE = "runner_gone"  # nothing answers any more: the runner exited or crashed
    API = "api"  # the runner answered with an error
    SERVER = "server"  # a server the user added failed or refused (``code`` says how)
    BUG = "bug"  # an unexpected exception in Hearth itself


@dataclass(frozen=True)
class StreamFailure:
    request: int
    kind: FailureKind
    message: str
    code: str = ""  # for SERVER: app/remote/client.py's RemoteError.code


def stream_reply(request: ChatRequest, emit_delta: Any, client_factory: Any = RunnerClient,
                 remote_factory: Any = RemoteClient) -> StreamEnded | StreamFailure:
    """Stream one reply, calling ``emit_delta(text)`` per piece; returns how it ended.

    Plain Python, run on the worker thread; the token is checked before connecting, between
    pieces, and closes the response from the GUI thread when cancelled.
    """
    token = request.token
    if token.cancelled:
        return StreamEnded(request.id, "stopped")
    try:
        messages = inline_images(request.messages, request.images)
        with request.endpoint.open_stream(messages, request.params,
                                          runner=client_factory,
                                          server=remote_factory) as stream:
            unregister = token.on_cancel(stream.close)
            try:
                for text in stream:
                    if token.cancelled:
                        break
                    emit_delta(text)
            finally:
                unregister()
            if token.cancelled:
                return StreamEnded(request.id, "stopped")
            end = stream.end
            return StreamEnded(request.id, end.finish_reason if end else "stop",
                               end.usage if end else None,
                               streamed=bool(getattr(stream, "streamed", True)),
                               tool_calls=tuple(getattr(end, "tool_calls", ()) or ()))
    except RemoteError as exc:
        if token.cancelled:
            return StreamEnded(request.id, "stopped")
        return StreamFailure(request.id, FailureKind.SERVER, str(exc), exc.code)
    except RunnerError as exc:
        if token.cancelled:
            return StreamEnded(request.id, "stopped")
        kind = FailureKind.RUNNER_GONE if isinstance(exc, RunnerUnreachable) else FailureKind.API
        return StreamFailure(request.id, kind, str(exc))
    except Exception as exc:  # a bug, but the chat must survive it
        log.exception("chat stream failed")
        return StreamFailure(request.id, FailureKind.BUG, T_("The reply failed: {error}", error=str(exc)))


class _Worker(QObject):
    delta = Signal(StreamDelta)
    ended = Signal(object)  # StreamEnded | StreamFailure

    def __init__(self, client_factory: Any, remote_factory: Any) -> None:
        super().__init__()
        self._client_factory = client_factory
        self._remote_factory = remote_factory

    @Slot(object)
    def run(self, request: ChatRequest) -> None:
        outcome = stream_reply(request, lambda t: self.delta.emit(StreamDelta(request.id, t)),
                               self._client_factory, self._remote_factory)
        self.ended.emit(outcome)


class ChatStreamer(QObject):
    """Owns the worker thread. One reply at a time; signals carry the request's id."""

    delta = Signal(StreamDelta)
    ended = Signal(object)  # StreamEnded | StreamFailure
    _start = Signal(object)

    def __init__(self, parent: QObject | None = None, *,
                 client_factory: Any = RunnerClient,
                 remote_factory: Any = RemoteClient) -> None:
        super().__init__(parent)
        self._thread = QThread(self)
        self._thread.setObjectName("chat-stream")
        self._worker = _Worker(client_factory, remote_factory)
        self._worker.moveToThread(self._thread)
        self._start.connect(self._worker.run)
        # Re-emitted from a slot, not chained signal-to-signal: PySide6 6.12 drops a reference
        # of a Python payload forwarded by a chained signal across threads (the interpreter
        # then aborts at exit with "deallocating None").
        self._worker.delta.connect(self._on_delta)
        self._worker.ended.connect(self._on_ended)
        self._thread.start()
        self._current: ChatRequest | None = None

    @property
    def busy(self) -> bool:
        return self._current is not None

    def send(self, request: ChatRequest) -> ChatRequest:
        if self._current is not None:
            raise RuntimeError("a reply is already streaming")
        self._current = request
        self._start.emit(request)
        return request

    def stop(self) -> None:
        if self._current is not None:
            self._current.token.cancel()

    def shutdown(self) -> None:
        self.stop()
        self._thread.quit()
        self._thread.wait(3000)

    def _on_delta(self, delta: StreamDelta) -> None:
        self.delta.emit(delta)

    def _on_ended(self, outcome: StreamEnded | StreamFailure) -> None:
        if self._current is not None and self._current.id == outcome.request:
            self._current = None
        self.ended.emit(outcome)
