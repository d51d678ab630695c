"""Images attached to a question, made ready off the GUI thread: decoded with Qt (PNG, JPEG,
WebP, GIF's first frame, BMP), scaled to what the loaded model's projector looks at, encoded as
PNG (when it has transparency) or JPEG, and kept in Hearth's image store (app/storage/images.py).

A header that declares an absurd size is refused before anything is decoded (a few KiB of PNG
can declare 10 GB of pixels). What comes back is the reference the message keeps and a small
thumbnail for the chip above the message box.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QObject, QSize, Qt, Signal
from PySide6.QtGui import QImage, QImageIOHandler, QImageReader

from app.i18n import T_, TextError
from app.jobs import CancelToken
from app.services.tasks import TaskRunner
from app.storage.images import ImageStore

log = logging.getLogger(__name__)

# File suffixes taken as images (attached as pictures, not read as documents).
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp")
MAX_SIDE_DECLARED = 16_384
MAX_PIXELS_DECLARED = 40_000_000
# The longest side sent when the projector does not say (and never more).
DEFAULT_SIDE = 1024
MAX_SENT_SIDE = 2048
THUMB = 96  # pixels on the longer side of a chip's thumbnail (twice a chip's height: HiDPI)
JPEG_QUALITY = 90


def is_image(path: str) -> bool:
    return path.lower().endswith(IMAGE_SUFFIXES)


class ImageService(QObject):
    ready = Signal(object)  # list[tuple[dict, QImage]]: each image's reference and thumbnail
    refused = Signal(object)  # a sentence (Text)

    def __init__(self, tasks: TaskRunner, store: ImageStore,
                 side: Callable[[], int] = lambda: DEFAULT_SIDE,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks = tasks
        self.store = store
        self._side = side  # the longest side the loaded model's projector uses

    def add_files(self, paths: Sequence[str]) -> None:
        files, store, side = list(paths), self.store, self._side()

        def work(token: CancelToken) -> list[tuple[dict[str, Any], QImage]]:
            out = []
            for path in files:
                token.check()
                out.append(prepare(_read(path), os.path.basename(path), side, store))
            return out

        self._tasks.start_job(work, self.ready.emit, self._failed, name="images",
                              expected=(TextError, OSError))

    def add_image(self, image: QImage, name: str) -> None:
        """An image pasted from the clipboard (already decoded by Qt)."""
        store, side = self.store, self._side()
        copy = image.copy()  # the clipboard's image may change under the job

        def work(_token: CancelToken) -> list[tuple[dict[str, Any], QImage]]:
            return [encode(copy, name, side, store)]

        self._tasks.start_job(work, self.ready.emit, self._failed, name="images",
                              expected=(TextError, OSError))

    def _failed(self, exc: Exception) -> None:
        self.refused.emit(str(exc))


def _read(path: str) -> QImageReader:
    reader = QImageReader(path)
    reader.setAutoTransform(True)  # a phone photo's EXIF rotation
    return reader


def prepare(reader: QImageReader, name: str, side: int, store: ImageStore
            ) -> tuple[dict[str, Any], QImage]:
    """Decode, check, scale, encode and keep one image (on a worker thread)."""
    size = reader.size()  # from the header alone
    if not size.isValid():
        raise TextError(T_("{name} is not an image Hearth can read ({reason}).", name=name,
                           reason=reader.errorString() or T_("unknown format")))
    w, h = size.width(), size.height()
    if max(w, h) > MAX_SIDE_DECLARED or w * h > MAX_PIXELS_DECLARED:
        raise TextError(T_("{name} declares {width} × {height} pixels, far more than any photo: "
                           "it is refused before it is opened. Scale it down first.", name=name,
                           width=w, height=h))
    target = _fit(w, h, side)
    if target != QSize(w, h) and reader.supportsOption(QImageIOHandler.ImageOption.ScaledSize):
        reader.setScaledSize(target)  # JPEG decodes straight to the smaller size
    image = reader.read()
    if image.isNull():
        raise TextError(T_("{name} could not be opened as an image: {reason}.", name=name,
                           reason=reader.errorString()))
    return encode(image, name, side, store)


def encode(image: QImage, name: str, side: int, store: ImageStore
           ) -> tuple[dict[str, Any], QImage]:
    target = _fit(image.width(), image.height(), side)
    if image.size() != target:
        image = image.scaled(target, Qt.AspectRatioMode.IgnoreAspectRatio,
                             Qt.TransformationMode.SmoothTransformation)
    fmt = "png" if image.hasAlphaChannel() else "jpeg"
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    # PySide6 takes the format as str (its stubs say bytes, which it refuses at run time).
    kind: Any = "PNG" if fmt == "png" else "JPEG"
    if not image.save(buf, kind, -1 if fmt == "png" else JPEG_QUALITY):
        raise TextError(T_("{name} could not be converted for the model.", name=name))
    ref = store.put(bytes(data.data()), fmt, width=image.width(), height=image.height(),
                    name=name)
    thumb = image.scaled(QSize(THUMB, THUMB), Qt.AspectRatioMode.KeepAspectRatio,
                         Qt.TransformationMode.SmoothTransformation)
    return ref, thumb


def _fit(w: int, h: int, side: int) -> QSize:
    """The size that keeps the aspect and has its longer side at most ``side`` (no upscaling)."""
    longest = max(w, h)
    limit = max(64, min(side, MAX_SENT_SIDE))
    if longest <= limit:
        return QSize(w, h)
    scale = limit / longest
    return QSize(max(1, round(w * scale)), max(1, round(h * scale)))
