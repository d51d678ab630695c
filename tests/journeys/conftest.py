"""Journeys: Hearth used as a person uses it (issue 25).

The window is the one ``compose()`` builds, as ``run_gui`` builds it (the settings read from
Hearth's own folder, the first-run page when they say so); the runner is the real one; the
models are generated (tests/fixtures/models.py). Each journey has a Hearth folder, a models
folder and a home folder of its own, and the Hugging Face Hub is offline: its address is a
local port bound but never listening, so every connection to it is refused at once.

Journeys act only through real key and mouse events on widgets found by their accessible names
(tests/journeys/person.py); they look at what the window shows, and at the runner over HTTP as
another program would.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.models import TINY, model_path

# The second model of "switch and back": another file, another name in its header.
SECOND = replace(TINY, name="hearth-journey-second", seed=1)
# A model that talks long enough to be stopped: wider and deeper than TINY, so a reply of the
# chat's default length (2048 tokens) takes seconds, not a fraction of one. Like TINY, it
# rarely ends a reply on its own.
TALKER = replace(TINY, n_layer=4, n_embd=256, n_head=4, n_head_kv=4, n_ff=768,
                 name="hearth-journey-talker")


@pytest.fixture(scope="session")
def tiny_file() -> Path:
    return model_path(TINY)


@pytest.fixture(scope="session")
def second_file() -> Path:
    return model_path(SECOND)


@pytest.fixture(scope="session")
def talker_file() -> Path:
    return model_path(TALKER)


@pytest.fixture
def offline_hub(closed_url: str) -> str:
    """The Hub's address: one nothing answers at (tests/conftest.py)."""
    return closed_url


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offline_hub: str) -> Any:
    """This journey's computer: Hearth's folder, its models folder, a home folder with no
    other app's models, the Hub offline."""
    class Place:
        home = tmp_path / "hearth-home"
        models = tmp_path / "models"
        user_home = tmp_path / "home"
        downloads = tmp_path / "home" / "Downloads"

        def put_model(self, source: Path, name: str, folder: Path | None = None) -> Path:
            """A copy of ``source`` called ``name`` (in Hearth's models folder by default)."""
            target = (folder or self.models) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
            return target

    where = Place()
    for folder in (where.home, where.models, where.downloads):
        folder.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HEARTH_HOME", str(where.home))
    monkeypatch.delenv("HEARTH_DATA_DIR", raising=False)
    monkeypatch.setenv("HEARTH_MODELS_DIR", str(where.models))
    monkeypatch.setenv("HOME", str(where.user_home))
    monkeypatch.setenv("HF_HOME", str(where.user_home / ".cache" / "huggingface"))
    monkeypatch.setenv("HF_ENDPOINT", offline_hub)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "LMSTUDIO_HOME",
                "OLLAMA_MODELS"):
        monkeypatch.delenv(var, raising=False)
    return where


@pytest.fixture
def returning(place: Any) -> Any:
    """A person who has started Hearth before (the first-run page is behind them)."""
    from app.settings import AppSettings, save_settings

    save_settings(AppSettings().with_changes(first_run_done=True))
    return place


@pytest.fixture
def start_hearth(qtbot: Any, place: Any) -> Iterator[Callable[[], Any]]:
    """Start Hearth as ``run_gui`` does: settings from Hearth's folder, the first-run page when
    they say so, the window shown and active. Returns the window; ``window.gui`` holds what
    compose() made (for teardown and for reading the runner's address)."""
    from PySide6.QtCore import QObject
    from PySide6.QtWidgets import QApplication

    from app.__main__ import compose
    from app.settings import load_settings
    from tests.journeys.person import owned_by

    made: list[Any] = []

    def start() -> Any:
        settings = load_settings()
        parent = QObject()
        gui = compose(parent, settings=settings, show_welcome=not settings.first_run_done)
        window = gui.window
        window.gui = gui
        window._journey_parent = parent  # the services live as long as the window
        qtbot.addWidget(window)
        window.show()
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow, timeout=10_000)
        made.append(window)
        return window

    yield start
    for window in made:
        for dialog in [w for w in QApplication.topLevelWidgets() if w.isVisible()
                       and w is not window and owned_by(window, w)]:
            dialog.close()
        window.close()  # unloads the model: the runner process ends
        window.gui.close()
        assert window.runner.state.value in ("stopped", "stopping", "failed"), \
            f"the runner is still {window.runner.state.value} after the window closed"

