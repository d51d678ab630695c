"""The Library view on an in-memory model list (tests/gui/model_fakes.py)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from app.hub.verdict import Fit
from app.ui.library_view import COLUMNS, LibraryView
from tests.gui import model_fakes as mf

OWN = "/home/u/.local/share/hearth/models/Llama-Q4_K_M.gguf"
OLLAMA = "/home/u/.ollama/models/blobs/sha256-abc"
BROKEN = "/home/u/Models/broken.gguf"


def rows() -> list[Any]:
    return [
        mf.local_row(OWN, "Llama-Q4_K_M", verdict=mf.verdict(Fit.GPU, n_ctx=16384)),
        mf.local_row(OLLAMA, "llama3.2:3b", source="Ollama", own=False, size=2_020_000_000,
                     parameters=3_212_749_888, verdict=mf.verdict(Fit.NO_FIT)),
        mf.local_row(BROKEN, "broken", source="Folder", own=False, quantization=None,
                     architecture=None, parameters=None, context_length=None,
                     error="the file ends in the middle of its header"),
    ]


@pytest.fixture
def env(qtbot: Any) -> Any:
    e = SimpleNamespace(models=mf.FakeLocalModels(rows()), used=[], opened=[], answer=True,
                        asked=[], folder="")

    def confirm(parent: Any, title: str, question: str) -> bool:
        e.asked.append(question)
        return bool(e.answer)

    e.view = LibraryView(e.models, e.used.append,
                         open_url=lambda url: e.opened.append(url.toLocalFile()),
                         choose_folder=lambda _parent: e.folder, confirm=confirm)
    qtbot.addWidget(e.view)
    e.view.resize(1100, 720)
    e.view.show()
    return e


def cell(view: LibraryView, path: str, column: str) -> Any:
    for row in range(view.table.rowCount()):
        if view.table.item(row, 0).data(Qt.ItemDataRole.UserRole) == path:
            return view.table.item(row, COLUMNS.index(column))
    raise AssertionError(path)


def test_rows_show_the_metadata_and_verdict(env: Any) -> None:
    assert env.view.table.rowCount() == 3
    assert cell(env.view, OWN, "Name").text() == "Llama-Q4_K_M"
    assert cell(env.view, OWN, "Size").text() == "4.9 GB"
    assert cell(env.view, OWN, "Quant").text() == "Q4_K_M"
    assert cell(env.view, OWN, "Architecture").text() == "llama"
    assert cell(env.view, OWN, "Params").text() == "8.0 B"
    assert cell(env.view, OWN, "Context").text() == "128k"
    fit = cell(env.view, OWN, "On this computer")
    assert fit.text() == "Fits on the GPU · 16k context" and fit.toolTip().startswith("• ")
    assert cell(env.view, OLLAMA, "On this computer").text() == "Will not fit on this computer"
    assert cell(env.view, OLLAMA, "Source").text() == "Ollama"


def test_a_row_with_an_error_shows_it_instead_of_the_metadata(env: Any) -> None:
    err = cell(env.view, BROKEN, "Quant")
    assert err.text() == "Cannot be used: the file ends in the middle of its header"
    row = err.row()
    assert env.view.table.columnSpan(row, COLUMNS.index("Quant")) == len(COLUMNS) - 3
    env.view.select(BROKEN)
    assert not env.view.use_btn.isEnabled()
    assert "middle of its header" in env.view.detail.text()


def test_use_in_chat_and_show_in_folder(env: Any, qtbot: Any) -> None:
    env.view.select(OLLAMA)
    qtbot.mouseClick(env.view.use_btn, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(env.view.folder_btn, Qt.MouseButton.LeftButton)
    assert env.used == [OLLAMA]
    assert env.opened == ["/home/u/.ollama/models/blobs"]


def test_delete_only_own_models_after_confirmation(env: Any, qtbot: Any) -> None:
    env.view.select(OLLAMA)
    assert not env.view.delete_btn.isEnabled()
    env.view.delete_selected()  # even when called directly
    assert env.models.calls == [] and env.asked == []
    env.view.select(OWN)
    assert env.view.delete_btn.isEnabled()
    env.answer = False
    qtbot.mouseClick(env.view.delete_btn, Qt.MouseButton.LeftButton)
    assert len(env.asked) == 1 and env.models.calls == []
    env.answer = True
    qtbot.mouseClick(env.view.delete_btn, Qt.MouseButton.LeftButton)
    assert env.models.calls == [("delete", OWN)]


def test_verify_and_its_result(env: Any, qtbot: Any) -> None:
    env.view.select(OWN)
    qtbot.mouseClick(env.view.verify_btn, Qt.MouseButton.LeftButton)
    assert env.models.calls == [("verify", OWN)]
    env.models.verified.emit(OWN, False, "The file does not match its checksum.")
    assert env.view.message.isVisible()
    assert env.view.message.text() == "Llama-Q4_K_M: The file does not match its checksum."
    env.models.verified.emit(OWN, None, "No checksum is known for this file.")
    assert "No checksum" in env.view.message.text()


def test_add_folder_rescan_and_busy(env: Any, qtbot: Any) -> None:
    qtbot.mouseClick(env.view.add_btn, Qt.MouseButton.LeftButton)  # dialog cancelled
    env.folder = "/data/models"
    qtbot.mouseClick(env.view.add_btn, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(env.view.rescan_btn, Qt.MouseButton.LeftButton)
    assert env.models.calls == [("add_folder", "/data/models"), ("rescan",)]
    assert not env.view.busy.isVisible()
    env.models.busy_changed.emit(True)
    assert env.view.busy.isVisible() and not env.view.rescan_btn.isEnabled()
    env.models.busy_changed.emit(False)
    assert not env.view.busy.isVisible() and env.view.rescan_btn.isEnabled()


def test_changed_keeps_the_selection_and_empty_state_points_to_discover(env: Any) -> None:
    env.view.select(OLLAMA)
    env.models.set_rows(list(reversed(rows())))
    selected = env.view.selected()
    assert selected is not None and selected.path == OLLAMA
    env.models.set_rows([])
    assert env.view.stack.currentWidget() is env.view.empty
    assert "Discover" in env.view.empty.text()
    env.models.failed.emit("The folder /x cannot be read.")
    assert env.view.message.text() == "The folder /x cannot be read."


def test_hostile_names_are_plain_text(qtbot: Any) -> None:
    name = '<img src="file:///etc/passwd"><b>x</b>'
    models = mf.FakeLocalModels([mf.local_row("/m/a.gguf", name, architecture="<i>arch</i>",
                                              error=None)])
    view = LibraryView(models, lambda _p: None, open_url=lambda _u: None,
                       choose_folder=lambda _p: "", confirm=lambda *_a: False)
    qtbot.addWidget(view)
    view.select("/m/a.gguf")
    models.verified.emit("/m/a.gguf", True, "<img src=x>")
    for label in view.findChildren(QLabel):
        assert label.textFormat() == Qt.TextFormat.PlainText
    assert view.table.item(0, 0).text() == name  # item views never read markup
    assert view.message.text() == f"{name}: <img src=x>"
