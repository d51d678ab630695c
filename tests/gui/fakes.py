"""In-memory fakes of the window's services (app/services/protocols.py), for GUI behaviour tests
that run in milliseconds. The smoke set (test_smoke.py) wires the real services instead.

Each fake is driven by the test: ``runner.become(RunnerState.READY)``, ``streamer.piece("Hi")``,
``streamer.finish("stop")``. Nothing here sleeps or spawns a process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.chat.message import Message
from app.chat.transcript import Transcript
from app.runner_client import RunnerClient, RunnerUnreachable
from app.services.chat_stream import (
    ChatRequest,
    FailureKind,
    StreamDelta,
    StreamEnded,
    StreamFailure,
)
from app.services.runner_process import RunnerState


class FakeRunner(QObject):
    state_changed = Signal(object)
    progress = Signal(float)
    ready = Signal()
    failed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self._state = RunnerState.STOPPED
        self.url = ""
        self.listen_url = ""
        self.model = ""
        self.stopped = 0

    @property
    def state(self) -> RunnerState:
        return self._state

    @property
    def key(self) -> str | None:
        return "fake-key" if self.url else None

    def become(self, state: RunnerState) -> None:
        self._state = state
        self.url = "http://127.0.0.1:9" if state in (RunnerState.LOADING, RunnerState.READY) \
            else ""
        self.listen_url = self.url
        self.state_changed.emit(state)
        if state == RunnerState.READY:
            self.progress.emit(1.0)
            self.ready.emit()

    def die(self, message: str) -> None:
        self.become(RunnerState.FAILED)
        self.failed.emit(message)

    def stop(self) -> None:
        self.stopped += 1
        self.become(RunnerState.STOPPING)
        QTimer.singleShot(0, lambda: self.become(RunnerState.STOPPED))

    def stop_and_wait(self, msecs: int = 3000) -> None:
        if self._state != RunnerState.STOPPED:
            self.become(RunnerState.STOPPED)

    def client(self) -> RunnerClient:
        raise RunnerUnreachable("The fake runner has no HTTP API.")


class FakeLoader(QObject):
    planned = Signal(object)
    retrying = Signal(str)
    failed = Signal(str)
    died = Signal(str)

    def __init__(self, runner: FakeRunner) -> None:
        super().__init__()
        self.runner = runner
        self.path = ""
        self.loads: list[tuple[str, list[str]]] = []
        self.planning = False
        self.plan: Any = None
        self.good_plan: Any = None
        self.steps: list[str] = []
        self.cancelled = 0
        self.shut_down = False
        runner.failed.connect(self._on_runner_failed)

    @property
    def busy(self) -> bool:
        return self.planning

    def load(self, path: str, flags: list[str] | None = None, pins: Any = None) -> bool:
        if self.planning:
            return False
        self.path = path
        self.loads.append((path, list(flags or [])))
        self.planning = True
        return True

    def finish_planning(self, plan: Any) -> None:
        """The plan arrives: the runner starts and becomes ready."""
        self.planning = False
        self.plan = plan
        self.planned.emit(plan)
        self.runner.model = self.path
        self.runner.become(RunnerState.STARTING)
        self.runner.become(RunnerState.LOADING)
        self.runner.become(RunnerState.READY)
        self.good_plan = plan

    def fail_planning(self, message: str) -> None:
        self.planning = False
        self.failed.emit(message)

    def restart(self) -> bool:
        if self.good_plan is None:
            return False
        self.finish_planning(self.good_plan)
        return True

    def cancel(self) -> None:
        self.cancelled += 1
        self.planning = False

    def shutdown(self) -> None:
        self.shut_down = True
        self.cancel()

    def _on_runner_failed(self, message: str) -> None:
        if self.good_plan is not None:
            self.died.emit(message)


class FakeStreamer(QObject):
    delta = Signal(object)
    ended = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[ChatRequest] = []
        self.current: ChatRequest | None = None
        self.shut = False

    @property
    def busy(self) -> bool:
        return self.current is not None

    def send(self, request: ChatRequest) -> ChatRequest:
        assert self.current is None, "a reply is already streaming"
        self.requests.append(request)
        self.current = request
        return request

    def piece(self, text: str) -> None:
        assert self.current is not None
        self.delta.emit(StreamDelta(self.current.id, text))

    def finish(self, reason: str = "stop") -> None:
        assert self.current is not None
        req, self.current = self.current, None
        self.ended.emit(StreamEnded(req.id, reason, None))

    def call_tools(self, *calls: tuple[str, str]) -> None:
        """End the reply with tool calls, each (name, arguments as JSON text)."""
        assert self.current is not None
        req, self.current = self.current, None
        self.ended.emit(StreamEnded(req.id, "tool_calls", None, tool_calls=tuple(
            {"id": f"call_{req.id}_{n}", "type": "function",
             "function": {"name": name, "arguments": args}}
            for n, (name, args) in enumerate(calls))))

    def fail(self, kind: FailureKind, message: str) -> None:
        assert self.current is not None
        req, self.current = self.current, None
        self.ended.emit(StreamFailure(req.id, kind, message))

    def stop(self) -> None:
        # Like the real worker: the stream notices the cancel and ends "stopped" a moment later.
        req = self.current
        if req is None:
            return
        req.token.cancel()

        def end() -> None:
            if self.current is req:
                self.current = None
                self.ended.emit(StreamEnded(req.id, "stopped", None))

        QTimer.singleShot(0, end)

    def shutdown(self) -> None:
        self.shut = True
        self.current = None


@dataclass
class SavedMessage:
    conversation: int
    role: str
    content: str
    note: str


class FakeStore(QObject):
    failed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.saves: list[SavedMessage] = []
        self.rows: dict[int, SavedMessage] = {}
        self._ids: dict[int, int] = {}  # id(message) -> row
        self._conversations: dict[int, int] = {}  # id(transcript) -> conversation
        self.flushed = False
        self.settings_saves: list[dict[str, Any]] = []

    def save_message(self, transcript: Transcript, message: Message) -> None:
        conv = self._conversations.setdefault(id(transcript), len(self._conversations) + 1)
        row = self._ids.setdefault(id(message), len(self._ids) + 1)
        saved = SavedMessage(conv, message.role, message.content, message.note)
        self.rows[row] = saved
        self.saves.append(saved)

    def save_settings(self, transcript: Transcript) -> None:
        self.settings_saves.append(dict(transcript.settings))

    def flush(self, timeout_s: float) -> bool:
        self.flushed = True
        return True


class FakeLibrary(QObject):
    recent_changed = Signal(list)

    def __init__(self, paths: list[str] | None = None) -> None:
        super().__init__()
        self.paths = list(paths or [])

    def recent(self) -> list[str]:
        return list(self.paths)

    def use(self, path: str) -> list[str]:
        self.paths = [path, *[p for p in self.paths if p != path]]
        return list(self.paths)


@dataclass
class Fakes:
    runner: FakeRunner
    loader: FakeLoader
    streamer: FakeStreamer
    store: FakeStore
    library: FakeLibrary
    extra: dict[str, Any] = field(default_factory=dict)


def make_fakes(paths: list[str] | None = None) -> Fakes:
    runner = FakeRunner()
    return Fakes(runner, FakeLoader(runner), FakeStreamer(), FakeStore(), FakeLibrary(paths))


class FakeRemote(QObject):
    """The servers service (app/services/remote.py) in memory: the test answers its checks
    with ``answer_check`` / ``answer_use``."""

    changed = Signal()
    checked = Signal(str, str, bool)
    in_use = Signal(object)
    use_failed = Signal(object, str)
    failed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        from app.remote.servers import ServerList

        self.list = ServerList()
        self.keys: dict[str, str] = {}
        self.calls: list[tuple[Any, ...]] = []
        self.notes: dict[str, tuple[str, bool]] = {}

    def servers(self) -> list[Any]:
        return list(self.list.servers)

    def server(self, server_id: str) -> Any:
        return self.list.get(server_id)

    def note(self, server_id: str) -> tuple[str, bool]:
        return self.notes.get(server_id, ("", False))

    def connection(self, server_id: str) -> tuple[str, str]:
        s = self.list.get(server_id)
        return (s.base_url if s else "", self.keys.get(server_id, ""))

    def put(self, name: str, base_url: str, models: tuple[str, ...] = (), key: str = "",
            server_id: str | None = None) -> Any:
        """A server as if added and checked (for tests that start with one)."""
        from app.remote.servers import Server, new_id

        s = Server(server_id or new_id(), name, base_url, has_key=bool(key), models=models,
                   checked=time.time() - 3600 if models else 0.0)
        self.list.put(s)
        if key:
            self.keys[s.id] = key
        self.changed.emit()
        return s

    def add(self, name: str, base_url: str, key: str) -> Any:
        from app.remote.keys import check_key
        from app.remote.servers import check_name, normalize_base_url

        s = self.put(check_name(name, self.servers()), normalize_base_url(base_url),
                     key=check_key(key))
        self.calls.append(("add", s.id, s.name, s.base_url, key))
        return s

    def edit(self, server_id: str, name: str, base_url: str, key: str | None) -> Any:
        from dataclasses import replace

        from app.remote.servers import check_name, normalize_base_url

        old = self.list.get(server_id)
        assert old is not None
        s = replace(old, name=check_name(name, self.servers(), server_id),
                    base_url=normalize_base_url(base_url))
        self.list.put(s)
        self.calls.append(("edit", server_id, s.name, s.base_url, key))
        self.changed.emit()
        return s

    def remove(self, server_id: str) -> None:
        self.calls.append(("remove", server_id))
        self.list.remove(server_id)
        self.changed.emit()

    def refresh(self, server_id: str) -> None:
        self.calls.append(("refresh", server_id))

    def use(self, model: Any) -> None:
        self.calls.append(("use", model))

    def answer_check(self, server_id: str, text: str, error: bool = False,
                     models: tuple[str, ...] | None = None) -> None:
        from dataclasses import replace

        if models is not None:
            s = self.list.get(server_id)
            assert s is not None
            self.list.put(replace(s, models=models, checked=2.0))
            self.changed.emit()
        self.notes[server_id] = (text, error)
        self.checked.emit(server_id, text, error)
