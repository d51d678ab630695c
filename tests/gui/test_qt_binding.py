"""The Qt binding itself: a release that corrupts reference counts aborts the app at exit."""

from __future__ import annotations

import sys
from typing import Any

from PySide6.QtWidgets import QApplication


def test_process_events_keeps_the_reference_count_of_none(qtbot: Any) -> None:
    # PySide6 6.12.0 returned None from processEvents() without a new reference: each call took
    # one away, and after a few thousand the interpreter died with "deallocating None".
    app = QApplication.instance()
    assert app is not None
    before = sys.getrefcount(None)
    for _ in range(200):
        app.processEvents()
    assert sys.getrefcount(None) >= before - 20  # other threads may drop a few of their own
