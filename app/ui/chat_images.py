"""The chat document's image handler: it draws only images of Hearth's own store.

Qt's own handler reads whatever file an ``<img>`` names, even when the document's
``loadResource`` declines (app/ui/chat_document.py), so the transcript replaces it. This one
takes an ``<img>`` whose source is ``hearth-image:<sha256>.<png|jpeg>`` (app/storage/images.py;
the renderer writes them only from a question's own references, app/chat/render.py
render_images), reads that file from the store, and draws it at the size the tag states. Any
other source draws nothing. Decoded thumbnails are kept (a few, small), so scrolling does not
read the disk again.
"""

from __future__ import annotations

from collections import OrderedDict

from PySide6.QtCore import QObject, QRect, QRectF, QSizeF, Qt
from PySide6.QtGui import QImage, QPainter, QPyTextObject, QTextDocument, QTextFormat

from app.storage.images import SCHEME, ImageStore

KEEP = 64  # thumbnails kept decoded


class StoreImages(QPyTextObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store: ImageStore | None = None
        self._thumbs: OrderedDict[str, QImage] = OrderedDict()

    def intrinsicSize(self, doc: QTextDocument, pos: int, format: QTextFormat) -> QSizeF:
        image = format.toImageFormat()
        if not image.name().startswith(SCHEME):
            return QSizeF(0, 0)
        return QSizeF(max(0.0, image.width()), max(0.0, image.height()))

    def drawObject(self, painter: QPainter, rect: QRectF | QRect, doc: QTextDocument, pos: int,
                   format: QTextFormat) -> None:
        area = QRectF(rect)
        thumb = self.thumbnail(format.toImageFormat().name(), area.size())
        if thumb is not None:
            painter.drawImage(area, thumb)

    def thumbnail(self, name: str, size: QSizeF) -> QImage | None:
        if name in self._thumbs:
            self._thumbs.move_to_end(name)
            return self._thumbs[name]
        if self.store is None or not name.startswith(SCHEME):
            return None
        sha, _, fmt = name[len(SCHEME):].partition(".")
        path = self.store.path({"sha256": sha, "format": fmt})  # None: not a store reference
        image = QImage(str(path)) if path is not None else QImage()
        if image.isNull():
            return None
        scale = 2.0  # sharp on a HiDPI screen
        thumb = image.scaled(round(size.width() * scale), round(size.height() * scale),
                             Qt.AspectRatioMode.IgnoreAspectRatio,
                             Qt.TransformationMode.SmoothTransformation)
        self._thumbs[name] = thumb
        while len(self._thumbs) > KEEP:
            self._thumbs.popitem(last=False)
        return thumb

