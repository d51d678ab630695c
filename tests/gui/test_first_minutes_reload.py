"""A new user's first minutes with the offload panel (issue 25, defects 2 and 5): "Apply and
reload" reloads the loaded model with the settings applied, the runner then reports them, and the
picker's label says the context the model runs with (and will load with next).

The window the app composes, the real runner, a tiny generated model in Hearth's own models
folder (so the library scans it and gives it a verdict); everything through clicks and keys on
widgets found by their accessible names.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialog, QWidget

from app.runner_client import RunnerError
from app.services.runner_process import RunnerState


def name_of(widget: QWidget) -> str:
    """Its accessible name; else the name a screen reader says for it (a button's text)."""
    if widget.accessibleName():
        return widget.accessibleName()
    face = QAccessible.queryAccessibleInterface(widget)
    return face.text(QAccessible.Text.Name) if face is not None else ""


def named(root: QWidget, name: str) -> Any:
    """The visible widget with this accessible name (else, a button with this text)."""
    shown = [w for w in root.findChildren(QWidget) if w.isVisible()]
    found = [w for w in shown if w.accessibleName() == name] or \
        [w for w in shown if not w.accessibleName() and name_of(w) == name]
    assert len(found) == 1, f"{len(found)} visible widgets named {name!r}"
    return found[0]


def click(qtbot: Any, root: QWidget, name: str) -> None:
    button = named(root, name)
    assert button.isEnabled(), f"{name} is disabled"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


@pytest.fixture
def own_model(tiny_model: str) -> Iterator[Path]:
    """The tiny model in Hearth's own models folder, where the library finds it; removed after
    (the folder is shared by the whole test session)."""
    folder = Path(os.environ["HEARTH_MODELS_DIR"]) / f"first-minutes-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    path = folder / "tiny-chat.gguf"
    shutil.copy(tiny_model, path)
    yield path
    shutil.rmtree(folder, ignore_errors=True)


def runner_n_ctx(window: Any) -> int | None:
    """The context the runner reports now (None while it is not ready)."""
    if window.runner.state != RunnerState.READY:
        return None
    try:
        with window.runner.client() as client:
            return int(client.status()["context"]["n_ctx"])
    except (RunnerError, OSError):
        return None


def label_of(window: Any, path: Path) -> str:
    at = window.picker.findData(str(path))
    return window.picker.itemText(at) if at >= 0 else ""


def test_apply_and_reload_reloads_the_loaded_model_with_the_new_context(
        qtbot: Any, make_window: Any, own_model: Path) -> None:
    window = make_window()
    gui = window.gui
    qtbot.waitUntil(lambda: any(r.path == str(own_model) and r.verdict is not None
                                for r in gui.local.rows()), timeout=60_000)
    window.choose_model(str(own_model))
    qtbot.waitUntil(lambda: "2k context" in label_of(window, own_model), timeout=5000)
    with qtbot.waitSignal(window.runner.ready, timeout=60_000):
        click(qtbot, window, "Load")
    qtbot.waitUntil(lambda: runner_n_ctx(window) == 2048, timeout=10_000)

    click(qtbot, window, "Offload settings")
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.findChildren(QDialog)),
                    timeout=10_000)
    dialog = next(d for d in window.findChildren(QDialog) if d.isVisible())
    qtbot.waitUntil(lambda: named(dialog, "Context (tokens)").isEnabled(), timeout=30_000)
    context = named(dialog, "Context (tokens)")
    qtbot.mouseClick(context, Qt.MouseButton.LeftButton)
    context.selectAll()
    QTest.keyClicks(context, "1024")
    QTest.keyClick(context, Qt.Key.Key_Tab)  # the edit is done: the setting is pinned
    qtbot.waitUntil(lambda: context.value() == 1024, timeout=5000)
    click(qtbot, dialog, "Apply and reload")

    # The loaded model is unloaded and loaded again with the new context.
    qtbot.waitUntil(lambda: runner_n_ctx(window) == 1024, timeout=90_000)
    assert window.runner.model == str(own_model)
    qtbot.waitUntil(lambda: "used for its next load" not in named(dialog, "Offload status")
                    .text(), timeout=5000)
    # The picker says what it runs with now, and after Unload what the next load will use.
    qtbot.waitUntil(lambda: "1k context" in label_of(window, own_model), timeout=10_000)
    assert "(loaded)" in label_of(window, own_model)
    dialog.close()
    click(qtbot, window, "Unload")
    qtbot.waitUntil(lambda: window.runner.state == RunnerState.STOPPED, timeout=30_000)
    qtbot.waitUntil(lambda: "1k context" in label_of(window, own_model)
                    and "(loaded)" not in label_of(window, own_model), timeout=30_000)
