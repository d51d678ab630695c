"""The documents and images attached to the next question, above the message box: one chip per
file, folder or image (its name or thumbnail, and × to take it off), hidden while there are none.
Files come from the file dialog or are dropped on the message box (folders too: their readable
files are read); an image can also be pasted (Ctrl+V). What is sent of documents is decided when
the question is sent (app/services/documents.py); images are made ready as soon as they are
attached (app/services/images.py), so a chip shows what the model will see."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QEvent, QMimeData, QObject, Qt, Signal
from PySide6.QtGui import QDropEvent, QGuiApplication, QImage, QKeyEvent, QKeySequence, QPixmap
from PySide6.QtWidgets import QFileDialog, QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.documents.kinds import SUFFIXES, readable, unreadable
from app.services.images import IMAGE_SUFFIXES, is_image
from app.ui.lang import tr, ui_text
from app.ui.style.components import icon_button
from app.ui.style.tokens import SPACING

MAX_ATTACHED = 20  # per question: more would not fit a context in any useful share
MAX_IMAGES = 8  # per question (the runner takes 16 in one request, over the whole conversation)
CHIP_THUMB = 28  # a chip's thumbnail height, in device-independent pixels


class Attachments(QWidget):
    changed = Signal()
    refused = Signal(str)  # a sentence: a file of a kind Hearth does not read, or too many
    images_wanted = Signal(list)  # image files to make ready (app/services/images.py)
    image_pasted = Signal(QImage)  # an image from the clipboard, likewise

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.paths: list[str] = []
        self.images: list[tuple[dict[str, Any], QImage]] = []  # reference, thumbnail
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(SPACING.xs)
        self._row = QHBoxLayout()
        self._row.setSpacing(SPACING.xs)
        self._row.addStretch(1)
        column.addLayout(self._row)
        # Why attached images will not reach the model in use (a text-only model, a server's).
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setProperty("type", "small")
        self.note.setProperty("tone", "muted")
        self.note.hide()
        column.addWidget(self.note)
        self._blind = ""
        self.hide()

    def choose(self) -> None:
        """The file dialog; what is picked is attached."""
        kinds = " ".join(f"*{s}" for s in sorted({*SUFFIXES, *IMAGE_SUFFIXES}))
        paths, _ = QFileDialog.getOpenFileNames(
            self, tr("Attach files"), "", tr("Documents and images ({kinds})").format(
                kinds=kinds))
        self.add(paths)

    def add(self, paths: Iterable[str]) -> None:
        pictures = []
        for path in paths:
            if is_image(path):
                pictures.append(path)
                continue
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
        room = MAX_IMAGES - len(self.images)
        if len(pictures) > room:
            self._too_many_images()
        if pictures[:room]:
            self.images_wanted.emit(pictures[:room])
        self._show()

    def add_images(self, items: list[tuple[dict[str, Any], QImage]]) -> None:
        """Images made ready (their references and thumbnails)."""
        have = {ref["sha256"] for ref, _ in self.images}
        for ref, thumb in items:
            if ref["sha256"] not in have and len(self.images) < MAX_IMAGES:
                self.images.append((ref, thumb))
                have.add(ref["sha256"])
        self._show()

    def _too_many_images(self) -> None:
        self.refused.emit(tr("At most {count} images go with one message.").format(
            count=MAX_IMAGES))

    def image_refs(self) -> list[dict[str, Any]]:
        return [ref for ref, _ in self.images]

    def set_blind(self, why: str) -> None:
        """``why`` attached images will not be sent to the model in use ("": they will)."""
        self._blind = why
        self._show_note()

    def _show_note(self) -> None:
        self.note.setText(self._blind)
        self.note.setVisible(bool(self._blind and self.images))

    def take_drops(self, widget: QWidget) -> None:
        """Files and folders dropped on ``widget`` (the message box) are attached, not pasted
        as their paths."""
        widget.setAcceptDrops(True)
        widget.installEventFilter(self)

    def take_paste(self, widget: QWidget) -> None:
        """Ctrl+V in ``widget`` (the message box) attaches a copied image or image file; text
        is pasted as text."""
        widget.installEventFilter(self)

    def paste(self) -> bool:
        """Attach what the clipboard holds if it is an image; False: it is not (paste text)."""
        data = QGuiApplication.clipboard().mimeData()
        if data is None:
            return False
        files = [p for p in _local_paths(data) if is_image(p)]
        if files:
            self.add(files)
            return True
        if data.hasImage():
            image = QImage(data.imageData())
            if not image.isNull():
                if len(self.images) >= MAX_IMAGES:
                    self._too_many_images()
                else:
                    self.image_pasted.emit(image)
                return True
        return False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) and \
                event.matches(QKeySequence.StandardKey.Paste) and self.paste():
            return True
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

    def remove_image(self, sha: str) -> None:
        self.images = [(ref, thumb) for ref, thumb in self.images if ref["sha256"] != sha]
        self._show()

    def clear(self) -> None:
        self.paths = []
        self.images = []
        self._show()

    def chips(self) -> list[QWidget]:
        items = (self._row.itemAt(i) for i in range(self._row.count()))
        return [w for item in items if item is not None and (w := item.widget()) is not None]

    def _show(self) -> None:
        for chip in self.chips():
            self._row.removeWidget(chip)
            chip.deleteLater()
        for ref, thumb in self.images:
            self._row.insertWidget(self._row.count() - 1, self._image_chip(ref, thumb))
        for path in self.paths:
            self._row.insertWidget(self._row.count() - 1, self._chip(path))
        self.setVisible(bool(self.paths or self.images))
        self._show_note()
        self.changed.emit()

    def _image_chip(self, ref: dict[str, Any], thumb: QImage) -> QWidget:
        chip = QFrame()
        chip.setObjectName("attachment")
        name = str(ref.get("name") or tr("Pasted image"))
        chip.setToolTip(tr("{name} · {width} × {height} pixels, as the model gets it").format(
            name=name, width=ref["width"], height=ref["height"]))
        picture = QLabel()
        picture.setAccessibleName(name)
        ratio = self.devicePixelRatioF()
        pixmap = QPixmap.fromImage(thumb).scaledToHeight(
            round(CHIP_THUMB * ratio), Qt.TransformationMode.SmoothTransformation)
        pixmap.setDevicePixelRatio(ratio)
        picture.setPixmap(pixmap)
        drop = icon_button("close", tr("Remove {name}").format(name=name))
        sha = str(ref["sha256"])
        drop.clicked.connect(lambda: self.remove_image(sha))
        row = QHBoxLayout(chip)
        row.setContentsMargins(SPACING.xs, SPACING.xs // 2, 0, SPACING.xs // 2)
        row.setSpacing(SPACING.xs)
        row.addWidget(picture)
        row.addWidget(drop)
        return chip

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
