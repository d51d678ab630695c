"""The first-run page (app/ui/welcome.py) on in-memory services: the hardware summary, the
recommended models with their verdicts, and one click from a model to downloading and chatting."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import QObject, Qt, Signal

from app.hardware.report import HardwareReport
from app.hub.recommended import Recommendation
from app.hub.types import HubError
from app.hub.verdict import Fit
from app.ui.welcome import DOWNLOAD, WelcomePage, hardware_summary
from tests.fixtures.hardware.make_reports import load_report
from tests.gui import model_fakes as mf


class FakeHardware(QObject):
    report_changed = Signal(object)
    failed = Signal(str)

    def __init__(self, report: HardwareReport | None = None) -> None:
        super().__init__()
        self.report = report
        self.refreshed = 0

    def refresh(self) -> None:
        self.refreshed += 1

    def publish(self, report: HardwareReport) -> None:
        self.report = report
        self.report_changed.emit(report)


GEMMA = Recommendation("ggml-org/gemma-3-1b-it-GGUF", "Q4_K_M", "Gemma 3 1B",
                       "Tiny and quick; runs on almost any computer.")
BIG = Recommendation("unsloth/gemma-3-27b-it-GGUF", "Q4_K_M", "Gemma 3 27B <b>big</b>",
                     "Among the best models a single 24 GB GPU can hold.")


def gemma_details() -> Any:
    return mf.details(GEMMA.repo_id, mf.hub_files("gemma-3-1b-it", {"Q4_K_M": 806_000_000,
                                                                     "Q8_0": 1_070_000_000}))


def big_details() -> Any:
    return mf.details(BIG.repo_id, mf.hub_files("gemma-3-27b-it", {"Q4_K_M": 16_500_000_000}))


@pytest.fixture
def env(qtbot: Any) -> Any:
    e = SimpleNamespace(hub=mf.FakeHub(), downloads=mf.FakeDownloads(), hardware=FakeHardware(),
                        queued=[], chats=[], done=[], browsed=[])
    e.page = WelcomePage(e.hub, e.downloads, e.hardware)
    e.page.queued.connect(e.queued.append)
    e.page.chat_requested.connect(e.chats.append)
    e.page.done.connect(lambda: e.done.append(True))
    e.page.browse_requested.connect(e.browsed.append)
    qtbot.addWidget(e.page)
    e.page.resize(900, 640)
    e.page.show()
    return e


def listed(env: Any) -> None:
    """The hub's list as it arrives: names first, then details, then verdicts."""
    env.hub.recommended.emit([(GEMMA, None, None), (BIG, None, None)])
    env.hub.recommended.emit([(GEMMA, gemma_details(), None), (BIG, big_details(), None)])
    env.hub.verdict.emit(GEMMA.repo_id, "gemma-3-1b-it-Q4_K_M.gguf", mf.verdict(Fit.GPU))


def test_first_show_asks_for_hardware_and_recommendations_once(qtbot: Any, env: Any) -> None:
    # After the page's first frame (app/ui/first_frame.py): the show itself asks nothing.
    assert env.hub.called("load_recommended") == [] and env.hardware.refreshed == 0
    qtbot.waitUntil(lambda: env.hub.called("load_recommended") != [])
    assert env.hub.called("load_recommended") == [("load_recommended",)]
    assert env.hardware.refreshed == 1
    env.page.hide()
    env.page.show()
    assert len(env.hub.called("load_recommended")) == 1 and env.hardware.refreshed == 1
    assert "Looking at" in env.page.hardware_label.text()
    env.hardware.publish(load_report("2x3090"))
    assert env.page.hardware_label.text() == hardware_summary(load_report("2x3090"))


def test_a_known_report_is_shown_without_detecting_again(qtbot: Any) -> None:
    hardware = FakeHardware(load_report("cpu_only_16gb"))
    hub = mf.FakeHub()
    page = WelcomePage(hub, mf.FakeDownloads(), hardware)
    qtbot.addWidget(page)
    page.show()
    qtbot.waitUntil(lambda: hub.called("load_recommended") != [])  # the first frame is past
    assert hardware.refreshed == 0
    assert "no GPU: models run on the CPU" in page.hardware_label.text()


def test_the_hardware_summary() -> None:
    assert hardware_summary(load_report("2x3090")) == (
        "Intel(R) Core(TM) i9-10900K CPU @ 3.70GHz (10 cores) · 125.7 GiB of RAM · "
        "2 × NVIDIA GeForce RTX 3090 (24.0 GiB each)")
    assert "shared with the system" in hardware_summary(load_report("m2pro_16gb"))


