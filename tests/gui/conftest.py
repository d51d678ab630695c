"""GUI fixtures: the real main window, wired to the real runner process (offscreen)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.fixtures.models import TINY, model_path


@pytest.fixture(scope="session")
def tiny_model() -> str:
    return str(model_path(TINY))


@pytest.fixture
def make_window(qtbot: Any) -> Iterator[Any]:
    from app.services.chat_stream import ChatStreamer
    from app.services.runner_process import RunnerProcess
    from app.services.tasks import TaskRunner
    from app.ui.main_window import MainWindow

    made: list[Any] = []

    def make(chat_params: dict[str, Any] | None = None,
             runner_flags: list[str] | None = None) -> Any:
        tasks = TaskRunner()
        runner = RunnerProcess(tasks)
        streamer = ChatStreamer()
        window = MainWindow(runner, streamer, tasks, runner_flags=runner_flags,
                            chat_params=chat_params)
        qtbot.addWidget(window)
        window.show()
        made.append(window)
        return window

    yield make
    for window in made:
        window.close()  # stops the runner and the stream thread
        assert window.runner._proc is None or window.runner.state.value in ("stopped", "stopping")


def load(qtbot: Any, window: Any, model: str, timeout: int = 30_000) -> None:
    from app.services.runner_process import RunnerState

    window.choose_model(model)
    with qtbot.waitSignal(window.runner.ready, timeout=timeout):
        window.load_selected()
    assert window.runner.state == RunnerState.READY
