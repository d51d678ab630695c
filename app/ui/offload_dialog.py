"""The offload settings dialog: the offload panel (app/ui/offload_panel.py) for one model, in a
dialog of its own that stays open after Apply, so the load's measured memory appears beside the
prediction."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtWidgets import QDialog, QVBoxLayout, QWidget

from app.planner.types import Pins
from app.services.protocols import TuningLike
from app.ui.common import open_at
from app.ui.lang import tr


def offload_opener(parent: QWidget, tuning: TuningLike, *, apply: Callable[[str, Pins], None],
                   measured: SignalInstance, loaded_path: Callable[[], str],
                   ) -> Callable[[str], None]:
    """What "Offload…" does: open the panel for a model file. ``apply(path, pins)`` reloads
    with the pins (the window's ``load_with``); ``measured`` is the loader's signal of what a
    load measured, for the model ``loaded_path()`` names."""

    def open_offload(path: str) -> None:
        from app.ui.offload_panel import OffloadPanel

        dialog = QDialog(parent)
        dialog.setWindowTitle(tr("Offload settings: {name}").format(
            name=os.path.basename(path)))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        panel = OffloadPanel(tuning, dialog)
        QVBoxLayout(dialog).addWidget(panel)
        # Apply reloads with the pins and the dialog stays: the load's measured memory then
        # appears beside the prediction.
        panel.apply_requested.connect(apply)

        def show(found: Iterable[Any]) -> None:
            panel.show_measured(found, loaded_path())

        measured.connect(show)
        dialog.finished.connect(lambda _result: measured.disconnect(show))
        panel.open_model(path)
        open_at(dialog, *OffloadPanel.OPENING_SIZE)
        dialog.open()

    return open_offload
