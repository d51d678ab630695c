"""The design tokens (issue 27): every text/background pair a widget draws meets WCAG AA in both
themes, the contrast function matches the spec's known values, and the scales increase."""

from __future__ import annotations

import dataclasses
import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from app.ui.style.contrast import (
    AA_LARGE_TEXT,
    AA_NON_TEXT,
    AA_NORMAL_TEXT,
    contrast_ratio,
    parse_hex,
    relative_luminance,
)
from app.ui.style.tokens import DARK, LIGHT, RADII, SPACING, TYPE, colors

ROOT = Path(__file__).resolve().parents[2]
THEMES = {"light": LIGHT, "dark": DARK}

# (foreground role, background role, minimum ratio): what a widget draws on what.
PAIRS = [
    *((fg, bg, AA_NORMAL_TEXT)
      for fg in ("text", "muted_text", "success", "warning", "danger", "info", "link")
      for bg in ("surface", "raised_surface")),
    ("on_accent", "accent", AA_NORMAL_TEXT),
    ("focus", "surface", AA_NON_TEXT),
    ("focus", "raised_surface", AA_NON_TEXT),
    *((fg, "sunken", AA_NORMAL_TEXT) for fg in ("text", "muted_text")),
]


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize(("fg", "bg", "minimum"), PAIRS)
def test_every_pair_meets_aa(theme: str, fg: str, bg: str, minimum: float) -> None:
    roles = THEMES[theme]
    a, b = getattr(roles, fg), getattr(roles, bg)
    ratio = contrast_ratio(a, b)
    assert ratio >= minimum, f"{theme}: {fg} {a} on {bg} {b} is {ratio:.2f}:1, under {minimum}:1"


def test_the_contrast_function_matches_known_values() -> None:
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#ffffff", "#000000") == pytest.approx(21.0)
    assert contrast_ratio("#ffffff", "#ffffff") == pytest.approx(1.0)
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.005)
    assert relative_luminance("#000000") == 0.0
    assert relative_luminance("#ffffff") == pytest.approx(1.0)
    assert AA_LARGE_TEXT == AA_NON_TEXT == 3.0


@pytest.mark.parametrize("bad", ["fff", "#fff", "#12345g", "#1234567", "red"])
def test_only_rrggbb_colours_are_accepted(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_hex(bad)
    with pytest.raises(ValueError):
        dataclasses.replace(LIGHT, accent=bad)


def test_the_scales_increase() -> None:
    for steps in (SPACING.steps(), RADII.steps(), TYPE.steps()):
        assert all(a < b for a, b in itertools.pairwise(steps)), steps
    assert TYPE.body == 1.0  # body text is the system's own size
    assert TYPE.size(TYPE.heading, 10.0) == 13.0


def test_the_themes_are_told_apart() -> None:
    assert colors("light") is LIGHT and colors("dark") is DARK
    assert relative_luminance(LIGHT.surface) > relative_luminance(LIGHT.text)
    assert relative_luminance(DARK.surface) < relative_luminance(DARK.text)


def test_the_tokens_import_no_qt() -> None:
    code = ("import sys, app.ui.style.tokens, app.ui.style.contrast; "
            "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
