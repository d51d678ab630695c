"""The Discover tab: search Hugging Face for GGUF models, see whether each file fits here, download.

The tab talks only to the hub and download protocols (app/services/protocols.py): every call
returns at once and the answers come back as signals, so the window never waits on the network.
When the Hub cannot be reached a one-line banner says so (with Retry) while the rest of the tab
stays usable.

The lists are item models shown in views: the search results (app/ui/search_results.py), a
repository's files and their fit (app/ui/repo_files.py); the recommended cards are
app/ui/recommended_list.py and the model card app/ui/model_card.py. This module lays them out
and keeps the verdicts, which arrive before or after the page that shows them.

Nothing from the Hub is trusted. Repository names, file names and licenses are shown as plain
text (labels with ``Qt.PlainText``, item views, which never interpret markup); the model card is
Markdown rendered by app/chat/render.py into a browser whose document loads no resource at all.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QSize, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.hub.types import FileGroup, HubError, RepoDetails, RepoSummary
from app.hub.verdict import Verdict
from app.services.protocols import DownloadsLike, HubLike
from app.ui.common import human_params, human_tokens, plain_label
from app.ui.lang import tr, ui_text
from app.ui.model_card import CardView
from app.ui.recommendation_card import error_text
from app.ui.recommended_list import Entry, RecommendedList
from app.ui.repo_files import CHECKING as CHECKING  # where tests look for it
from app.ui.repo_files import Column, FilesTable, VerdictOrWhy, fit_reasons
from app.ui.search_results import Role as ResultRole
from app.ui.search_results import SearchResultsModel, TwoLineDelegate, human_count, human_date
from app.ui.style.components import Banner, EmptyState, heading, primary_button, set_tone, set_type
from app.ui.style.icons import icon, pixmap
from app.ui.style.tokens import SPACING
from app.ui.welcome_recommended import first_sentence

log = logging.getLogger(__name__)

def _sorts() -> tuple[tuple[str, str], ...]:
    """The orders a search can have: (words, the Hub's key)."""
    return ((tr("Trending"), "trending"), (tr("Most downloads"), "downloads"),
            (tr("Most likes"), "likes"), (tr("Recently updated"), "modified"))


def _plain_pictures(widget: QWidget) -> None:
    """Every label of a design-system piece shows plain text: its icon label too, so no label
    of this tab could ever read markup (a test checks them all)."""
    for label in widget.findChildren(QLabel):
        label.setTextFormat(Qt.TextFormat.PlainText)


def _search_field() -> QLineEdit:
    edit = QLineEdit()
    edit.setPlaceholderText(tr("Search Hugging Face for GGUF models (e.g. llama 8b)"))
    edit.setAccessibleName(tr("Search Hugging Face"))
    edit.addAction(icon("search", "muted"), QLineEdit.ActionPosition.LeadingPosition)
    edit.setClearButtonEnabled(True)
    return edit


def _sort_combo() -> QComboBox:
    combo = QComboBox()
    for text, key in _sorts():
        combo.addItem(text, key)
    combo.setToolTip(tr("Order of the results"))
    combo.setAccessibleName(tr("Order of the results"))
    return combo


class DiscoverTab(QWidget):
    """Search, the recommended list, and a repository page with its files and their fit."""

    # Columns of the files table.
    COL_FILE, COL_SIZE, COL_FIT, COL_ACTION = Column.FILE, Column.SIZE, Column.FIT, Column.ACTION

    queued = Signal(str)  # a download id, after enqueue succeeded (the window may switch tabs)

    def __init__(self, hub: HubLike, downloads: DownloadsLike, parent: QWidget | None = None, *,
                 open_url: Callable[[QUrl], object] | None = None) -> None:
        """``open_url`` opens a checked link from a model card (default: the system browser)."""
        super().__init__(parent)
        self._hub = hub
        self._downloads = downloads
        self._shown_once = False
        self._repo: RepoDetails | None = None
        self._wanted_repo: str | None = None  # the page asked for (answers for others are late)
        self._want_quant: str | None = None  # the row to select when it arrives (recommended)
        # Verdicts by (repo, group name): they may arrive before or after the page itself, and
        # the recommended cards show them too.
        self._verdicts: dict[tuple[str, str], VerdictOrWhy] = {}
        self._open_url = open_url

        bar = self._make_search_bar()
        self._make_banner()
        self.message = Banner()
        self.message.setObjectName("message")
        _plain_pictures(self.message)

        # --- left: recommended (empty search) or results ---
        self.recommended = RecommendedList(self._verdict_of)
        self.recommended.open_requested.connect(self.open_repo)
        self.recommended_status = self.recommended.status
        self.left = QStackedWidget()
        self.left.setContentsMargins(0, 0, SPACING.md, 0)
        self.left.addWidget(self.recommended)
        self.left.addWidget(self._make_results_page())

        # --- right: the repository page ---
        self.page = self._make_repo_page()

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.left)
        splitter.addWidget(self.page)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([380, 720])
        splitter.setChildrenCollapsible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACING.xl, SPACING.lg, SPACING.xl, SPACING.lg)
        layout.setSpacing(SPACING.md)
        layout.addLayout(bar)
        layout.addWidget(self.banner)
        layout.addWidget(self.message)
        layout.addWidget(splitter, 1)

        hub.results.connect(self._on_results)
        hub.details.connect(self._on_details)
        hub.verdict.connect(self._on_verdict)
        hub.recommended.connect(self._on_recommended)
        hub.unreachable.connect(self._on_unreachable)
        hub.failed.connect(self._on_failed)

    # ---- public ----------------------------------------------------------------------------------

    def edit_token(self) -> None:
        from app.ui.token_dialog import TokenDialog

        dialog = TokenDialog(self._hub, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # one per click, gone after
        dialog.open()

    def query(self) -> str:
        return self.search_edit.text().strip()

    def sort_key(self) -> str:
        return str(self.sort_combo.currentData())

    def search(self) -> None:
        """Search for the text in the box; an empty box shows the recommended list."""
        self._set_message("")
        query = self.query()
        if not query:
            self.left.setCurrentIndex(0)
            return
        self.left.setCurrentIndex(1)
        self.results_model.set_results([])
        self.more_btn.hide()
        self._hide_no_results()
        self.results_status.setText(tr("Searching for “{query}”…").format(query=query))
        self.results_status.show()
        self._hub.search(query, self.sort_key())

    def open_repo(self, repo_id: str, quant: str | None = None) -> None:
        """Show ``repo_id``'s page (asked of the hub; it fills in when the details arrive).
        ``quant``: the file to select once the files are listed."""
        self._wanted_repo = repo_id
        self._want_quant = quant
        self._repo = None
        self.page_stack.setCurrentIndex(1)
        self.title.setText(repo_id)
        self.facts.setText(tr("Loading the repository…"))
        self.files.files_model.set_details(None)
        self.reasons.setText("")
        self.card.clear()
        self._hub.open_repo(repo_id)

    @property
    def details(self) -> RepoDetails | None:
        """The repository on show, once its details arrived."""
        return self._repo

    # ---- building ----------------------------------------------------------------------------

    def _make_search_bar(self) -> QHBoxLayout:
        self.search_edit = _search_field()
        self.search_edit.returnPressed.connect(self.search)
        self.search_edit.textChanged.connect(self._on_text_changed)
        self.sort_combo = _sort_combo()
        self.sort_combo.activated.connect(lambda _i: self.search() if self.query() else None)
        self.search_btn = primary_button(tr("Search"), icon_name="search")
        self.search_btn.clicked.connect(self.search)
        self.token_btn = QPushButton(icon("key"), tr("Token…"))
        self.token_btn.setAccessibleName(tr("Hugging Face token…"))
        self.token_btn.setProperty("flat", True)
        self.token_btn.setToolTip(tr("A Hugging Face token for gated models, kept in the system "
                                     "keyring"))
        self.token_btn.clicked.connect(self.edit_token)
        bar = QHBoxLayout()
        bar.setSpacing(SPACING.md)
        bar.addWidget(self.search_edit, 1)
        bar.addWidget(self.sort_combo)
        bar.addWidget(self.search_btn)
        bar.addWidget(self.token_btn)
        return bar

    def _make_banner(self) -> None:
        """The banner that says the Hub cannot be reached, with Retry (a state while it lasts:
        it has no close button)."""
        self.banner = Banner(closable=False)
        self.banner.setObjectName("unreachable_banner")
        self.banner_label = self.banner.text
        self.retry_btn = self.banner.action
        self.retry_btn.setText(tr("Retry"))
        self.retry_btn.setAccessibleName(tr("Retry"))
        self.banner.action_clicked.connect(self._retry)
        _plain_pictures(self.banner)

    def _make_results_page(self) -> QWidget:
        self.results_model = SearchResultsModel(self)
        self.results = QListView()
        self.results.setObjectName("results")
        self.results.setAccessibleName(tr("Search results"))
        self.results.setModel(self.results_model)
        # One column of two lines (name; author and numbers): the pane stays narrow enough to
        # leave the repository page its room, and long names are not cut to a few letters.
        self.results.setUniformItemSizes(True)
        self.results.setSpacing(SPACING.xxs)
        self.results.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.results.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.results.setItemDelegate(TwoLineDelegate(self.results))
        self.results.selectionModel().selectionChanged.connect(self._on_result_selected)
        self.results_status = plain_label()
        set_tone(self.results_status, "muted")
        self.results_status.hide()
        self.more_btn = QPushButton(tr("Load more"))
        self.more_btn.setAccessibleName(tr("Load more"))
        self.more_btn.clicked.connect(self._more)
        self.more_btn.hide()
        # No results: what happened and the way back, in place of an empty list.
        self.no_results = EmptyState("search", "", "", tr("Show recommended models"))
        self.no_results.setObjectName("no_results")
        self.no_results.activated.connect(self.search_edit.clear)  # an empty box: the list
        _plain_pictures(self.no_results)
        self.results_stack = QStackedWidget()
        self.results_stack.addWidget(self.results)
        self.results_stack.addWidget(self.no_results)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(SPACING.sm)
        layout.addWidget(heading(tr("Results"), "subheading"))
        layout.addWidget(self.results_status)
        layout.addWidget(self.results_stack, 1)
        layout.addWidget(self.more_btn)
        return page

    def _make_repo_page(self) -> QStackedWidget:
        stack = QStackedWidget()
        self.page_stack = stack
        self.placeholder = EmptyState(
            "discover", tr("Pick a model"),
            tr("Pick a recommended model or a search result to see its files and whether each "
               "one fits this computer."), tr("Search Hugging Face"))
        self.placeholder.activated.connect(self.search_edit.setFocus)
        _plain_pictures(self.placeholder)
        stack.addWidget(self.placeholder)

        self.title = heading("", "heading")
        self.title.setObjectName("repo_title")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.facts = plain_label()
        self.facts.setObjectName("repo_facts")
        set_tone(self.facts, "muted")
        set_type(self.facts, "small")

        self.files = FilesTable(self._verdict_of)
        self.files.download_requested.connect(self._download)
        self.files.selectionModel().selectionChanged.connect(self._on_file_selected)
        self.reasons = plain_label()
        self.reasons.setObjectName("reasons")
        set_tone(self.reasons, "muted")
        self.card = CardView(self._open_checked_url)
        self.card.setObjectName("card")

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, SPACING.md)
        top_layout.setSpacing(SPACING.sm)
        top_layout.addWidget(self.files, 1)
        top_layout.addWidget(self.reasons)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(self.card)
        split.setSizes([320, 240])
        split.setChildrenCollapsible(False)

        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(SPACING.lg, 0, 0, 0)
        layout.setSpacing(SPACING.xs)
        layout.addWidget(self.title)
        layout.addWidget(self.facts)
        layout.addWidget(split, 1)
        stack.addWidget(page)
        return stack

    # ---- hub answers ---------------------------------------------------------------------------

    def _on_results(self, repos: list[RepoSummary], append: bool, has_more: bool) -> None:
        self.banner.hide()
        if append:
            self.results_model.append(repos)
        else:
            self.results_model.set_results(repos)
        if self.query():
            self.left.setCurrentIndex(1)
        self.results_status.hide()
        if self.results_model.rowCount() == 0:
            self._show_no_results(
                "search", tr("No models found"),
                tr("No GGUF models match “{query}”. Try fewer or other words.").format(
                    query=self.query()) if self.query() else tr("No models found."))
        else:
            self._hide_no_results()
        self.more_btn.setVisible(has_more)
        self.more_btn.setEnabled(True)
        self.more_btn.setText(tr("Load more"))

    def _on_details(self, d: RepoDetails) -> None:
        self.banner.hide()
        if self._wanted_repo is not None and d.repo_id != self._wanted_repo:
            return  # an answer for a page the user has already left
        self._repo = d
        self.page_stack.setCurrentIndex(1)
        self.title.setText(d.repo_id)
        self.facts.setText(repo_facts(d))
        self.card.show_markdown(d.card or tr("*This repository has no model card.*"))
        self.files.files_model.set_details(d)
        select = self.files.files_model.row_of_quant(self._want_quant) if self._want_quant \
            else None
        if select is not None:
            self.files.selectRow(select)

    def _on_verdict(self, repo_id: str, group_name: str, verdict: object) -> None:
        if not isinstance(verdict, Verdict | str):
            log.warning("a verdict of an unexpected type for %s: %r", repo_id, type(verdict))
            return
        self._verdicts[(repo_id, group_name)] = verdict
        if self._repo is not None and self._repo.repo_id == repo_id:
            self.files.files_model.verdict_changed(group_name)
            current = self.files.current_group()
            if current is not None and current.name == group_name:
                self._on_file_selected()
        self.recommended.on_verdict(repo_id, group_name, verdict)

    def _on_recommended(self, entries: list[Entry]) -> None:
        self.banner.hide()
        self.recommended.set_entries(entries)

    def _on_unreachable(self, line: str) -> None:
        # The service's sentence already names the cause and what to do.
        line = ui_text(line)
        self.banner.show_message(
            line or tr("Hugging Face cannot be reached. Press Retry; models already on this "
                       "computer keep working."), "warning", tr("Retry"))
        self.retry_btn.setEnabled(True)
        # The cards whose details never came say so and why, instead of "Checking…".
        self.recommended.mark_unreachable(first_sentence(line) or tr("Hugging Face cannot be reached."))
        self.more_btn.setEnabled(True)
        self.more_btn.setText(tr("Load more"))
        if self._searching() and self.results_model.rowCount() == 0:
            self._show_no_results("offline", tr("No results"),
                                  tr("Hugging Face cannot be reached. Retry above, or use the "
                                     "recommended models."))
        if self._wanted_repo is not None and self._repo is None:
            self.facts.setText(tr("The repository could not be loaded: Hugging Face cannot be "
                                  "reached."))

    def _on_failed(self, sentence: str) -> None:
        self._set_message(ui_text(sentence), error=True)
        if self._searching() and self.results_model.rowCount() == 0:
            self._show_no_results("error", tr("No results"),
                                  tr("The search did not work; the reason is above."))
        if self._wanted_repo is not None and self._repo is None:
            self.facts.setText(tr("The repository could not be loaded."))

    # ---- user actions --------------------------------------------------------------------------

    def _retry(self) -> None:
        self.retry_btn.setEnabled(False)  # until the hub answers, one way or the other
        if self.recommended.has_unchecked() and self.left.currentIndex() == 0:
            # The recommended list is what the person sees: ask for it again (the hub's last
            # request need not have been it), "Checking…" until the Hub answers.
            self.recommended.check_again()
            self._hub.load_recommended()
        else:
            self._hub.retry()

    def _more(self) -> None:
        self.more_btn.setEnabled(False)
        self.more_btn.setText(tr("Loading…"))
        self._hub.more()

    def _on_text_changed(self, text: str) -> None:
        if not text.strip():
            self.left.setCurrentIndex(0)

    def _on_result_selected(self) -> None:
        selected = self.results.selectionModel().selectedIndexes()
        repo = selected[0].data(ResultRole.REPO_ID) if selected else None
        if isinstance(repo, str) and repo and repo != self._wanted_repo:
            self.open_repo(repo)

    def _on_file_selected(self) -> None:
        g = self.files.current_group()
        if self._repo is None or g is None:
            self.reasons.setText("")
            return
        self.reasons.setText(fit_reasons(g, self._verdict_of(self._repo.repo_id, g.name)))

    def _download(self, group: FileGroup) -> None:
        if self._repo is None:
            return
        try:
            download_id = self._downloads.enqueue(self._repo, group)
        except HubError as exc:
            self._set_message(error_text(exc), error=True)
            return
        self._set_message(tr("{name} is queued: see Downloads.").format(name=group.name))
        self.queued.emit(download_id)

    def _searching(self) -> bool:
        """Whether a search is under way (its "Searching…" line shows)."""
        return not self.results_status.isHidden()

    def _show_no_results(self, icon_name: str, title: str, body: str) -> None:
        self.results_status.hide()
        self.no_results.picture.setPixmap(pixmap(icon_name, 40, "muted"))
        self.no_results.set_text(title, body)
        self.results_stack.setCurrentWidget(self.no_results)

    def _hide_no_results(self) -> None:
        self.results_stack.setCurrentWidget(self.results)

    def _verdict_of(self, repo_id: str, group_name: str) -> VerdictOrWhy | None:
        return self._verdicts.get((repo_id, group_name))

    def _open_checked_url(self, url: QUrl) -> None:
        (self._open_url or QDesktopServices.openUrl)(url)

    def _set_message(self, text: str, error: bool = False) -> None:
        if text:
            self.message.show_message(text, "danger" if error else "info")
        else:
            self.message.hide()

    # ---- first show -------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            if not self.recommended.loaded:
                self._hub.load_recommended()

    def sizeHint(self) -> QSize:
        return QSize(1100, 720)


def repo_facts(d: RepoDetails) -> str:
    """The line of facts under a repository's title."""
    facts = [tr("License: {license}").format(license=d.license) if d.license
             else tr("License: not stated"),
             tr("Gated: you must accept its terms on Hugging Face") if d.gated
             else tr("Not gated")]
    if d.architecture:
        facts.append(tr("Architecture: {name}").format(name=d.architecture))
    if d.parameters:
        facts.append(tr("{count} parameters").format(count=human_params(d.parameters)))
    if d.context_length:
        facts.append(tr("trained for {tokens} context").format(
            tokens=human_tokens(d.context_length)))
    facts.append(tr("{downloads} downloads · {likes} likes").format(
        downloads=human_count(d.downloads), likes=human_count(d.likes)))
    if d.last_modified:
        facts.append(tr("updated {date}").format(date=human_date(d.last_modified)))
    return " · ".join(facts)
