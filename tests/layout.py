"""A layout checker for any top-level widget, and a way to run it on screens of chosen sizes.

Two parts:

- :func:`layout_problems(window)` (in a running QApplication): a sentence for each way the
  window's layout fails the person. Every *visible* widget that a layout places (or that is a
  scroll area's content, or the window itself) must have at least its minimum size: the
  explicit ``minimumSize()`` where one is set, else ``minimumSizeHint()`` (where that is
  valid), and for a widget with height-for-width (wrapped text, a box holding it) at least
  ``heightForWidth(its width)`` instead of the hint's height, as the layouts themselves count
  it; a dimension whose size policy is Ignored, or whose maximum is smaller, asks for no more.
  Each such widget must lie inside its parent and inside the available geometry of the
  window's screen, and so must the window's frame; a widget inside a scroll area's viewport is
  exempt from the screen check (scrolling reaches it; the viewport itself is checked).
  Widgets their parent places by its own code (a spin box's line edit, a scroll area's
  viewport, a tab widget's stack, a splitter's panes) are left to that parent, which is
  checked.

- :func:`problems_on_screen(factory, screen)`: the same check in a fresh Python process whose
  Qt offscreen platform has one screen of ``screen``'s size and scale. The platform is chosen
  when the QApplication is made, so each screen needs a process of its own. ``factory`` is
  ``"package.module:function"``: a function (no arguments) that returns the top-level widget
  to check, made with the in-memory fakes; it is shown, given a few event-loop turns, then
  checked. The screen file follows Qt 6's offscreen plugin
  (qtbase src/plugins/platforms/offscreen/qoffscreenintegration.cpp): ``{"screens": [{"name",
  "x", "y", "width", "height", "logicalDpi", "logicalBaseDpi", "dpr"}]}``; a logical DPI of
  twice the base DPI scales everything 2x, as Windows at 200 % or X11 with Xft.dpi 192 does.

Usage, for a dialog or the main window::

    from tests.layout import SCREENS, problems_on_screen

    @pytest.mark.parametrize("screen", SCREENS, ids=str)
    def test_fits(screen):
        assert problems_on_screen("tests.gui.test_x:make_dialog", screen) == []

or, in a test that already has a QApplication (the default offscreen screen is 800x800)::

    assert layout_problems(dialog) == []
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Screen:
    """One screen: its size in device pixels and its scale (2.0: everything twice as big)."""

    width: int
    height: int
    scale: float = 1.0

    def __str__(self) -> str:
        return f"{self.width}x{self.height}" + (f"@{self.scale:g}x" if self.scale != 1 else "")

    def config(self) -> dict[str, Any]:
        """The offscreen platform's configuration for this one screen."""
        return {"screens": [{"name": str(self), "x": 0, "y": 0, "width": self.width,
                             "height": self.height, "logicalDpi": round(96 * self.scale),
                             "logicalBaseDpi": 96, "dpr": 1.0}]}


# Small laptop screens, and HiDPI ones at 2x and 1.5x (1280x720 logical pixels each).
SCREENS = (Screen(1280, 720), Screen(1366, 768), Screen(2560, 1440, 2.0),
           Screen(1920, 1080, 1.5))


def _name(w: QWidget) -> str:
    label = w.objectName() or w.accessibleName()
    text = getattr(w, "text", None)
    if not label and callable(text):
        try:
            label = str(text())[:30]
        except TypeError:
            label = ""
    return f"{type(w).__name__}({label!r})" if label else type(w).__name__


def _path(w: QWidget, top: QWidget) -> str:
    parts = []
    node: QWidget | None = w
    while node is not None and node is not top:
        parts.append(_name(node))
        node = node.parentWidget()
    return " < ".join(parts) or _name(top)


def _placed_by_layout(w: QWidget) -> bool:
    from PySide6.QtWidgets import QScrollArea

    parent = w.parentWidget()
    if parent is None:
        return True
    viewport_owner = parent.parentWidget()
    if isinstance(viewport_owner, QScrollArea) and viewport_owner.widget() is w:
        return True  # the scroll area's content: sized by it from the content's hints

    def holds(layout: Any) -> bool:
        for i in range(layout.count()):
            item = layout.itemAt(i)
            if item.widget() is w or (item.layout() is not None and holds(item.layout())):
                return True
        return False

    return parent.layout() is not None and holds(parent.layout())


