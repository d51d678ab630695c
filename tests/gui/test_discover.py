"""The Discover tab on an in-memory hub and download queue (tests/gui/model_fakes.py)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt, QUrl
from PySide6.QtWidgets import QLabel, QPushButton, QWidget

from app.hub.recommended import Recommendation
from app.hub.types import HubError, UnsafeNameError
from app.hub.verdict import Fit
from app.ui.discover import CHECKING, DiscoverTab
from app.ui.repo_files import ChipDelegate
from tests.gui import model_fakes as mf


@pytest.fixture
def env(qtbot: Any) -> Any:
    e = SimpleNamespace(hub=mf.FakeHub(), downloads=mf.FakeDownloads(), opened=[])
    e.tab = DiscoverTab(e.hub, e.downloads, open_url=lambda url: e.opened.append(url.toString()))
    qtbot.addWidget(e.tab)
    e.tab.resize(1100, 720)
    e.tab.show()
    return e


def open_llama(env: Any) -> Any:
    d = mf.llama_details()
    env.tab.open_repo(d.repo_id)
    env.hub.details.emit(d)
    return d


def cell(tab: DiscoverTab, row: int, column: int) -> QModelIndex:
    """The files table's cell (its model's index)."""
    model = tab.files.model()
    assert 0 <= row < model.rowCount() and 0 <= column < model.columnCount()
    return model.index(row, column)


def row_of(tab: DiscoverTab, group_name: str) -> int:
    for row in range(tab.files.model().rowCount()):
        if cell(tab, row, tab.COL_FILE).data(Qt.ItemDataRole.UserRole) == group_name:
            return row
    raise AssertionError(f"no row for {group_name}")


def fit_text(tab: DiscoverTab, row: int) -> str:
    text = cell(tab, row, tab.COL_FIT).data()
    assert isinstance(text, str)
    return text


def button(tab: DiscoverTab, row: int) -> QWidget | None:
    """The widget in the row's action cell (a Download button, or none)."""
    return tab.files.indexWidget(cell(tab, row, tab.COL_ACTION))


def results(tab: DiscoverTab) -> list[str]:
    """The search results' texts, as listed."""
    model = tab.results.model()
    return [model.index(i, 0).data() for i in range(model.rowCount())]


def test_first_show_asks_for_the_recommended_list_once(env: Any) -> None:
    assert env.hub.called("load_recommended") == [("load_recommended",)]
    env.tab.hide()
    env.tab.show()
    assert len(env.hub.called("load_recommended")) == 1
    assert env.tab.left.currentIndex() == 0  # empty search box: the recommended list


def test_unreachable_banner_retry_and_hiding_when_results_arrive(env: Any, qtbot: Any) -> None:
    assert not env.tab.banner.isVisible()
    env.hub.unreachable.emit("Hugging Face cannot be reached (no network connection). Check the "
                             "connection and press Retry.")
    assert env.tab.banner.isVisible() and env.tab.banner.tone == "warning"
    assert env.tab.banner_label.text().count("Hugging Face cannot be reached") == 1
    assert env.tab.retry_btn.isVisible() and env.tab.retry_btn.accessibleName() == "Retry"
    # Everything else stays usable.
    assert env.tab.search_edit.isEnabled() and env.tab.search_btn.isEnabled()
    qtbot.mouseClick(env.tab.retry_btn, Qt.MouseButton.LeftButton)
    assert env.hub.called("retry") == [("retry",)]
    env.hub.results.emit([mf.summary("a/b-GGUF")], False, False)
    assert not env.tab.banner.isVisible()


