"""The Downloads view on an in-memory download queue (tests/gui/model_fakes.py)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from app.ui.downloads_view import DownloadsView, human_duration, row_status
from tests.gui import model_fakes as mf

GB = 1_000_000_000


def rows() -> list[Any]:
    return [
        mf.download_row("run", "a/b · run.gguf", "downloading", int(1.2 * GB), int(4.9 * GB),
                        35_000_000, 120),
        mf.download_row("wait", "a/b · wait.gguf", "queued", 0, 2 * GB),
        mf.download_row("held", "a/b · held.gguf", "paused", GB, 3 * GB),
        mf.download_row("bad", "a/b · bad.gguf", "failed", GB, 3 * GB,
                        error="The bytes do not match the Hub's checksum."),
        mf.download_row("ok", "a/b · ok.gguf", "done", GB, GB),
    ]


@pytest.fixture
def env(qtbot: Any) -> Any:
    e = SimpleNamespace(downloads=mf.FakeDownloads(rows()), answer=True, asked=[], actions=[])

    def confirm(parent: Any, title: str, question: str, action: str = "",
                keep: str = "") -> bool:
        e.asked.append(question)
        e.actions.append((action, keep))
        return bool(e.answer)

    e.view = DownloadsView(e.downloads, confirm=confirm)
    qtbot.addWidget(e.view)
    e.view.resize(1100, 720)
    e.view.show()
    return e


def test_status_line_formats() -> None:
    r = mf.download_row("x", "t", "downloading", int(1.2 * GB), int(4.9 * GB), 35_000_000, 120)
    assert row_status(r) == "1.2 GB of 4.9 GB · 35.0 MB/s · 2 min left"
    assert row_status(mf.download_row("x", "t", "downloading", GB, 2 * GB, phase="verifying")) \
        == "1.0 GB of 2.0 GB · verifying"
    assert row_status(mf.download_row("x", "t", "failed", 0, GB, error="Disk gone.")) == "Disk gone."
    assert "disk full" in row_status(mf.download_row("x", "t", "paused", GB, 2 * GB,
                                                     error="disk full"))
    assert human_duration(40) == "40 s" and human_duration(3900) == "1 h 5 min"


def test_one_row_per_download_with_its_text(env: Any) -> None:
    for r in rows():
        w = env.view.row_widget(r.id)
        assert w is not None and w.title.text() == r.title
    run = env.view.row_widget("run")
    assert run.status.text() == "1.2 GB of 4.9 GB · 35.0 MB/s · 2 min left"
    assert run.bar.value() == int(1000 * 1.2 / 4.9)
    assert env.view.row_widget("bad").status.text() == "The bytes do not match the Hub's checksum."
    # The total counts the active downloads (downloading, queued, paused).
    total = env.view.total.text()
    assert total.startswith("3 active · 2.2 GB of 9.9 GB · 35.0 MB/s")


def test_buttons_follow_the_state(env: Any) -> None:
    def enabled(id: str) -> tuple[bool, bool, bool, bool]:
        w = env.view.row_widget(id)
        return (w.pause_btn.isEnabled(), w.resume_btn.isEnabled(), w.retry_btn.isEnabled(),
                w.cancel_btn.isEnabled())

    assert enabled("run") == (True, False, False, True)
    assert enabled("wait") == (True, False, False, True)
    assert enabled("held") == (False, True, False, True)
    assert enabled("bad") == (False, False, True, True)
    assert enabled("ok") == (False, False, False, False)
    held = env.view.row_widget("held")
    assert held.resume_btn.isVisible() and not held.pause_btn.isVisible()


def test_buttons_call_the_service(env: Any, qtbot: Any) -> None:
    click = Qt.MouseButton.LeftButton
    qtbot.mouseClick(env.view.row_widget("run").pause_btn, click)
    qtbot.mouseClick(env.view.row_widget("held").resume_btn, click)
    qtbot.mouseClick(env.view.row_widget("bad").retry_btn, click)
    assert env.downloads.calls == [("pause", "run"), ("resume", "held"), ("retry", "bad")]


def test_cancel_asks_first(env: Any, qtbot: Any) -> None:
    env.answer = False
    qtbot.mouseClick(env.view.row_widget("run").cancel_btn, Qt.MouseButton.LeftButton)
    assert len(env.asked) == 1 and "delete the 1.2 GB downloaded so far" in env.asked[0]
    assert env.actions == [("Cancel download", "Keep downloading")]
    assert env.downloads.calls == []
    env.answer = True
    qtbot.mouseClick(env.view.row_widget("run").cancel_btn, Qt.MouseButton.LeftButton)
    assert env.downloads.calls == [("cancel", "run")]


def test_progress_updates_only_that_row(env: Any) -> None:
    widgets = {r.id: env.view.row_widget(r.id) for r in rows()}
    calls_before = env.downloads.rows_calls
    env.downloads.tick(mf.download_row("run", "a/b · run.gguf", "downloading", int(2.45 * GB),
                                       int(4.9 * GB), 50_000_000, 49))
    # Same widgets (nothing rebuilt), the list was not asked for again.
    assert {r.id: env.view.row_widget(r.id) for r in rows()} == widgets
    assert env.downloads.rows_calls == calls_before
    run = env.view.row_widget("run")
    assert run.status.text() == "2.5 GB of 4.9 GB · 50.0 MB/s · 49 s left"
    assert run.bar.value() == 500
    assert "50.0 MB/s" in env.view.total.text()
    # A state change through progress updates the buttons too.
    env.downloads.tick(mf.download_row("run", "a/b · run.gguf", "paused", int(2.45 * GB),
                                       int(4.9 * GB)))
    assert run.resume_btn.isEnabled() and not run.pause_btn.isEnabled()


def test_changed_rebuilds_and_empty_state(env: Any, qtbot: Any) -> None:
    env.downloads.set_rows(rows()[:1])
    assert env.view.row_widget("wait") is None and env.view.row_widget("run") is not None
    env.downloads.set_rows([])
    assert env.view.empty.isVisible() and not env.view.list.isVisible()
    assert env.view.empty.title.text() == "No downloads"
    assert env.view.empty.action.text() == "Discover models"
    with qtbot.waitSignal(env.view.discover_requested, timeout=1000):
        qtbot.mouseClick(env.view.empty.action, Qt.MouseButton.LeftButton)
    assert "No downloads in progress" in env.view.total.text()


def test_failure_is_shown_with_retry(env: Any, qtbot: Any) -> None:
    env.downloads.failed.emit("bad", "The disk is full.")
    assert env.view.message.isVisible() and env.view.message.tone == "danger"
    # A sentence the row does not show (it says its own error) is in the banner whole.
    assert env.view.message.text.text() == "a/b · bad.gguf failed: The disk is full."
    assert env.view.message.action.isVisible()
    assert env.view.message.action.text() == "Retry"
    qtbot.mouseClick(env.view.message.action, Qt.MouseButton.LeftButton)
    assert env.downloads.calls == [("retry", "bad")]
    assert not env.view.message.isVisible()


def test_states_in_words_and_tones(env: Any) -> None:
    tones = {r.id: env.view.row_widget(r.id).status.property("tone") for r in rows()}
    assert tones == {"run": "muted", "wait": "muted", "held": "muted", "bad": "danger",
                     "ok": "success"}
    ok = env.view.row_widget("ok")
    assert ok.status.text() == "Done · 1.0 GB · in the library"
    assert not ok.bar.isVisibleTo(ok)  # done: the words say it
    assert env.view.row_widget("run").bar.isVisibleTo(env.view.row_widget("run"))
    # Icon buttons, named for the download they act on.
    run = env.view.row_widget("run")
    assert run.pause_btn.toolTip() == "Pause"
    assert run.pause_btn.accessibleName() == "Pause a/b · run.gguf"
    assert run.cancel_btn.accessibleName() == "Cancel a/b · run.gguf"
    for w in (run.pause_btn, run.resume_btn, run.retry_btn, run.cancel_btn):
        assert not w.icon().isNull()


def test_hostile_title_is_plain_text(qtbot: Any) -> None:
    title = '<img src="file:///etc/passwd"> <b>x</b>'
    downloads = mf.FakeDownloads([mf.download_row("h", title, "failed", 0, 10,
                                                  error="<img src=file:///etc/passwd>")])
    view = DownloadsView(downloads, confirm=lambda *_a, **_k: False)
    qtbot.addWidget(view)
    for label in view.findChildren(QLabel):
        if label.text():  # every label that shows text (pictures and empty ones show none)
            assert label.textFormat() == Qt.TextFormat.PlainText, label.text()
    assert view.row_widget("h").title.text() == title


def test_a_failure_the_row_shows_is_summed_up_once(env: Any, qtbot: Any) -> None:
    """The row says why under its title, without a bar; the banner names the download and
    offers Retry, without repeating the sentence."""
    sentence = "The bytes do not match the Hub's checksum."
    env.downloads.failed.emit("bad", sentence)
    assert env.view.message.text.text() == "a/b · bad.gguf failed."
    assert env.view.message.action.text() == "Retry"
    bad = env.view.row_widget("bad")
    assert bad.status.text() == sentence and not bad.bar.isVisible()
    assert env.view.row_widget("run").bar.isVisible()
