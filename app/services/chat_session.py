"""The chat session: one conversation's transcript, its reply stream and its storage, as a QObject.

It owns the streamer's requests, the coalescing timer and the saving; the main window only shows
what it reports. Streamed text is coalesced on a timer (at most ~25 view updates a second however
fast the model is) and saved at least every :data:`SAVE_MS`, so a crash in the middle of a reply
keeps the reply up to that point.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import QObject, QTimer, Signal

from app.chat.message import Message
from app.chat.sampling import ChatSettings, Sampling, fold_system
from app.chat.stats import ReplyStats
from app.chat.transcript import IMAGES, KNOWLEDGE, ReplyEnd, Transcript
from app.loading.endpoint import ChatEndpoint
from app.services.chat_stream import (
    ChatRequest,
    FailureKind,
    StreamDelta,
    StreamEnded,
    StreamFailure,
)
from app.storage.images import ImageStore

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

    def save_settings(self, transcript: Transcript) -> None:
        """Store the conversation's settings (with the conversation, once it exists)."""
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
    save_failed = Signal(object)
    stats_changed = Signal(object)  # ReplyStats: the last reply's speed and token counts
    trimmed = Signal(int)  # how many of the oldest messages were left out of what was sent
    # list[Message]: the finished messages to show again, when Regenerate, Edit or Continue
    # changed the branch shown (the live reply and the new question follow as usual).
    shown_changed = Signal(object)
    # StreamFailure: a server the user added failed the reply (its ``code`` says how: the
    # window refreshes the server's models when the model is gone).
    server_failed = Signal(object)

    def __init__(self, streamer: Streamer, store: ChatStore, *,
                 params: dict[str, Any] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._streamer = streamer
        self._store = store
        # Parameters every request gets, over the conversation's own (a benchmark's, a test's).
        self.params = dict(params or {})
        self.model_defaults = Sampling()  # the loaded model's sampling defaults (its GGUF)
        self.context_size = 0  # the loaded model's n_ctx (0: unknown, nothing is trimmed)
        self.transcript = Transcript()
        # Where a question's images are kept; read on the streaming thread when sent.
        self.images: ImageStore | None = None
        self._request: ChatRequest | None = None
        self._pending = ""
        self._pieces = 0
        self._clock = clock
        self._last_save = 0.0
        self._sent_at = 0.0
        self._first_at: float | None = None
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

    @property
    def system_prompt(self) -> str:
        return str(self.transcript.settings.get("system_prompt") or "")

    def chat_settings(self) -> ChatSettings:
        """The conversation's system prompt and sampling settings."""
        return ChatSettings.from_json(self.transcript.settings)

    def set_chat_settings(self, system_prompt: str, sampling: Sampling) -> None:
        """Change them for this conversation (stored with it; used from the next reply on)."""
        settings = ChatSettings(system_prompt, sampling)
        if settings == self.chat_settings():
            return
        # Other keys of the conversation's settings (its knowledge) are kept.
        self.transcript.settings = {**self.transcript.settings, **json.loads(settings.to_json())}
        self._store.save_settings(self.transcript)

    @property
    def knowledge(self) -> list[str]:
        """The files and folders every question of this conversation draws on."""
        paths = self.transcript.settings.get(KNOWLEDGE)
        return [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []

    def set_knowledge(self, paths: list[str]) -> None:
        """Change them (kept with the conversation; a new one keeps them once it is saved)."""
        if paths != self.knowledge:
            self.transcript.settings = {**self.transcript.settings, KNOWLEDGE: list(paths)}
            self._store.save_settings(self.transcript)

    def request_params(self) -> dict[str, Any]:
        """What a reply is asked with: the conversation's sampling settings over the model's
        defaults, and :attr:`params` over both."""
        return {**self.chat_settings().sampling.to_params(self.model_defaults), **self.params}

    def new_conversation(self, model: str = "", settings: dict[str, Any] | None = None) -> None:
        """Start an empty conversation (a streaming reply is stopped and kept first)."""
        self._end_streaming()
        self.transcript = Transcript(model=model, settings=dict(settings or {}))
        self.conversation_changed.emit(self.transcript)

    def open_conversation(self, conv: Any) -> None:
        """Show a stored conversation (app/library/conversations.Conversation)."""
        self._end_streaming()
        self.transcript = Transcript(messages=list(conv.messages), conversation_id=conv.id,
                                     model=conv.model, settings=dict(conv.settings))
        self.conversation_changed.emit(self.transcript)

    def send(self, text: str, endpoint: ChatEndpoint,
             documents: dict[str, Any] | None = None,
             images: list[dict[str, Any]] | None = None) -> bool:
        """Send the user's ``text``; False when a reply is streaming or the text is empty.

        ``endpoint``: where the reply is asked (the model in use: app/services/active_model.py);
        its source is recorded in the reply's ``meta``. ``documents``: the attached documents'
        meta (app/chat/transcript.py DOCUMENTS, DOCUMENTS_USED), kept with the question.
        ``images``: references into :attr:`images` (app/storage/images.py), kept likewise."""
        text = text.strip()
        if not text or not self._idle():
            return False
        user, live = self.transcript.begin_reply(text)
        user.meta.update(documents or {})
        if images:
            user.meta[IMAGES] = list(images)
        return self._start(endpoint, user, live)

    def _reshow(self, *leaving: Message | None) -> None:
        self.shown_changed.emit([m for m in self.transcript.messages if m not in leaving])

    def regenerate(self, reply: Message, endpoint: ChatEndpoint) -> bool:
        """A new reply in place of ``reply``; the old one stays as a branch."""
        if not self._idle():
            return False
        live = self.transcript.regenerate(reply)
        self._reshow(live)
        return self._start(endpoint, None, live)

    def edit_and_resend(self, question: Message, text: str, endpoint: ChatEndpoint) -> bool:
        """Ask ``text`` instead of ``question``; the old question and its replies stay as a
        branch."""
        text = text.strip()
        if not text or not self._idle():
            return False
        user, live = self.transcript.edit(question, text)
        self._reshow(user, live)
        return self._start(endpoint, user, live)

    def continue_reply(self, reply: Message, endpoint: ChatEndpoint) -> bool:
        """Let the model go on with the last reply (cut by its length limit or by Stop)."""
        if not self._idle():
            return False
        live = self.transcript.continue_reply(reply)
        self._reshow(live)
        return self._start(endpoint, None, live, continuing=True)

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

    # ---- starting and ending a reply ----------------------------------------------------------

    def _idle(self) -> bool:
        return self._request is None and not self._streamer.busy

    def room(self) -> int | None:
        """Tokens the sent conversation may take (None: the context is not known)."""
        return self._budget()

    def sent_messages(self) -> list[dict[str, Any]]:
        """What the next question would be sent after: the system prompt and the turns that
        fit the room, as the model gets them."""
        return self.transcript.api_messages(self.system_prompt, self._budget())[0]

    def _budget(self) -> int | None:
        """Tokens the sent messages may take: the context less room for the reply."""
        if self.context_size <= 0:
            return None
        reply = self.request_params().get("max_tokens") or 1024
        return max(256, self.context_size - min(int(reply), self.context_size // 2))

    def _start(self, endpoint: ChatEndpoint, user: Message | None, live: Message,
               continuing: bool = False) -> bool:
        messages, dropped = self.transcript.api_messages(self.system_prompt, self._budget(),
                                                         continuing=continuing,
                                                         images=endpoint.sees_images)
        if user is not None:
            self._store.save_message(self.transcript, user)
            self.message_added.emit(user)
        if self.transcript.model:
            live.meta["model"] = self.transcript.model
        if not endpoint.model and self.transcript.model:
            # An endpoint that names no model (a test's) is the conversation's local model.
            endpoint = ChatEndpoint.local(endpoint.url, endpoint.key, self.transcript.model,
                                          endpoint.sees_images)
        if endpoint.model:
            # Where this reply comes from (a continued reply may change hands: the last wins).
            live.meta["source"] = endpoint.source.to_meta()
        self._store.save_message(self.transcript, live)
        self._last_save = self._sent_at = self._clock()
        self._first_at = None
        self._pending = ""
        self._pieces = 0
        self.live_changed.emit(live)
        self.trimmed.emit(dropped)
        self._request = self._streamer.send(ChatRequest.to(endpoint, messages,
                                                           self.request_params(), self.images))
        self._timer.start()
        self.busy_changed.emit(True)
        return True

    def _end_streaming(self) -> None:
        if self._request is not None:
            self.stop()
            self._end(ReplyEnd.STOPPED)

    # ---- stream events -----------------------------------------------------------------------

    def _on_delta(self, delta: StreamDelta) -> None:
        if self._request is not None and delta.request == self._request.id:
            if self._first_at is None:
                self._first_at = self._clock()
            self._pieces += 1
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
            self._end(end, usage=outcome.usage, streamed=outcome.streamed)
        elif outcome.kind is FailureKind.RUNNER_GONE:
            self._end(ReplyEnd.RUNNER_DIED)
        elif self._retry_without_system_role(outcome):
            return
        else:
            self._end(ReplyEnd.FAILED, outcome.message)
            if outcome.kind is FailureKind.SERVER:
                self.server_failed.emit(outcome)

    def _retry_without_system_role(self, failure: StreamFailure) -> bool:
        """Some chat templates (Gemma 2's) refuse a system message: send it again with the
        system prompt folded into the first question, once."""
        request = self._request
        if request is None or failure.kind is not FailureKind.API or \
                "chat template" not in failure.message or \
                not request.messages or request.messages[0].get("role") != "system":
            return False
        log.info("the chat template refused the system message; folding it into the question")
        self._request = self._streamer.send(ChatRequest.to(
            request.endpoint, fold_system(request.messages), request.params))
        return True

    def _end(self, end: ReplyEnd, detail: str = "", usage: dict[str, Any] | None = None,
             streamed: bool = True) -> None:
        self._timer.stop()
        if self._pending:
            self.transcript.append(self._pending)
            self._pending = ""
        self._request = None
        stats = ReplyStats.measure(self._sent_at, self._first_at, self._clock(), self._pieces,
                                   usage)
        reply = self.transcript.finish(end, detail)
        if reply is not None:
            reply.meta.update(stats.to_meta())
            reply.meta["finish"] = end.value
            if not streamed:  # the server sent it whole: its speed is not a token rate
                reply.meta["streamed"] = False
            self._store.save_message(self.transcript, reply)
            self.live_changed.emit(None)
            self.reply_finished.emit(reply)
        self.stats_changed.emit(stats)
        self.busy_changed.emit(False)