def test_search_sort_results_and_load_more(env: Any, qtbot: Any) -> None:
    env.tab.search_edit.setText("llama 8b")
    env.tab.sort_combo.setCurrentIndex(env.tab.sort_combo.findData("likes"))
    qtbot.mouseClick(env.tab.search_btn, Qt.MouseButton.LeftButton)
    assert env.hub.called("search")[-1] == ("search", "llama 8b", "likes")
    assert env.tab.left.currentIndex() == 1
    assert [env.tab.sort_combo.itemData(i) for i in range(4)] == \
        ["trending", "downloads", "likes", "modified"]

    env.hub.results.emit([mf.summary("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", 1_234_567, 640),
                          mf.summary("x/y-GGUF", 5, 1)], False, True)
    assert len(results(env.tab)) == 2
    first = results(env.tab)[0]
    assert first.startswith("Meta-Llama-3.1-8B-Instruct-GGUF\n")
    assert "bartowski" in first and "1.2M" in first and "640" in first and "2024-07-2" in first
    assert env.tab.more_btn.isVisible()
    qtbot.mouseClick(env.tab.more_btn, Qt.MouseButton.LeftButton)
    assert env.hub.called("more") == [("more",)]
    env.hub.results.emit([mf.summary("z/w-GGUF")], True, False)
    assert len(results(env.tab)) == 3
    assert not env.tab.more_btn.isVisible()

    # A new search replaces the list; emptying the box brings back the recommendations.
    env.hub.results.emit([mf.summary("q/r-GGUF")], False, False)
    assert len(results(env.tab)) == 1
    env.tab.search_edit.clear()
    assert env.tab.left.currentIndex() == 0


def test_selecting_a_result_opens_its_page(env: Any) -> None:
    env.tab.search_edit.setText("llama")
    env.tab.search()
    env.hub.results.emit([mf.summary("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF")], False, False)
    env.tab.results.setCurrentIndex(env.tab.results.model().index(0, 0))
    assert env.hub.called("open_repo") == [("open_repo", "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF")]


def test_recommended_hides_entries_that_do_not_fit(env: Any) -> None:
    def rec(repo: str, title: str) -> Recommendation:
        return Recommendation(repo, "Q4_K_M", title, f"About {title}.")

    small = mf.details("a/small-GGUF", mf.hub_files("small", {"Q4_K_M": 800_000_000}))
    big = mf.details("b/big-GGUF", mf.hub_files("big", {"Q4_K_M": 40_000_000_000}))
    slow = mf.details("c/slow-GGUF", mf.hub_files("slow", {"Q4_K_M": 9_000_000_000}))
    env.hub.recommended.emit([
        (rec("a/small-GGUF", "Small"), small, mf.verdict(Fit.GPU)),
        (rec("b/big-GGUF", "Big"), big, mf.verdict(Fit.NO_FIT)),
        (rec("c/slow-GGUF", "Slow"), slow, None),  # not checked yet: shown
    ])
    cards = env.tab.recommended.cards
    assert cards["a/small-GGUF"].isVisible()
    assert not cards["b/big-GGUF"].isVisible()
    assert cards["c/slow-GGUF"].isVisible()
    assert cards["a/small-GGUF"].verdict_label.text() == "Fits on the GPU · 32k context"
    assert cards["a/small-GGUF"].verdict_label.property("chip") == "success"  # words + tone
    assert cards["a/small-GGUF"].verdict_label.toolTip().startswith("• ")
    assert "800 MB" in cards["a/small-GGUF"].size_label.text()
    assert cards["c/slow-GGUF"].verdict_label.text() == CHECKING
    assert cards["c/slow-GGUF"].verdict_label.property("chip") == "muted"
    # A live verdict for the entry's file: it turns out not to fit, and disappears.
    env.hub.verdict.emit("c/slow-GGUF", "slow-Q4_K_M.gguf", mf.verdict(Fit.NO_FIT))
    assert not cards["c/slow-GGUF"].isVisible()
    # Clicking an entry opens its page.
    cards["a/small-GGUF"].activated.emit("a/small-GGUF")
    assert env.hub.called("open_repo") == [("open_repo", "a/small-GGUF")]


