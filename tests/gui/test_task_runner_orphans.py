"""An outcome that arrives after its TaskRunner was deleted is dropped (a composed window torn
down while a hardware detection ran raised "Signal source has been deleted" in the next test)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import threading
from typing import Any

import shiboken6
from PySide6.QtCore import QObject

from app.services.tasks import TaskRunner


def test_an_outcome_after_its_runner_was_deleted_is_dropped(qtbot: Any) -> None:
    parent = QObject()
    tasks = TaskRunner(parent)
    release, finished = threading.Event(), threading.Event()
    got: list[object] = []

    def work() -> str:
        release.wait(30)
        return "late"

    def on_ok(result: str) -> None:
        got.append(result)

    def on_err(exc: Exception) -> None:
        got.append(exc)

    tasks.run(lambda: (work(), finished.set())[0], on_ok, on_err)
    shiboken6.delete(parent)  # the window and its services go while the call runs
    release.set()
    assert finished.wait(30)
    # The outcome leaves the runner's set of live ones when the event loop handles it.
    qtbot.waitUntil(lambda: not tasks._live, timeout=30_000)
    assert got == []


def test_an_outcome_of_a_live_runner_arrives(qtbot: Any) -> None:
    tasks = TaskRunner()
    got: list[str] = []
    tasks.run(lambda: "ok", got.append)
    qtbot.waitUntil(lambda: got == ["ok"], timeout=30_000)


def test_no_qt_object_is_made_per_call(qtbot: Any) -> None:
    """Each call's outcome is plain Python and all runners share one relay made in the GUI
    thread: a QObject made per call was freed by a worker thread, whose destructor then waited
    for the GIL under Qt's signal-slot mutex while the GUI thread waited for that mutex."""
    first, second = TaskRunner(), TaskRunner()
    got: list[str] = []
    first.run(lambda: "a", got.append)
    second.run(lambda: "b", got.append)
    outcomes = list(first._live | second._live)
    qtbot.waitUntil(lambda: sorted(got) == ["a", "b"], timeout=30_000)
    relays = {id(value) for o in outcomes for value in vars(o).values()
              if isinstance(value, QObject) and value is not o._owner}
    assert len(relays) == 1, relays
