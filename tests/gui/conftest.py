"""GUI fixtures: the real main window, wired to the real runner process (offscreen)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.fixtures.models import TINY, model_path


@pytest.fixture(scope="session", autouse=True)
def english() -> None:
    """The window's language for every GUI test: English words and number formats, whatever
    the machine's locale (a test that wants another installs it: app.ui.lang.install_language)."""
    from PySide6.QtCore import QLocale

    QLocale.setDefault(QLocale("en_US"))


@pytest.fixture(scope="session")
def tiny_model() -> str:
    return str(model_path(TINY))


@pytest.fixture
def make_window(qtbot: Any, tmp_path: Any) -> Iterator[Any]:
    """The real window with the real services, composed as the app composes them (smoke set)."""
    from PySide6.QtCore import QObject

    from app.__main__ import compose

    made: list[Any] = []

    def make(chat_params: dict[str, Any] | None = None,
             runner_flags: list[str] | None = None) -> Any:
        parent = QObject()
        gui = compose(parent, store_path=tmp_path / f"hearth-{len(made)}.sqlite3",
                      runner_flags=runner_flags, chat_params=chat_params)
        window = gui.window
        window.gui = gui  # tests reach the services through it
        window._parent = parent  # keeps the services alive as long as the window
        qtbot.addWidget(window)
        window.show()
        made.append(window)
        return window

    yield make
    for window in made:
        window.close()  # stops the runner and the stream thread
        window.gui.close()
        assert window.runner._proc is None or window.runner.state.value in ("stopped", "stopping")


@pytest.fixture
def fakes(qtbot: Any) -> Iterator[Any]:
    """The window with in-memory fakes of its services: behaviour tests in milliseconds."""
    from app.services.chat_session import ChatSession
    from app.ui.main_window import MainWindow
    from tests.gui.fakes import make_fakes

    f = make_fakes(["/models/first.gguf"])
    session = ChatSession(f.streamer, f.store)
    window = MainWindow(f.runner, f.loader, session, f.library)
    qtbot.addWidget(window)
    window.show()
    f.extra["window"] = window
    f.extra["session"] = session
    yield f
    window.close()


def unload(qtbot: Any, window: Any) -> None:
    """Press Unload and wait until the runner has stopped."""
    from PySide6.QtCore import Qt

    from app.services.runner_process import RunnerState

    with qtbot.waitSignal(window.runner.state_changed, timeout=10_000,
                          check_params_cb=lambda s: s == RunnerState.STOPPED):
        qtbot.mouseClick(window.unload_btn, Qt.MouseButton.LeftButton)


def load(qtbot: Any, window: Any, model: str, timeout: int = 30_000) -> None:
    from app.services.runner_process import RunnerState

    window.choose_model(model)
    with qtbot.waitSignal(window.runner.ready, timeout=timeout):
        window.load_selected()
    assert window.runner.state == RunnerState.READY