def test_recommendations_show_their_verdicts_and_hide_what_does_not_fit(env: Any) -> None:
    listed(env)
    cards = {c.rec.repo_id: c for c in env.page.cards()}
    assert set(cards) == {GEMMA.repo_id, BIG.repo_id}
    gemma, big = cards[GEMMA.repo_id], cards[BIG.repo_id]
    assert gemma.verdict_label.text() == mf.verdict(Fit.GPU).label()
    assert gemma.size_label.text() == "Q4_K_M · 806 MB"
    assert big.isVisible() and big.verdict is None  # still being checked: shown
    assert "Still checking" in env.page.recommended_status.text()
    assert big.title.text() == "Gemma 3 27B <b>big</b>"  # Hub text as typed
    assert big.title.textFormat() == Qt.TextFormat.PlainText
    env.hub.verdict.emit(BIG.repo_id, "gemma-3-27b-it-Q4_K_M.gguf", mf.verdict(Fit.NO_FIT))
    assert not big.isVisible() and gemma.isVisible()
    assert "Pick one" in env.page.recommended_status.text()


def test_one_click_downloads_then_one_click_chats(env: Any, qtbot: Any) -> None:
    listed(env)
    button = env.page.button(GEMMA.repo_id)
    assert button is not None and button.text() == DOWNLOAD and button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    ((_, details, group),) = env.downloads.calls
    assert details.repo_id == GEMMA.repo_id and group.quant == "Q4_K_M"
    assert env.queued == ["dl-1"]
    assert not button.isEnabled() and button.text().startswith("Downloading")
    progress = env.page.recommended_section.progress(GEMMA.repo_id)
    assert progress is not None and progress.isVisible()  # inline, in the card
    env.downloads.tick(mf.download_row("dl-1", "x", "downloading", 403_000_000, 806_000_000))
    assert button.text() == "Downloading…"
    assert progress.bar.value() == 500 and progress.detail.text() == "50% · 403 MB of 806 MB"
    # The list comes again (a hardware report arrived): the download is not forgotten.
    env.hub.recommended.emit([(GEMMA, gemma_details(), None), (BIG, big_details(), None)])
    assert env.page.button(GEMMA.repo_id) is button and not button.isEnabled()
    env.downloads.finished.emit("/data/models/other/repo/unrelated-Q4_K_M.gguf")
    assert not button.isEnabled()  # someone else's download
    path = f"/data/models/ggml-org/gemma-3-1b-it-GGUF/{group.first.path}"
    env.downloads.finished.emit(path)
    assert button.isEnabled() and button.text() == "Start chatting"
    assert not progress.isVisible()
    assert env.page.message.isVisible() and env.page.message.tone == "success"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert env.chats == [path] and env.done == [True]
    assert len(env.downloads.calls) == 1


def test_a_failed_download_can_be_tried_again(env: Any, qtbot: Any) -> None:
    listed(env)
    button = env.page.button(GEMMA.repo_id)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    env.downloads.failed.emit("dl-1", "The disk is full.")
    assert button.text() == "Try again" and button.isEnabled()
    assert env.page.message.text.text() == "The disk is full."
    assert env.page.message.isVisible() and env.page.message.tone == "danger"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert env.downloads.calls[-1] == ("retry", "dl-1")
    assert not button.isEnabled()


def test_a_refused_download_says_why(env: Any, qtbot: Any) -> None:
    listed(env)
    env.downloads.refuse = HubError("Not enough free disk space for Gemma 3 1B.")
    button = env.page.button(GEMMA.repo_id)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert env.page.message.text.text() == "Not enough free disk space for Gemma 3 1B."
    assert env.page.message.tone == "danger"
    assert button.isEnabled() and button.text() == DOWNLOAD and env.queued == []


def test_a_model_without_details_cannot_be_downloaded_yet(env: Any) -> None:
    env.hub.recommended.emit([(GEMMA, None, None)])
    button = env.page.button(GEMMA.repo_id)
    assert button is not None and not button.isEnabled()
    assert env.page.download(GEMMA.repo_id) is None and env.downloads.calls == []


def test_skip_and_browse(env: Any, qtbot: Any) -> None:
    listed(env)
    card = next(c for c in env.page.cards() if c.rec == GEMMA)
    qtbot.mouseClick(card.title, Qt.MouseButton.LeftButton)
    assert env.browsed == [GEMMA.repo_id]
    qtbot.mouseClick(env.page.skip_btn, Qt.MouseButton.LeftButton)
    assert env.done == [True] and env.chats == []


def test_dropped_recommendations_disappear(env: Any) -> None:
    listed(env)
    env.hub.recommended.emit([(GEMMA, gemma_details(), None)])
    assert [c.rec for c in env.page.cards()] == [GEMMA]
    assert env.page.button(BIG.repo_id) is None
