"""Every screen in a pseudo-locale (issue 27): no text a person sees or hears was left out of
translation. Qt's own "no unfinished string" check passes a string that was never marked;
here every string Qt translates comes back marked (tests/gui/pseudo.py), so an unmarked word
on screen is one that never went through ``tr`` or ``ui_text``. What may stay unmarked is data
the test itself knows: the model's file name, this computer's CPU and paths, names of things.

The window is the one the app composes (the Hub at a closed port: the offline states), walked
page by page, with the welcome page, the picker open, every Settings page, the offload panel
(a plan that fits and one that does not), the shortcuts list and the chat with messages.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication, QDialog, QWidget

from tests.gui.pseudo import PseudoTranslator, pseudo, untranslated, visible_texts


@pytest.fixture
def in_pseudo(qapp: QApplication) -> Iterator[None]:
    translator = PseudoTranslator()
    qapp.installTranslator(translator)
    yield
    qapp.removeTranslator(translator)


def _data(gui: Any) -> list[str]:
    """What the walk may show unmarked: this computer's names and the test's files."""
    found = [os.environ.get("HEARTH_HOME", ""), str(Path.home()), os.environ.get("HEARTH_MODELS_DIR", "")]
    report = gui.hardware.report
    if report is not None:
        cpu = report.cpu
        found += [getattr(cpu, "model", "") or "", *(getattr(cpu, "flags", ()) or ()),
                  *(getattr(cpu, "features", ()) or ())]
        found += [getattr(report, "os", "") or "", getattr(report, "os_name", "") or ""]
        found += [g.name for g in getattr(report, "gpus", ())]
    from app.hub.recommended import load_recommended

    found.append("built-in")  # the runtime of llama-cpp-python itself: a folder name
    from app.runtimes.catalog import list_runtimes

    # The installed runtimes' folder names and labels ("cpu-portable (CPU)"): data.
    found += [text for rt in list_runtimes() for text in (rt.name, rt.label())]
    found += [row.title for row in gui.downloads.rows()]  # what other tests left in this home
    for rec in load_recommended():  # model names and quantizations (the blurbs translate)
        found += [rec.title, rec.quant, rec.repo_id]
    return [d for d in found if isinstance(d, str) and d]


def _check(widget: QWidget, data: list[str], where: str) -> list[str]:
    return [f"[{where}] {line}" for line in untranslated(visible_texts(widget), data)]


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, in_pseudo: None) -> Iterator[Any]:
    from app.__main__ import compose
    from app.settings import AppSettings

    parent = QObject()
    gui = compose(parent, store_path=tmp_path / "hearth.sqlite3",
                  settings=AppSettings(first_run_done=True), show_welcome=False)
    w = gui.window
    w.gui, w._parent = gui, parent
    qtbot.addWidget(w)
    w.resize(1280, 720)
    w.show()
    qtbot.waitUntil(lambda: gui.hardware.report is not None, timeout=30_000)
    yield w
    w.close()
    gui.close()


def test_the_pseudo_translator_marks_and_keeps_placeholders() -> None:
    assert pseudo("Load {name}") .startswith("⟦") and "{name}" in pseudo("Load {name}")
    assert untranslated([("x", "Load the model")]) and not untranslated([("x", pseudo("Load"))])
    assert not untranslated([("x", "gemma.gguf")], data=["gemma.gguf"])


def test_every_page_of_the_window(window: Any, qtbot: Any, tiny_model: str) -> None:
    window.choose_model(tiny_model)  # a model chosen: the strip, the picker, the Models page
    data = [*_data(window.gui), Path(tiny_model).name, Path(tiny_model).stem,
            str(Path(tiny_model).parent)]
    bad: list[str] = []
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        qtbot.wait(50)
        bad += _check(window, data, f"page {index}")
    assert not bad, "\n".join(bad)


def test_every_settings_page_and_the_shortcuts(window: Any, qtbot: Any) -> None:
    data = _data(window.gui)
    window.settings_requested.emit()
    qtbot.waitUntil(lambda: _dialog(window) is not None, timeout=5000)
    dialog = _dialog(window)
    assert dialog is not None
    bad: list[str] = []
    for key in dialog.page_keys:
        dialog.show_page(key)
        qtbot.wait(20)
        bad += _check(dialog, data, f"settings {key}")
    dialog.close()
    qtbot.waitUntil(lambda: _dialog(window) is None, timeout=5000)
    window.show_shortcuts()
    qtbot.waitUntil(lambda: _dialog(window) is not None, timeout=5000)
    shortcuts = _dialog(window)
    assert shortcuts is not None
    bad += _check(shortcuts, data, "shortcuts")
    shortcuts.close()
    assert not bad, "\n".join(bad)


def _dialog(window: QWidget) -> QDialog | None:
    shown = [w for w in QApplication.topLevelWidgets()
             if shiboken6.isValid(w) and isinstance(w, QDialog) and w.isVisible()]
    return shown[-1] if shown else None


def _valid(widget: QWidget) -> bool:
    return shiboken6.isValid(widget)


def test_the_welcome_page_offline(qtbot: Any, tmp_path: Path, in_pseudo: None) -> None:
    from app.__main__ import compose
    from app.settings import AppSettings

    parent = QObject()
    gui = compose(parent, store_path=tmp_path / "hearth.sqlite3", settings=AppSettings(),
                  show_welcome=True)
    gui.window.show()
    try:
        welcome = [w for w in QApplication.topLevelWidgets()
                   if shiboken6.isValid(w) and w.isVisible()]
        qtbot.waitUntil(lambda: gui.hardware.report is not None, timeout=30_000)
        qtbot.wait(200)  # the Hub's answer (a closed port: offline) arrives
        bad = [line for w in welcome for line in _check(w, _data(gui), "welcome")]
        assert welcome and not bad, "\n".join(bad)
    finally:
        gui.window.close()
        gui.close()


def test_the_offload_panel_that_fits_and_that_does_not(qtbot: Any, tmp_path: Path,
                                                       in_pseudo: None) -> None:
    from tests.gui.screenshot_offload import header_model, make_rig, open_and_wait

    rig = make_rig(tmp_path)
    try:
        panel = rig.panel
        panel.resize(1152, 648)
        panel.show()
        model = header_model(tmp_path)
        open_and_wait(rig, model)
        from tests.gui.screenshot_offload import recorded_machine

        hardware, _build = recorded_machine()
        # The file, the recorded machine's names and the KV cache types (llama.cpp's names).
        data = [Path(model).name, Path(model).stem, str(tmp_path), hardware.cpu.model,
                *(g.name for g in hardware.gpus), "f16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1",
                "bf16", "iq4_nl", "f32"]
        bad = _check(panel, data, "offload fits")
        panel.set_pin("n_gpu_layers", panel.ctx.model.n_layer + 1)
        panel.set_pin("n_cpu_moe", 0)
        panel.set_pin("tensor_split", (1.0, 0.0))
        assert panel.plan is not None and not panel.plan.fits
        qtbot.wait(20)
        bad += _check(panel, data, "offload does not fit")
        assert not bad, "\n".join(bad)
    finally:
        rig.panel.close()  # a window left open takes the offscreen mouse from later tests
        rig.close()


def test_the_picker_open(window: Any, qtbot: Any, tiny_model: str) -> None:
    window.choose_model(tiny_model)
    picker = window.bar.picker
    picker.combo.showPopup()
    qtbot.wait(50)
    data = [*_data(window.gui), Path(tiny_model).name, Path(tiny_model).stem,
            str(Path(tiny_model).parent)]
    bad = _check(window, data, "picker open")
    picker.combo.hidePopup()
    assert not bad, "\n".join(bad)


def test_a_conversation_with_code_and_a_table(qtbot: Any, in_pseudo: None) -> None:
    """The chat view with a question and a reply holding code and a table (the view alone, as
    the chat page shows it: role marks, code headers, the actions bar under the mouse)."""
    from app.chat.message import Message
    from app.ui.chat_view import ChatView

    view = ChatView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    reply = ("Here is a table:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint(1)\n```\n")
    messages = [Message("user", "Show me code"), Message("assistant", reply)]
    view.set_messages(messages)
    qtbot.wait(50)
    # The document's own words (code headers, "Show all") besides the messages' text.
    bad = _check(view, [reply, "Show me code", "Here is a table:", "print(1)", "python"], "chat")
    assert not bad, "\n".join(bad)
