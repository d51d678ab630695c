"""One Hearth per data folder (app/instance.py), with real processes and Qt's real local socket.

Before, every start opened another Hearth on the same data folder: two of them resumed the same
queued download and wrote the same files. Now a later start hands its file to the first Hearth
and exits 0; the first comes forward and selects the file, as `hearth MODEL` does at start.

Hand-overs are handshakes (a child says it holds the folder; a start's exit follows the first
Hearth's answer), never sleeps. The one loop with a deadline waits for either of two starts to
end: which one ends does not matter, and the deadline only keeps a broken build from hanging.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Holds the data folder the way a first Hearth does (the lock, and with "listen" the socket too),
# says so, and stays until its stdin closes or it is killed.
_FIRST = r"""
import sys
from pathlib import Path
from PySide6.QtCore import QCoreApplication
app = QCoreApplication([])
if sys.argv[2] == "listen":
    from app.instance import SingleInstance
    first = SingleInstance(Path(sys.argv[1]))
    assert first.claim()
else:
    from app.storage.filelock import FileLock
    lock = FileLock(Path(sys.argv[1]) / "hearth.lock", "the Hearth app")
    assert lock.try_acquire()
print("first", flush=True)
sys.stdin.read()
"""

# Says the bytes of a file to the first Hearth's socket and prints its answer (b"" when it hung
# up).
_RAW = r"""
import sys
from PySide6.QtCore import QCoreApplication
from PySide6.QtNetwork import QLocalSocket
app = QCoreApplication([])
sent = open(sys.argv[2], 'rb').read()
sock = QLocalSocket()
sock.connectToServer(sys.argv[1])
assert sock.waitForConnected(30000), sock.errorString()
sock.write(sent)
sock.waitForBytesWritten(30000)
answer = b""
while b"\n" not in answer and sock.waitForReadyRead(30000):
    answer += bytes(sock.readAll().data())
answer += bytes(sock.readAll().data())
print(repr(answer), flush=True)
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def data_dir(home: Path) -> Path:
    return home / "data"


