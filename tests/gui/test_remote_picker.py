"""The picker's remote models (app/ui/main_window.py) on in-memory services: marked remote,
used without starting the local runner, replies sent to the server with its key and model and
recorded with their source; a model that is gone refreshes its server; back to a local model."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import Qt

from app.remote.servers import RemoteModel
from app.services.chat_session import ChatSession
from app.services.chat_stream import FailureKind
from app.services.runner_process import RunnerState
from app.ui.main_window import MainWindow
from tests.gui.fakes import FakeRemote, make_fakes

LOCAL = "/models/first.gguf"


@pytest.fixture
def env(qtbot: Any) -> Iterator[Any]:
    f = make_fakes([LOCAL])
    remote = FakeRemote()
    box = remote.put("Office PC", "http://10.0.0.2:8080/v1", models=("llama-3.1-8b", "qwen3"),
                     key="sk-box")
    remote.put("Empty", "http://10.0.0.3/v1")  # never checked: nothing in the picker
    session = ChatSession(f.streamer, f.store)
    window = MainWindow(f.runner, f.loader, session, f.library, remote=remote)
    qtbot.addWidget(window)
    window.show()
    yield SimpleNamespace(f=f, remote=remote, box=box, session=session, window=window)
    window.close()


def items(window: MainWindow) -> list[tuple[str, Any]]:
    p = window.picker
    return [(p.itemText(i), p.itemData(i)) for i in range(p.count()) if p.itemText(i)]


def select(window: MainWindow, data: str) -> None:
    window.picker.setCurrentIndex(window.picker.findData(data))


def use(env: Any, model: str = "llama-3.1-8b") -> RemoteModel:
    chosen = RemoteModel(env.box.id, model)
    select(env.window, chosen.key)
    assert env.window.load_btn.text() == "Use" and env.window.load_btn.isEnabled()
    env.window.load_btn.click()
    assert env.remote.calls[-1] == ("use", chosen)
    assert not env.window.load_btn.isEnabled()  # being checked
    env.remote.in_use.emit(chosen)
    return chosen


def test_remote_models_are_listed_after_the_local_ones_and_marked(env: Any) -> None:
    listed = items(env.window)
    assert listed[0] == ("first.gguf", LOCAL)
    remote = [(t, d) for t, d in listed if RemoteModel.from_key(d)]
    assert [t for t, _ in remote] == ["llama-3.1-8b  —  remote: Office PC",
                                      "qwen3  —  remote: Office PC"]
    i = env.window.picker.findData(remote[0][1])
    assert "Office PC (http://10.0.0.2:8080/v1)" in env.window.picker.itemData(
        i, Qt.ItemDataRole.ToolTipRole)
    assert env.window.selected_model() == LOCAL  # a remote key is never a model file
    select(env.window, remote[0][1])
    assert env.window.selected_model() is None
    assert env.window.selected_remote() == RemoteModel(env.box.id, "llama-3.1-8b")
    assert "runs on Office PC" in env.window.status.text()
    env.remote.put("Late", "http://10.0.0.4/v1", models=("phi",))  # a new server: listed at once
    assert any(t == "phi  —  remote: Late" for t, _ in items(env.window))


def test_using_a_remote_model_chats_with_the_server_and_never_starts_the_runner(env: Any) -> None:
    chosen = use(env)
    w = env.window
    assert env.f.loader.loads == [] and env.f.runner.state == RunnerState.STOPPED
    assert w.remote_model == chosen
    assert "Chatting with llama-3.1-8b on Office PC (remote)" in w.status.text()
    assert "(in use)" in w.picker.currentText()
    assert env.session.transcript.model == chosen.key
    assert w.send_btn.isEnabled()
    w.input.setPlainText("Hello there")
    w.send()
    request = env.f.streamer.requests[-1]
    assert (request.url, request.key) == ("http://10.0.0.2:8080/v1", "sk-box")
    assert request.source is not None and request.source.remote
    assert (request.source.server, request.source.model) == ("Office PC", "llama-3.1-8b")
    env.f.streamer.piece("Hi!")
    env.f.streamer.finish("stop")
    reply = env.session.transcript.messages[-1]
    assert reply.meta["source"] == {"kind": "remote", "server": "Office PC",
                                    "url": "http://10.0.0.2:8080/v1", "model": "llama-3.1-8b"}
    assert "llama-3.1-8b on Office PC" in w.chat.toPlainText()  # under the reply


def test_a_server_failure_is_noted_under_the_reply_and_in_the_status(env: Any) -> None:
    use(env)
    env.window.input.setPlainText("Hi")
    env.window.send()
    env.f.streamer.fail(FailureKind.SERVER, "Office PC no longer offers the model "
                                            "“llama-3.1-8b”.")
    assert env.session.transcript.messages[-1].note.startswith("Office PC no longer offers")
    assert "no longer offers" in env.window.status.text()


def test_only_a_model_gone_failure_refreshes(env: Any) -> None:
    from app.services.chat_stream import StreamFailure

    use(env)
    env.window.input.setPlainText("Hi")
    env.window.send()
    req = env.f.streamer.current
    env.f.streamer.current = None
    env.f.streamer.ended.emit(StreamFailure(req.id, FailureKind.SERVER, "refused the key",
                                            "auth"))
    assert ("refresh", env.box.id) not in env.remote.calls
    assert "refused the key" in env.window.status.text()
    env.window.input.setPlainText("Again")
    env.window.send()
    req = env.f.streamer.current
    env.f.streamer.current = None
    env.f.streamer.ended.emit(StreamFailure(req.id, FailureKind.SERVER, "gone", "model_gone"))
    assert env.remote.calls[-1] == ("refresh", env.box.id)


def test_a_failed_check_says_why_and_changes_nothing(env: Any) -> None:
    chosen = RemoteModel(env.box.id, "qwen3")
    select(env.window, chosen.key)
    env.window.load_btn.click()
    env.remote.use_failed.emit(chosen, "Nothing answers at http://10.0.0.2:8080/v1.")
    assert env.window.remote_model is None
    assert "Nothing answers" in env.window.status.text()
    assert env.window.load_btn.isEnabled() and not env.window.send_btn.isEnabled()


def test_back_to_the_loaded_local_model_and_loading_another_leaves_the_server(env: Any) -> None:
    w = env.window
    w.load_selected()  # the local model
    env.f.loader.finish_planning(None)
    assert env.f.runner.state == RunnerState.READY
    use(env)
    assert env.f.runner.state == RunnerState.READY  # the local model stays loaded
    env.f.runner.stop()  # unloading the local model does not stop a remote reply
    assert w.remote_model is not None
    env.f.runner.become(RunnerState.READY)
    select(w, LOCAL)
    assert w.load_btn.text() == "Use" and w.load_btn.isEnabled()
    w.load_btn.click()
    assert w.remote_model is None and env.f.loader.loads == [(LOCAL, [])]  # no reload
    assert env.session.transcript.model == LOCAL
    w.input.setPlainText("Local again")
    w.send()
    assert env.f.streamer.requests[-1].url == "http://127.0.0.1:9"
    assert env.f.streamer.requests[-1].source is not None
    assert not env.f.streamer.requests[-1].source.remote


def test_removing_the_server_in_use_leaves_it(env: Any) -> None:
    use(env)
    env.remote.remove(env.box.id)
    assert env.window.remote_model is None
    assert "removed" in env.window.status.text()
    assert not any(RemoteModel.from_key(d) for _t, d in items(env.window))
