"""The download queue's item model (app/ui/download_list.py) and the view's use of it: a progress
report changes one row (one dataChanged, for that row alone), a new state does not start the list
over, and the row's widget shows what the model says."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from typing import Any

from PySide6.QtCore import QModelIndex

from app.ui.common import tone_color
from app.ui.download_list import PROGRESS_STEPS, DownloadListModel, Role, row_status
from app.ui.downloads_view import DownloadsView
from app.ui.style.sheet import stylesheet
from tests.gui import model_fakes as mf

GB = 1_000_000_000


def rows() -> list[Any]:
    return [
        mf.download_row("run", "a/b · run.gguf", "downloading", GB, 4 * GB, 35_000_000, 120),
        mf.download_row("wait", "a/b · wait.gguf", "queued", 0, 2 * GB),
        mf.download_row("hash", "a/b · hash.gguf", "downloading", 2 * GB, 2 * GB,
                        phase="verifying"),
        mf.download_row("what", "a/b · what.gguf", "downloading", GB, None),
        mf.download_row("bad", "a/b · bad.gguf", "failed", GB, 3 * GB, error="Disk gone."),
        mf.download_row("ok", "a/b · ok.gguf", "done", GB, GB),
    ]


class Changes:
    """Records a model's dataChanged (first row, last row), inserts and resets."""

    def __init__(self, model: DownloadListModel) -> None:
        self.changed: list[tuple[int, int]] = []
        self.resets = 0
        model.dataChanged.connect(lambda a, b, *_r: self.changed.append((a.row(), b.row())))
        model.modelReset.connect(self._reset)

    def _reset(self) -> None:
        self.resets += 1


def test_rows_and_their_roles(qtmodeltester: Any) -> None:
    model = DownloadListModel()
    model.set_rows(rows())
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() == 6
    for row, r in enumerate(rows()):
        index = model.index(row, 0)
        assert index.data() == r.title
        assert (index.data(Role.ID), index.data(Role.STATE), index.data(Role.ROW)) == \
            (r.id, r.state, r)
        assert index.data(Role.STATUS) == row_status(r)
        assert index.data(Role.DETAIL) == (r.error or r.phase)
    progress = {r.id: model.index(row, 0).data(Role.PROGRESS) for row, r in enumerate(rows())}
    assert progress == {"run": PROGRESS_STEPS // 4, "wait": 0,
                        "hash": None,  # hashing: nothing to count, a busy bar
                        "what": None,  # size unknown while downloading: a busy bar
                        "bad": PROGRESS_STEPS // 3, "ok": PROGRESS_STEPS}
    assert model.row("bad") == rows()[4] and model.row("nope") is None
    assert model.index_of("ok").row() == 5 and not model.index_of("nope").isValid()


def test_a_progress_report_changes_that_one_row() -> None:
    model = DownloadListModel()
    model.set_rows(rows())
    seen = Changes(model)
    faster = mf.download_row("wait", "a/b · wait.gguf", "downloading", GB, 2 * GB, 9e6, 111)
    assert model.update_row(faster)
    assert seen.changed == [(1, 1)] and seen.resets == 0
    assert model.index(1, 0).data(Role.ROW) == faster
    assert model.index(1, 0).data(Role.PROGRESS) == PROGRESS_STEPS // 2
    assert [model.index(i, 0).data(Role.ROW) for i in (0, 2, 3, 4, 5)] == \
        [r for i, r in enumerate(rows()) if i != 1]
    # The same report again changes nothing; one for a row not listed is refused.
    assert model.update_row(faster) and seen.changed == [(1, 1)]
    assert not model.update_row(mf.download_row("new", "x", "queued", 0, 1))
    assert seen.changed == [(1, 1)] and model.rowCount() == 6


def test_the_whole_list_again_updates_in_place_unless_the_list_changed() -> None:
    model = DownloadListModel()
    model.set_rows(rows())
    seen = Changes(model)
    again = rows()
    again[4] = mf.download_row("bad", "a/b · bad.gguf", "queued", GB, 3 * GB)  # retried
    model.set_rows(again)
    assert seen.changed == [(4, 4)] and seen.resets == 0
    assert model.index(4, 0).data(Role.STATE) == "queued"
    model.set_rows(again[:-1])  # one removed: the list starts over
    assert seen.resets == 1 and model.rowCount() == 5


def test_the_view_updates_one_row_widget_on_progress(qtbot: Any) -> None:
    downloads = mf.FakeDownloads(rows())
    view = DownloadsView(downloads, confirm=lambda *_a, **_k: False)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    seen = Changes(view.model)
    widget = view.row_widget("run")
    assert widget is not None
    downloads.tick(mf.download_row("run", "a/b · run.gguf", "downloading", 3 * GB, 4 * GB,
                                   50_000_000, 20))
    assert seen.changed == [(0, 0)] and seen.resets == 0
    assert view.row_widget("run") is widget
    assert widget.bar.value() == 3 * PROGRESS_STEPS // 4
    assert widget.status.text() == "3.0 GB of 4.0 GB · 50.0 MB/s · 20 s left"
    # A busy bar where nothing can be counted.
    hashing = view.row_widget("hash")
    assert hashing is not None and hashing.bar.maximum() == 0
    # The service's `changed` for a new state keeps the row's widget (and its focus).
    downloads.set_rows([mf.download_row("run", "a/b · run.gguf", "paused", 3 * GB, 4 * GB),
                        *rows()[1:]])
    assert seen.resets == 0 and view.row_widget("run") is widget
    assert widget.resume_btn.isVisible() and not widget.pause_btn.isVisible()
    assert view.list.indexWidget(view.model.index_of("ok")) is view.row_widget("ok")
    assert view.list.indexWidget(QModelIndex()) is None


def test_status_colour_is_the_one_drawn(qtbot: Any) -> None:
    """Inside an item view a label draws with the Text role unless told otherwise: the row's
    status takes its colour from the stylesheet's tone, and that must be what is drawn."""
    view = DownloadsView(mf.FakeDownloads(rows()), confirm=lambda *_a, **_k: False)
    qtbot.addWidget(view)
    view.setStyleSheet(stylesheet("light", 10.0))  # the application's sheet, on this view only
    view.show()
    bad = view.row_widget("bad")
    assert bad is not None
    status = bad.status
    assert status.property("tone") == "danger"
    image = status.grab().toImage()
    drawn = {image.pixelColor(x, y).name() for x in range(image.width())
             for y in range(image.height())}
    assert tone_color("danger").name() in drawn
