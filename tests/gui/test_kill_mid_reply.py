"""A SIGKILL of the app in the middle of a reply keeps the conversation and the reply up to that
point.

A child process runs the real app composition (``app.__main__.compose``: real store, real runner
process, real stream) offscreen on a tiny generated model, sends a message and reports the live
reply each time it grows. The test kills the child with SIGKILL while the reply streams, then
reads the database: the question is there, and the reply as it was at most a moment before the
kill (the session saves the live reply at least every 0.5 s). The runner, started with
``--watch-stdin``, must not outlive the app.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.library.conversations import ConversationStore
from app.storage.db import open_database
from app.storage.legacy import LegacySources
from tests.fixtures.models import TINY, model_path

REPO = Path(__file__).resolve().parents[2]
QUESTION = "Tell me a very long story about a hearth."
# A context long enough that an endless reply (ignore_eos) streams for several seconds.
LONG_TINY = replace(TINY, n_ctx_train=8192, name="hearth-test-8k")

STREAMED_S = 1.5  # the reply has streamed this long when the app is killed
MIN_CHARS = 300  # ... and is at least this long
SAVED_WITHIN_S = 1.0  # what the app showed this long before the kill is in the database

CHILD = r"""
import json, sys, time
from pathlib import Path

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication

from app.__main__ import compose
from app.services.runner_process import RunnerState

model, store, question = sys.argv[1], Path(sys.argv[2]), sys.argv[3]


def say(**event):
    print(json.dumps(event), flush=True)


app = QApplication([])
parent = QObject()
# One runner thread: with one per core (the plan's choice) on a busy 2-core machine the tiny
# model's stream sometimes collapses to a few tokens a second, and this test is not about speed.
# ignore_eos and a max_tokens past the app's default (2048, a second of this tiny model on a
# fast machine): the reply goes on until the context (8192) is full.
gui = compose(parent, store_path=store, runner_flags=["--threads", "1", "--threads-batch", "1"],
              chat_params={"ignore_eos": True, "temperature": 0, "seed": 1,
                           "max_tokens": 16384})
window = gui.window
window.show()


def on_state(state):
    proc = gui.runner._proc
    if proc is not None and proc.processId():
        say(event="runner", pid=int(proc.processId()), state=state.value)
    if state == RunnerState.READY:
        say(event="ready")
        window.input.setPlainText(question)
        window.send()
    elif state in (RunnerState.FAILED, RunnerState.STOPPED):
        say(event="runner-ended", state=state.value, status=window.status.text())


def on_live(message):
    if message is not None and message.content:
        say(event="live", content=message.content)


def on_finished(message):
    say(event="finished", note=message.note, content=message.content)


