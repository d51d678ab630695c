"""A second real Hearth runner on loopback as a server the user added, through the real
services: RemoteService (keyring, models list, checks), the real ChatStreamer and ChatSession,
and the window's picker. The key is real; the keyring is an in-memory one (or none at all)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import keyring
import pytest
from keyring.backends import fail

from app.chat.source import ReplySource
from app.loading.endpoint import ChatEndpoint
from app.remote.servers import RemoteModel, ServerList
from app.services.chat_session import ChatSession
from app.services.chat_stream import ChatStreamer
from app.services.remote import RemoteService
from app.services.runner_process import RunnerState
from app.services.tasks import TaskRunner
from app.ui.main_window import MainWindow
from tests.gui.fakes import FakeStore, make_fakes
from tests.integration.conftest import Runner, running
from tests.unit.hub.test_auth import MemoryKeyring

WAIT_MS = 30_000


@pytest.fixture(scope="module")
def box(tiny_model: str) -> Iterator[Runner]:
    """The "other computer": a real runner with its own key, on loopback."""
    with running(model=tiny_model) as r:
        yield r


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def service(qtbot: Any, tmp_path: Path) -> Iterator[Any]:
    tasks = TaskRunner()
    remote = RemoteService(tasks, ServerList.load(tmp_path / "servers.json"))
    yield SimpleNamespace(remote=remote, tasks=tasks, path=tmp_path / "servers.json")
    tasks.wait(5000)


def add(qtbot: Any, remote: RemoteService, url: str, key: str) -> tuple[str, str, bool]:
    with qtbot.waitSignal(remote.checked, timeout=WAIT_MS) as got:
        server = remote.add("Box", url, key)
    sid, text, error = got.args
    assert sid == server.id
    return server.id, text, error


def test_adding_a_runner_lists_its_models_keeps_the_key_in_the_keyring_and_chats(
        qtbot: Any, box: Runner, service: Any, memory_keyring: MemoryKeyring,
        tiny_model: str) -> None:
    remote = service.remote
    sid, text, error = add(qtbot, remote, box.url.removeprefix("http://"), box.key or "")
    model = Path(tiny_model).stem
    assert not error and text == f"Connected: 1 model ({model})."
    server = remote.server(sid)
    assert server.base_url == box.url + "/v1" and server.models == (model,) and server.has_key
    assert memory_keyring.store == {("hearth", f"server:{sid}"): box.key}
    saved = service.path.read_text("utf-8")
    assert box.key not in saved and json.loads(saved)["servers"][0]["models"] == [model]
    # Ready to chat: the model is checked, the key known for this run.
    chosen = RemoteModel(sid, model)
    with qtbot.waitSignal(remote.in_use, timeout=WAIT_MS) as ready:
        remote.use(chosen)
    assert ready.args == [chosen]
    url, key = remote.connection(sid)
    assert (url, key) == (box.url + "/v1", box.key)
    # A reply through the real stream and session, recorded with its source.
    streamer, store = ChatStreamer(), FakeStore()
    session = ChatSession(streamer, store, params={"max_tokens": 8, "temperature": 0})
    try:
        with qtbot.waitSignal(session.reply_finished, timeout=WAIT_MS) as done:
            assert session.send("Say hello.", ChatEndpoint(url, key,
                                                           ReplySource(model, "Box", url)))
        reply = done.args[0]
        assert reply.content and reply.meta["finish"] in ("finished", "stop", "length")
        assert reply.meta["source"] == {"kind": "remote", "server": "Box", "url": url,
                                        "model": model}
    finally:
        streamer.shutdown()


def test_a_wrong_key_and_a_model_that_is_gone_say_so(qtbot: Any, box: Runner, service: Any,
                                                     memory_keyring: MemoryKeyring) -> None:
    remote = service.remote
    sid, text, error = add(qtbot, remote, box.url + "/v1", "not-the-key")
    assert error and "Box refused the API key (HTTP 401)" in text
    assert remote.note(sid) == (text, True)
    with qtbot.waitSignal(remote.checked, timeout=WAIT_MS) as got:
        remote.edit(sid, "Box", box.url + "/v1", box.key)
    assert got.args[2] is False and memory_keyring.store[("hearth", f"server:{sid}")] == box.key
    gone = RemoteModel(sid, "a-model-it-never-had")
    with qtbot.waitSignal(remote.use_failed, timeout=WAIT_MS) as failed:
        remote.use(gone)
    assert failed.args[0] == gone and "no longer offers the model" in failed.args[1]
    with qtbot.waitSignal(remote.changed, timeout=WAIT_MS):
        remote.remove(sid)
    service.tasks.wait(5000)
    assert memory_keyring.store == {} and remote.servers() == []


def test_without_a_keyring_the_key_is_kept_in_an_owner_only_file(
        qtbot: Any, box: Runner, service: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEARTH_HOME", str(tmp_path / "home"))
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        remote = service.remote
        notices: list[str] = []
        remote.failed.connect(notices.append)
        sid, _text, error = add(qtbot, remote, box.url + "/v1", box.key or "")
        assert not error and notices == []
        assert remote.connection(sid)[1] == box.key
        assert box.key not in service.path.read_text("utf-8")  # never in servers.json
        # The next run of Hearth reads it again (app/storage/secrets.py's file).
        again = RemoteService(service.tasks, ServerList.load(service.path))
        with qtbot.waitSignal(again.in_use, timeout=WAIT_MS):
            again.use(RemoteModel(sid, again.server(sid).models[0]))
        assert again.connection(sid)[1] == box.key
    finally:
        keyring.set_keyring(previous)


def test_the_window_chats_with_the_remote_model_without_starting_the_runner(
        qtbot: Any, box: Runner, service: Any, memory_keyring: MemoryKeyring,
        tiny_model: str) -> None:
    remote = service.remote
    sid, _text, error = add(qtbot, remote, box.url + "/v1", box.key or "")
    assert not error
    f = make_fakes(["/models/first.gguf"])
    streamer = ChatStreamer()
    session = ChatSession(streamer, f.store, params={"max_tokens": 8, "temperature": 0})
    window = MainWindow(f.runner, f.loader, session, f.library, remote=remote)
    qtbot.addWidget(window)
    window.show()
    try:
        chosen = RemoteModel(sid, Path(tiny_model).stem)
        window.picker.setCurrentIndex(window.picker.findData(chosen.key))
        assert "remote: Box" in window.picker.currentText()
        with qtbot.waitSignal(remote.in_use, timeout=WAIT_MS):
            window.load_btn.click()
        assert window.remote_model == chosen and window.send_btn.isEnabled()
        window.input.setPlainText("Say hello.")
        with qtbot.waitSignal(session.reply_finished, timeout=WAIT_MS) as done:
            window.send()
        assert done.args[0].content and done.args[0].meta["source"]["server"] == "Box"
        assert f.loader.loads == [] and f.runner.state == RunnerState.STOPPED
        assert "on Box" in window.chat.toPlainText()
    finally:
        window.close()
