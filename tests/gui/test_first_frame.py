"""The window's first frame comes first: background work and the welcome's cards wait for it."""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

from app.jobs import CancelToken
from app.services.tasks import TaskRunner
from app.ui.first_frame import after_first_frame


class _Paints(QObject):
    """Counts the paint events a widget gets."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def test_work_waits_for_the_first_paint_and_runs_once(qtbot: Any) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    paints = _Paints(window)
    ran: list[int] = []
    after_first_frame(window, lambda: ran.append(paints.count))
    qtbot.wait(50)
    assert ran == []  # never shown: nothing painted, nothing ran
    window.show()
    qtbot.waitUntil(lambda: ran != [])
    assert ran[0] >= 1  # it ran after a paint, not before
    window.update()
    qtbot.waitUntil(lambda: paints.count > ran[0])
    qtbot.wait(20)
    assert len(ran) == 1


def test_work_asked_for_after_the_first_frame_runs_at_the_next_turn(qtbot: Any) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    child = QWidget(window)
    first: list[str] = []
    after_first_frame(child, lambda: first.append("first"))  # a child asks for its window
    window.show()
    qtbot.waitUntil(lambda: first == ["first"])
    later: list[str] = []
    after_first_frame(child, lambda: later.append("later"))
    assert later == []  # not inside the call
    qtbot.waitUntil(lambda: later == ["later"])


def test_a_held_runner_starts_nothing_until_released_then_everything_in_order(
        qtbot: Any) -> None:
    tasks = TaskRunner(max_threads=1)
    tasks.hold()
    started: list[str] = []
    done: list[str] = []
    lock = threading.Lock()

    def call(name: str) -> str:
        with lock:
            started.append(name)
        return name

    tasks.run(lambda: call("a"), done.append)
    tasks.run(lambda: call("b"), done.append)
    tasks.start_job(lambda _token: call("job"), done.append, name="job")
    qtbot.wait(100)
    assert started == [] and done == []
    tasks.release()
    qtbot.waitUntil(lambda: len(done) == 3)
    # The pool's calls in the order asked (the job has a thread of its own, so it may come
    # anywhere among them).
    assert [name for name in started if name != "job"] == ["a", "b"]
    assert sorted(done) == ["a", "b", "job"]
    tasks.run(lambda: call("after"), done.append)  # released: at once
    qtbot.waitUntil(lambda: "after" in done)


def test_a_held_job_cancelled_before_release_delivers_nothing(qtbot: Any) -> None:
    tasks = TaskRunner()
    tasks.hold()
    done: list[object] = []
    token: CancelToken = tasks.start_job(lambda _t: "late", done.append, name="job")
    tasks.cancel_jobs()
    tasks.release()
    tasks.run(lambda: "marker", done.append)
    qtbot.waitUntil(lambda: "marker" in done)
    qtbot.wait(50)
    assert token.cancelled and done == ["marker"]