gui.runner.state_changed.connect(on_state)
gui.loader.failed.connect(lambda text: say(event="load-failed", text=text))
gui.session.live_changed.connect(on_live)
gui.session.reply_finished.connect(on_finished)
window.choose_model(model)
window.load_selected()
say(event="started")
sys.exit(app.exec())
"""


class Child:
    """The app process, its JSON lines read on a thread (each with the time it arrived)."""

    def __init__(self, args: list[str], env: dict[str, str], stderr: Any) -> None:
        self.proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE,
                                     stderr=stderr, stdin=subprocess.DEVNULL, text=True)
        self.lines: queue.Queue[tuple[float, dict[str, Any]] | None] = queue.Queue()
        self.seen: list[tuple[float, dict[str, Any]]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            self.lines.put((time.monotonic(), event))
        self.lines.put(None)

    def next(self, timeout: float) -> tuple[float, dict[str, Any]] | None:
        """The next line, or None at the end of its output; raises queue.Empty on timeout."""
        item = self.lines.get(timeout=timeout)
        if item is not None:
            self.seen.append(item)
        return item

    def drain(self) -> None:
        """Read what is left once the process is gone."""
        self._reader.join(timeout=10)
        while True:
            try:
                if self.next(timeout=0) is None:
                    return
            except queue.Empty:
                return


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def _env(home: Path) -> dict[str, str]:
    """Like tests/conftest.py: an isolated Hearth home, no Hub, no keyring, offscreen Qt."""
    env = dict(os.environ)
    env.update({
        "HEARTH_HOME": str(home),
        "HEARTH_MODELS_DIR": str(home / "models"),
        "HF_ENDPOINT": "http://127.0.0.1:9",
        "HF_HOME": str(home / "hf-home"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONUNBUFFERED": "1",
    })
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE"):
        env.pop(name, None)
    return env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SIGKILL and /proc: Linux")
def test_sigkill_mid_reply_keeps_the_conversation_and_the_reply_so_far(tmp_path: Path) -> None:
    model = str(model_path(LONG_TINY))
    db_path = tmp_path / "hearth.sqlite3"
    home = tmp_path / "home"
    home.mkdir()
    log_path = tmp_path / "child-stderr.txt"
    runner_pids: set[int] = set()
    with open(log_path, "w", encoding="utf-8") as log:
        child = Child([sys.executable, "-c", CHILD, model, str(db_path), QUESTION], _env(home),
                      log)
    killed_at = 0.0
    try:
        def fail(why: str) -> None:
            events = [e.get("event") for _t, e in child.seen]
            tail = log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
            pytest.fail(f"{why}; events: {events[-20:]}; the app's stderr:\n{tail}")

        first_text_at: float | None = None
        deadline = time.monotonic() + 180  # a plan with its dry run and a load, on a busy machine
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                fail("the reply did not stream long enough in time")
            try:
                item = child.next(timeout=left)
            except queue.Empty:
                continue
            if item is None:
                fail(f"the app exited early (code {child.proc.wait(timeout=10)})")
                return
            at, event = item
            kind = event.get("event")
            if kind == "runner":
                runner_pids.add(int(event["pid"]))
            elif kind in ("load-failed", "runner-ended"):
                fail(f"the model did not load: {event}")
            elif kind == "finished":
                fail(f"the reply ended before the kill ({len(event['content'])} characters, "
                     f"{event['note']!r}): make it longer")
            elif kind == "live":
                if first_text_at is None:
                    first_text_at = at
                if at - first_text_at >= STREAMED_S and len(event["content"]) >= MIN_CHARS:
                    killed_at = time.monotonic()
                    os.kill(child.proc.pid, signal.SIGKILL)
                    break
        assert child.proc.wait(timeout=30) == -signal.SIGKILL
        child.drain()
        # The runner notices that its app is gone (its stdin closes) and exits by itself.
        assert runner_pids, "the app never said which process is its runner"
        gone_by = time.monotonic() + 15
        while any(_alive(p) for p in runner_pids) and time.monotonic() < gone_by:
            time.sleep(0.1)
        assert not any(_alive(p) for p in runner_pids), "the runner outlived the killed app"
    finally:
        if child.proc.poll() is None:
            child.proc.kill()
            child.proc.wait(timeout=30)
        for pid in runner_pids:  # never leave a runner behind, even when the test failed
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if child.proc.stdout is not None:
            child.proc.stdout.close()

    shown = [(at, e["content"]) for at, e in child.seen if e.get("event") == "live"]
    assert shown
    before = [c for at, c in shown if at <= killed_at - SAVED_WITHIN_S]
    assert before, "the reply had not been shown a second before the kill"

    db = open_database(db_path, legacy=LegacySources())
    try:
        store = ConversationStore(db)
        (summary,) = store.summaries()
        assert summary.title == QUESTION and summary.message_count == 2
        question, reply = store.get(summary.id).messages
        assert (question.role, question.content) == ("user", QUESTION)
        assert reply.role == "assistant" and reply.content
        # The stored reply is one the app showed (a prefix of where the reply got to), at least
        # as long as what it showed a second before it was killed.
        assert reply.content in {c for _at, c in shown}
        assert shown[-1][1].startswith(reply.content)
        assert len(reply.content) >= len(before[-1]), (len(reply.content), len(before[-1]),
                                                       len(shown[-1][1]))
        assert reply.meta.get("model") == model
    finally:
        db.close()
