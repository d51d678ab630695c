"""Light, dark, or whatever the system uses: the application's palette.

"system" gives the platform back its own style and palette and follows the system's light or
dark mode as it changes (``QStyleHints.colorScheme``, Qt 6.5+). Some platforms report dark mode
without giving the style a dark palette (many Linux desktops): there Hearth's own dark palette
stands in. "light" and "dark" force the Fusion style with Hearth's palettes, the same on every
platform. Widgets that draw with colours mixed from the palette (the chat view, the fit
verdicts) redraw on ``ApplicationPaletteChange``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

log = logging.getLogger(__name__)

Role = QPalette.ColorRole
Group = QPalette.ColorGroup


def _palette(colors: dict[QPalette.ColorRole, str], disabled: dict[QPalette.ColorRole, str]) -> QPalette:
    pal = QPalette()
    for role, value in colors.items():
        pal.setColor(role, QColor(value))
    for role, value in disabled.items():
        pal.setColor(Group.Disabled, role, QColor(value))
    return pal


def dark_palette() -> QPalette:
    """Hearth's dark palette (warm greys; the accent is the icon's ember)."""
    return _palette({
        Role.Window: "#2b2a29", Role.WindowText: "#e8e6e3", Role.Base: "#1f1e1d",
        Role.AlternateBase: "#292827", Role.ToolTipBase: "#3a3937", Role.ToolTipText: "#f0eeeb",
        Role.PlaceholderText: "#9a9691", Role.Text: "#e8e6e3", Role.Button: "#353432",
        Role.ButtonText: "#e8e6e3", Role.BrightText: "#ff6b5a", Role.Light: "#4a4846",
        Role.Midlight: "#3f3d3b", Role.Mid: "#5a5754", Role.Dark: "#1a1918",
        Role.Shadow: "#0d0d0c", Role.Highlight: "#d9692b", Role.HighlightedText: "#ffffff",
        Role.Link: "#f0a060", Role.LinkVisited: "#d08aa0", Role.Accent: "#d9692b",
    }, {
        Role.WindowText: "#7d7a76", Role.Text: "#7d7a76", Role.ButtonText: "#7d7a76",
        Role.Highlight: "#4a4846", Role.HighlightedText: "#b0ada9",
    })


def light_palette() -> QPalette:
    """Hearth's light palette."""
    return _palette({
        Role.Window: "#f4f2ef", Role.WindowText: "#1f1d1b", Role.Base: "#ffffff",
        Role.AlternateBase: "#f7f5f2", Role.ToolTipBase: "#fffdf7", Role.ToolTipText: "#1f1d1b",
        Role.PlaceholderText: "#6f6b66", Role.Text: "#1f1d1b", Role.Button: "#ebe8e4",
        Role.ButtonText: "#1f1d1b", Role.BrightText: "#c4271a", Role.Light: "#ffffff",
        Role.Midlight: "#f0ede9", Role.Mid: "#bdb8b2", Role.Dark: "#8f8a84",
        Role.Shadow: "#4a4642", Role.Highlight: "#c8561c", Role.HighlightedText: "#ffffff",
        Role.Link: "#b04a12", Role.LinkVisited: "#8a3a6a", Role.Accent: "#c8561c",
    }, {
        Role.WindowText: "#a19c96", Role.Text: "#a19c96", Role.ButtonText: "#a19c96",
        Role.Highlight: "#d6d1cb", Role.HighlightedText: "#6f6b66",
    })


def is_dark(palette: QPalette) -> bool:
    """Whether ``palette`` draws light text on a dark window."""
    return palette.color(Role.Window).lightnessF() < palette.color(Role.WindowText).lightnessF()


def _system_scheme() -> Qt.ColorScheme:
    return QApplication.styleHints().colorScheme()


class ThemeController(QObject):
    """Applies a theme choice to the application and keeps following the system's."""

    applied = Signal(str)  # "light" or "dark": what is on screen now

    def __init__(self, app: QApplication, *,
                 system_scheme: Callable[[], Qt.ColorScheme] | None = None,
                 parent: QObject | None = None) -> None:
        """Remembers the platform's own style, to give it back when "system" is chosen after
        a forced theme. ``system_scheme`` reads the system's mode (tests pass their own)."""
        super().__init__(parent)
        self._app = app
        self._native_style = app.style().name()
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
        if self._app.style().name().lower() != "fusion":
            self._app.setStyle("Fusion")
        self._app.setPalette(dark_palette() if theme == "dark" else light_palette())

    def _follow_system(self) -> None:
        self._request_scheme(Qt.ColorScheme.Unknown)
        if self._app.style().name().lower() != self._native_style.lower():
            self._app.setStyle(self._native_style)
        self._app.setPalette(QPalette())  # an empty palette: the platform's own again
        scheme = self._system_scheme()
        if scheme == Qt.ColorScheme.Dark and not is_dark(self._app.palette()):
            # The system is dark but this style has no dark palette of its own.
            self._app.setPalette(dark_palette())

    def _request_scheme(self, scheme: Qt.ColorScheme) -> None:
        hints = self._app.styleHints()
        if hasattr(hints, "setColorScheme"):  # Qt 6.8+
            hints.setColorScheme(scheme)

    def _on_system_changed(self, _scheme: Qt.ColorScheme) -> None:
        if self._theme == "system" and not self._applying:
            log.info("the system switched to %s mode", _scheme.name.lower())
            self.apply("system")
