"""The chips above the message box (app/ui/attachments.py): files and folders dropped on the box
are attached (not pasted as paths), a kind Hearth does not read is refused with a sentence, a
chip's × takes it off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QLabel, QPlainTextEdit, QToolButton

from app.ui.attachments import Attachments


def _drop(target: Any, paths: list[Path]) -> bool:
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    enter = QDragEnterEvent(QPointF(5, 5).toPoint(), Qt.DropAction.CopyAction, data,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, enter)
    drop = QDropEvent(QPointF(5, 5), Qt.DropAction.CopyAction, data, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, drop)
    return enter.isAccepted() and drop.isAccepted()


def test_dropped_files_and_folders_are_attached_not_pasted(qtbot: Any, tmp_path: Path) -> None:
    box = QPlainTextEdit()
    chips = Attachments()
    qtbot.addWidget(box)
    qtbot.addWidget(chips)
    chips.take_drops(box.viewport())
    refused: list[str] = []
    chips.refused.connect(refused.append)
    pictures: list[list[str]] = []
    chips.images_wanted.connect(pictures.append)
    note, folder, photo = tmp_path / "a.md", tmp_path / "notes", tmp_path / "p.png"
    odd = tmp_path / "tool.exe"
    note.write_text("x")
    folder.mkdir()
    photo.write_bytes(b"\x89PNG")
    odd.write_bytes(b"MZ")
    assert _drop(box.viewport(), [note, folder, photo, odd])
    assert chips.paths == [str(note), str(folder)] and box.toPlainText() == ""
    assert pictures == [[str(photo)]]  # an image goes to be made ready, not read as text
    assert refused and "tool.exe" in refused[0]
    labels = [c.findChild(QLabel) for c in chips.chips()]
    assert [label.text() for label in labels if label is not None] == ["a.md", "notes/"]
    remove = chips.chips()[0].findChild(QToolButton)
    assert remove is not None
    remove.click()
    assert chips.paths == [str(folder)]
