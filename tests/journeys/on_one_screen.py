"""The layout journey on one screen: run by tests/journeys/test_layout.py in a pytest process
of its own whose Qt offscreen platform has the one screen it names (the platform is chosen
when the QApplication is made, so each screen needs a process). Not collected by itself (its
name does not start with ``test_``).

A person starts Hearth for the first time (offline), skips the first-run page, opens a model
file (File → Open GGUF file…), loads it, unfolds "Why these settings?" and the chat settings,
then opens every dialog the way they would: Settings (each of its tabs), the Hugging Face
token from Settings, the offload settings, About. Each window is checked with
tests/layout.py's ``layout_problems`` (every visible widget at least its minimum size, nothing
outside its parent or the screen) as soon as it is shown, and the findings are written, window
by window, to the JSON file ``HEARTH_JOURNEY_REPORT`` names.

``HEARTH_JOURNEY_SCREEN``: the screen expected, ``{"width", "height", "dpr"}`` in logical
pixels: the test first proves that the platform's configuration took.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QWidget

from tests.journeys.person import (
    LOAD_MS,
    UI_MS,
    FileAnswer,
    back_to,
    click,
    named,
    open_menu,
    press,
    switch_tab,
    until,
    wait_dialog,
    wait_named,
)
from tests.layout import layout_problems


class Report:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.found: dict[str, Any] = {}

    def note(self, key: str, value: Any) -> None:
        self.found[key] = value
        self.path.write_text(json.dumps(self.found, indent=1), "utf-8")

    def check(self, what: str, window: QWidget) -> None:
        for _ in range(5):  # the layouts settle: a few turns of the event loop
            QApplication.processEvents()
        self.found.setdefault("windows", {})[what] = layout_problems(window)
        self.note("windows", self.found["windows"])


@pytest.mark.timeout(280)
def test_every_window_on_this_screen(qtbot: Any, place: Any, start_hearth: Any,
                                     tiny_file: Path) -> None:
    report = Report(Path(os.environ["HEARTH_JOURNEY_REPORT"]))
    want = json.loads(os.environ["HEARTH_JOURNEY_SCREEN"])
    screen = QGuiApplication.primaryScreen()
    geometry = screen.geometry()
    report.note("screen", {"width": geometry.width(), "height": geometry.height(),
                           "dpr": screen.devicePixelRatio(), "name": screen.name(),
                           "platform": QGuiApplication.platformName()})
    assert (geometry.width(), geometry.height(), screen.devicePixelRatio()) == \
        (want["width"], want["height"], want["dpr"]), "the screen configuration did not take"
    model = place.put_model(tiny_file, "layout.gguf", folder=place.downloads)

    # The first start: the first-run page, offline.
    window = start_hearth()
    wait_named(qtbot, window, "Retry", timeout=30_000)
    report.check("main window: first-run page (offline)", window)
    click(qtbot, window, "Skip: I'll look around myself")
    wait_named(qtbot, window, "Message")
    report.check("main window: no model yet", window)

    # A model opened from the File menu, loaded; the plan's reasons and the chat settings
    # unfolded.
    answer = FileAnswer(str(model))
    open_menu(qtbot, window, "File", "Open GGUF file…")
    qtbot.waitUntil(until(lambda: answer.answered, "File → Open opened no file dialog"),
                    timeout=UI_MS)
    back_to(qtbot, window)
    wait_named(qtbot, window, "Load", enabled=True)
    click(qtbot, window, "Load")
    qtbot.waitUntil(until(lambda: named(window, "Send").isEnabled(),
                          "the model never became ready"), timeout=LOAD_MS)
    click(qtbot, window, "Why these settings?")
    click(qtbot, window, "Chat settings")
    wait_named(qtbot, window, "Conversation settings")
    report.check("main window: model loaded, reasons and chat settings shown", window)

    # Settings, each tab; the Hugging Face token from it.
    click(qtbot, window, "Settings")
    settings = wait_dialog(qtbot, window, "Settings")
    report.check("Settings: General", settings)
    for tab in ("Servers", "Other computers"):
        switch_tab(qtbot, settings, tab)
        report.check(f"Settings: {tab}", settings)
    switch_tab(qtbot, settings, "General")
    click(qtbot, settings, "Hugging Face token")
    token = wait_dialog(qtbot, window, "Hugging Face token")
    report.check("Hugging Face token", token)
    click(qtbot, token, "Close")
    qtbot.waitUntil(lambda: not token.isVisible(), timeout=UI_MS)
    click(qtbot, settings, "Close")
    qtbot.waitUntil(lambda: not settings.isVisible(), timeout=UI_MS)
    back_to(qtbot, window)

    # The offload settings of the model loaded.
    click(qtbot, window, "Offload settings")
    offload = wait_dialog(qtbot, window, starts_with="Offload settings")
    wait_named(qtbot, offload, "Context (tokens)", timeout=60_000, enabled=True)
    report.check("Offload settings", offload)
    qtbot.waitUntil(offload.isActiveWindow, timeout=UI_MS)
    press(Qt.Key.Key_Escape)  # the dialog has no Close button of its own
    qtbot.waitUntil(lambda: not offload.isVisible(), timeout=UI_MS)
    back_to(qtbot, window)

    # Help → About Hearth.
    open_menu(qtbot, window, "Help", "About Hearth")
    about = wait_dialog(qtbot, window, "About Hearth")
    report.check("About Hearth", about)
    click(qtbot, about, "OK")
    qtbot.waitUntil(lambda: not about.isVisible(), timeout=UI_MS)
    report.note("done", True)
