"""The chat session: one conversation's transcript, its reply stream and its storage, as a QObject.

It owns the streamer's requests, the coalescing timer and the saving; the main window only shows
what it reports. Streamed text is coalesced on a timer (at most ~25 view updates a second however
fast the model is) and saved at least every :data:`SAVE_MS`, so a crash in the middle of a reply
keeps the reply up to that point.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import QObject, QTimer, Signal

from app.chat.message import Message
from app.chat.transcript import ReplyEnd, Transcript
from app.services.chat_stream import (
    ChatRequest,
    FailureKind,
    StreamDelta,
    StreamEnded,
    StreamFailure,
)

log = logging.getLogger(__name__)

FLUSH_MS = 40  # coalesce streamed text: at most ~25 repaints a second
SAVE_MS = 500  # the live reply reaches the database at least this often while it streams


class Streamer(Protocol):
    """What the session needs of app/services/chat_stream.py's ChatStreamer (fakes in tests)."""

    delta: Any  # Signal(StreamDelta)
    ended: Any  # Signal(StreamEnded | StreamFailure)

    @property
    def busy(self) -> bool: ...

    def send(self, request: ChatRequest) -> ChatRequest: ...

    def stop(self) -> None: ...

    def shutdown(self) -> None: ...


class ChatStore(Protocol):
    """Where conversations are kept (app/services/storage.py; an in-memory fake in tests)."""

    failed: Any  # Signal(str): a save failed, with a sentence for the user

    def save_message(self, transcript: Transcript, message: Message) -> None:
        """Store ``message`` (append it, or update it if stored before). Never blocks."""
        ...

    def flush(self, timeout_s: float) -> bool:
        """Wait for queued saves (only when the window closes)."""
        ...


class ChatSession(QObject):
    message_added = Signal(object)  # Message: a finished message to show (the user's, a reply)
    live_changed = Signal(object)  # Message | None: the reply being streamed, re-rendered
    reply_finished = Signal(object)  # Message: the live reply ended (with its note)
    busy_changed = Signal(bool)
    conversation_changed = Signal(object)  # Transcript: a new or other conversation is shown
    save_failed = Signal(str)

    def __init__(self, streamer: Streamer, store: ChatStore, *,
                 params: dict[str, Any] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._streamer = streamer
        self._store = store
        self.params = dict(params or {})
        self.system_prompt = ""
        self.transcript = Transcript()
        self._request: ChatRequest | None = None
        self._pending = ""
        self._clock = clock
        self._last_save = 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self._flush)
        streamer.delta.connect(self._on_delta)
        streamer.ended.connect(self._on_ended)
        store.failed.connect(self._on_save_failed)

    # ---- public ------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._request is not None

    def new_conversation(self, model: str = "") -> None:
        """Start an empty conversation (a streaming reply is stopped and kept first)."""
        if self._request is not None:
            self.stop()
            self._end(ReplyEnd.STOPPED)
        self.transcript = Transcript(model=model)
        self.conversation_changed.emit(self.transcript)

    def send(self, text: str, url: str, key: str) -> bool:
        """Send the user's ``text``; False when a reply is streaming or the text is empty."""
        text = text.strip()
        if not text or self._request is not None or self._streamer.busy:
            return False
        messages, _dropped = self.transcript.api_messages(self.system_prompt)
        messages.append({"role": "user", "content": text})
        user, live = self.transcript.begin_reply(text)
        self._store.save_message(self.transcript, user)
        self.message_added.emit(user)
        self._store.save_message(self.transcript, live)
        self._last_save = self._clock()
        self._pending = ""
        self.live_changed.emit(live)
        self._request = self._streamer.send(ChatRequest(url, key, messages, dict(self.params)))
        self._timer.start()
        self.busy_changed.emit(True)
        return True

    def stop(self) -> None:
        """Stop the reply; the partial text is kept, noted "Stopped."."""
        if self._request is not None:
            self._request.token.cancel()
            self._streamer.stop()

    def runner_died(self) -> None:
        """The runner process went away: end the live reply at once, saying why."""
        if self._request is not None:
            self._request.token.cancel()
            self._end(ReplyEnd.RUNNER_DIED)

    def close(self, timeout_s: float = 3.0) -> None:
        """The window closes: keep the reply so far, stop the stream, wait for the saves."""
        if self._request is not None:
            self._request.token.cancel()
            self._end(ReplyEnd.CLOSED)
        self._streamer.shutdown()
        self._store.flush(timeout_s)

    def _on_save_failed(self, message: str) -> None:
        self.save_failed.emit(message)

    # ---- stream events -----------------------------------------------------------------------

    def _on_delta(self, delta: StreamDelta) -> None:
        if self._request is not None and delta.request == self._request.id:
            self._pending += delta.text  # shown by the next flush tick

    def _flush(self) -> None:
        if not self._pending:
            return
        live = self.transcript.append(self._pending)
        self._pending = ""
        if live is None:
            return
        self.live_changed.emit(live)
        now = self._clock()
        if now - self._last_save >= SAVE_MS / 1000:
            self._last_save = now
            self._store.save_message(self.transcript, live)

    def _on_ended(self, outcome: StreamEnded | StreamFailure) -> None:
        if self._request is None or outcome.request != self._request.id:
            return  # a request this session already ended (Stop, the runner's death)
        if isinstance(outcome, StreamEnded):
            end = {"length": ReplyEnd.LENGTH, "stopped": ReplyEnd.STOPPED}.get(
                outcome.reason, ReplyEnd.FINISHED)
            self._end(end)
        elif outcome.kind is FailureKind.RUNNER_GONE:
            self._end(ReplyEnd.RUNNER_DIED)
        else:
            self._end(ReplyEnd.FAILED, outcome.message)

    def _end(self, end: ReplyEnd, detail: str = "") -> None:
        self._timer.stop()
        if self._pending:
            self.transcript.append(self._pending)
            self._pending = ""
        self._request = None
        reply = self.transcript.finish(end, detail)
        if reply is not None:
            self._store.save_message(self.transcript, reply)
            self.live_changed.emit(None)
            self.reply_finished.emit(reply)
        self.busy_changed.emit(False)
