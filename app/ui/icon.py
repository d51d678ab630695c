"""The application icon, from resources/icons/ (the SVG and its PNG sizes).

The files live in the top-level ``resources/`` folder beside the ``app`` package, found through
``app.paths.resources_dir()`` like the curated model list: a source checkout and the editable
install (installers/dev.py) have it there. A missing folder (a build that forgot to ship it)
gives an empty icon and a warning, never an error: the window works without its icon.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QIcon

from app import paths

log = logging.getLogger(__name__)

SIZES = (16, 32, 48, 64, 128, 256, 512)  # installers/render_icons.py writes these


def icons_dir() -> Path:
    """The folder with hearth.svg and hearth-<size>.png."""
    return paths.resources_dir() / "icons"


def app_icon(folder: Path | None = None) -> QIcon:
    """Hearth's icon with every PNG size (sharp at 16 px), and the SVG for any other size
    where Qt's SVG plugin is present; an empty icon when the files are missing."""
    folder = folder or icons_dir()
    icon = QIcon()
    for size in SIZES:
        png = folder / f"hearth-{size}.png"
        if png.is_file():
            icon.addFile(str(png), QSize(size, size))
    svg = folder / "hearth.svg"
    if icon.isNull() and svg.is_file():
        icon.addFile(str(svg))  # no PNGs: the SVG alone still gives an icon
    if icon.isNull():
        log.warning("the application icon is missing from %s", folder)
    return icon
