"""Qt's palette made from the tokens, and the token colours as ``QColor`` for what is painted.

The stylesheet (sheet.py) draws the widgets it names; the palette still matters for what Qt
draws itself (the Fusion style's check boxes, the text cursor, the chat document's default
colours) and for widgets that paint (the memory bars). Both come from the same tokens.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from app.ui.style.tokens import ChartColors, ColorRoles, Scheme, chart, colors

Role = QPalette.ColorRole
Group = QPalette.ColorGroup


def _mix(a: str, b: str, amount: float) -> QColor:
    ca, cb = QColor(a), QColor(b)
    return QColor.fromRgbF(ca.redF() + (cb.redF() - ca.redF()) * amount,
                           ca.greenF() + (cb.greenF() - ca.greenF()) * amount,
                           ca.blueF() + (cb.blueF() - ca.blueF()) * amount)


def palette(scheme: Scheme) -> QPalette:
    """Hearth's palette for ``scheme``."""
    c = colors(scheme)
    pal = QPalette()
    roles = {
        Role.Window: c.surface, Role.WindowText: c.text, Role.Base: c.raised_surface,
        Role.AlternateBase: c.sunken, Role.ToolTipBase: c.raised_surface,
        Role.ToolTipText: c.text, Role.PlaceholderText: c.muted_text, Role.Text: c.text,
        Role.Button: c.raised_surface, Role.ButtonText: c.text, Role.BrightText: c.danger,
        Role.Mid: c.border, Role.Highlight: c.accent, Role.HighlightedText: c.on_accent,
        Role.Link: c.link, Role.LinkVisited: c.link, Role.Accent: c.accent,
    }
    for role, value in roles.items():
        pal.setColor(role, QColor(value))
    pal.setColor(Role.Light, _mix(c.raised_surface, "#ffffff", 0.3))
    pal.setColor(Role.Midlight, _mix(c.raised_surface, c.border, 0.5))
    pal.setColor(Role.Dark, _mix(c.border, c.text, 0.3))
    pal.setColor(Role.Shadow, _mix(c.text, "#000000", 0.5))
    disabled = _mix(c.muted_text, c.surface, 0.35)
    for role in (Role.WindowText, Role.Text, Role.ButtonText):
        pal.setColor(Group.Disabled, role, disabled)
    pal.setColor(Group.Disabled, Role.Highlight, QColor(c.border))
    pal.setColor(Group.Disabled, Role.HighlightedText, QColor(c.muted_text))
    return pal


def is_dark(pal: QPalette) -> bool:
    """Whether ``pal`` draws light text on a dark window."""
    return pal.color(Role.Window).lightnessF() < pal.color(Role.WindowText).lightnessF()


def current_scheme(pal: QPalette | None = None) -> Scheme:
    """The scheme on screen (or of ``pal``)."""
    pal = pal if pal is not None else QApplication.palette()
    return "dark" if is_dark(pal) else "light"


def roles(pal: QPalette | None = None) -> ColorRoles:
    """The colour roles of the scheme on screen (or of ``pal``)."""
    return colors(current_scheme(pal))


def chart_colors(pal: QPalette | None = None) -> ChartColors:
    """The chart fills of the scheme on screen (or of ``pal``)."""
    return chart(current_scheme(pal))


def qcolor(value: str) -> QColor:
    """A token's ``#rrggbb`` as a ``QColor``."""
    return QColor(value)
