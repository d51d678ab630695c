"""A conversation's knowledge (issue 30): files and folders kept with the conversation, watched
while it is open (what changes is indexed before a question asks), brought up to date when
Hearth starts again, and sent with every question."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog

from app.chat.sampling import Sampling
from app.documents.index import PassageIndex
from app.services.chat_session import ChatSession
from app.services.documents import DocumentService
from app.services.tasks import TaskRunner
from app.ui.knowledge_box import KnowledgeBox
from tests.gui.fakes import FakeStore, FakeStreamer


def _later(path: Path, text: str) -> None:
    """Write ``text`` with a modification time the index cannot mistake for the last one."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    os.utime(path, ns=(time.time_ns(), max(time.time_ns(), before + 10**9)))


@pytest.fixture
def service(qtbot: Any, tmp_path: Path) -> Any:
    tasks = TaskRunner()
    docs = DocumentService(tasks, PassageIndex(tmp_path / "documents.db"), settle_ms=50)
    yield docs
    docs.watch([])
    tasks.wait(10)


def test_a_watched_folder_is_indexed_and_its_changes_are_read_without_a_question(
        qtbot: Any, service: Any, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    (folder / "deep").mkdir(parents=True)
    _later(folder / "ferries.md", "The ferry leaves at nine.")
    _later(folder / "deep" / "fees.txt", "A fishing boat pays twelve coins.")
    index = service._index
    with qtbot.waitSignal(service.refreshed, timeout=20_000) as first:
        service.watch([str(folder)])
    assert first.args == [2]
    assert index.known(str(folder / "deep" / "fees.txt")) is not None

    # A new file in a subfolder, and a changed one: read again, nobody asked.
    with qtbot.waitSignal(service.refreshed, timeout=20_000,
                          check_params_cb=lambda n: n >= 1):
        _later(folder / "deep" / "hours.txt", "The harbour office opens at six.")
    qtbot.waitUntil(lambda: index.known(str(folder / "deep" / "hours.txt")) is not None,
                    timeout=20_000)
    _later(folder / "ferries.md", "The ferry leaves at ten now.")
    qtbot.waitUntil(lambda: index.known(str(folder / "ferries.md")) is not None, timeout=20_000)
    (doc,) = [d for d in [index.known(str(folder / "ferries.md"))] if d is not None]
    assert "ten now" in index.all_passages(doc)[0].text


def test_after_a_restart_files_changed_while_closed_are_read_again(qtbot: Any, tmp_path: Path
                                                                    ) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    _later(folder / "a.md", "first version")
    _later(folder / "b.md", "stays the same")
    db = tmp_path / "documents.db"
    kept: list[Any] = []  # Qt objects die on the GUI thread, at the end
    for expected, change in ((2, None), (1, "second version")):
        if change is not None:  # Hearth is closed; the person edits a file
            _later(folder / "a.md", change)
        tasks = TaskRunner()
        docs = DocumentService(tasks, PassageIndex(db), settle_ms=50)  # Hearth starts
        kept += [tasks, docs]
        with qtbot.waitSignal(docs.refreshed, timeout=20_000) as read:
            docs.watch([str(folder)])
        assert read.args == [expected]
        docs.watch([])
        tasks.wait(10)


def test_knowledge_is_kept_with_the_conversation(qtbot: Any) -> None:
    store = FakeStore()
    session = ChatSession(FakeStreamer(), store)
    session.set_knowledge(["/docs/report.pdf", "/docs/notes"])
    session.set_chat_settings("Be brief.", Sampling(temperature=0.3))
    assert session.knowledge == ["/docs/report.pdf", "/docs/notes"]  # settings keep it
    assert session.transcript.settings["system_prompt"] == "Be brief."
    session.transcript.settings["knowledge"] = ["ok", 3, None]  # a hand-edited database
    assert session.knowledge == ["ok"]


def test_the_box_adds_a_folder_refuses_an_odd_file_and_removes(qtbot: Any, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    box = KnowledgeBox()
    qtbot.addWidget(box)
    changes: list[list[str]] = []
    refused: list[str] = []
    box.changed.connect(changes.append)
    box.refused.connect(refused.append)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(tmp_path))
    box.add_folder.click()
    odd = tmp_path / "tool.exe"
    odd.write_bytes(b"MZ")
    box.add([str(odd)])
    assert changes == [[str(tmp_path)]] and refused and "tool.exe" in refused[0]
    box.list.item(0).setSelected(True)
    box.remove.click()
    assert changes[-1] == [] and box.list.count() == 0