def start_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("HEARTH_DATA_DIR", None)
    env.update(HEARTH_HOME=str(home), HEARTH_MODELS_DIR=str(home / "models"),
               QT_QPA_PLATFORM="offscreen")
    return env


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[str]]]:
    made: list[subprocess.Popen[str]] = []
    yield made
    for proc in made:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def hearth(home: Path, children: list[subprocess.Popen[str]], *args: str,
           cwd: Path = ROOT) -> subprocess.Popen[str]:
    """`hearth [ARGS]` as a user starts it: the real entry point and run_gui."""
    env = start_env(home)
    env["PYTHONPATH"] = str(ROOT)  # started from another folder, the checkout stays importable
    proc = subprocess.Popen([sys.executable, "-m", "app", *args], cwd=cwd, env=env, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    children.append(proc)
    return proc


def first_hearth(home: Path, children: list[subprocess.Popen[str]], how: str
                 ) -> subprocess.Popen[str]:
    data_dir(home).mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-c", _FIRST, str(data_dir(home)), how], cwd=ROOT,
                            env=start_env(home), text=True, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    children.append(proc)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "first\n", proc.communicate(timeout=30)
    return proc


def finish(qtbot: Any, proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Wait for a child while this process's event loop runs (the first Hearth answering)."""
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=90_000)
    return proc.communicate(timeout=30)


# -- the whole app, twice --------------------------------------------------------------------------


@pytest.mark.timeout(180)
def test_two_starts_on_one_data_folder_leave_one_hearth_which_opens_the_file(
        home: Path, children: list[subprocess.Popen[str]], tiny_model: Path) -> None:
    model = str(tiny_model)
    a = hearth(home, children, model)
    b = hearth(home, children, model)
    deadline = time.monotonic() + 90
    while a.poll() is None and b.poll() is None:
        assert time.monotonic() < deadline, \
            "both starts are still running: two Hearths on one data folder"
        time.sleep(0.1)
    ended, kept = (a, b) if a.poll() is not None else (b, a)
    out, err = ended.communicate(timeout=30)
    assert ended.returncode == 0, out + err
    assert "Hearth is already running; its window was brought forward" in err
    assert "Traceback" not in err
    assert kept.poll() is None  # the first Hearth goes on
    log = (home / "log" / "hearth.log").read_text(encoding="utf-8")
    assert f"another start asked for the window and {model}" in log
    kept.terminate()


# -- the first Hearth's window ---------------------------------------------------------------------


@pytest.mark.timeout(180)
def test_a_later_start_brings_the_window_forward_and_selects_its_file(
        qtbot: Any, home: Path, children: list[subprocess.Popen[str]], tmp_path: Path) -> None:
    from app.instance import SingleInstance
    from app.services.chat_session import ChatSession
    from app.ui.main_window import MainWindow
    from tests.gui.fakes import make_fakes

    first = SingleInstance(data_dir(home))
    assert first.claim()
    try:
        f = make_fakes(["/models/first.gguf"])
        window = MainWindow(f.runner, f.loader, ChatSession(f.streamer, f.store), f.library)
        qtbot.addWidget(window)
        window.show()
        first.serve(window)
        window.tabs.setCurrentIndex(window.tabs.count() - 1)  # the person is on another tab
        window.showMinimized()
        qtbot.waitUntil(window.isMinimized, timeout=10_000)

        elsewhere = tmp_path / "elsewhere"
        (elsewhere / "models").mkdir(parents=True)
        # A path relative to the later start's own folder, which the first Hearth does not share.
        later = hearth(home, children, os.path.join("models", "picked.gguf"), cwd=elsewhere)
        _, err = finish(qtbot, later)
        assert later.returncode == 0, err
        assert "already running" in err and "Traceback" not in err
        picked = str(elsewhere / "models" / "picked.gguf")
        qtbot.waitUntil(lambda: window.selected_model() == picked, timeout=10_000)
        assert not window.isMinimized() and window.isVisible()
        assert window.tabs.currentIndex() == 0  # the chat, as at a start with a file
        window.close()
    finally:
        first.close()


# -- a first Hearth that died or hangs -------------------------------------------------------------


@pytest.mark.timeout(180)
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_a_killed_first_hearth_leaves_nothing_in_the_next_ones_way(
        qtbot: Any, home: Path, children: list[subprocess.Popen[str]]) -> None:
    from app.instance import SingleInstance, StartRequest

    dead = first_hearth(home, children, "listen")
    dead.kill()  # no clean-up: its lock file and its socket file stay behind
    dead.communicate(timeout=30)
    assert (data_dir(home) / "hearth.lock").exists()

    first = SingleInstance(data_dir(home))
    assert first.claim()  # the kernel dropped the lock; the stale socket file was replaced
    try:
        asked: list[StartRequest] = []
        first.on_request(asked.append)
        later = hearth(home, children)
        _, err = finish(qtbot, later)
        assert later.returncode == 0, err
        assert asked == [StartRequest(None, False)]
    finally:
        first.close()


@pytest.mark.timeout(180)
def test_a_first_hearth_that_does_not_answer_gets_exit_1_and_a_sentence(
        home: Path, children: list[subprocess.Popen[str]]) -> None:
    stuck = first_hearth(home, children, "lock-only")
    later = hearth(home, children, "model.gguf")
    out, err = later.communicate(timeout=120)
    assert later.returncode == 1, out + err
    assert "already running" in err and "does not answer" in err
    assert f"pid {stuck.pid}" in err and "Traceback" not in err


# -- the socket and the folders --------------------------------------------------------------------


def test_each_data_folder_has_a_hearth_of_its_own(tmp_path: Path) -> None:
    from app.instance import SingleInstance, server_name

    one, two = tmp_path / "one", tmp_path / "two"
    first, other = SingleInstance(one), SingleInstance(two)
    try:
        assert first.claim() and other.claim()  # e.g. tests and the person's own Hearth
        assert not SingleInstance(one).claim()
        assert server_name(one) != server_name(two)
        assert server_name(one) == server_name(tmp_path / "x" / ".." / "one")
    finally:
        first.close()
        other.close()
    again = SingleInstance(one)
    assert again.claim()
    again.close()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sent", [b"\xff{not json\n", b'{"model": 7}\n', b"x" * 70_000],
                         ids=["bytes", "wrong-type", "endless"])
def test_what_is_not_a_start_request_is_refused_and_the_next_start_is_served(
        qtbot: Any, home: Path, children: list[subprocess.Popen[str]], sent: bytes,
        tmp_path: Path) -> None:
    from app.instance import SingleInstance, StartRequest, server_name

    first = SingleInstance(data_dir(home))
    assert first.claim()
    try:
        asked: list[StartRequest] = []
        first.on_request(asked.append)
        payload = tmp_path / "sent.bin"
        payload.write_bytes(sent)
        raw = subprocess.Popen([sys.executable, "-c", _RAW, server_name(data_dir(home)),
                                str(payload)], cwd=ROOT, env=start_env(home), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        children.append(raw)
        out, err = finish(qtbot, raw)
        assert raw.returncode == 0, err
        assert out.strip() in (repr(b"no\n"), repr(b"")), out
        assert asked == []

        later = hearth(home, children, "--load", "/models/x.gguf")
        _, err = finish(qtbot, later)
        assert later.returncode == 0, err
        assert asked == [StartRequest("/models/x.gguf", True)]
    finally:
        first.close()
