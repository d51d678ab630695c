"""The real runner started on a fixed port (the app settings' "share" with a port): it listens
there on loopback, and a port already taken fails with the runner's own reason."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from app.services.runner_process import RunnerProcess, RunnerState
from app.services.tasks import TaskRunner
from runner.wire.exits import ExitCode


@pytest.fixture
def runner(qtbot: Any) -> Iterator[RunnerProcess]:
    tasks = TaskRunner()
    r = RunnerProcess(tasks)
    yield r
    r.stop_and_wait()
    tasks.wait(5000)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_runner_listens_on_the_chosen_port(runner: RunnerProcess, qtbot: Any,
                                               tiny_model: str) -> None:
    port = free_port()
    runner.port = port
    with qtbot.waitSignal(runner.ready, timeout=60_000):
        runner.start(tiny_model)
    assert runner.url == runner.listen_url == f"http://127.0.0.1:{port}"
    assert runner.key and len(runner.key) >= 32


def test_a_port_in_use_fails_with_the_runners_reason(runner: RunnerProcess, qtbot: Any,
                                                     tiny_model: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        runner.port = taken.getsockname()[1]
        with qtbot.waitSignal(runner.failed, timeout=60_000) as failed:
            runner.start(tiny_model)
    assert runner.state == RunnerState.FAILED
    assert runner.last_exit is not None and runner.last_exit.code == ExitCode.PORT_IN_USE
    assert "in use" in str(failed.args[0])
