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
from app.chat.sampling import THINKING, ChatSettings, Sampling, fold_system, thinking_params
from app.chat.stats import ReplyStats
from app.chat.toolcalls import IGNORED_CALLS_NOTE, ModelCall, begin_round, end_open_calls
from app.chat.transcript import IMAGES, KNOWLEDGE, ReplyEnd, Transcript
from app.i18n import T_
from app.loading.endpoint import ChatEndpoint
from app.services.chat_stream import (
    ChatRequest,
    FailureKind,
    StreamDelta,
    StreamEnded,
    StreamFailure,
)
from app.services.tool_round import ToolBox, ToolRound
from app.storage.images import ImageStore
from app.tools.config import CONVERSATION_ALLOWED, CONVERSATION_OFF
from app.tools.spec import ToolSpec

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
    # Approval | None: a tool call the person is asked about (None: nothing is asked now).
    approval_changed = Signal(object)

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
        # The tools replies may call (app/services/tools.py); None: no tools at all.
        self.tools: ToolBox | None = None
        self._endpoint: ChatEndpoint | None = None  # where the reply being made is asked
        self._offered: dict[str, ToolSpec] = {}  # this reply's tools, by the model's name
        self._round: ToolRound | None = None  # the tool calls being decided or run
        self._rounds = 0  # tool rounds in this reply
        self._preparing = False  # the first request waits for the tools' servers to start
        self._ignored_calls = 0  # calls of tools not offered, in the reply that just ended
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
        return self._request is not None or self._round is not None or self._preparing

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
        """Stop the reply; the partial text is kept, noted "Stopped.". A tool loop ends at
        once: running calls are cancelled and nothing more is asked or sent."""
        if self._request is not None:
            self._request.token.cancel()
            self._streamer.stop()
        else:
            self._abort(ReplyEnd.STOPPED)

    def decide(self, uid: str, choice: str) -> None:
        """The person's answer to the tool call they were asked about (app/services/
        tool_round.py: "once", "conversation", "always" or "deny")."""
        if self._round is not None:
            self._round.decide(uid, choice)

    @property
    def approval(self) -> Any:
        """The tool call the person is being asked about (an Approval), if any."""
        return self._round.question if self._round is not None else None

    @property
    def thinking(self) -> str:
        """The conversation's thinking choice ("" the model's default; "on", "off"; "low",
        "medium", "high")."""
        value = self.transcript.settings.get(THINKING)
        return value if isinstance(value, str) else ""

    def set_thinking(self, value: str) -> None:
        """Keep the conversation's thinking choice (from the next reply)."""
        if value != self.thinking:
            self.transcript.settings = {**self.transcript.settings, THINKING: value}
            self._store.save_settings(self.transcript)

    def tool_sources(self) -> list[str]:
        """The sources of tools turned on in Settings (built-in, each server), which a
        conversation may leave out."""
        return self.tools.sources() if self.tools is not None else []

    def tools_off(self) -> list[str]:
        """The sources this conversation leaves out."""
        return self._tools_off()

    def set_tools_off(self, off: list[str]) -> None:
        """Leave ``off`` out of this conversation (kept with it; from the next reply)."""
        if off != self._tools_off():
            self.transcript.settings = {**self.transcript.settings, CONVERSATION_OFF: list(off)}
            self._store.save_settings(self.transcript)

    def tools_wanted(self) -> bool:
        """Whether this conversation would offer tools to a model that knows them."""
        return self.tools is not None and self.tools.wanted(self._tools_off())

    def offered_tools(self) -> list[ToolSpec]:
        """The tools this conversation offers a model that knows tools."""
        return self.tools.offered(self._tools_off()) if self.tools is not None else []

    def runner_died(self) -> None:
        """The runner process went away: end the live reply at once, saying why."""
        self._abort(ReplyEnd.RUNNER_DIED)

    def close(self, timeout_s: float = 3.0) -> None:
        """The window closes: keep the reply so far, stop the stream, wait for the saves."""
        self._abort(ReplyEnd.CLOSED)
        self._streamer.shutdown()
        if self.tools is not None:
            self.tools.close()
        self._store.flush(timeout_s)

    def _on_save_failed(self, message: str) -> None:
        self.save_failed.emit(message)

    # ---- starting and ending a reply ----------------------------------------------------------

    def _idle(self) -> bool:
        return not self.busy and not self._streamer.busy

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
                                          endpoint.sees_images, endpoint.tools,
                                          endpoint.thinking)
        if endpoint.model:
            # Where this reply comes from (a continued reply may change hands: the last wins).
            live.meta["source"] = endpoint.source.to_meta()
        self._store.save_message(self.transcript, live)
        self._last_save = self._sent_at = self._clock()
        self._first_at = None
        self._pending = ""
        self._pieces = 0
        self._endpoint = endpoint
        self._rounds = 0
        self._offered = {}
        self.live_changed.emit(live)
        self.trimmed.emit(dropped)
        if endpoint.tools and self.tools is not None:
            # The servers this conversation uses start first (a failed one is not offered).
            self._preparing = True
            self.tools.prepare(self._tools_off(), lambda: self._tools_ready(live, messages))
        else:
            self._send(messages)
        self.busy_changed.emit(self.busy)
        return True

    def _tools_off(self) -> list[str]:
        off = self.transcript.settings.get(CONVERSATION_OFF)
        return [str(o) for o in off] if isinstance(off, list) else []

    def _tools_ready(self, live: Message, messages: list[dict[str, Any]]) -> None:
        if not self._preparing or self.transcript.live is not live:
            return  # stopped while the servers started
        self._preparing = False
        self._offered = {s.model_name: s for s in self.offered_tools()}
        self._send(messages)

    def _send(self, messages: list[dict[str, Any]]) -> None:
        assert self._endpoint is not None
        params = {**thinking_params(self._endpoint.thinking, self.thinking),
                  **self.request_params()}
        if self._offered:
            params["tools"] = [s.to_openai() for s in self._offered.values()]
        self._request = self._streamer.send(ChatRequest.to(self._endpoint, messages, params,
                                                           self.images))
        self._timer.start()

    # ---- tool calls ----------------------------------------------------------------------------

    def _begin_tools(self, calls: list[ModelCall]) -> None:
        """The model's turn ended with calls: keep them in the reply as a round, and ask and
        run them (app/services/tool_round.py); the results go back to the model after."""
        live = self.transcript.live
        assert live is not None and self.tools is not None
        self._timer.stop()
        self._flush()
        self._request = None
        self._rounds += 1
        round_ = begin_round(live, calls, {name: s.key for name, s in self._offered.items()})
        self._store.save_message(self.transcript, live)
        allowed = self.transcript.settings.get(CONVERSATION_ALLOWED)
        self._round = ToolRound(round_, {s.key: s for s in self._offered.values()}, self.tools,
                                [str(a) for a in allowed] if isinstance(allowed, list) else [],
                                self._clock, parent=self)
        self._round.asking.connect(self._on_asking)
        self._round.changed.connect(self._on_round_changed)
        self._round.allowed_for_conversation.connect(self._allow_here)
        self._round.done.connect(self._after_tools)
        self.live_changed.emit(live)
        self._round.start()

    def _on_asking(self, approval: object) -> None:
        self.approval_changed.emit(approval)

    def _on_round_changed(self) -> None:
        if self.transcript.live is not None:
            self.live_changed.emit(self.transcript.live)
        if self._round is not None and self._round.question is None:
            self.approval_changed.emit(None)

    def _allow_here(self, entry: str) -> None:
        allowed = self.transcript.settings.get(CONVERSATION_ALLOWED)
        have = [str(a) for a in allowed] if isinstance(allowed, list) else []
        self.transcript.settings = {**self.transcript.settings,
                                    CONVERSATION_ALLOWED: [*have, entry]}
        self._store.save_settings(self.transcript)

    def _after_tools(self) -> None:
        """Every call of the round has its outcome: send them to the model, unless Stop came
        first (then the round is already ended)."""
        round_, self._round = self._round, None
        if round_ is None:
            return
        round_.deleteLater()
        self.approval_changed.emit(None)
        live = self.transcript.live
        if live is None:
            return
        self._store.save_message(self.transcript, live)
        self.live_changed.emit(live)
        messages, _ = self.transcript.api_messages(self.system_prompt, self._budget(),
                                                   images=bool(self._endpoint and
                                                               self._endpoint.sees_images))
        self._send(messages)

    def _stop_tools(self) -> None:
        self._preparing = False
        round_, self._round = self._round, None
        if round_ is not None:
            round_.done.disconnect(self._after_tools)
            round_.cancel()
            round_.deleteLater()
            self.approval_changed.emit(None)
        if self.transcript.live is not None:
            end_open_calls(self.transcript.live)

    def _end_streaming(self) -> None:
        """Another conversation is shown: the reply being made ends as if Stop was pressed,
        whatever it waits for (the stream, the person's answer, a tool, a server starting)."""
        if self._request is not None:
            self._streamer.stop()
        self._abort(ReplyEnd.STOPPED)

    def _abort(self, end: ReplyEnd) -> None:
        """End the reply being made now, saying why (``end``), whatever it waits for: its
        stream is cancelled (a late end of it is ignored), its tool round cancelled."""
        if not self.busy:
            return
        if self._request is not None:
            self._request.token.cancel()
        self._stop_tools()
        self._end(end)

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
            calls = [c for n, raw in enumerate(outcome.tool_calls)
                     if (c := ModelCall.from_openai(raw, n)) is not None]
            if calls and not self._offered:
                log.info("the model called %d tool(s) it was not offered; ignored", len(calls))
                self._ignored_calls = len(calls)
            if calls and self._offered and self.tools is not None and \
                    outcome.reason != "stopped":
                if self._rounds < self.tools.max_rounds:
                    self._begin_tools(calls)
                    return
                self._end(ReplyEnd.FAILED, str(T_(
                    "Stopped after {count} rounds of tool calls, the most one reply may make "
                    "(Settings → Tools).", count=self._rounds)))
                return
            end = {"length": ReplyEnd.LENGTH, "stopped": ReplyEnd.STOPPED}.get(
                outcome.reason, ReplyEnd.FINISHED)
            self._end(end, usage=outcome.usage, streamed=outcome.streamed)
        elif outcome.kind is FailureKind.RUNNER_GONE:
            self._end(ReplyEnd.RUNNER_DIED)
        elif self._retry_without_system_role(outcome) or self._retry_without_tools(outcome):
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

    def _retry_without_tools(self, failure: StreamFailure) -> bool:
        """A server that refuses tools (or a model that cannot take them) is asked again
        without them, once; the reply says so."""
        request = self._request
        if request is None or "tools" not in request.params or \
                failure.kind not in (FailureKind.API, FailureKind.SERVER) or \
                "tool" not in failure.message.lower():
            return False
        log.info("the model or its server refused tools; asking again without them")
        self._offered = {}
        params = {k: v for k, v in request.params.items() if k != "tools"}
        self._request = self._streamer.send(ChatRequest(
            request.url, request.key, request.messages, params, source=request.source,
            images=request.images))
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
        ignored, self._ignored_calls = self._ignored_calls, 0
        reply = self.transcript.finish(end, detail)
        if reply is not None and ignored and not reply.note:
            reply.note = IGNORED_CALLS_NOTE
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
