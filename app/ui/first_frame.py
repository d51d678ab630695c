"""Work that can wait until the window has drawn its first frame.

At start-up a person waits for the window; what fills it later (the welcome page's cards, the
hardware report, the Hub's answers) can come a moment after. Work handed to
:func:`after_first_frame` runs in the event-loop turn after the window's first paint, so the
first frame is not behind it (docs/architecture.md, "Start-up").
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

# A window that is never painted (started minimised, a platform without expose events) gets
# its work anyway after this long.
_AT_THE_LATEST_MS = 2000
_PAINTED = "hearthFirstFramePainted"


class _Waiter(QObject):
    """Watches one window for its first paint, then runs what waits, once."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._waiting: list[Callable[[], None]] = []
        window.installEventFilter(self)
        QTimer.singleShot(_AT_THE_LATEST_MS, self, self._done)

    def add(self, fn: Callable[[], None]) -> None:
        self._waiting.append(fn)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._window and event.type() == QEvent.Type.Paint:
            # After this paint has finished: the next turn of the event loop.
            QTimer.singleShot(0, self, self._done)
        return False

    def _done(self) -> None:
        if self._window.property(_PAINTED):
            return  # the paint and the deadline both came; the work ran at the first
        self._window.setProperty(_PAINTED, True)
        self._window.removeEventFilter(self)
        waiting, self._waiting = self._waiting, []
        for fn in waiting:
            fn()
        self.deleteLater()


def after_first_frame(widget: QWidget, fn: Callable[[], None]) -> None:
    """Call ``fn()`` once ``widget``'s window has painted its first frame (at once, in the
    next turn of the event loop, when it already has)."""
    window = widget.window()
    if window.property(_PAINTED):
        QTimer.singleShot(0, window, fn)
        return
    waiter = window.findChild(_Waiter)
    if waiter is None:
        waiter = _Waiter(window)
    waiter.add(fn)
