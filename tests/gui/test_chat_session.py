"""The chat session against fake streams and a fake store; the real ChatStreamer with a fake
client for the Stop race."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

from app.chat.transcript import RUNNER_DIED_NOTE
from app.loading.endpoint import ChatEndpoint
from app.runner_client import RunnerApiError
from app.services.chat_session import ChatSession
from app.services.chat_stream import (
    ChatRequest,
    ChatStreamer,
    FailureKind,
    StreamEnded,
)
from tests.gui.fakes import FakeStore, FakeStreamer

RUNNER = ChatEndpoint.local("http://x", "k", "")  # the model is the conversation's


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make(qtbot: Any) -> tuple[ChatSession, FakeStreamer, FakeStore, Clock]:
    streamer, store, clock = FakeStreamer(), FakeStore(), Clock()
    return ChatSession(streamer, store, clock=clock), streamer, store, clock


def test_pieces_are_coalesced_shown_and_saved_at_least_twice_a_second(qtbot: Any) -> None:
    session, streamer, store, clock = make(qtbot)
    shown: list[str] = []
    session.live_changed.connect(lambda m: shown.append(m.content) if m is not None else None)
    assert session.send("Hello", RUNNER)
    assert streamer.requests[0].messages == [{"role": "user", "content": "Hello"}]
    assert [s.role for s in store.saves] == ["user", "assistant"]  # both rows exist at once
    for piece in ("Hi", " there", ","):
        streamer.piece(piece)
    qtbot.waitUntil(lambda: shown[-1:] == ["Hi there,"], timeout=10_000)
    assert len(shown) <= 3  # one update per timer tick, not one per piece
    saves_before = len(store.saves)
    clock.now = 0.6  # more than SAVE_MS later: the next tick saves the reply so far
    streamer.piece(" friend")
    qtbot.waitUntil(lambda: len(store.saves) > saves_before, timeout=10_000)
    assert store.saves[-1].content == "Hi there, friend"
    streamer.finish("stop")
    reply = session.transcript.messages[-1]
    assert reply.content == "Hi there, friend" and not session.busy
    assert store.saves[-1].content == "Hi there, friend"


def test_the_runner_dying_ends_the_reply_at_once_and_a_late_end_is_ignored(qtbot: Any) -> None:
    session, streamer, store, _ = make(qtbot)
    finished: list[Any] = []
    session.reply_finished.connect(finished.append)
    session.send("Keep talking", RUNNER)
    streamer.piece("words")
    session.runner_died()
    assert finished and finished[0].note == RUNNER_DIED_NOTE and finished[0].content == "words"
    assert store.saves[-1].note == RUNNER_DIED_NOTE
    streamer.fail(FailureKind.RUNNER_GONE, "closed the connection")  # arrives later: ignored
    assert len(finished) == 1 and finished[0].note == RUNNER_DIED_NOTE


def test_a_stream_that_finds_the_runner_gone_says_the_runner_stopped(qtbot: Any) -> None:
    session, streamer, _, _ = make(qtbot)
    session.send("Hi", RUNNER)
    streamer.piece("partial")
    streamer.fail(FailureKind.RUNNER_GONE, "The model runner closed the connection.")
    reply = session.transcript.messages[-1]
    assert reply.note == RUNNER_DIED_NOTE and reply.content == "partial"
    session.send("Again", RUNNER)
    streamer.fail(FailureKind.API, "The prompt does not fit the context.")
    assert session.transcript.messages[-1].note == "The prompt does not fit the context."


def test_closing_during_a_reply_keeps_it_and_waits_for_the_saves(qtbot: Any) -> None:
    session, streamer, store, _ = make(qtbot)
    session.send("Hi", RUNNER)
    streamer.piece("so far")
    session.close()
    assert store.flushed and streamer.shut
    assert store.saves[-1].content == "so far"
    assert store.saves[-1].note == "The window was closed during this reply."


# -- the real streamer: Stop right after Send is never lost --------------------------------------


class _EndlessStream:
    """A stream that yields a piece every millisecond until closed (a model that never ends)."""

    def __init__(self) -> None:
        self.closed = threading.Event()
        self.end = None

    def __iter__(self) -> Iterator[str]:
        while not self.closed.is_set():
            time.sleep(0.001)
            yield "x"

    def close(self) -> None:
        self.closed.set()


class _FakeClient:
    def __init__(self, url: str, key: str) -> None:
        pass

    def __enter__(self) -> _FakeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def stream_chat(self, messages: Any, **params: Any) -> _EndlessStream:
        return _EndlessStream()


def test_stop_pressed_right_after_send_is_never_lost(qtbot: Any) -> None:
    # Today's streamer lost about 1 Stop in 200 here: the worker cleared a shared stop flag
    # when it started the request, after the GUI thread had set it.
    streamer = ChatStreamer(client_factory=_FakeClient)
    ends: list[Any] = []
    streamer.ended.connect(ends.append)
    try:
        for _ in range(300):
            ends.clear()
            streamer.send(ChatRequest("http://x", "k", [{"role": "user", "content": "hi"}]))
            streamer.stop()
            qtbot.waitUntil(lambda: bool(ends), timeout=10_000)
            assert isinstance(ends[0], StreamEnded) and ends[0].reason == "stopped"
            assert not streamer.busy
    finally:
        streamer.shutdown()


def test_an_api_error_is_a_typed_failure_not_a_runner_death(qtbot: Any) -> None:
    class _Refusing(_FakeClient):
        def stream_chat(self, messages: Any, **params: Any) -> Any:
            raise RunnerApiError(400, "The prompt is too long for the context.")

    streamer = ChatStreamer(client_factory=_Refusing)
    try:
        with qtbot.waitSignal(streamer.ended, timeout=10_000) as got:
            streamer.send(ChatRequest("http://x", "k", []))
        failure = got.args[0]
        assert failure.kind is FailureKind.API
        assert failure.message == "The prompt is too long for the context."
    finally:
        streamer.shutdown()


def test_conversation_settings_shape_the_request_and_are_stored(qtbot: Any) -> None:
    from app.chat.sampling import Sampling

    session, streamer, store, _ = make(qtbot)
    session.model_defaults = Sampling(temperature=0.6, top_k=20)
    session.set_chat_settings("Answer in French.", Sampling(temperature=0.1, max_tokens=64))
    assert store.settings_saves[-1]["system_prompt"] == "Answer in French."
    assert session.send("Hi", RUNNER)
    request = streamer.requests[0]
    assert request.messages[0] == {"role": "system", "content": "Answer in French."}
    # The user's temperature wins over the model's; the model's top_k fills the gap.
    assert request.params["temperature"] == 0.1 and request.params["top_k"] == 20
    assert request.params["max_tokens"] == 64


def test_a_template_without_a_system_role_gets_the_prompt_folded_into_the_question(
        qtbot: Any) -> None:
    from app.chat.sampling import Sampling

    session, streamer, _, _ = make(qtbot)
    session.set_chat_settings("Be brief.", Sampling())
    assert session.send("Hi", RUNNER)
    streamer.fail(FailureKind.API, "The model's chat template could not render these "
                                   "messages: System role not supported")
    assert session.busy and len(streamer.requests) == 2
    retry = streamer.requests[1].messages
    assert [m["role"] for m in retry] == ["user"] and "Be brief." in retry[0]["content"]
    streamer.piece("Bonjour")
    streamer.finish("stop")
    qtbot.waitUntil(lambda: not session.busy, timeout=10_000)
    assert session.transcript.messages[-1].content == "Bonjour"


def test_context_budget_drops_the_oldest_turns_and_says_how_many(qtbot: Any) -> None:
    session, streamer, _, _ = make(qtbot)
    dropped: list[int] = []
    session.trimmed.connect(dropped.append)
    session.params = {"max_tokens": 16}
    for i in range(3):
        assert session.send(f"question {i} " + "word " * 200, RUNNER)
        streamer.piece("answer " * 100)
        streamer.finish("stop")
        qtbot.waitUntil(lambda: not session.busy, timeout=10_000)
    session.context_size = 512
    assert session.send("last question", RUNNER)
    assert dropped[-1] > 0 and len(streamer.requests[-1].messages) < 7
    assert len(session.transcript.messages) == 8  # nothing is dropped from the conversation
