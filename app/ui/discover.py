"""The Discover tab: search Hugging Face for GGUF models, see whether each file fits here, download.

The tab talks only to the hub and download protocols (app/services/protocols.py): every call
returns at once and the answers come back as signals, so the window never waits on the network.
When the Hub cannot be reached a one-line banner says so (with Retry) while the rest of the tab
stays usable.

Nothing from the Hub is trusted. Repository names, file names and licenses are shown as plain
text (labels with ``Qt.PlainText``, item views, which never interpret markup); the model card is
Markdown rendered by app/chat/render.py (no images, no raw HTML, checked links) into a browser
whose document loads no resource at all, and a link opens only when render.link_allowed agrees.

The small formatting helpers at the end of the module (sizes, counts, fit colours) are shared by
the downloads and library views.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, QUrl, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QDesktopServices,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPalette,
    QShowEvent,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.chat.render import link_allowed, mix, render_markdown
from app.hub.recommended import Recommendation, pick_group, worth_showing
from app.hub.types import FileGroup, FileKind, HubError, RepoDetails, RepoSummary
from app.hub.verdict import Verdict
from app.services.protocols import DownloadsLike, HubLike
from app.ui.chat_view import NoImages, SealedDocument, theme_for
from app.ui.common import (
    fit_color,
    heading_label,
    human_params,
    human_size,
    human_tokens,
    plain_label,
    scrolling_column,
    set_text_color,
    text_color,
)

log = logging.getLogger(__name__)

SORTS = (("Trending", "trending"), ("Most downloads", "downloads"), ("Most likes", "likes"),
         ("Recently updated", "modified"))
CHECKING = "Checking…"
KIND_LABELS = {
    FileKind.MMPROJ: "Vision projector (not a chat model)",
    FileKind.IMATRIX: "Importance matrix (not a model)",
}
KIND_EXPLAINED = {
    FileKind.MMPROJ: "A vision projector lets a model that understands images see them. It is "
                     "loaded beside that model and cannot be chatted with on its own.",
    FileKind.IMATRIX: "Importance-matrix data is used when quantizing a model. It is not a model "
                      "and cannot be loaded.",
}
# Hues the fit colours lean towards; mixed with the palette's text colour so they keep their
# contrast on light and dark themes alike.
_ERROR_HUE = "#d0342c"
_WARN_HUE = "#d9822b"
_FRONT_MATTER = re.compile(r"\A---\r?\n.*?\r?\n---\r?\n", re.DOTALL)


class _CardView(QTextBrowser):
    """A model card: safe Markdown in a document that refuses every resource."""

    def __init__(self, open_url: Callable[[QUrl], object], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._open_url = open_url
        doc = SealedDocument(self)
        self.setDocument(doc)
        doc.setUndoRedoEnabled(False)
        doc.setDocumentMargin(10)
        # Qt's own image handler reads an image file even when loadResource refuses (see
        # app/ui/chat_view.py); render.py makes no <img>, and this makes sure of it.
        self._no_images = NoImages(doc)
        doc.documentLayout().registerHandler(QTextFormat.ObjectTypes.ImageObject, self._no_images)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._on_anchor)

    def show_markdown(self, text: str) -> None:
        # The Hub's YAML front matter (license, tags) is shown as facts above; as Markdown it
        # would be a wall of text.
        text = _FRONT_MATTER.sub("", text, count=1)
        # A model card is a document: its wrapped lines join, as on Hugging Face.
        self.setHtml(render_markdown(text, theme_for(self.palette()), breaks=False))

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        log.debug("Refused to load a resource for a model card: %.200s",
                  name if isinstance(name, str) else name.toString())
        return None

    def _on_anchor(self, url: QUrl) -> None:
        text = url.toString()
        if link_allowed(text):
            self._open_url(url)
        else:
            log.warning("Refused to open a link from a model card: %.200s", text)


class _TwoLineDelegate(QStyledItemDelegate):
    """Draws a "name\nfacts" item as a bold first line over a muted second one, with room
    around them: a plain item view would run the lines of neighbouring results together."""

    PAD = 5

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Any) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        # initStyleOption turns "\n" into Unicode line separators.
        first, _, second = text.replace("\u2028", "\n").partition("\n")
        rect = opt.rect.adjusted(self.PAD + 2, self.PAD, -self.PAD, -self.PAD)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        pal = opt.palette
        main = pal.color(QPalette.ColorRole.HighlightedText if selected
                         else QPalette.ColorRole.Text)
        muted = main if selected else pal.color(QPalette.ColorRole.PlaceholderText)
        bold_font = QFont(opt.font)
        bold_font.setBold(True)
        painter.save()
        bold_metrics = QFontMetrics(bold_font)
        painter.setFont(bold_font)
        painter.setPen(main)
        painter.drawText(rect.x(), rect.y() + bold_metrics.ascent(),
                         bold_metrics.elidedText(first, Qt.TextElideMode.ElideMiddle, rect.width()))
        metrics = QFontMetrics(opt.font)
        painter.setFont(opt.font)
        painter.setPen(muted)
        painter.drawText(rect.x(), rect.y() + bold_metrics.height() + 2 + metrics.ascent(),
                         metrics.elidedText(second, Qt.TextElideMode.ElideRight, rect.width()))
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Any) -> QSize:
        bold_font = QFont(option.font)
        bold_font.setBold(True)
        height = QFontMetrics(bold_font).height() + 2 + QFontMetrics(option.font).height()
        return QSize(200, height + 2 * self.PAD)


class RecommendationCard(QFrame):
    """One curated model: title, blurb, size and the live verdict; a click opens its page."""

    activated = Signal(str)  # repo id

    def __init__(self, rec: Recommendation, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rec = rec
        self.group: FileGroup | None = None
        self.verdict: Verdict | None = None
        self.setObjectName("recommendation")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setToolTip(f"Open {rec.repo_id}")
        self.title = plain_label(rec.title, selectable=False)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.size_label = plain_label("", muted=True, wrap=False, selectable=False)
        self.blurb = plain_label(rec.blurb, muted=True, selectable=False)
        self.verdict_label = plain_label(CHECKING, wrap=True, selectable=False)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.size_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.blurb)
        layout.addWidget(self.verdict_label)

    def set_details(self, details: RepoDetails | None) -> None:
        self.group = pick_group(details.groups, self.rec.quant) if details is not None else None
        size = self.group.size if self.group is not None else None
        quant = self.group.quant if self.group is not None and self.group.quant else self.rec.quant
        self.size_label.setText(f"{quant} · {human_size(size)}" if size is not None else quant)

    def show_verdict(self, verdict: Verdict | None, known: Verdict | str | None) -> None:
        """The verdict that came with the recommendation, else the one already known for its
        group; a known failure (a sentence) says why instead of "Checking…"."""
        if verdict is None and isinstance(known, str):
            self.set_verdict(None, known)
        else:
            self.set_verdict(verdict if verdict is not None
                             else known if isinstance(known, Verdict) else None)

    def set_verdict(self, verdict: Verdict | None, error: str = "") -> None:
        self.verdict = verdict
        if verdict is None:
            self.verdict_label.setText(f"Could not check: {error}" if error else CHECKING)
            self.verdict_label.setToolTip(error)
            set_text_color(self.verdict_label,
                           self.palette().color(QPalette.ColorRole.PlaceholderText))
            return
        self.verdict_label.setText(verdict.label())
        self.verdict_label.setToolTip(verdict.tooltip())
        set_text_color(self.verdict_label, fit_color(self.palette(), verdict.fit))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and \
                self.rect().contains(event.position().toPoint()):
            self.activated.emit(self.rec.repo_id)
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.activated.emit(self.rec.repo_id)
            return
        super().keyPressEvent(event)


def show_fitting(cards: Iterable[RecommendationCard]) -> tuple[int, bool]:
    """Show the cards worth showing (those that fit, or are still being checked); returns how
    many are shown and whether some are still being checked."""
    shown, checking = 0, False
    for card in cards:
        visible = worth_showing(card.verdict)
        card.setVisible(visible)
        shown += visible
        checking = checking or card.verdict is None
    return shown, checking


class DiscoverTab(QWidget):
    """Search, the recommended list, and a repository page with its files and their fit."""

    # Columns of the files table.
    COL_FILE, COL_SIZE, COL_FIT, COL_ACTION = range(4)

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
        # Verdicts by (repo, group name): they may arrive before or after the page itself.
        self._verdicts: dict[tuple[str, str], Verdict | str] = {}
        self._cards: dict[str, RecommendationCard] = {}
        # Offline: the cards whose details the Hub could not give, with why (instead of
        # "Checking…" for ever); an answer with the details takes a card off.
        self._unchecked: dict[str, str] = {}
        self._with_details: set[str] = set()  # the cards whose details the Hub gave
        self._recommended_loaded = False
        self._open_url = open_url

        # --- search bar ---
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText("Search Hugging Face for GGUF models (e.g. llama 8b)")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.returnPressed.connect(self.search)
        self.search_edit.textChanged.connect(self._on_text_changed)
        self.sort_combo = QComboBox()
        for text, key in SORTS:
            self.sort_combo.addItem(text, key)
        self.sort_combo.setToolTip("Order of the results")
        self.sort_combo.activated.connect(lambda _i: self.search() if self.query() else None)
        self.search_btn = QPushButton("Search")
        self.search_btn.clicked.connect(self.search)
        bar = QHBoxLayout()
        bar.addWidget(self.search_edit, 1)
        bar.addWidget(self.sort_combo)
        bar.addWidget(self.search_btn)
        self.token_btn = QPushButton("Token…")
        self.token_btn.setToolTip("A Hugging Face token for gated models, kept in the system "
                                  "keyring")
        self.token_btn.clicked.connect(self.edit_token)
        bar.addWidget(self.token_btn)

        # --- the unreachable banner and the message line ---
        self.banner = QFrame()
        self.banner.setObjectName("unreachable_banner")
        self.banner.setAutoFillBackground(True)
        self.banner_label = plain_label(wrap=True)
        self.retry_btn = QPushButton("Retry")
        self.retry_btn.clicked.connect(self._retry)
        banner_layout = QHBoxLayout(self.banner)
        banner_layout.setContentsMargins(10, 4, 6, 4)
        banner_layout.addWidget(self.banner_label, 1)
        banner_layout.addWidget(self.retry_btn)
        self.banner.hide()
        self.message = plain_label()
        self.message.setObjectName("message")
        self.message.hide()

        # --- left: recommended (empty search) or results ---
        self.left = QStackedWidget()
        self.left.addWidget(self._make_recommended_page())
        self.left.addWidget(self._make_results_page())

        # --- right: the repository page ---
        self.page = self._make_repo_page()

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.left)
        splitter.addWidget(self.page)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([340, 760])
        splitter.setChildrenCollapsible(False)

        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.banner)
        layout.addWidget(self.message)
        layout.addWidget(splitter, 1)
        self._style_banner()

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
        self.results.clear()
        self.more_btn.hide()
        self.results_status.setText(f"Searching for “{query}”…")
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
        self.facts.setText("Loading the repository…")
        self.files.setRowCount(0)
        self.reasons.setText("")
        self.card.clear()
        self._hub.open_repo(repo_id)

    @property
    def details(self) -> RepoDetails | None:
        """The repository on show, once its details arrived."""
        return self._repo

    # ---- building ----------------------------------------------------------------------------

    def _make_recommended_page(self) -> QWidget:
        heading = heading_label("Recommended for this computer", wrap=True)
        self.recommended_status = plain_label("Checking which models fit this computer…",
                                              muted=True)
        self._cards_box = QWidget()
        scroll, self._cards_layout = scrolling_column(self._cards_box)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(heading)
        layout.addWidget(self.recommended_status)
        layout.addWidget(scroll, 1)
        return page

    def _make_results_page(self) -> QWidget:
        self.results = QTreeWidget()
        self.results.setObjectName("results")
        # One column of two lines (name; author and numbers): the pane stays narrow enough to
        # leave the repository page its room, and long names are not cut to a few letters.
        self.results.setHeaderHidden(True)
        self.results.setColumnCount(1)
        self.results.setRootIsDecorated(False)
        self.results.setUniformRowHeights(False)
        self.results.setAlternatingRowColors(True)
        self.results.setItemDelegate(_TwoLineDelegate(self.results))
        self.results.itemSelectionChanged.connect(self._on_result_selected)
        self.results_status = plain_label(muted=True)
        self.results_status.hide()
        self.more_btn = QPushButton("Load more")
        self.more_btn.clicked.connect(self._more)
        self.more_btn.hide()
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.results, 1)
        layout.addWidget(self.results_status)
        layout.addWidget(self.more_btn)
        return page

    def _make_repo_page(self) -> QStackedWidget:
        stack = QStackedWidget()
        self.page_stack = stack
        placeholder = plain_label("Pick a model on the left to see its files and whether each "
                                  "one fits this computer.", muted=True, selectable=False)
        placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        stack.addWidget(placeholder)

        self.title = plain_label()
        self.title.setObjectName("repo_title")
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.25)
        self.title.setFont(font)
        self.facts = plain_label(muted=True)
        self.facts.setObjectName("repo_facts")

        self.files = QTableWidget(0, 4)
        self.files.setObjectName("files")
        self.files.setHorizontalHeaderLabels(["File", "Size", "On this computer", ""])
        self.files.verticalHeader().hide()
        self.files.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.files.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.files.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.files.setWordWrap(False)
        self.files.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.files.setAlternatingRowColors(True)
        header = self.files.horizontalHeader()
        header.setSectionResizeMode(self.COL_FILE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(self.COL_SIZE, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(self.COL_FIT, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(self.COL_ACTION, QHeaderView.ResizeMode.ResizeToContents)
        self.files.itemSelectionChanged.connect(self._on_file_selected)
        self.reasons = plain_label(muted=True)
        self.reasons.setObjectName("reasons")
        self.card = _CardView(self._open_checked_url)
        self.card.setObjectName("card")

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.files, 1)
        top_layout.addWidget(self.reasons)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(self.card)
        split.setSizes([300, 260])
        split.setChildrenCollapsible(False)

        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(4, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.facts)
        layout.addWidget(split, 1)
        stack.addWidget(page)
        return stack

    # ---- hub answers ---------------------------------------------------------------------------

    def _on_results(self, repos: list[RepoSummary], append: bool, has_more: bool) -> None:
        self.banner.hide()
        if not append:
            self.results.clear()
        if self.query():
            self.left.setCurrentIndex(1)
        for r in repos:
            facts = [r.author, f"↓ {human_count(r.downloads)}", f"♥ {human_count(r.likes)}"]
            if r.last_modified:
                facts.append(human_date(r.last_modified))
            if r.gated:
                facts.append("gated")
            item = QTreeWidgetItem([f"{r.name}\n{' · '.join(facts)}"])
            item.setData(0, Qt.ItemDataRole.UserRole, r.repo_id)
            item.setToolTip(0, f"{r.repo_id}\n{r.downloads:,} downloads · {r.likes:,} likes · "
                               f"updated {human_date(r.last_modified)}")
            self.results.addTopLevelItem(item)
        count = self.results.topLevelItemCount()
        if count == 0:
            self.results_status.setText(f"No GGUF models match “{self.query()}”." if self.query()
                                        else "No models found.")
            self.results_status.show()
        else:
            self.results_status.hide()
        self.more_btn.setVisible(has_more)
        self.more_btn.setEnabled(True)
        self.more_btn.setText("Load more")

    def _on_details(self, d: RepoDetails) -> None:
        self.banner.hide()
        if self._wanted_repo is not None and d.repo_id != self._wanted_repo:
            return  # an answer for a page the user has already left
        self._repo = d
        self.page_stack.setCurrentIndex(1)
        self.title.setText(d.repo_id)
        self.facts.setText(repo_facts(d))
        self.card.show_markdown(d.card or "*This repository has no model card.*")
        self._fill_files(d)

    def _fill_files(self, d: RepoDetails) -> None:
        self.files.setRowCount(0)
        self.files.setRowCount(len(d.groups))
        select = -1
        quants = [g.quant for g in d.groups if g.kind is FileKind.MODEL]
        for row, g in enumerate(d.groups):
            # The quantization is what tells the files of one repository apart, and the whole
            # file name would leave the verdict no room; the name is shown where the quant
            # does not identify the file (one quant twice, none read from the name, not a model).
            unique = g.kind is FileKind.MODEL and g.quant is not None and quants.count(g.quant) == 1
            name = QTableWidgetItem(g.quant if unique and g.quant else g.name)
            name.setData(Qt.ItemDataRole.UserRole, g.name)
            name.setToolTip("\n".join(f.path for f in g.files))
            if unique:
                font = name.font()
                font.setBold(True)
                name.setFont(font)
            size = human_size(g.size) if g.size is not None else "size unknown"
            if g.split:
                size += f" · {len(g.files)} parts"
            size_item = QTableWidgetItem(size)
            size_item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if g.size is not None:
                size_item.setToolTip(f"{g.size:,} bytes")
            self.files.setItem(row, self.COL_FILE, name)
            self.files.setItem(row, self.COL_SIZE, size_item)
            self.files.setItem(row, self.COL_FIT, QTableWidgetItem())
            if g.kind is FileKind.MODEL:
                button = QPushButton("Download")
                button.setToolTip(f"Download {g.name}")
                button.clicked.connect(lambda _c=False, group=g: self._download(group))
                self.files.setCellWidget(row, self.COL_ACTION, button)
                if self._want_quant and g.quant == self._want_quant.upper() and select < 0:
                    select = row
            self._show_fit(row, g)
        if select >= 0:
            self.files.selectRow(select)

    def _on_verdict(self, repo_id: str, group_name: str, verdict: object) -> None:
        if not isinstance(verdict, Verdict | str):
            log.warning("a verdict of an unexpected type for %s: %r", repo_id, type(verdict))
            return
        self._verdicts[(repo_id, group_name)] = verdict
        if self._repo is not None and self._repo.repo_id == repo_id:
            for row, g in enumerate(self._repo.groups):
                if g.name == group_name:
                    self._show_fit(row, g)
                    if self.files.currentRow() == row:
                        self._on_file_selected()
        card = self._cards.get(repo_id)
        if card is not None and card.group is not None and card.group.name == group_name:
            if isinstance(verdict, Verdict):
                card.set_verdict(verdict)
            else:
                card.set_verdict(None, verdict)
            self._update_cards_visibility()

    def _show_fit(self, row: int, g: FileGroup) -> None:
        item = self.files.item(row, self.COL_FIT)
        if item is None:
            return
        color: QColor | None = None
        if g.kind is not FileKind.MODEL:
            item.setText(KIND_LABELS.get(g.kind, "Not a model"))
            item.setToolTip(KIND_EXPLAINED.get(g.kind, ""))
            color = self.palette().color(QPalette.ColorRole.PlaceholderText)
        else:
            verdict = self._verdicts.get((self._repo.repo_id if self._repo else "", g.name))
            if verdict is None:
                item.setText(CHECKING)
                item.setToolTip("Hearth is reading this file's header to plan it for this "
                                "computer.")
                color = self.palette().color(QPalette.ColorRole.PlaceholderText)
            elif isinstance(verdict, str):
                item.setText("Could not check")
                item.setToolTip(verdict)
                color = text_color(self.palette(), _WARN_HUE)
            else:
                item.setText(verdict.label())
                item.setToolTip(verdict.tooltip())
                color = fit_color(self.palette(), verdict.fit)
        if color is not None:
            item.setForeground(QBrush(color))

    def _on_recommended(self, entries: list[Any]) -> None:
        self.banner.hide()
        self._recommended_loaded = True
        for card in self._cards.values():
            card.hide()
            card.setParent(None)
            card.deleteLater()
        self._cards.clear()
        self._with_details.clear()
        wanted = set()
        for entry in entries:
            rec, details, verdict = entry
            wanted.add(rec.repo_id)
            card = RecommendationCard(rec)
            card.set_details(details)
            if details is not None:
                self._unchecked.pop(rec.repo_id, None)  # the Hub answered for it after all
            why = self._unchecked.get(rec.repo_id)
            if why is not None:  # the list came again, but this one is still not checked
                card.set_verdict(None, why)
            else:
                card.show_verdict(verdict, self._verdicts.get((rec.repo_id, card.group.name))
                                  if card.group else None)
            card.activated.connect(lambda repo, quant=rec.quant: self.open_repo(repo, quant))
            self._cards_layout.insertWidget(self._cards_layout.count() - 1, card)
            self._cards[rec.repo_id] = card
            if details is not None:
                self._with_details.add(rec.repo_id)
        for repo_id in [r for r in self._unchecked if r not in wanted]:
            del self._unchecked[repo_id]
        self._update_cards_visibility()

    def _update_cards_visibility(self) -> None:
        shown, _ = show_fitting(self._cards.values())
        checking = any(self._checking(r, c) for r, c in self._cards.items())
        if not self._cards:
            self.recommended_status.setText("No recommendations are available. Search for a "
                                            "model above.")
        elif shown == 0:
            self.recommended_status.setText("None of the recommended models fits this computer. "
                                            "Search for a smaller model above.")
        elif checking:
            self.recommended_status.setText("Curated models that run well here. Still checking "
                                            "some of them…")
        elif self._unchecked:
            self.recommended_status.setText("Curated models. Some could not be checked against "
                                            "this computer; Retry checks them again.")
        else:
            self.recommended_status.setText("Curated models that run well on this computer.")

    def _checking(self, repo_id: str, card: RecommendationCard) -> bool:
        """Whether the card still waits for its verdict (not one that could not be checked)."""
        if card.verdict is not None or repo_id in self._unchecked:
            return False
        known = self._verdicts.get((repo_id, card.group.name)) if card.group else None
        return not isinstance(known, str)

    def _on_unreachable(self, line: str) -> None:
        # The service's sentence already names the cause and what to do.
        self.banner_label.setText(line or "Hugging Face cannot be reached. Press Retry; models "
                                          "already on this computer keep working.")
        self.banner.show()
        self.retry_btn.setEnabled(True)
        # The cards whose details never came say so and why, instead of "Checking…".
        why = _cause(line) or "Hugging Face cannot be reached."
        for repo_id, card in self._cards.items():
            if repo_id not in self._with_details:
                self._unchecked[repo_id] = why
                card.set_verdict(None, why)
        self._update_cards_visibility()
        self.more_btn.setEnabled(True)
        self.more_btn.setText("Load more")
        if self.results_status.isVisible() and self.results.topLevelItemCount() == 0:
            self.results_status.setText("No results: Hugging Face cannot be reached.")
        if self._wanted_repo is not None and self._repo is None:
            self.facts.setText("The repository could not be loaded: Hugging Face cannot be "
                               "reached.")

    def _on_failed(self, sentence: str) -> None:
        self._set_message(sentence, error=True)
        if self.results_status.isVisible() and self.results.topLevelItemCount() == 0:
            self.results_status.setText("No results.")
        if self._wanted_repo is not None and self._repo is None:
            self.facts.setText("The repository could not be loaded.")

    # ---- user actions --------------------------------------------------------------------------

    def _retry(self) -> None:
        self.retry_btn.setEnabled(False)  # until the hub answers, one way or the other
        if self._unchecked and self.left.currentIndex() == 0:
            # The recommended list is what the person sees: ask for it again (the hub's last
            # request need not have been it), "Checking…" until the Hub answers.
            self._unchecked.clear()
            for card in self._cards.values():
                if card.verdict is None:
                    card.set_verdict(None)
            self._update_cards_visibility()
            self._hub.load_recommended()
        else:
            self._hub.retry()

    def _more(self) -> None:
        self.more_btn.setEnabled(False)
        self.more_btn.setText("Loading…")
        self._hub.more()

    def _on_text_changed(self, text: str) -> None:
        if not text.strip():
            self.left.setCurrentIndex(0)

    def _on_result_selected(self) -> None:
        items = self.results.selectedItems()
        if items:
            repo = items[0].data(0, Qt.ItemDataRole.UserRole)
            if repo and repo != self._wanted_repo:
                self.open_repo(str(repo))

    def _on_file_selected(self) -> None:
        row = self.files.currentRow()
        if self._repo is None or not 0 <= row < len(self._repo.groups):
            self.reasons.setText("")
            return
        g = self._repo.groups[row]
        if g.kind is not FileKind.MODEL:
            self.reasons.setText(KIND_EXPLAINED.get(g.kind, ""))
            return
        verdict = self._verdicts.get((self._repo.repo_id, g.name))
        if verdict is None:
            self.reasons.setText(f"{g.name}: checking whether it fits this computer…")
        elif isinstance(verdict, str):
            self.reasons.setText(f"{g.name}: could not check whether it fits. {verdict}")
        else:
            self.reasons.setText(f"{g.name}: {verdict.label()}\n{verdict.tooltip()}")

    def _download(self, group: FileGroup) -> None:
        if self._repo is None:
            return
        try:
            download_id = self._downloads.enqueue(self._repo, group)
        except HubError as exc:
            self._set_message(str(exc), error=True)
            return
        self._set_message(f"{group.name} is queued: see Downloads.")
        self.queued.emit(download_id)

    def _open_checked_url(self, url: QUrl) -> None:
        (self._open_url or QDesktopServices.openUrl)(url)

    def _set_message(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))
        set_text_color(self.message, text_color(self.palette(), _ERROR_HUE) if error else None)

    # ---- palette, first show -------------------------------------------------------------------

    def _style_banner(self) -> None:
        pal = self.banner.palette()
        base = self.palette().color(QPalette.ColorRole.Window).name()
        pal.setColor(QPalette.ColorRole.Window, QColor(mix(base, _WARN_HUE, 0.25)))
        self.banner.setPalette(pal)

    def changeEvent(self, e: QEvent) -> None:
        super().changeEvent(e)
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and \
                hasattr(self, "banner"):
            self._style_banner()
            # The fit colours were mixed from the old palette.
            if self._repo is not None:
                for row, g in enumerate(self._repo.groups):
                    self._show_fit(row, g)
                self.card.show_markdown(self._repo.card)
            for card in self._cards.values():
                card.set_verdict(card.verdict, card.verdict_label.toolTip()
                                 if card.verdict is None else "")

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            if not self._recommended_loaded:
                self._hub.load_recommended()

    def sizeHint(self) -> QSize:
        return QSize(1100, 720)


def _cause(line: str) -> str:
    """The first sentence of the hub's line: the cause without the advice, for a card ("Hugging
    Face cannot be reached (the connection was refused). Check the ..." gives the part before
    "Check")."""
    line = line.strip()
    m = re.match(r"(.+?[.!?])(?:\s|$)", line, re.DOTALL)
    return m.group(1) if m else line


def human_count(n: int) -> str:
    """A count for a narrow column: 950, 12.3k, 1.2M."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1_000:
        return f"{n / 1_000:.1f}k"
    return str(n)


def human_date(t: float | None) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(t)) if t else "—"


def repo_facts(d: RepoDetails) -> str:
    """The line of facts under a repository's title."""
    facts = [f"License: {d.license or 'not stated'}",
             "Gated: you must accept its terms on Hugging Face" if d.gated else "Not gated"]
    if d.architecture:
        facts.append(f"Architecture: {d.architecture}")
    if d.parameters:
        facts.append(f"{human_params(d.parameters)} parameters")
    if d.context_length:
        facts.append(f"trained for {human_tokens(d.context_length)} context")
    facts.append(f"{human_count(d.downloads)} downloads · {human_count(d.likes)} likes")
    if d.last_modified:
        facts.append(f"updated {human_date(d.last_modified)}")
    return " · ".join(facts)


