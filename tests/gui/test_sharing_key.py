"""Sharing keeps other apps' set-ups working (issue 25, defect 6): the real runner, started while
sharing, accepts the same kept key at every load until the person rotates it; a sharing change
(who can connect, the port, a new key) can be applied now by loading the model again; Settings
says where the key is kept, and offers Rotate key and Apply now. Keyrings: an in-memory
backend installed as keyring's own, or keyring's "no backend" one (the key then lives in the
owner-only file under a temporary HEARTH_HOME)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtCore import Qt

from app.remote.share import KEY_NAME, SharedKey
from app.runner_client import RunnerAuthError, RunnerClient
from app.services.runner_process import RunnerProcess, RunnerState
from app.services.sharing import apply_now
from app.services.tasks import TaskRunner
from app.settings import AppSettings
from app.storage import secrets
from app.ui.settings_dialog import APPLY_NOW, SettingsDialog
from tests.gui import model_fakes as mf
from tests.gui.fakes import FakeRemote, FakeRunner
from tests.unit.test_secrets import MemoryKeyring

WAIT_MS = 60_000


@pytest.fixture(params=["keyring", "no keyring"])
def store(request: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The secret store's two ways, in a home of the test's own."""
    monkeypatch.setenv("HEARTH_HOME", str(tmp_path))
    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring() if request.param == "keyring" else fail.Keyring())
    try:
        yield request.param
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def runner(qtbot: Any) -> Iterator[RunnerProcess]:
    tasks = TaskRunner()
    r = RunnerProcess(tasks)
    yield r
    r.stop_and_wait()
    tasks.wait(5000)


def start(qtbot: Any, runner: RunnerProcess, model: str) -> str:
    with qtbot.waitSignal(runner.ready, timeout=WAIT_MS):
        runner.start(model)
    assert runner.key
    return runner.key


def stop(qtbot: Any, runner: RunnerProcess) -> None:
    runner.stop()
    qtbot.waitUntil(lambda: runner.state == RunnerState.STOPPED, timeout=WAIT_MS)


def accepts(runner: RunnerProcess, key: str) -> bool:
    """Whether the runner serving now answers a request made with ``key``."""
    with RunnerClient(runner.url, key) as client:
        try:
            client.models()
        except RunnerAuthError:
            return False
    return True


def test_the_shared_key_stays_the_same_across_a_reload(qtbot: Any, runner: RunnerProcess,
                                                       tiny_model: str, store: str) -> None:
    runner.sharing = True  # the settings' share_runner
    runner.shared_key = SharedKey()  # this test's store, not one read earlier in the process
    first = start(qtbot, runner, tiny_model)
    assert accepts(runner, first)
    stop(qtbot, runner)
    # A new start of Hearth reads the kept key too.
    runner.shared_key = SharedKey()
    assert start(qtbot, runner, tiny_model) == first
    assert accepts(runner, first) and not accepts(runner, first + "x")
    assert secrets.get(KEY_NAME) == first
    if store == "no keyring" and os.name == "posix":
        assert (Path(secrets.where()).stat().st_mode & 0o777) == 0o600


def test_without_sharing_each_load_has_a_key_of_its_own(qtbot: Any, runner: RunnerProcess,
                                                        tiny_model: str, store: str) -> None:
    first = start(qtbot, runner, tiny_model)
    stop(qtbot, runner)
    assert start(qtbot, runner, tiny_model) != first  # nothing else connects: no kept key
    assert secrets.get(KEY_NAME) is None


def _second_loopback() -> str | None:
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.2", 0))
    except OSError:
        return None  # not every system routes all of 127/8 (macOS)
    return "127.0.0.2"


def test_apply_now_reloads_with_who_can_connect_the_port_and_a_rotated_key(
        qtbot: Any, runner: RunnerProcess, tiny_model: str, store: str) -> None:
    runner.sharing = True
    runner.shared_key = key = SharedKey()
    old = start(qtbot, runner, tiny_model)
    new = key.rotate()
    assert accepts(runner, old)  # the running model keeps its key until it loads again
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    host = _second_loopback() or "127.0.0.1"
    # What the dialog's "changed" does: the next start listens there.
    runner.configure(port=port, host=host, limits=runner.limits, sharing=True)
    restarts: list[int] = []

    def restart() -> bool:  # ModelLoader.restart: the same model again
        restarts.append(1)
        runner.start(tiny_model)
        return True

    with qtbot.waitSignal(runner.ready, timeout=WAIT_MS):
        assert apply_now(runner, restart)
    assert restarts == [1]
    assert runner.listen_url == f"http://{host}:{port}"
    assert runner.key == new and accepts(runner, new) and not accepts(runner, old)
    assert not apply_now(FakeRunner(), restart)  # type: ignore[arg-type]  # nothing loaded
    assert restarts == [1]


# -- Settings -------------------------------------------------------------------------------------


