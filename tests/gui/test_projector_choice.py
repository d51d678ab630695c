"""Model → Vision projector… (issue 30): a projector that is not beside the model is chosen by
hand, checked before it is kept, and loads with the model from its next load."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog, QWidget

from app.library.projectors import ProjectorChoices
from app.loading.flags import plan_args
from app.loading.prepare import prepare_load
from app.planner import Wishes
from app.ui.projector_choice import choose_projector
from tests.fixtures.models import TINY, model_path
from tests.fixtures.vision import vision_pair
from tests.unit.loading.conftest import load_report
from tests.unit.loading.test_prepare import CPU_BUILD


def test_a_chosen_projector_is_checked_kept_and_loaded(qtbot: Any, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    text_model, projector = vision_pair()
    model = tmp_path / "models" / "tiny-vision.gguf"
    elsewhere = tmp_path / "projectors" / "mmproj-tiny-vision.gguf"
    for source, target in ((text_model, model), (projector, elsewhere)):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
    choices = ProjectorChoices(tmp_path / "projectors.json")
    parent = QWidget()
    qtbot.addWidget(parent)
    answer: list[str] = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (answer[0], ""))

    answer[:] = [str(model_path(TINY))]  # a chat model, not a projector
    said = choose_projector(parent, str(model), choices)
    assert "is not a vision projector" in said and choices.chosen(model) is None
    answer[:] = [""]  # cancelled
    assert choose_projector(parent, str(model), choices) == ""
    answer[:] = [str(elsewhere)]
    said = choose_projector(parent, str(model), choices)
    assert "mmproj-tiny-vision.gguf loads with tiny-vision.gguf" in said
    assert choices.chosen(model) == elsewhere

    monkeypatch.setattr("app.library.projectors.default_path", lambda: choices.path)
    prepared = prepare_load(str(model), cached=load_report("cpu_only_16gb"), detect=lambda: None,
                            wishes=Wishes(), store=None, build=CPU_BUILD, probe=None)
    args = plan_args(prepared.plan)
    assert args[args.index("--mmproj") + 1] == str(elsewhere)
    elsewhere.unlink()  # gone: nothing is chosen any more, and none lies beside it
    assert choices.for_model(model) is None


def test_the_model_menu_offers_it(qtbot: Any) -> None:
    from PySide6.QtWidgets import QMainWindow

    from app.ui.menus import MenuCallbacks, build_menus

    window = QMainWindow()
    qtbot.addWidget(window)
    asked: list[bool] = []
    noop = lambda: None  # noqa: E731
    actions = build_menus(window.menuBar(), window, MenuCallbacks(
        noop, noop, noop, noop, noop, noop, noop, noop, noop, noop, noop,
        projector=lambda: asked.append(True)))
    assert actions.projector.text() == "Vision projector…"
    actions.projector.trigger()
    assert asked == [True]
