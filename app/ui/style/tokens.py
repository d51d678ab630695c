"""The design tokens: spacing, radii, a type scale and the colour roles of the light and dark themes.

Pixel sizes are device-independent pixels (Qt scales them on high-DPI screens). Type sizes are
multiples of the system's font size, never points of their own, so text follows the size the
person chose. The colours start from app/ui/theme.py's palettes and the hues the widgets use
today, moved only where a pair missed WCAG AA; tests/unit/test_style_tokens.py checks every
text/background pair a widget draws, in both themes.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from typing import Literal

from app.ui.style.contrast import parse_hex

Scheme = Literal["light", "dark"]


@dataclass(frozen=True)
class Spacing:
    """Gaps and margins, in device-independent pixels, smallest first."""

    xxs: int = 2
    xs: int = 4
    sm: int = 6
    md: int = 8
    lg: int = 12
    xl: int = 16
    xxl: int = 24
    xxxl: int = 32

    def steps(self) -> tuple[int, ...]:
        """The scale in order, smallest first."""
        return tuple(astuple(self))


@dataclass(frozen=True)
class Radii:
    """Corner radii, in device-independent pixels: small controls (chips, inputs), buttons and
    banners, cards and popups."""

    sm: int = 4
    md: int = 6
    lg: int = 10

    def steps(self) -> tuple[int, ...]:
        """The radii in order, smallest first."""
        return tuple(astuple(self))


@dataclass(frozen=True)
class TypeScale:
    """Text sizes as multiples of the system font size (body is the system size itself)."""

    caption: float = 0.85
    small: float = 0.92
    body: float = 1.0
    subheading: float = 1.1
    heading: float = 1.3
    title: float = 1.6

    def steps(self) -> tuple[float, ...]:
        """The factors in order, smallest first."""
        return tuple(astuple(self))

    def size(self, factor: float, base_pt: float) -> float:
        """A size in points for ``factor`` (one of this scale's) given the system's ``base_pt``."""
        return round(base_pt * factor, 1)


@dataclass(frozen=True)
class ColorRoles:
    """One theme's colours, each ``#rrggbb``.

    ``surface`` is the window, ``raised_surface`` a card, popup or field on it. ``text`` and
    ``muted_text`` are drawn on either surface; ``on_accent`` on an ``accent`` fill (a primary
    button, a selection); ``success``, ``warning`` and ``danger`` are text colours for verdicts,
    notices and errors, on either surface, and never the only sign (a word goes with them).
    ``focus`` is the keyboard focus ring, at least 3:1 against both surfaces. ``border`` is a
    separator line and is decorative: a control whose edge must be seen to be found needs
    more than this border (WCAG 1.4.11). ``info`` is a neutral notice and the "partly on the
    GPU" verdict; ``link`` a link in text; ``sunken`` the fill of a code block
    or a composer, one step away from the surface.
    """

    surface: str
    raised_surface: str
    text: str
    muted_text: str
    accent: str
    on_accent: str
    success: str
    warning: str
    danger: str
    focus: str
    border: str
    info: str
    link: str
    sunken: str

    def __post_init__(self) -> None:
        for field in fields(self):
            parse_hex(getattr(self, field.name))  # raises on anything but #rrggbb


# theme.py's light palette: Window, Base, Text, PlaceholderText, Mid. The accent is the ember
# darkened from #c8561c (white on it was 4.37:1); success, warning and danger are the hues the
# widgets already show on a light base (the palette mixes they used, model_bar, chat_status).
LIGHT = ColorRoles(
    surface="#f4f2ef",
    raised_surface="#ffffff",
    text="#1f1d1b",
    muted_text="#625e59",
    accent="#bf5219",
    on_accent="#ffffff",
    success="#1e773c",
    warning="#8a5a00",
    danger="#b3261e",
    focus="#bf5219",
    border="#bdb8b2",
    info="#1f5fa8",
    link="#a8460f",
    sunken="#ebe8e4",
)

# theme.py's dark palette: Window, Button (a raised control), Text, Mid and the ember accent.
# Muted text is lighter than PlaceholderText #9a9691 (4.23:1 on the raised surface), and text on
# the ember is dark (white on #d9692b was 3.50:1). Success, warning and danger are the light
# mixes the widgets gave on a dark base, danger a little lighter for margin.
DARK = ColorRoles(
    surface="#2b2a29",
    raised_surface="#353432",
    text="#e8e6e3",
    muted_text="#a5a19c",
    accent="#d9692b",
    on_accent="#1a1918",
    success="#79be8f",
    warning="#d7b366",
    danger="#e0908a",
    focus="#d9692b",
    border="#5a5754",
    info="#8ab8ec",
    link="#f0a060",
    sunken="#1f1e1d",
)

@dataclass(frozen=True)
class ChartColors:
    """Fills of the memory bars' segments (the model's weights, its KV cache, compute buffers,
    the runtime's overhead, shared memory, other programs, the reserve kept free) and the
    hardware bars' used and free parts. Graphics, not text: a legend with words always goes
    with them."""

    weights: str
    kv: str
    compute: str
    overhead: str
    shared: str
    projector: str
    draft: str
    others: str
    reserve: str
    used: str
    free: str
    over: str


CHART_LIGHT = ChartColors(weights="#3f7fd0", kv="#2aa37a", compute="#e0902a", overhead="#b5653a",
                          shared="#9a63c4", projector="#c2508d", draft="#2f9aa8",
                          others="#8c8c8c",
                          reserve="#bdbdbd", used="#d9822b", free="#3d9970", over="#d0342c")
CHART_DARK = ChartColors(weights="#5b95de", kv="#3bb98d", compute="#e9a24a", overhead="#c77a50",
                         shared="#b07fd6", projector="#d872a8", draft="#4db6c4",
                         others="#8a8784",
                         reserve="#5f5c59", used="#e39448", free="#4fb083", over="#e0605a")

SPACING = Spacing()
RADII = Radii()
TYPE = TypeScale()


def colors(scheme: Scheme) -> ColorRoles:
    """The colour roles of ``scheme``."""
    return DARK if scheme == "dark" else LIGHT


def chart(scheme: Scheme) -> ChartColors:
    """The chart fills of ``scheme``."""
    return CHART_DARK if scheme == "dark" else CHART_LIGHT
