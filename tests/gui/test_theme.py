"""The theme (app/ui/theme.py): forced light and dark, following the system and its changes,
and the application icon (app/ui/icon.py)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QWidget

from app.ui.icon import SIZES, app_icon, icons_dir
from app.ui.style.tokens import DARK, LIGHT
from app.ui.theme import ThemeController, dark_palette, is_dark, light_palette


class _PaletteWatcher(QWidget):
    """Counts application palette changes, as the chat view reacts to them."""

    def __init__(self) -> None:
        super().__init__()
        self.changes = 0

    def changeEvent(self, e: QEvent) -> None:
        super().changeEvent(e)
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.changes += 1


@pytest.fixture
def app(qapp: QApplication) -> Iterator[QApplication]:
    """The application with a non-Fusion "native" style, put back as it was afterwards."""
    before = qapp.style().name()
    qapp.setStyle("Windows")  # stands in for a platform style: Fusion is what forcing sets
    qapp.setPalette(QPalette())
    yield qapp
    hints = qapp.styleHints()
    if hasattr(hints, "setColorScheme"):
        hints.setColorScheme(Qt.ColorScheme.Unknown)
    qapp.setStyle(before)
    qapp.setStyleSheet("")
    qapp.setPalette(QPalette())


@pytest.fixture
def scheme() -> dict[str, Qt.ColorScheme]:
    return {"now": Qt.ColorScheme.Light}


@pytest.fixture
def theme(app: QApplication, scheme: dict[str, Qt.ColorScheme]) -> Iterator[ThemeController]:
    controller = ThemeController(app, system_scheme=lambda: scheme["now"])
    yield controller
    controller.deleteLater()  # drops its connection to the style hints


def window_color(app: QApplication) -> str:
    return app.palette().color(QPalette.ColorRole.Window).name()


def test_the_palettes_are_what_they_say() -> None:
    assert is_dark(dark_palette()) and not is_dark(light_palette())
    for pal in (dark_palette(), light_palette()):  # placeholder text stays readable
        assert pal.color(QPalette.ColorRole.PlaceholderText) != pal.color(QPalette.ColorRole.Base)


def test_dark_and_light_are_forced_with_fusion(app: QApplication, theme: ThemeController,
                                              qtbot: Any) -> None:
    watcher = _PaletteWatcher()
    qtbot.addWidget(watcher)
    watcher.show()
    with qtbot.waitSignal(theme.applied) as sig:
        theme.apply("dark")
    assert sig.args == ["dark"]
    # The one stylesheet, made from the dark tokens, over Fusion (a stylesheet wraps the style,
    # which then reports no name of its own).
    assert DARK.raised_surface in app.styleSheet() and LIGHT.raised_surface not in app.styleSheet()
    assert window_color(app) == dark_palette().color(QPalette.ColorRole.Window).name()
    # Widgets get it on the next pass of the event loop, and are told (the chat view then
    # renders again).
    qtbot.waitUntil(lambda: is_dark(watcher.palette()), timeout=10_000)
    assert watcher.changes >= 1
    theme.apply("light")
    assert theme.effective == "light" and theme.theme == "light"
    assert window_color(app) == light_palette().color(QPalette.ColorRole.Window).name()
    assert LIGHT.raised_surface in app.styleSheet()
    theme.apply("system")  # Hearth's own look still, in the system's mode (light here)
    assert window_color(app) == light_palette().color(QPalette.ColorRole.Window).name()
    assert LIGHT.accent in app.styleSheet()


def test_following_a_dark_system(app: QApplication, theme: ThemeController,
                                                      scheme: dict[str, Qt.ColorScheme]) -> None:
    scheme["now"] = Qt.ColorScheme.Dark
    theme.apply("system")
    assert theme.effective == "dark"
    scheme["now"] = Qt.ColorScheme.Light
    theme.apply("system")
    assert theme.effective == "light"


def test_the_system_switching_is_followed_at_once(app: QApplication, theme: ThemeController,
                                                  scheme: dict[str, Qt.ColorScheme],
                                                  qtbot: Any) -> None:
    theme.apply("system")
    assert theme.effective == "light"
    scheme["now"] = Qt.ColorScheme.Dark
    with qtbot.waitSignal(theme.applied):
        app.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert theme.effective == "dark"
    scheme["now"] = Qt.ColorScheme.Light
    app.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert theme.effective == "light"


def test_a_forced_theme_ignores_the_system(app: QApplication, theme: ThemeController,
                                           scheme: dict[str, Qt.ColorScheme]) -> None:
    theme.apply("light")
    scheme["now"] = Qt.ColorScheme.Dark
    app.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert theme.effective == "light"


def test_an_unknown_theme_follows_the_system(app: QApplication, theme: ThemeController) -> None:
    theme.apply("dark")
    theme.apply("neon")
    assert theme.theme == "system"
    assert theme.effective == "light"  # the system says light in this test


# -- the application icon ---------------------------------------------------------------------


def test_the_icon_has_every_size(qapp: QApplication) -> None:
    assert (icons_dir() / "hearth.svg").is_file()
    icon = app_icon()
    assert not icon.isNull()
    sizes = {(s.width(), s.height()) for s in icon.availableSizes()}
    assert sizes == {(n, n) for n in SIZES}
    image = icon.pixmap(QSize(16, 16)).toImage()
    assert image.width() == 16
    # Not blank: the flame's orange is in the middle of the small icon.
    centre = image.pixelColor(8, 9)
    assert centre.red() > 150 and centre.alpha() > 200


def test_a_missing_icon_folder_gives_an_empty_icon(qapp: QApplication, tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    assert app_icon(tmp_path).isNull()
    assert "missing" in caplog.text


def test_the_pngs_are_rendered_from_the_svg(qapp: QApplication, tmp_path: Path) -> None:
    from installers.render_icons import render

    written = render(out=tmp_path, sizes=(16, 48))
    assert [p.name for p in written] == ["hearth-16.png", "hearth-48.png"]
    from PySide6.QtGui import QImage

    assert QImage(str(written[1])).size() == QSize(48, 48)
