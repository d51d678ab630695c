"""WCAG 2.x contrast: the relative luminance of an sRGB colour and the ratio between two.

As the spec defines them (https://www.w3.org/TR/WCAG22/#dfn-relative-luminance): each 8-bit
channel is linearised (``c / 12.92`` up to 0.04045, else ``((c + 0.055) / 1.055) ** 2.4``; WCAG
2.0 wrote 0.03928, which gives the same result for every 8-bit value), weighted 0.2126 R +
0.7152 G + 0.0722 B, and the ratio is ``(L_lighter + 0.05) / (L_darker + 0.05)``, from 1 to 21.
"""

from __future__ import annotations

import re

_HEX = re.compile(r"#[0-9a-fA-F]{6}")

# The thresholds of success criteria 1.4.3 (text) and 1.4.11 (non-text: focus rings, borders
# that identify a control).
AA_NORMAL_TEXT = 4.5
AA_LARGE_TEXT = 3.0
AA_NON_TEXT = 3.0


def parse_hex(color: str) -> tuple[int, int, int]:
    """The red, green and blue bytes of a ``#rrggbb`` colour."""
    if not _HEX.fullmatch(color):
        raise ValueError(f"A colour must be #rrggbb, not {color!r}.")
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def _linear(channel: int) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def relative_luminance(color: str) -> float:
    """The relative luminance of ``#rrggbb``: 0 for black, 1 for white."""
    r, g, b = parse_hex(color)
    return 0.2126 * _linear(r) + 0.7152 * _linear(g) + 0.0722 * _linear(b)


def contrast_ratio(a: str, b: str) -> float:
    """The WCAG contrast ratio of two ``#rrggbb`` colours, in either order: 1 to 21."""
    lighter, darker = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)