def test_repo_page_facts_split_row_mmproj_and_late_verdicts(env: Any, qtbot: Any) -> None:
    d = open_llama(env)
    assert env.tab.title.text() == d.repo_id
    facts = env.tab.facts.text()
    for want in ("llama3.1", "Not gated", "llama", "8.0 B parameters", "128k"):
        assert want in facts
    # One row per group: the three Q8_0 parts are one row with the total size.
    assert env.tab.files.model().rowCount() == len(d.groups)
    q8 = row_of(env.tab, "Meta-Llama-3.1-8B-Instruct-Q8_0.gguf")
    size = cell(env.tab, q8, env.tab.COL_SIZE).data()
    assert size == "14.9 GB · 3 parts"
    # Vision projector and imatrix: labelled, no download button, no verdict to wait for.
    mmproj = row_of(env.tab, "mmproj-Meta-Llama-3.1-8B-Instruct-f16.gguf")
    assert fit_text(env.tab, mmproj) == "Vision projector (not a chat model)"
    assert button(env.tab, mmproj) is None
    imatrix = row_of(env.tab, "Meta-Llama-3.1-8B-Instruct.imatrix.gguf")
    assert fit_text(env.tab, imatrix) == "Importance matrix (not a model)"
    assert button(env.tab, imatrix) is None
    # Model rows say "Checking…" until their verdict arrives.
    q4 = row_of(env.tab, "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf")
    assert fit_text(env.tab, q4) == CHECKING
    assert isinstance(button(env.tab, q4), QPushButton)
    assert button(env.tab, q4).accessibleName() == "Download Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"
    # The fit column is drawn as chips (words in a rounded outline of the verdict's tone).
    assert isinstance(env.tab.files.itemDelegateForColumn(env.tab.COL_FIT), ChipDelegate)
    v = mf.verdict(Fit.PARTIAL, n_ctx=8192, gpu_layers=20)
    env.hub.verdict.emit(d.repo_id, "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", v)
    assert fit_text(env.tab, q4) == v.label()
    assert cell(env.tab, q4, env.tab.COL_FIT).data(Qt.ItemDataRole.ToolTipRole) == v.tooltip()
    assert fit_text(env.tab, q8) == CHECKING
    # A verdict for another repository changes nothing here.
    env.hub.verdict.emit("other/repo", "Meta-Llama-3.1-8B-Instruct-Q8_0.gguf",
                         mf.verdict(Fit.GPU))
    assert fit_text(env.tab, q8) == CHECKING
    # Clicking the row shows the full reasons below the table.
    env.tab.files.selectRow(q4)
    assert v.reasons[0] in env.tab.reasons.text()
    # An error sentence instead of a verdict.
    env.hub.verdict.emit(d.repo_id, "Meta-Llama-3.1-8B-Instruct-Q8_0.gguf",
                         "The file's header could not be read.")
    assert fit_text(env.tab, q8) == "Could not check"
    env.tab.files.selectRow(q8)
    assert "header could not be read" in env.tab.reasons.text()


def test_verdict_that_arrives_before_the_page_is_kept(env: Any) -> None:
    d = mf.llama_details()
    env.tab.open_repo(d.repo_id)
    env.hub.verdict.emit(d.repo_id, "Meta-Llama-3.1-8B-Instruct-Q6_K.gguf", mf.verdict(Fit.CPU))
    env.hub.details.emit(d)
    assert fit_text(env.tab, row_of(env.tab, "Meta-Llama-3.1-8B-Instruct-Q6_K.gguf")) == \
        "CPU only · 32k context"


def test_late_details_of_a_page_already_left_are_ignored(env: Any) -> None:
    env.tab.open_repo("a/first-GGUF")
    env.tab.open_repo("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF")
    env.hub.details.emit(mf.details("a/first-GGUF", mf.hub_files("first", {"Q4_K_M": 10})))
    assert env.tab.details is None
    env.hub.details.emit(mf.llama_details())
    assert env.tab.details is not None
    assert env.tab.title.text() == "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF"


def test_download_button_enqueues_the_group(env: Any, qtbot: Any) -> None:
    d = open_llama(env)
    row = row_of(env.tab, "Meta-Llama-3.1-8B-Instruct-Q8_0.gguf")
    with qtbot.waitSignal(env.tab.queued, timeout=10_000):
        qtbot.mouseClick(button(env.tab, row), Qt.MouseButton.LeftButton)
    (name, details, group), = env.downloads.calls
    assert name == "enqueue" and details is d
    assert group.name == "Meta-Llama-3.1-8B-Instruct-Q8_0.gguf" and group.split
    assert env.tab.message.isVisible() and env.tab.message.tone == "info"
    assert "queued" in env.tab.message.text.text()


def test_enqueue_error_is_shown_as_a_message_line(env: Any, qtbot: Any) -> None:
    open_llama(env)
    env.downloads.refuse = UnsafeNameError("The Hub gave a file name Hearth will not write to "
                                           "disk ('../x'). Nothing was downloaded.")
    row = row_of(env.tab, "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf")
    qtbot.mouseClick(button(env.tab, row), Qt.MouseButton.LeftButton)
    assert env.tab.message.isVisible() and env.tab.message.tone == "danger"
    assert "Nothing was downloaded" in env.tab.message.text.text()
    assert isinstance(env.downloads.refuse, HubError)


