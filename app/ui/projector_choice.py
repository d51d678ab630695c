"""Model → Vision projector…: the person picks the projector a model loads with, where it is not
beside the model in its folder (app/library/projectors.py keeps the choice). The file is checked
before it is kept: a chat model, or a projector made for a model of another width, is refused
with the reason, and the choice applies from the model's next load."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from app.gguf import GGUFError, read_model
from app.library.projectors import ProjectorChoices
from app.loading.prepare import attach_projector
from app.planner.wording import text
from app.ui.lang import tr, ui_text


def choose_projector(parent: QWidget, model: str, choices: ProjectorChoices | None = None
                     ) -> str:
    """Ask for the projector of ``model``; the sentence to show ("" when the dialog was
    cancelled). Reads two GGUF headers (kilobytes) on this thread."""
    path, _ = QFileDialog.getOpenFileName(
        parent, tr("Vision projector for {name}").format(name=os.path.basename(model)),
        os.path.dirname(model), tr("Vision projectors (*.gguf)"))
    if not path:
        return ""
    try:
        _attached, why = attach_projector(read_model(model), Path(path))
    except GGUFError as exc:
        return ui_text(str(exc))
    if why is not None:
        return ui_text(text(why))
    (choices or ProjectorChoices()).choose(model, path)
    return tr("{projector} loads with {model} from its next load: the model can see images.")\
        .format(projector=os.path.basename(path), model=os.path.basename(model))
