"""Light, dark, or whatever the system uses: the application's palette.

Hearth draws itself the same on every platform: the Fusion style, the palette and the one
stylesheet made from the design tokens (app/ui/style/). "system" follows the system's light or
dark mode as it changes (``QStyleHints.colorScheme``, Qt 6.5+; light where the system says
nothing); "light" and "dark" force one. The stylesheet's text sizes are multiples of the
application font's size when the theme is applied, so they follow the person's font size.
Widgets that paint with token colours (the chat view, the memory bars) redraw on
``ApplicationPaletteChange``; icons pick their colour when painted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from app.ui.style.icons import tinted_file
from app.ui.style.palette import is_dark, palette
from app.ui.style.sheet import stylesheet
from app.ui.style.tokens import Scheme, colors

log = logging.getLogger(__name__)

def dark_palette() -> QPalette:
    """Hearth's dark palette, from the design tokens (warm greys; the accent is the ember)."""
    return palette("dark")


def light_palette() -> QPalette:
    """Hearth's light palette, from the design tokens."""
    return palette("light")


def _system_scheme() -> Qt.ColorScheme:
    return QApplication.styleHints().colorScheme()


class ThemeController(QObject):
    """Applies a theme choice to the application and keeps following the system's."""

    applied = Signal(str)  # "light" or "dark": what is on screen now

    def __init__(self, app: QApplication, *,
                 system_scheme: Callable[[], Qt.ColorScheme] | None = None,
                 parent: QObject | None = None) -> None:
        """``system_scheme`` reads the system's mode (tests pass their own)."""
        super().__init__(parent)
        self._app = app
        self._system_scheme = system_scheme or _system_scheme
        self._theme = "system"
        self._applying = False
        # Bound method: disconnected by Qt when the controller goes.
        app.styleHints().colorSchemeChanged.connect(self._on_system_changed)

    @property
    def theme(self) -> str:
        """The choice: "system", "light" or "dark"."""
        return self._theme

    @property
    def effective(self) -> str:
        """What is on screen: "light" or "dark"."""
        return "dark" if is_dark(self._app.palette()) else "light"

    def apply(self, theme: str) -> None:
        """Use ``theme`` ("system", "light" or "dark"; anything else is "system") at once."""
        if theme not in ("system", "light", "dark"):
            log.warning("unknown theme %r; following the system", theme)
            theme = "system"
        self._theme = theme
        self._applying = True
        try:
            if theme == "system":
                self._follow_system()
            else:
                self._force(theme)
        finally:
            self._applying = False
        self.applied.emit(self.effective)

    def _force(self, theme: str) -> None:
        # Ask the platform too (Qt 6.8+): the title bar and native dialogs then match.
        self._request_scheme(Qt.ColorScheme.Dark if theme == "dark" else Qt.ColorScheme.Light)
        self._draw("dark" if theme == "dark" else "light")

    def _follow_system(self) -> None:
        self._request_scheme(Qt.ColorScheme.Unknown)
        self._draw("dark" if self._system_scheme() == Qt.ColorScheme.Dark else "light")

    def _draw(self, scheme: str) -> None:
        if self._app.style().name().lower() != "fusion":
            self._app.setStyle("Fusion")
        self._app.setPalette(dark_palette() if scheme == "dark" else light_palette())
        base_pt = self._app.font().pointSizeF()
        name: Scheme = "dark" if scheme == "dark" else "light"
        muted = colors(name).muted_text
        arrows = (tinted_file("collapse", muted), tinted_file("expand", muted))
        self._app.setStyleSheet(stylesheet(name, base_pt if base_pt > 0 else 10.0, arrows))

    def _request_scheme(self, scheme: Qt.ColorScheme) -> None:
        hints = self._app.styleHints()
        if hasattr(hints, "setColorScheme"):  # Qt 6.8+
            hints.setColorScheme(scheme)

    def _on_system_changed(self, _scheme: Qt.ColorScheme) -> None:
        if self._theme == "system" and not self._applying:
            log.info("the system switched to %s mode", _scheme.name.lower())
            self.apply("system")