def test_failed_is_shown_and_the_page_says_it_did_not_load(env: Any) -> None:
    env.tab.open_repo("nobody/missing-GGUF")
    env.hub.failed.emit("The repository nobody/missing-GGUF does not exist.")
    assert env.tab.message.isVisible() and "does not exist" in env.tab.message.text.text()
    assert env.tab.message.tone == "danger"
    assert "could not be loaded" in env.tab.facts.text()


HOSTILE_NAME = 'evil/<img src="file:///etc/passwd"><b>bold</b>-GGUF'
HOSTILE_CARD = """# Hello

<img src=file:///etc/passwd>

![secret](file:///etc/passwd)

<script>alert(1)</script> [click](javascript:alert(1)) and [local](file:///etc/passwd)
and [fine](https://example.com/page).
"""


def test_hostile_names_and_card_are_shown_as_text(env: Any, monkeypatch: Any) -> None:
    loaded: list[Any] = []
    monkeypatch.setattr(type(env.tab.card.document()), "loadResource",
                        lambda self, t, name: loaded.append(name))
    files = mf.hub_files('x<img src="file:///etc/passwd">', {"Q4_K_M": 100})
    d = mf.details(HOSTILE_NAME, files, card=HOSTILE_CARD,
                   license='<img src="file:///etc/passwd">')
    env.tab.open_repo(d.repo_id)
    env.hub.details.emit(d)
    for label in env.tab.findChildren(QLabel):
        assert label.textFormat() == Qt.TextFormat.PlainText, label.objectName()
    assert env.tab.title.text() == HOSTILE_NAME
    assert '<img src="file:///etc/passwd">' in env.tab.facts.text()  # shown, not interpreted
    html = env.tab.card.toHtml()
    assert "<img" not in html.lower()
    assert 'href="javascript' not in html
    assert 'href="file' not in html
    assert 'href="https://example.com/page"' in html
    assert "&lt;img src=file:///etc/passwd&gt;" in html  # raw HTML stays text
    assert loaded == []
    # Links: only checked ones open.
    env.tab.card.anchorClicked.emit(QUrl("file:///etc/passwd"))
    env.tab.card.anchorClicked.emit(QUrl("javascript:alert(1)"))
    env.tab.card.anchorClicked.emit(QUrl("https://example.com/page"))
    assert env.opened == ["https://example.com/page"]
    # The hostile repository name in the results list is an item's plain text.
    env.tab.search_edit.setText("evil")
    env.tab.search()
    env.hub.results.emit([mf.summary(HOSTILE_NAME)], False, False)
    assert results(env.tab)[0].startswith('<img src="file:///etc/passwd">')


def test_no_results_say_why_and_lead_back_to_the_recommended_list(env: Any, qtbot: Any) -> None:
    env.tab.search_edit.setText("nothing like this")
    env.tab.search()
    assert env.tab.results_status.isVisible() and "Searching" in env.tab.results_status.text()
    env.hub.results.emit([], False, False)
    empty = env.tab.no_results
    assert empty.isVisible() and not env.tab.results.isVisible()
    assert "nothing like this" in empty.body.text() and not env.tab.results_status.isVisible()
    env.tab.search()  # again, offline this time: the state says so
    env.hub.unreachable.emit("Hugging Face cannot be reached (no network connection).")
    assert empty.isVisible() and "cannot be reached" in empty.body.text()
    qtbot.mouseClick(empty.action, Qt.MouseButton.LeftButton)
    assert env.tab.query() == "" and env.tab.left.currentIndex() == 0
    env.tab.search_edit.setText("llama")
    env.tab.search()
    env.hub.results.emit([mf.summary("a/b-GGUF")], False, False)
    assert env.tab.results.isVisible() and not empty.isVisible()


def test_counts_are_written_in_the_locales_format() -> None:
    from PySide6.QtCore import QLocale

    from app.ui.search_results import human_count

    assert [human_count(n) for n in (950, 987_700, 1_234_567)] == ["950", "987.7k", "1.2M"]
    QLocale.setDefault(QLocale("de_DE"))
    try:
        assert [human_count(n) for n in (950, 987_700, 1_234_567)] == ["950", "987,7k", "1,2M"]
    finally:
        QLocale.setDefault(QLocale("en_US"))
