"""Journey: the main window and every dialog, opened as a person opens them, fit small laptop
screens and a 2x HiDPI one: no visible widget smaller than its minimum size, nothing outside
its parent or the screen (tests/layout.py's checker).

Each screen runs tests/journeys/on_one_screen.py in a pytest process of its own, whose Qt
offscreen platform is given that one screen (``QT_QPA_PLATFORM=offscreen:configfile=FILE``;
the file follows qtbase's src/plugins/platforms/offscreen/qoffscreenintegration.cpp:
``{"screens": [{"name", "x", "y", "width", "height", "logicalDpi", "logicalBaseDpi",
"dpr"}]}``). The 2x screen is 2560x1440 device pixels at a logical DPI twice the base DPI, as
Windows at 200 % or X11 with Xft.dpi 192: Qt sees it as 1280x720 logical pixels with a device
pixel ratio of 2, and the child process checks that it does before anything else.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.layout import Screen

ROOT = Path(__file__).resolve().parents[2]
SCREENS = (Screen(1280, 720), Screen(1366, 768), Screen(2560, 1440, 2.0))


def logical(screen: Screen) -> dict[str, Any]:
    return {"width": round(screen.width / screen.scale),
            "height": round(screen.height / screen.scale), "dpr": screen.scale}


@pytest.mark.timeout(330)
@pytest.mark.parametrize("screen", SCREENS, ids=str)
def test_the_main_window_and_every_dialog_fit_the_screen(screen: Screen,
                                                         tmp_path: Path) -> None:
    config = tmp_path / "screen.json"
    config.write_text(json.dumps(screen.config()), "utf-8")
    report = tmp_path / "report.json"
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"
    for var in ("QT_SCALE_FACTOR", "QT_SCREEN_SCALE_FACTORS", "QT_FONT_DPI",
                "QT_ENABLE_HIGHDPI_SCALING", "QT_USE_PHYSICAL_DPI"):
        env.pop(var, None)  # the screen's own DPI sets the scale
    env["HEARTH_JOURNEY_SCREEN"] = json.dumps(logical(screen))
    env["HEARTH_JOURNEY_REPORT"] = str(report)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/journeys/on_one_screen.py", "-q",
         "-p", "no:cacheprovider", "-o", "addopts=", "--basetemp", str(tmp_path / "child")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=320)
    found = json.loads(report.read_text("utf-8")) if report.exists() else {}
    assert run.returncode == 0 and found.get("done"), \
        f"the journey on {screen} did not finish (exit {run.returncode}); the screen Qt " \
        f"saw: {found.get('screen')}\n{run.stdout[-6000:]}\n{run.stderr[-3000:]}"
    problems = {what: found_there for what, found_there in found["windows"].items()
                if found_there}
    assert problems == {}, f"on {screen} ({found['screen']}):\n" + "\n".join(
        f"- {what}:\n    " + "\n    ".join(p) for what, p in problems.items())
