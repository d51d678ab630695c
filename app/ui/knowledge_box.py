"""A conversation's knowledge, in its settings drawer: the files and folders every question of
this conversation may draw on (issue 30). Kept with the conversation (its settings); a folder is
watched while the conversation is open, so what it holds is indexed before a question asks
(app/services/documents.py). The box only edits the list."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.documents.kinds import SUFFIXES, readable, unreadable
from app.ui.common import plain_label
from app.ui.lang import tr, ui_text
from app.ui.style.components import heading
from app.ui.style.tokens import SPACING

MAX_KNOWLEDGE = 20  # files and folders per conversation


class KnowledgeBox(QWidget):
    changed = Signal(list)  # the paths, after the person added or removed one
    refused = Signal(str)  # a sentence: a kind Hearth does not read, or too many

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.paths: list[str] = []
        column = QVBoxLayout(self)
        column.setContentsMargins(0, SPACING.md, 0, 0)
        column.setSpacing(SPACING.xs)
        column.addWidget(heading(tr("Knowledge"), "subheading"))
        about = plain_label(tr("Documents and folders every question in this conversation can "
                               "draw on. Folders are watched: what changes in them is read "
                               "again."), muted=True, selectable=False)
        column.addWidget(about)
        self.list = QListWidget()
        self.list.setAccessibleName(tr("Knowledge"))
        self.list.setMaximumHeight(120)
        self.list.itemSelectionChanged.connect(self._selection)
        column.addWidget(self.list)
        row = QHBoxLayout()
        row.setSpacing(SPACING.xs)
        self.add_files = QPushButton(tr("Add files…"))
        self.add_files.clicked.connect(self._choose_files)
        self.add_folder = QPushButton(tr("Add folder…"))
        self.add_folder.clicked.connect(self._choose_folder)
        self.remove = QPushButton(tr("Remove"))
        self.remove.setAccessibleName(tr("Remove from the knowledge"))
        self.remove.setEnabled(False)
        self.remove.clicked.connect(self._remove_selected)
        for button in (self.add_files, self.add_folder, self.remove):
            row.addWidget(button)
        row.addStretch(1)
        column.addLayout(row)

    def set_paths(self, paths: list[str]) -> None:
        """Show the conversation's knowledge (no signal: the conversation already has it)."""
        self.paths = list(paths)
        self._fill()

    def add(self, paths: list[str]) -> None:
        added = False
        for path in paths:
            if path in self.paths:
                continue
            if not (os.path.isdir(path) or readable(path)):
                self.refused.emit(ui_text(unreadable(os.path.basename(path))))
                continue
            if len(self.paths) >= MAX_KNOWLEDGE:
                self.refused.emit(tr("A conversation keeps at most {count} documents and "
                                     "folders.").format(count=MAX_KNOWLEDGE))
                break
            self.paths.append(path)
            added = True
        if added:
            self._fill()
            self.changed.emit(list(self.paths))

    def _choose_files(self) -> None:
        kinds = " ".join(f"*{s}" for s in sorted(SUFFIXES))
        paths, _ = QFileDialog.getOpenFileNames(
            self, tr("Add documents to the knowledge"), "",
            tr("Documents ({kinds})").format(kinds=kinds))
        self.add(paths)

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, tr("Add a folder to the knowledge"))
        if folder:
            self.add([folder])

    def _remove_selected(self) -> None:
        gone = {item.data(Qt.ItemDataRole.UserRole) for item in self.list.selectedItems()}
        if gone:
            self.paths = [p for p in self.paths if p not in gone]
            self._fill()
            self.changed.emit(list(self.paths))

    def _selection(self) -> None:
        self.remove.setEnabled(bool(self.list.selectedItems()))

    def _fill(self) -> None:
        self.list.clear()
        for path in self.paths:
            name = os.path.basename(path.rstrip(os.sep)) + (os.sep if os.path.isdir(path) else "")
            item = QListWidgetItem(name)
            item.setToolTip(path)
            item.setData(Qt.ItemDataRole.UserRole, path)
            self.list.addItem(item)
        self.list.setVisible(bool(self.paths))
        self._selection()
