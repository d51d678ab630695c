"""A new user's first minutes with the model picker (issue 25, defects 3 and 5): it comes back
after every load, switch and restart; same-named files are told apart; files that are gone or are
not models leave the list; the loaded model's label says what it runs with; the status line
describes the model selected.

Most tests use the window the app composes, with the real runner and a tiny generated model;
the status line's wording for rows with verdicts uses the in-memory fakes (tests/gui/fakes.py).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QComboBox, QWidget

from app.hub.verdict import Fit
from app.services.runner_process import RunnerState
from tests.gui.model_fakes import FakeLocalModels, local_row, verdict


def name_of(widget: QWidget) -> str:
    """Its accessible name; else the name a screen reader says for it (a button's text)."""
    if widget.accessibleName():
        return widget.accessibleName()
    face = QAccessible.queryAccessibleInterface(widget)
    return face.text(QAccessible.Text.Name) if face is not None else ""


def named(window: QWidget, name: str) -> Any:
    """The visible widget with this accessible name (else, a button with this text)."""
    shown = [w for w in window.findChildren(QWidget) if w.isVisible()]
    found = [w for w in shown if w.accessibleName() == name] or \
        [w for w in shown if not w.accessibleName() and name_of(w) == name]
    assert len(found) == 1, f"{len(found)} visible widgets named {name!r}"
    return found[0]


def items(picker: QComboBox) -> list[str]:
    return [picker.itemText(i) for i in range(picker.count())]


def item_of(picker: QComboBox, path: str | Path) -> str:
    at = picker.findData(str(path))
    assert at >= 0, f"{path} is not listed: {items(picker)}"
    return picker.itemText(at)


def click(qtbot: Any, window: QWidget, name: str) -> None:
    button = named(window, name)
    assert button.isEnabled(), f"{name} is disabled"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def settled(qtbot: Any, window: Any) -> Any:
    """The first library scan is over: nothing refreshes the picker behind the test's back."""
    qtbot.waitUntil(lambda: not window.gui.local.busy, timeout=30_000)
    return window


@pytest.fixture
def compose_at(qtbot: Any) -> Iterator[Any]:
    """Windows composed as the app composes them, on a library file the test names: a second
    window on the same file is the app started again."""
    from app.__main__ import compose

    made: list[Any] = []

    def make(store: Path) -> Any:
        parent = QObject()
        gui = compose(parent, store_path=store)
        window = gui.window
        window.gui = gui
        window._parent = parent
        qtbot.addWidget(window)
        window.show()
        made.append(window)
        return window

    yield make
    for window in made:
        window.close()
        window.gui.close()


def test_the_picker_comes_back_after_a_load_a_switch_and_a_restart(
        qtbot: Any, make_window: Any, tiny_model: str, tmp_path: Path) -> None:
    other = tmp_path / "other.gguf"
    shutil.copy(tiny_model, other)
    window = settled(qtbot, make_window())
    picker = named(window, "Model")

    window.choose_model(tiny_model)  # what `hearth model.gguf` does
    with qtbot.waitSignal(window.runner.ready, timeout=60_000):
        click(qtbot, window, "Load")
    qtbot.waitUntil(picker.isEnabled, timeout=10_000)

    window.choose_model(str(other))
    qtbot.waitUntil(lambda: name_of(window.load_btn) == "Switch", timeout=5000)
    click(qtbot, window, "Switch")
    qtbot.waitUntil(lambda: window.runner.state == RunnerState.READY
                    and window.runner.model == str(other), timeout=60_000)
    qtbot.waitUntil(picker.isEnabled, timeout=10_000)

    psutil.Process(window.runner._proc.processId()).kill()
    qtbot.waitUntil(window.restart_btn.isVisible, timeout=10_000)
    with qtbot.waitSignal(window.runner.ready, timeout=60_000):
        click(qtbot, window, "Restart model")
    qtbot.waitUntil(picker.isEnabled, timeout=10_000)
    assert named(window, "Unload").isEnabled()


def test_two_files_with_the_same_name_are_told_apart(qtbot: Any, make_window: Any,
                                                     tiny_model: str, tmp_path: Path) -> None:
    work = tmp_path / "work" / "model.gguf"
    home = tmp_path / "home" / "model.gguf"
    for copy in (work, home):
        copy.parent.mkdir()
        shutil.copy(tiny_model, copy)
    window = settled(qtbot, make_window())
    window.choose_model(str(work))
    window.choose_model(str(home))
    picker = named(window, "Model")
    shown_work, shown_home = item_of(picker, work), item_of(picker, home)
    assert shown_work != shown_home
    assert "model.gguf" in shown_work and "work" in shown_work and "home" not in shown_work
    assert "model.gguf" in shown_home and "home" in shown_home and "work" not in shown_home


def test_files_that_are_gone_or_are_not_models_leave_the_list(
        qtbot: Any, compose_at: Any, tiny_model: str, tmp_path: Path) -> None:
    store = tmp_path / "hearth.sqlite3"
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho hello\n")
    doomed = tmp_path / "doomed.gguf"
    shutil.copy(tiny_model, doomed)
    window = settled(qtbot, compose_at(store))
    picker = named(window, "Model")
    for path in (doomed, tiny_model, script):  # each opened by path, as `hearth FILE` does
        window.choose_model(str(path))
    # Loading the script is refused: it stays selected with the reason until another is picked.
    with qtbot.waitSignal(window.loader.failed, timeout=30_000):
        click(qtbot, window, "Load")
    assert "run.sh" in window.status.text() and picker.currentData() == str(script)
    window.choose_model(tiny_model)
    assert picker.findData(str(script)) < 0, items(picker)

    window.close()
    window.gui.close()
    doomed.unlink()
    # The app started again: the list read from the library has neither.
    again = settled(qtbot, compose_at(store))
    picker = named(again, "Model")
    qtbot.waitUntil(lambda: picker.findData(tiny_model) >= 0, timeout=10_000)
    assert picker.findData(str(doomed)) < 0 and picker.findData(str(script)) < 0, items(picker)


@pytest.fixture
def with_local(qtbot: Any) -> Iterator[Any]:
    """The window on in-memory fakes (tests/gui/fakes.py) with a library of ``rows``."""
    from app.services.chat_session import ChatSession
    from app.ui.main_window import MainWindow
    from tests.gui.fakes import make_fakes

    made: list[Any] = []

    def make(recent: list[str], rows: list[Any]) -> tuple[Any, Any, Any]:
        f = make_fakes(recent)
        local = FakeLocalModels(rows)
        window = MainWindow(f.runner, f.loader, ChatSession(f.streamer, f.store), f.library,
                            local_models=local)
        qtbot.addWidget(window)
        window.show()
        made.append(window)
        return window, f, local

    yield make
    for window in made:
        window.close()


def test_same_names_get_as_many_folders_as_tell_them_apart() -> None:
    from app.library.models import telling_names

    sep = os.sep
    assert telling_names([("/r/a/x/m.gguf", "m.gguf"), ("/r/b/x/m.gguf", "m.gguf"),
                          ("/c/n.gguf", "n.gguf")]) == [
        f"m.gguf (in …{sep}a{sep}x)", f"m.gguf (in …{sep}b{sep}x)", "n.gguf"]
    # A folder that is the whole path is shown whole; the very same path twice stays as it is.
    assert telling_names([("/m.gguf", "m.gguf"), ("/a/m.gguf", "m.gguf")]) == [
        f"m.gguf (in {Path('/')})", f"m.gguf (in {Path('/a')})"]
    assert telling_names([("/a/m.gguf", "m.gguf"), ("/a/m.gguf", "m.gguf")]) == ["m.gguf"] * 2


def test_a_model_deleted_from_the_library_leaves_the_picker(with_local: Any) -> None:
    window, _, local = with_local(["/models/first.gguf"],
                                  [local_row("/models/kept.gguf", "kept.gguf"),
                                   local_row("/models/first.gguf", "first.gguf")])
    picker = window.picker
    assert picker.findData("/models/first.gguf") >= 0  # recently used, and in the library
    local.set_rows([local_row("/models/kept.gguf", "kept.gguf")])  # deleted in the Models tab
    assert picker.findData("/models/first.gguf") < 0, items(picker)
    assert picker.findData("/models/kept.gguf") >= 0


def test_the_status_line_describes_the_model_selected(qtbot: Any, with_local: Any,
                                                      a_plan: Any) -> None:
    from app.hub.verdict import summarize

    guess = verdict(Fit.GPU, n_ctx=a_plan.settings.n_ctx * 2)  # the scan's, before any load
    window, fakes, _ = with_local(["/models/first.gguf", "/models/second.gguf"],
                                  [local_row("/models/first.gguf", "first.gguf", verdict=guess)])
    picker = window.picker
    picker.setFocus()

    def pick(path: str) -> None:  # the arrow keys, as a person walks the list
        key = Qt.Key.Key_Down if picker.findData(path) > picker.currentIndex() else Qt.Key.Key_Up
        for _ in range(picker.count()):
            if picker.currentData() == path:
                return
            qtbot.keyClick(picker, key)
        assert picker.currentData() == path

    pick("/models/second.gguf")  # nothing known about it before it is planned
    assert "second.gguf" in window.status.text() and "first.gguf" not in window.status.text()
    pick("/models/first.gguf")
    assert window.status.text().startswith(f"first.gguf: {guess.label()}")
    pick("/models/second.gguf")
    assert "second.gguf" in window.status.text() and "first.gguf" not in window.status.text()

    pick("/models/first.gguf")
    window.load_selected()
    fakes.loader.finish_planning(a_plan)
    assert "first.gguf is ready" in window.status.text()
    # The loaded model's label says what it runs with, not what the scan guessed.
    label = item_of(picker, "/models/first.gguf")
    assert "(loaded)" in label and summarize(a_plan).label() in label
    assert guess.label() not in label
    pick("/models/second.gguf")
    assert "second.gguf" in window.status.text() and "first.gguf" not in window.status.text()
    pick("/models/first.gguf")
    assert "first.gguf is ready" in window.status.text(), window.status.text()


@pytest.fixture(scope="module")
def a_plan(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from app.gguf import read_model
    from app.planner import plan
    from tests.fixtures.header_only import LLAMA31_8B, write_header_only
    from tests.unit.planner.conftest import load_report

    path = write_header_only(tmp_path_factory.mktemp("m") / "llama-8b.gguf", LLAMA31_8B)
    return plan(read_model(path), load_report("rtx4090_24gb"))
