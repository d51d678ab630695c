"""Render the application icon's PNG sizes from resources/icons/hearth.svg.

    .venv/bin/python installers/render_icons.py

Run it after editing the SVG and commit the PNGs with it: window managers, installers and the
taskbar want bitmaps, and a 16 px bitmap rendered once looks better than one scaled at run time
on a machine without the SVG plugin.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
SIZES = (16, 32, 48, 64, 128, 256, 512)


def render(svg: Path = ICONS / "hearth.svg", out: Path = ICONS,
           sizes: tuple[int, ...] = SIZES) -> list[Path]:
    """Write ``hearth-<size>.png`` for each size beside the SVG; returns the files written."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication([])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg} is not a valid SVG")
    written = []
    for size in sizes:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        renderer.render(painter)
        painter.end()
        path = out / f"hearth-{size}.png"
        if not image.save(str(path)):
            raise SystemExit(f"could not write {path}")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in render():
        sys.stdout.write(f"{p}\n")
