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
from app.ui.library_view import LibraryView, ModelRow
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
                        asked=[], actions=[], folder="")

    def confirm(parent: Any, title: str, question: str, action: str = "",
                keep: str = "") -> bool:
        e.asked.append(question)
        e.actions.append((action, keep))
        return bool(e.answer)

    e.view = LibraryView(e.models, e.used.append,
                         open_url=lambda url: e.opened.append(url.toLocalFile()),
                         choose_folder=lambda _parent: e.folder, confirm=confirm)
    qtbot.addWidget(e.view)
    e.view.resize(1100, 720)
    e.view.show()
    return e


def row(view: LibraryView, path: str) -> ModelRow:
    w = view.row_widget(path)
    assert w is not None, path
    return w


def test_rows_show_the_metadata_and_verdict(env: Any) -> None:
    assert [r.path for r in env.view.rows_shown()] == [OWN, OLLAMA, BROKEN]
    own = row(env.view, OWN)
    assert own.name.full_text() == "Llama-Q4_K_M" and own.name.text() == "Llama-Q4_K_M"
    assert own.quant.text() == "Q4_K_M" and own.quant.isVisibleTo(own)
    assert own.facts.text() == "4.9 GB · llama · 8.0 B parameters · 128k context"
    assert own.verdict.text() == "Fits on the GPU · 16k context"
    assert own.verdict.property("chip") == "success"
    assert own.verdict.toolTip().startswith("• ")
    assert own.where.full_text() == "Hearth · /home/u/.local/share/hearth/models"
    assert own.where.toolTip() == OWN
    ollama = row(env.view, OLLAMA)
    assert ollama.verdict.text() == "Will not fit on this computer"
    assert ollama.verdict.property("chip") == "danger"
    assert ollama.where.full_text().startswith("Ollama · ")
    assert "Belongs to Ollama" in ollama.source_tip
    # Every action is an icon button a screen reader can name.
    for b in own.buttons():
        assert b.accessibleName() and b.toolTip()
    assert own.load_btn.accessibleName() == "Load Llama-Q4_K_M in chat"
    assert env.view.summary.text() == "3 models · 11.9 GB"


def test_a_row_with_an_error_shows_it_instead_of_the_metadata(env: Any) -> None:
    broken = row(env.view, BROKEN)
    assert broken.verdict.text() == "Cannot be used" and broken.verdict.property("chip") == "danger"
    assert broken.facts.text() == "the file ends in the middle of its header"
    assert broken.facts.property("tone") == "danger"
    assert not broken.quant.isVisibleTo(broken)
    assert not broken.load_btn.isEnabled() and not broken.offload_btn.isEnabled()
    assert broken.folder_btn.isEnabled() and broken.verify_btn.isEnabled()
    broken.load_btn.click()  # disabled: nothing happens
    env.view.use(BROKEN)  # even when called directly
    assert env.used == []


