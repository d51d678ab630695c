"""Icons: Lucide's outline SVGs (resources/icons/ui/, ISC licence beside them), tinted by the theme.

An icon is drawn when it is painted, in the colour the palette on screen gives its state (text,
muted when disabled, the accent's text when selected or checked on the accent), so a switch
between light and dark needs no widget to set its icons again. Rendered pixmaps are cached by
name, colour and size. A name with no file gives an empty icon and one warning: a build that
forgot an icon loses the picture, never the button (every icon button carries a tooltip and an
accessible name).
"""

from __future__ import annotations

import logging
import tempfile
from functools import cache
from pathlib import Path

from PySide6.QtCore import QByteArray, QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QIconEngine, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from app import paths
from app.ui.style.palette import roles

log = logging.getLogger(__name__)

# Every icon Hearth draws, by its role here -> the Lucide file name. One place to look them up
# and to test that each file is shipped.
NAMES: dict[str, str] = {
    "chat": "message-square", "discover": "compass", "models": "hard-drive",
    "downloads": "download", "hardware": "cpu", "settings": "settings", "copy": "copy",
    "edit": "pencil", "regenerate": "refresh-cw", "previous": "chevron-left",
    "next": "chevron-right", "expand": "chevron-down", "send": "send-horizontal", "stop": "square",
    "new": "plus", "search": "search", "delete": "trash-2", "pin": "pin", "unpin": "pin-off",
    "more": "ellipsis", "close": "x", "check": "check", "warning": "triangle-alert",
    "info": "info", "error": "circle-alert", "open": "folder-open", "file": "file",
    "load": "play", "unload": "power", "offload": "sliders-horizontal", "sharing": "globe",
    "server": "server", "offline": "wifi-off", "monitor": "monitor", "language": "languages",
    "appearance": "palette", "external": "external-link", "recent": "clock",
    "retry": "rotate-ccw", "light": "sun", "dark": "moon", "keyboard": "keyboard",
    "library": "library", "model": "box", "get": "arrow-down-to-line", "pause": "pause",
    "ok": "circle-check", "failed": "circle-x", "speed": "gauge", "memory": "memory-stick",
    "fast": "zap", "user": "user", "assistant": "bot", "recommended": "sparkles",
    "busy": "loader-circle", "history": "history", "sidebar": "panel-left", "key": "key-round",
    "collapse": "chevron-up", "drawer": "panel-right", "tools": "wrench",
}


def icons_dir() -> Path:
    """Where the UI icons' SVG files are."""
    return paths.resources_dir() / "icons" / "ui"


@cache
def _svg(file_name: str) -> bytes | None:
    path = icons_dir() / f"{file_name}.svg"
    try:
        return path.read_bytes()
    except OSError:
        log.warning("icon %s is missing from %s", file_name, path.parent)
        return None


@cache
def _pixmap(file_name: str, color: str, size: int, ratio: float) -> QPixmap:
    data = _svg(file_name)
    pixels = max(1, round(size * ratio))
    pix = QPixmap(pixels, pixels)
    pix.fill(Qt.GlobalColor.transparent)
    if data is not None:
        renderer = QSvgRenderer(QByteArray(data.replace(b"currentColor", color.encode())))
        painter = QPainter(pix)
        renderer.render(painter, QRectF(0, 0, pixels, pixels))
        painter.end()
    pix.setDevicePixelRatio(ratio)
    return pix


class _TintedEngine(QIconEngine):
    """Draws one SVG in the palette's colour for the mode and state asked."""

    def __init__(self, file_name: str, tone: str) -> None:
        super().__init__()
        self._file = file_name
        self._tone = tone

    def _color(self, mode: QIcon.Mode, state: QIcon.State) -> str:
        c = roles()
        if mode == QIcon.Mode.Disabled:
            return c.border if self._tone in ("text", "on_accent", "nav") else c.muted_text
        if mode == QIcon.Mode.Selected or (self._tone == "nav" and state == QIcon.State.On):
            return c.on_accent  # on the accent's fill: a selected row, a checked rail button
        return {"text": c.text, "muted": c.muted_text, "accent": c.accent,
                "danger": c.danger, "warning": c.warning, "success": c.success,
                "info": c.info, "on_accent": c.on_accent}.get(self._tone, c.text)

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        app = QApplication.instance()
        ratio = app.devicePixelRatio() if isinstance(app, QApplication) else 1.0
        side = min(size.width(), size.height())
        return _pixmap(self._file, self._color(mode, state), side, float(ratio))

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        side = min(rect.width(), rect.height())
        ratio = painter.device().devicePixelRatioF() if painter.device() else 1.0
        pix = _pixmap(self._file, self._color(mode, state), side, float(ratio))
        x = rect.x() + (rect.width() - side) // 2
        y = rect.y() + (rect.height() - side) // 2
        painter.drawPixmap(QPoint(x, y), pix)

    def clone(self) -> QIconEngine:
        return _TintedEngine(self._file, self._tone)

    def isNull(self) -> bool:
        return _svg(self._file) is None


def icon(name: str, tone: str = "text") -> QIcon:
    """The icon for ``name`` (a key of :data:`NAMES`), drawn in the theme's ``tone`` colour:
    ``text`` (the default), ``muted``, ``accent``, ``on_accent``, ``success``, ``warning``,
    ``danger`` or ``info``; ``nav`` is the text colour, and the accent's text colour when its
    checkable button is checked (the navigation rails)."""
    file_name = NAMES.get(name)
    if file_name is None:
        raise KeyError(f"no icon is named {name!r}; add it to app/ui/style/icons.NAMES")
    return QIcon(_TintedEngine(file_name, tone))


_tinted_dir: Path | None = None


def tinted_file(name: str, color: str) -> str:
    """A file of ``name``'s SVG drawn in ``color`` (for a stylesheet, which shows pictures only
    from files), written once per process into a private temporary folder; forward slashes.
    "" when it cannot be written (the stylesheet then draws no arrow, never fails)."""
    global _tinted_dir
    data = _svg(NAMES[name])
    if data is None:
        return ""
    try:
        if _tinted_dir is None:
            _tinted_dir = Path(tempfile.mkdtemp(prefix="hearth-style-"))
        path = _tinted_dir / f"{NAMES[name]}-{color.lstrip('#')}.svg"
        if not path.exists():
            path.write_bytes(data.replace(b"currentColor", color.encode()))
    except OSError as exc:
        log.warning("could not write the %s arrow for the stylesheet: %s", name, exc)
        return ""
    return path.as_posix()


def pixmap(name: str, size: int, tone: str = "text") -> QPixmap:
    """``name``'s icon as a pixmap of ``size`` pixels (for a label that shows a picture)."""
    return icon(name, tone).pixmap(QSize(size, size))


def color_of(tone: str) -> QColor:
    """The colour a ``tone`` has on screen now."""
    c = roles()
    return QColor(getattr(c, {"muted": "muted_text"}.get(tone, tone), c.text))
