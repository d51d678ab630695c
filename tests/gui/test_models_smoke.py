"""Getting a model through the real services: the real Hub client against the fake Hub, the
real downloader, the real library scan, composed as the app composes them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QPushButton

from app.hub.verdict import Verdict
from tests.fixtures.fake_hub import FakeHub
from tests.fixtures.models import TINY, model_path

REPO = "acme/Tiny-GGUF"
FILE = "tiny-Q8_0.gguf"


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    with FakeHub() as h:
        h.add_repo(REPO, {FILE: Path(model_path(TINY)), "mmproj-tiny-F16.gguf": b"GGUF",
                          "README.md": b"---\nlicense: mit\n---\n# Tiny\nA *tiny* test model."},
                   downloads=42, likes=3, license="mit")
        monkeypatch.setenv("HF_ENDPOINT", h.url)
        monkeypatch.setenv("HEARTH_MODELS_DIR", str(tmp_path / "models"))
        monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no other app's folders
        yield h


def _tabs(window: Any) -> dict[str, Any]:
    return {window.tabs.tabText(i): window.tabs.widget(i) for i in range(window.tabs.count())}


def test_search_verdict_download_and_chat_picker(hub: FakeHub, make_window: Any,
                                                 qtbot: Any) -> None:
    window = make_window()
    gui = window.gui
    discover = _tabs(window)["Discover"]
    window.tabs.setCurrentWidget(discover)
    discover.search_edit.setText("tiny")
    with qtbot.waitSignal(gui.hub.results, timeout=10_000):
        discover.search()
    assert discover.results.model().rowCount() == 1

    with qtbot.waitSignal(gui.hub.verdict, timeout=60_000) as got:  # detects the hardware first
        discover.open_repo(REPO)
    repo_id, group, verdict = got.args
    assert (repo_id, group) == (REPO, FILE)
    assert isinstance(verdict, Verdict) and verdict.fits, verdict
    assert "tiny-Q8_0" not in "".join(r[2] or "" for r in hub.requests if r[0] == "GET"
                                      and r[2] is None), "the verdict must not fetch the file"
    assert discover.details is not None and discover.details.license == "mit"

    files = discover.files.model()
    button = next(w for r in range(files.rowCount())
                  if isinstance(w := discover.files.indexWidget(
                      files.index(r, discover.COL_ACTION)), QPushButton))
    with qtbot.waitSignal(gui.downloads.finished, timeout=30_000) as done:
        button.click()
    path = Path(done.args[0])
    assert path.read_bytes() == Path(model_path(TINY)).read_bytes()
    assert path.is_relative_to(gui.local.folders.models_dir)

    qtbot.waitUntil(lambda: any(r.path == str(path) for r in gui.local.rows()), timeout=30_000)
    (row,) = [r for r in gui.local.rows() if r.path == str(path)]
    assert row.own and row.source == "Hearth" and row.architecture == "llama"
    picker = [window.picker.itemData(i) for i in range(window.picker.count())]
    assert str(path) in picker
    assert gui.downloads.rows()[0].state == "done"


def test_unreachable_hub_is_one_line_and_local_models_still_work(
        make_window: Any, qtbot: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # tests/conftest.py points HF_ENDPOINT at a closed port: the normal case on these machines.
    models = tmp_path / "models"
    (models / "mine").mkdir(parents=True)
    local = models / "mine" / "tiny.gguf"
    local.write_bytes(Path(model_path(TINY)).read_bytes())
    monkeypatch.setenv("HEARTH_MODELS_DIR", str(models))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    window = make_window()
    discover = _tabs(window)["Discover"]
    with qtbot.waitSignal(window.gui.hub.unreachable, timeout=15_000):
        window.tabs.setCurrentWidget(discover)  # the first show loads the recommended list
    qtbot.waitUntil(discover.banner.isVisible, timeout=5_000)
    assert discover.banner_label.text().count("cannot be reached") == 1
    qtbot.waitUntil(lambda: any(r.path == str(local) for r in window.gui.local.rows()),
                    timeout=30_000)
    window.use_model(str(local))
    assert window.selected_model() == str(local) and window.tabs.currentIndex() == 0
