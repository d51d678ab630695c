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
from app.ui.picker_model import PickerRole
from app.ui.picker_popup import section_title
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


def shown_rows(picker: Any) -> list[str]:
    """The names the open popup lists, in order, with the header drawn above a group's first."""
    popup = picker.popup
    out: list[str] = []
    for row in range(picker.count()):
        if popup.list.isRowHidden(row):
            continue
        if popup.heads_group(row):
            out.append(f"[{section_title(picker.itemData(row, PickerRole.SECTION))}]")
        out.append(picker.itemData(row, PickerRole.NAME))
    return out


def test_the_popup_groups_filters_and_is_walked_with_the_keys(qtbot: Any, with_local: Any,
                                                              a_plan: Any) -> None:
    from app.remote.servers import RemoteModel
    from tests.gui.fakes import FakeRemote

    window, fakes, _ = with_local(
        ["/models/first.gguf", "/models/work/twin.gguf"],
        [local_row("/models/first.gguf", "first.gguf", verdict=verdict(Fit.GPU)),
         local_row("/models/work/twin.gguf", "twin.gguf", source="Folder", own=False,
                   verdict=verdict(Fit.CPU)),
         local_row("/lms/home/twin.gguf", "twin.gguf", source="LM Studio", own=False,
                   quantization="Q8_0", size=8_000_000_000, verdict=verdict(Fit.NO_FIT))])
    window.load_selected()
    fakes.loader.finish_planning(a_plan)  # first.gguf is loaded
    remote = FakeRemote()
    box = remote.put("Office PC", "http://10.0.0.2:8080/v1", models=("qwen3",))
    window.bar.picker.remote = remote
    remote.changed.connect(window.bar.picker.refresh)
    window.bar.picker.refresh()
    picker = window.picker
    picker.showPopup()
    popup = picker.popup
    qtbot.waitUntil(popup.list.isVisible)
    assert picker.view() is popup.list  # what a person clicks in (tests/journeys/person.py)
    assert shown_rows(picker) == ["[Loaded]", "first.gguf", "[On this computer]", "twin.gguf",
                                  "twin.gguf", "[Remote]", "qwen3"]
    # Each row says its size, quantization and where it is: namesakes are told apart.
    details = {picker.itemData(i): picker.itemData(i, PickerRole.DETAIL)
               for i in range(picker.count())}
    assert details["/models/work/twin.gguf"] == f"4.9 GB · Q4_K_M · in {Path('/models/work')}"
    assert details["/lms/home/twin.gguf"] == "8.0 GB · Q8_0 · from LM Studio"
    assert details[RemoteModel(box.id, "qwen3").key] == "on Office PC"
    fits = [picker.itemData(i, PickerRole.FIT) for i in range(picker.count())]
    assert [f for f in fits if f is not None] == [summarize_fit(a_plan), Fit.CPU, Fit.NO_FIT]
    # Typing filters (any case, every word), the first match is current; the keys walk it.
    assert window.focusWidget() is popup.search  # the keys go to the search field
    qtbot.keyClicks(popup.search, "TWIN")
    assert shown_rows(picker) == ["[On this computer]", "twin.gguf", "twin.gguf"]
    assert popup.list.currentIndex().row() == picker.findData("/models/work/twin.gguf")
    qtbot.keyClick(popup.search, Qt.Key.Key_Down)
    qtbot.keyClick(popup.search, Qt.Key.Key_Down)  # stops at the last row shown
    assert popup.list.currentIndex().row() == picker.findData("/lms/home/twin.gguf")
    qtbot.keyClick(popup.search, Qt.Key.Key_Return)
    assert not popup.isVisible() and picker.currentData() == "/lms/home/twin.gguf"
    assert "twin.gguf" in window.status.text()
    # Nothing matches: it says so; Esc closes and changes nothing.
    picker.showPopup()
    assert popup.search.text() == "" and popup.list.currentIndex().row() == picker.currentIndex()
    qtbot.keyClicks(popup.search, "no such model")
    assert shown_rows(picker) == [] and popup.nothing.isVisible()
    assert "no such model" in popup.nothing.text()
    qtbot.keyClick(popup.search, Qt.Key.Key_Escape)
    assert not popup.isVisible() and picker.currentData() == "/lms/home/twin.gguf"
    # The button shows the name alone, not the whole row's label.
    assert picker.face_text() == "twin.gguf" and "LM Studio" in picker.currentText()


def summarize_fit(plan: Any) -> Fit:
    from app.hub.verdict import summarize

    return summarize(plan).fit


def test_the_popup_foot_opens_a_file_or_asks_for_more_models(qtbot: Any, with_local: Any) -> None:
    window, _, _ = with_local(["/models/first.gguf"], [])
    picker = window.picker
    bar_picker = window.bar.picker
    asked: list[bool] = []

    def ask() -> str:
        asked.append(True)
        return "/models/new.gguf"

    bar_picker._ask_file = ask
    discover: list[bool] = []
    bar_picker.discover_requested.connect(lambda: discover.append(True))
    picker.showPopup()
    qtbot.mouseClick(picker.popup.more_btn, Qt.MouseButton.LeftButton)
    assert discover == [True] and not picker.popup.isVisible()
    picker.showPopup()
    qtbot.mouseClick(picker.popup.open_btn, Qt.MouseButton.LeftButton)
    assert asked == [True] and not picker.popup.isVisible()
    assert window.selected_model() == "/models/new.gguf"
    # "Open GGUF file…" is at the foot, not a row of the list.
    picker.showPopup()
    assert shown_rows(picker) == ["[On this computer]", "new.gguf", "first.gguf"]
    # A click elsewhere closes it, as any popup; the click still lands.
    qtbot.mouseClick(window.input, Qt.MouseButton.LeftButton)
    assert not picker.popup.isVisible() and window.focusWidget() is window.input
    # Esc closes it and leaves the keyboard on the button.
    picker.showPopup()
    qtbot.keyClick(picker.popup.search, Qt.Key.Key_Escape)
    assert not picker.popup.isVisible() and window.focusWidget() is picker