def dialog(qtbot: Any, runner: FakeRunner, settings: AppSettings, *,
           reload: Any = None, remote: Any = None) -> SettingsDialog:
    d = SettingsDialog(settings, models=mf.FakeLocalModels(), hub=mf.FakeHub(), runner=runner,
                       apply_theme=lambda _t: None, save=lambda _s: None, runtimes=lambda: [],
                       interfaces=lambda: [], shared_key=SharedKey(), reload=reload,
                       remote=remote)
    qtbot.addWidget(d)
    d.show()
    d.show_page("sharing")
    return d


def test_settings_say_where_the_keys_are_kept(qtbot: Any, store: str, tmp_path: Path) -> None:
    d = dialog(qtbot, FakeRunner(), AppSettings(share_runner=True), remote=FakeRemote())
    if store == "keyring":
        expected = "Hearth keeps its keys in the system keyring."
    else:
        expected = (f"This computer has no system keyring, so Hearth keeps its keys in "
                    f"{tmp_path / 'config' / 'secrets.json'}, a file only your user account "
                    "can read.")
    assert d.key_store_note.text() == expected and d.key_store_note.isVisible()
    assert d.rotate_btn.isVisible()
    servers = d.findChild(type(d.key_store_note), "servers_note")
    assert servers is not None and servers.text() == expected  # servers' keys: the same rule
    d.share_check.setChecked(False)
    assert not d.key_store_note.isVisible()


def test_rotate_key_and_a_who_can_connect_change_can_be_applied_now(qtbot: Any,
                                                                     store: str) -> None:
    secrets.put(KEY_NAME, "fake-key")  # the key the running (fake) model was started with
    runner = FakeRunner()
    runner.become(RunnerState.READY)
    reloads: list[int] = []
    d = dialog(qtbot, runner, AppSettings(share_runner=True, runner_port=0),
               reload=lambda: reloads.append(1) is None)
    assert d.key_edit.text() == "fake-key"
    assert "stays the same at every load" in d.connection_note.text()
    assert not d.apply_btn.isVisible() and "next load" not in d.connection_note.text()
    qtbot.mouseClick(d.rotate_btn, Qt.MouseButton.LeftButton)
    kept = secrets.get(KEY_NAME)
    assert kept and kept != "fake-key"
    assert "A new key is kept" in d.message.text()
    assert "The new key applies from the next load." in d.connection_note.text()
    assert d.apply_btn.isVisible() and d.apply_btn.text() == APPLY_NOW
    qtbot.mouseClick(d.apply_btn, Qt.MouseButton.LeftButton)
    assert reloads == [1] and "Loading the model again" in d.message.text()
    # A "who can connect" change is not stuck until the next load either.
    secrets.put(KEY_NAME, "fake-key")
    d2 = dialog(qtbot, runner, AppSettings(share_runner=True, runner_port=0),
                reload=lambda: reloads.append(2) is None)
    assert not d2.apply_btn.isVisible()
    d2.host_combo.setCurrentIndex(1)
    d2.host_combo.activated.emit(1)
    assert "who can connect applies from the next load" in d2.connection_note.text()
    assert d2.apply_btn.isVisible()
    qtbot.mouseClick(d2.apply_btn, Qt.MouseButton.LeftButton)
    assert reloads == [1, 2]


def test_without_a_way_to_reload_there_is_no_apply_now(qtbot: Any, store: str) -> None:
    runner = FakeRunner()
    runner.become(RunnerState.READY)
    d = dialog(qtbot, runner, AppSettings(share_runner=True, share_host="0.0.0.0"))
    assert "applies from the next load" in d.connection_note.text()
    assert not d.apply_btn.isVisible()


def test_the_window_rotates_the_key_and_applies_it_now(qtbot: Any, make_window: Any,
                                                       tiny_model: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Through compose(): the runner starts with the kept key while sharing, and Settings'
    Rotate key then Apply now loads the model again with the new one."""
    from app.settings import save_settings
    from tests.gui.conftest import load

    monkeypatch.setenv("HEARTH_HOME", str(tmp_path / "home"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    save_settings(AppSettings(share_runner=True, runner_port=port, first_run_done=True))
    window = make_window()
    load(qtbot, window, tiny_model)
    runner = window.runner
    assert runner.listen_url == f"http://127.0.0.1:{port}"
    old = runner.key
    window.settings_requested.emit()
    d = window.findChild(SettingsDialog)
    assert d is not None and d.key_edit.text() == old == d._shared_key.get()
    qtbot.mouseClick(d.nav_buttons["sharing"], Qt.MouseButton.LeftButton)
    assert not d.apply_btn.isVisible()
    qtbot.mouseClick(d.rotate_btn, Qt.MouseButton.LeftButton)
    new = d._shared_key.get()
    assert new != old and d.apply_btn.isVisible()
    with qtbot.waitSignal(runner.ready, timeout=WAIT_MS):
        qtbot.mouseClick(d.apply_btn, Qt.MouseButton.LeftButton)
    assert runner.key == new and runner.listen_url == f"http://127.0.0.1:{port}"
    assert accepts(runner, new) and not accepts(runner, old)
    assert d.key_edit.text() == new and not d.apply_btn.isVisible()
    d.close()
