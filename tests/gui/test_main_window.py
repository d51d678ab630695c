"""The smoke set: the main window composed as the app composes it, against the real runner and
the real store: load, stream a reply, stop it, survive the runner's death.

Behaviour without the runner is tested with fakes in test_window.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from app.services.runner_process import RunnerState
from tests.gui.conftest import load


def _type_and_send(qtbot: Any, window: Any, text: str) -> None:
    window.input.setPlainText(text)
    qtbot.mouseClick(window.send_btn, Qt.MouseButton.LeftButton)


def test_streamed_reply_appears_in_chat_view(qtbot: Any, make_window: Any, tiny_model: str,
                                             tmp_path: Path) -> None:
    window = make_window(chat_params={"max_tokens": 48, "ignore_eos": True, "seed": 7})
    progress: list[float] = []
    window.runner.progress.connect(progress.append)
    load(qtbot, window, tiny_model)
    assert progress and progress[-1] == 1.0
    assert window.send_btn.isEnabled()

    deltas: list[str] = []
    repaints: list[str] = []
    ends: list[Any] = []
    window.gui.streamer.delta.connect(lambda d: deltas.append(d.text))
    window.gui.streamer.ended.connect(ends.append)
    window.chat.textChanged.connect(lambda: repaints.append(window.chat.toPlainText()))
    with qtbot.waitSignal(window.session.reply_finished, timeout=20_000) as done:
        _type_and_send(qtbot, window, "Hello there, Hearth!")
        assert window.stop_btn.isEnabled()  # streaming now
    reply = done.args[0]
    assert ends[0].reason == "length" and ends[0].usage["completion_tokens"] == 48
    assert reply.role == "assistant" and reply is window.session.transcript.messages[-1]
    assert reply.note == "The reply reached its length limit."
    assert len(deltas) >= 24  # streamed piece by piece, not in one lump
    assert reply.content == "".join(deltas)
    text = window.chat.toPlainText()
    assert "Hello there, Hearth!" in text
    assert reply.content.strip()[:10] in text
    # Text arrived while streaming: the view showed a partial reply with the cursor mark.
    assert any("▍" in r for r in repaints)
    assert window.send_btn.isEnabled() and not window.stop_btn.isEnabled()

    # The conversation was saved in the store with the reply.
    from app.library.conversations import ConversationStore

    def stored() -> list[Any]:
        conv = window.session.transcript.conversation_id
        if conv is None:
            return []
        return window.gui.store.call(lambda db: ConversationStore(db).get(conv).messages)\
            .result(5)

    qtbot.waitUntil(lambda: [m.content for m in stored()] == ["Hello there, Hearth!",
                                                             reply.content], timeout=5000)

    image = window.grab()
    assert not image.isNull() and image.width() > 400
    out = tmp_path / "main.png"
    assert image.save(str(out))
    assert out.stat().st_size > 5000


def test_stop_ends_reply_early(qtbot: Any, make_window: Any, tiny_model: str) -> None:
    # ignore_eos with no max_tokens: it would run until the context (4096) is full.
    window = make_window(chat_params={"ignore_eos": True})
    load(qtbot, window, tiny_model)
    first: list[Any] = []
    window.gui.streamer.delta.connect(first.append)
    with qtbot.waitSignal(window.session.reply_finished, timeout=20_000) as done:
        _type_and_send(qtbot, window, "Tell me a long story.")
        qtbot.waitUntil(lambda: len(first) > 0, timeout=10_000)
        qtbot.mouseClick(window.stop_btn, Qt.MouseButton.LeftButton)
    reply = done.args[0]
    assert reply.note == "Stopped."
    assert reply.content  # the partial reply is kept
    with window.runner.client() as client:
        qtbot.waitUntil(lambda: client.status()["last_request"]["finish_reason"] == "cancelled",
                        timeout=5000)
        status = client.status()
    assert status["last_request"]["completion_tokens"] < 3000
    # The runner is free again: the next message is answered.
    window.session.params = {"max_tokens": 4, "ignore_eos": True}
    with qtbot.waitSignal(window.session.reply_finished, timeout=20_000) as done2:
        _type_and_send(qtbot, window, "Shorter, please.")
    assert done2.args[0].note == "The reply reached its length limit."


def test_bad_model_is_not_started(qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    # Planning reads the header first: a file that is not a model never reaches the runner.
    bad = tmp_path / "notes.gguf"
    bad.write_text("these are my notes, not a model\n" * 10)
    window = make_window()
    window.choose_model(str(bad))
    with qtbot.waitSignal(window.loader.failed, timeout=20_000) as failed:
        window.load_selected()
        assert "Planning" in window.status.text()
        assert not window.load_btn.isEnabled()  # no second load while planning
    message = failed.args[0]
    assert "notes.gguf" in message and "not a GGUF" in message
    assert message in window.status.text()
    assert window.runner.state == RunnerState.STOPPED and window.runner._proc is None
    assert window.load_btn.isEnabled() and not window.send_btn.isEnabled()
    assert not window.progress.isVisible()


def test_runner_death_offers_restart_and_keeps_the_conversation(
        qtbot: Any, make_window: Any, tiny_model: str) -> None:
    import psutil

    window = make_window(chat_params={"ignore_eos": True})
    load(qtbot, window, tiny_model)
    plan = window.loader.plan
    assert not window.restart_btn.isVisible()
    got: list[Any] = []
    window.gui.streamer.delta.connect(got.append)
    _type_and_send(qtbot, window, "Keep talking.")
    qtbot.waitUntil(lambda: len(got) > 3, timeout=10_000)
    psutil.Process(window.runner._proc.processId()).kill()
    # The status says so, the chat notes it on the reply, restart is offered (the waits are hang
    # guards: nothing here waits for a time-out to fire).
    qtbot.waitUntil(lambda: window.restart_btn.isVisible(), timeout=30_000)
    qtbot.waitUntil(lambda: "stopped during this reply" in window.chat.toPlainText(),
                    timeout=30_000)
    # What told the app is the process's own exit (a crash while it served), an event it gets
    # at once, not a request timing out.
    exit_ = window.runner.last_exit
    assert exit_ is not None and exit_.crashed and exit_.state == RunnerState.READY, exit_
    assert "stopped unexpectedly" in window.status.text() or "exited" in window.status.text()
    assert "Restart" in window.status.text() and "conversation is kept" in window.status.text()
    qtbot.waitUntil(lambda: not window.session.busy, timeout=5000)
    messages = window.session.transcript.messages
    reply = messages[-1]
    assert reply.role == "assistant" and reply.content  # the partial reply is kept
    assert reply.note and reply.note in window.chat.toPlainText()
    assert messages[-2].content == "Keep talking."
    partial = reply.content
    assert window.load_btn.isEnabled() and not window.send_btn.isEnabled()

    # Restart: the same model with the plan that worked, without planning again.
    with qtbot.waitSignal(window.runner.ready, timeout=30_000):
        qtbot.mouseClick(window.restart_btn, Qt.MouseButton.LeftButton)
        assert not window.restart_btn.isVisible()
    assert window.loader.plan.settings == plan.settings
    with window.runner.client() as client:
        assert client.status()["settings"]["ctx_size"] == plan.settings.n_ctx
    assert messages[-1].content == partial
    assert "Keep talking." in window.chat.toPlainText()
    window.session.params = {"max_tokens": 3, "ignore_eos": True}
    with qtbot.waitSignal(window.session.reply_finished, timeout=20_000):
        _type_and_send(qtbot, window, "Are you back?")
    assert [m.role for m in messages] == ["user", "assistant"] * 2
    assert messages[1].content == partial