def _in_scroll_viewport(w: QWidget, top: QWidget) -> bool:
    from PySide6.QtWidgets import QAbstractScrollArea

    node = w.parentWidget()
    while node is not None and node is not top:
        owner = node.parentWidget()
        if isinstance(owner, QAbstractScrollArea) and owner.viewport() is node:
            return True
        node = owner
    return False


def required_size(w: QWidget) -> tuple[int, int]:
    """The least width and height ``w``'s layout owes it (see the module docstring)."""
    from PySide6.QtWidgets import QSizePolicy

    hint, least, most = w.minimumSizeHint(), w.minimumSize(), w.maximumSize()
    policy = w.sizePolicy()
    ignored = QSizePolicy.Policy.Ignored
    width = least.width() if least.width() > 0 else max(hint.width(), 0)
    if policy.horizontalPolicy() == ignored and least.width() <= 0:
        width = 0
    height = least.height() if least.height() > 0 else max(hint.height(), 0)
    if w.hasHeightForWidth() and least.height() <= 0:
        hfw = w.heightForWidth(w.width())
        if hfw >= 0:
            height = hfw
    if policy.verticalPolicy() == ignored and least.height() <= 0:
        height = 0
    return min(width, most.width()), min(height, most.height())


def layout_problems(window: QWidget) -> list[str]:
    """A sentence for each widget of ``window`` that is too small or off its screen (see the
    module docstring); empty when the layout is sound. ``window`` must be shown."""
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QWidget

    problems: list[str] = []
    screen = window.screen()
    available = screen.availableGeometry()
    frame = window.frameGeometry()
    if not available.contains(frame):
        problems.append(f"the window's frame {_rect(frame)} is not inside the screen's "
                        f"available {_rect(available)}")
    for w in [window, *window.findChildren(QWidget)]:
        if not w.isVisible() or (w is not window and not _placed_by_layout(w)):
            continue
        need_w, need_h = required_size(w)
        if w.width() < need_w or w.height() < need_h:
            problems.append(f"{_path(w, window)} is {w.width()}x{w.height()}, needs at least "
                            f"{need_w}x{need_h}")
        if w is window:
            continue
        parent = w.parentWidget()
        assert parent is not None
        if not _in_scroll_viewport(w, window):
            if not QRect(0, 0, parent.width(), parent.height()).contains(w.geometry()):
                problems.append(f"{_path(w, window)} at {_rect(w.geometry())} sticks out of "
                                f"its parent ({parent.width()}x{parent.height()})")
            on_screen = QRect(w.mapToGlobal(w.rect().topLeft()), w.size())
            if not available.contains(on_screen):
                problems.append(f"{_path(w, window)} at {_rect(on_screen)} is not inside the "
                                f"screen's available {_rect(available)}")
    return problems


def _rect(r: Any) -> str:
    return f"{r.width()}x{r.height()}+{r.x()}+{r.y()}"


# -- one screen per process --------------------------------------------------------------------


def problems_on_screen(factory: str, screen: Screen, timeout: float = 120) -> list[str]:
    """:func:`layout_problems` for the widget ``factory`` ("module:function") makes, in a new
    process whose only screen is ``screen``. Raises RuntimeError with the child's output when
    the check itself could not run."""
    with tempfile.TemporaryDirectory(prefix="hearth-layout-") as tmp:
        config = Path(tmp) / "screen.json"
        config.write_text(json.dumps(screen.config()), "utf-8")
        env = dict(os.environ)
        env["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"
        for var in ("QT_SCALE_FACTOR", "QT_SCREEN_SCALE_FACTORS", "QT_FONT_DPI"):
            env.pop(var, None)  # the screen's own DPI sets the scale
        env["HEARTH_HOME"] = str(Path(tmp) / "home")  # nothing of the user's is read
        env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        out = subprocess.run([sys.executable, "-m", "tests.layout", factory], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=timeout)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"the layout check of {factory} on {screen} did not run "
                           f"(exit {out.returncode}):\n{out.stdout}\n{out.stderr}")
    result = json.loads(lines[-1])
    return [f"[{screen}, {result['screen']}] {p}" for p in result["problems"]]


def _main(factory: str) -> int:
    import importlib

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    module, _, function = factory.partition(":")
    window = getattr(importlib.import_module(module), function)()
    window.show()
    for _ in range(5):
        app.processEvents()
    screen = window.screen()
    geometry = screen.geometry()
    found = {"screen": f"{geometry.width()}x{geometry.height()} logical, "
                       f"dpr {screen.devicePixelRatio():g}",
             "problems": layout_problems(window)}
    sys.stdout.write(json.dumps(found) + "\n")
    sys.stdout.flush()
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1]))
