"""The Offload dialog as the window opens it (a QDialog around the panel, asked for 760 px):
nothing in it is cut at the right edge, it fits small laptop screens, and it has a Close button.

Found on a walk under X at 1280x720 and 1400x900: the right column was cut mid-word ('Compute b',
'Used by ot') because the panel's content needed about 1000 px and the dialog opened at 760.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from tests.gui.screenshot_offload import Rig, header_model, make_rig, open_and_wait
from tests.layout import Screen, problems_on_screen


def _dialog(folder: Path) -> tuple[QDialog, Rig]:
    """The dialog as compose()'s open_offload makes it (opened at the panel's OPENING_SIZE, or
    at 760 x 720 on HEAD)."""
    from app.ui.common import open_at
    from app.ui.offload_panel import OffloadPanel

    rig = make_rig(folder)
    dialog = QDialog()
    dialog.setWindowTitle("Offload settings")
    rig.panel.setParent(dialog)
    QVBoxLayout(dialog).addWidget(rig.panel)
    open_at(dialog, *getattr(OffloadPanel, "OPENING_SIZE", (760, 720)))
    dialog.show()
    open_and_wait(rig, header_model(folder))
    return dialog, rig


def make_offload_dialog() -> QWidget:
    """For problems_on_screen: the dialog with a model open (its files in a temporary folder)."""
    dialog, rig = _dialog(Path(tempfile.mkdtemp(prefix="hearth-xwalk-offload-")))
    dialog._rig = rig  # type: ignore[attr-defined]  # kept alive with the dialog
    return dialog


def cut_labels(panel: QWidget) -> list[str]:
    """Each visible label whose text is cut: one line wider than the label, or a label that
    reaches past the right edge of the scroll area's viewport (the columns clipped)."""
    scroll = panel.findChild(QScrollArea)
    assert scroll is not None
    viewport = scroll.viewport()
    cut = []
    for label in panel.findChildren(QLabel):
        if not label.isVisible() or not label.text():
            continue
        wide = label.fontMetrics().horizontalAdvance(label.text())
        if not label.wordWrap() and wide > label.width():
            cut.append(f"{label.text()!r}: {wide} px of text in {label.width()} px, no wrap")
        if viewport.isAncestorOf(label):
            right = label.mapTo(viewport, label.rect().topRight()).x()
            if right >= viewport.width():
                cut.append(f"{label.text()!r}: ends at {right}, the view is "
                           f"{viewport.width()} px wide")
    return cut


@pytest.fixture
def opened(qtbot: Any, tmp_path: Path) -> Iterator[tuple[QDialog, Rig]]:
    dialog, rig = _dialog(tmp_path)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: rig.panel.bars and all(b.isVisible() for b in rig.panel.bars))
    yield dialog, rig
    rig.close()


def test_no_label_of_the_offload_dialog_is_cut(opened: tuple[QDialog, Rig]) -> None:
    dialog, rig = opened
    assert rig.panel.bars and rig.panel.reasons.isVisible()
    assert cut_labels(rig.panel) == []
    # Nor when the person drags it narrower: the dialog cannot be made narrower than its content.
    dialog.resize(500, dialog.height())
    assert cut_labels(rig.panel) == [] or dialog.width() > 500
    scroll = rig.panel.findChild(QScrollArea)
    assert dialog.width() >= scroll.widget().minimumSizeHint().width()


def test_the_offload_dialog_has_a_close_button(opened: tuple[QDialog, Rig], qtbot: Any) -> None:
    dialog, rig = opened
    boxes = rig.panel.findChildren(QDialogButtonBox)
    close = [b.button(QDialogButtonBox.StandardButton.Close) for b in boxes]
    close = [b for b in close if b is not None]
    assert len(close) == 1 and close[0].isVisible()
    with qtbot.waitSignal(dialog.rejected):
        close[0].click()
    assert not dialog.isVisible()


@pytest.mark.parametrize("screen", [Screen(1280, 720), Screen(1400, 900)], ids=str)
def test_the_offload_dialog_fits_small_screens(screen: Screen) -> None:
    assert problems_on_screen("tests.gui.test_xwalk_offload:make_offload_dialog", screen) == []