def test_load_offload_and_show_in_folder(env: Any, qtbot: Any) -> None:
    offloads: list[str] = []
    env.view.offload_requested.connect(offloads.append)
    ollama = row(env.view, OLLAMA)
    qtbot.mouseClick(ollama.load_btn, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(ollama.folder_btn, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(ollama.offload_btn, Qt.MouseButton.LeftButton)
    assert env.used == [OLLAMA]
    assert env.opened == ["/home/u/.ollama/models/blobs"]
    assert offloads == [OLLAMA]
    selected = env.view.selected()
    assert selected is not None and selected.path == OLLAMA
    qtbot.mouseDClick(row(env.view, OWN), Qt.MouseButton.LeftButton)  # a double click loads
    assert env.used == [OLLAMA, OWN]


def test_delete_only_own_models_after_confirmation(env: Any, qtbot: Any) -> None:
    ollama = row(env.view, OLLAMA)
    assert not ollama.delete_btn.isEnabled() and not ollama.delete_btn.isVisibleTo(ollama)
    assert "belongs to Ollama" in ollama.delete_btn.toolTip()
    env.view.delete(OLLAMA)  # even when called directly
    assert env.models.calls == [] and env.asked == []
    own = row(env.view, OWN)
    assert own.delete_btn.isEnabled() and own.delete_btn.isVisibleTo(own)
    env.answer = False
    qtbot.mouseClick(own.delete_btn, Qt.MouseButton.LeftButton)
    assert len(env.asked) == 1 and env.models.calls == []
    assert env.asked[0] == ("Delete Llama-Q4_K_M (4.9 GB) from this computer? It would have "
                            "to be downloaded again.")
    assert env.actions == [("Delete", "")]  # the button names the action, not Yes / No
    env.answer = True
    qtbot.mouseClick(own.delete_btn, Qt.MouseButton.LeftButton)
    assert env.models.calls == [("delete", OWN)]


def test_verify_and_its_result(env: Any, qtbot: Any) -> None:
    qtbot.mouseClick(row(env.view, OWN).verify_btn, Qt.MouseButton.LeftButton)
    assert env.models.calls == [("verify", OWN)]
    assert env.view.message.isVisible() and env.view.message.tone == "info"
    assert env.view.message.text.text() == "Verifying Llama-Q4_K_M…"
    env.models.verified.emit(OWN, False, "The file does not match its checksum.")
    assert env.view.message.isVisible() and env.view.message.tone == "danger"
    assert env.view.message.text.text() == "Llama-Q4_K_M: The file does not match its checksum."
    env.models.verified.emit(OWN, None, "No checksum is known for this file.")
    assert "No checksum" in env.view.message.text.text()
    assert env.view.message.tone == "warning"
    env.models.verified.emit(OWN, True, "The file matches.")
    assert env.view.message.tone == "success"


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
    for b in (env.view.add_btn, env.view.models_dir_btn, env.view.rescan_btn):
        assert b.accessibleName() and b.toolTip()


def test_sorting(env: Any) -> None:
    def order(key: str) -> list[str]:
        env.view.sort.setCurrentIndex(env.view.sort.findData(key))
        return [r.path for r in env.view.rows_shown()]

    assert order("name") == [BROKEN, OWN, OLLAMA]
    assert order("size") == [OWN, BROKEN, OLLAMA]  # the biggest first, then as found
    assert order("fit") == [OWN, OLLAMA, BROKEN]  # fits first, unusable last
    assert order("found") == [OWN, OLLAMA, BROKEN]


def test_changed_keeps_the_selection_and_empty_state_points_to_discover(env: Any,
                                                                        qtbot: Any) -> None:
    assert env.view.select(OLLAMA) and not env.view.select("/nope")
    env.models.set_rows(list(reversed(rows())))
    selected = env.view.selected()
    assert selected is not None and selected.path == OLLAMA
    # A rescan keeps the keyboard focus on the button that had it.
    env.view.row_widget(OLLAMA).folder_btn.setFocus()
    qtbot.waitUntil(env.view.row_widget(OLLAMA).folder_btn.hasFocus, timeout=1000)
    env.models.set_rows(rows())
    assert env.view.row_widget(OLLAMA).folder_btn.hasFocus()
    env.models.set_rows([])
    assert env.view.selected() is None
    assert env.view.stack.currentWidget() is env.view.empty
    assert env.view.empty.title.text() == "No models yet"
    assert env.view.empty.action.text() == "Discover models"
    assert env.view.open_btn.text() == "Open GGUF file…" and env.view.open_btn.isVisible()
    with qtbot.waitSignal(env.view.discover_requested, timeout=1000):
        qtbot.mouseClick(env.view.empty.action, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(env.view.open_file_requested, timeout=1000):
        qtbot.mouseClick(env.view.open_btn, Qt.MouseButton.LeftButton)
    env.models.failed.emit("The folder /x cannot be read.")
    assert env.view.message.text.text() == "The folder /x cannot be read."
    assert env.view.message.tone == "danger"


def test_hostile_names_are_plain_text(qtbot: Any) -> None:
    name = '<img src="file:///etc/passwd"><b>x</b>'
    models = mf.FakeLocalModels([mf.local_row("/m/a.gguf", name, architecture="<i>arch</i>",
                                              error=None)])
    view = LibraryView(models, lambda _p: None, open_url=lambda _u: None,
                       choose_folder=lambda _p: "", confirm=lambda *_a, **_k: False)
    qtbot.addWidget(view)
    view.resize(1100, 400)
    view.show()
    view.select("/m/a.gguf")
    models.verified.emit("/m/a.gguf", True, "<img src=x>")
    for label in view.findChildren(QLabel):
        if label.text():  # every label that shows text (pictures and empty ones show none)
            assert label.textFormat() == Qt.TextFormat.PlainText, label.text()
    w = view.row_widget("/m/a.gguf")
    assert w is not None and w.name.full_text() == name and w.name.text() == name
    assert view.message.text.text() == f"{name}: <img src=x>"
