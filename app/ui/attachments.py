"""The documents attached to the next question, above the message box: one chip per file or
folder (its name, and × to take it off), hidden while there are none. Files come from the file
dialog or are dropped on the message box (folders too: their readable files are read). What is
sent of them is decided when the question is sent (app/services/documents.py); the files are
not read here."""

from __future__ import annotations

import os
from collections.abc import Iterable

from PySide6.QtCore import QEvent, QMimeData, QObject, Signal
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog, QFrame, QHBoxLayout, QLabel, QWidget

from app.documents.kinds import SUFFIXES, readable, unreadable
from app.ui.lang import tr, ui_text
from app.ui.style.components import icon_button
from app.ui.style.tokens import SPACING

MAX_ATTACHED = 20  # per question: more would not fit a context in any useful share


class Attachments(QWidget):
    changed = Signal()
    refused = Signal(str)  # a sentence: a file of a kind Hearth does not read, or too many

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.paths: list[str] = []
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(SPACING.xs)
        self._row.addStretch(1)
        self.hide()

    def choose(self) -> None:
        """The file dialog; what is picked is attached."""
        kinds = " ".join(f"*{s}" for s in sorted(SUFFIXES))
        paths, _ = QFileDialog.getOpenFileNames(
            self, tr("Attach documents"), "", tr("Documents ({kinds})").format(kinds=kinds))
        self.add(paths)

    def add(self, paths: Iterable[str]) -> None:
        for path in paths:
            if path in self.paths:
                continue
            if not (readable(path) or os.path.isdir(path)):
                self.refused.emit(ui_text(unreadable(os.path.basename(path))))
                continue
            if len(self.paths) >= MAX_ATTACHED:
                self.refused.emit(tr("At most {count} documents go with one message.").format(
                    count=MAX_ATTACHED))
                break
            self.paths.append(path)
        self._show()

    def take_drops(self, widget: QWidget) -> None:
        """Files and folders dropped on ``widget`` (the message box) are attached, not pasted
        as their paths."""
        widget.setAcceptDrops(True)
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop) and \
                isinstance(event, QDropEvent) and _local_paths(event.mimeData()):
            event.acceptProposedAction()
            if kind == QEvent.Type.Drop:
                self.add(_local_paths(event.mimeData()))
            return True
        return super().eventFilter(watched, event)

    def remove(self, path: str) -> None:
        if path in self.paths:
            self.paths.remove(path)
            self._show()

    def clear(self) -> None:
        self.paths = []
        self._show()

    def chips(self) -> list[QWidget]:
        items = (self._row.itemAt(i) for i in range(self._row.count()))
        return [w for item in items if item is not None and (w := item.widget()) is not None]

    def _show(self) -> None:
        for chip in self.chips():
            self._row.removeWidget(chip)
            chip.deleteLater()
        for path in self.paths:
            self._row.insertWidget(self._row.count() - 1, self._chip(path))
        self.setVisible(bool(self.paths))
        self.changed.emit()

    def _chip(self, path: str) -> QWidget:
        chip = QFrame()  # a frame: the style sheet gives it a fill and a rounded border
        chip.setObjectName("attachment")
        chip.setToolTip(path)
        name = QLabel(os.path.basename(path.rstrip(os.sep)) + (os.sep if os.path.isdir(path)
                                                                 else ""))
        name.setProperty("type", "small")
        drop = icon_button("close", tr("Remove {name}").format(name=os.path.basename(path)))
        drop.clicked.connect(lambda: self.remove(path))
        row = QHBoxLayout(chip)
        row.setContentsMargins(SPACING.sm, 0, 0, 0)
        row.setSpacing(SPACING.xs)
        row.addWidget(name)
        row.addWidget(drop)
        return chip


def _local_paths(data: QMimeData | None) -> list[str]:
    """The local files and folders a drag carries (none: it is text, or from the web)."""
    if data is None or not data.hasUrls():
        return []
    return [url.toLocalFile() for url in data.urls() if url.isLocalFile()]
