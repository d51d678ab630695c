"""The Downloads view: the queue, one row per download, with progress and its controls.

The queue belongs to the download service (app/services/downloads.py); the view keeps the rows
it reports in a ``DownloadListModel`` (app/ui/download_list.py), shows them in a ``QListView``
whose rows are ``DownloadRowWidget``s (app/ui/download_row.py), and sends the user's wishes
back. Progress arrives several times a second per download, so a ``progress`` signal updates
only that download's row (one ``dataChanged``); ``changed`` (added, removed, a new state) gives
the model the whole list again. Cancel deletes what was downloaded, so it asks first; the
question is a constructor argument so tests can answer it.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.services.protocols import DownloadRow, DownloadsLike
from app.ui.common import Confirm, ask, human_size
from app.ui.download_list import DownloadListModel, queue_summary
from app.ui.download_list import human_duration as human_duration  # where tests look for them
from app.ui.download_list import row_status as row_status
from app.ui.download_row import (
    CANCEL,
    PAUSE,
    RESUME,
    RETRY,
    DownloadDelegate,
    DownloadRowWidget,
)
from app.ui.lang import tr, ui_text
from app.ui.style.components import Banner, EmptyState, heading
from app.ui.style.tokens import SPACING

log = logging.getLogger(__name__)


class DownloadsView(QWidget):
    """The download queue, kept in step with the download service."""

    discover_requested = Signal()  # the empty page's "Discover models"

    def __init__(self, downloads: DownloadsLike, parent: QWidget | None = None, *,
                 confirm: Confirm | None = None) -> None:
        """``confirm(parent, title, question)`` asks before a cancel deletes a partial file
        (default: a QMessageBox); tests pass one that answers at once."""
        super().__init__(parent)
        self._downloads = downloads
        self._confirm = confirm or ask
        self.model = DownloadListModel(self)  # the service's rows as last reported

        title = heading(tr("Downloads"), "heading")
        self.total = QLabel()
        self.total.setTextFormat(Qt.TextFormat.PlainText)
        self.total.setProperty("tone", "muted")
        self.total.setProperty("type", "small")
        self.total.setObjectName("total")
        titles = QVBoxLayout()
        titles.setSpacing(SPACING.xxs)
        titles.addWidget(title)
        titles.addWidget(self.total)
        header = QHBoxLayout()
        header.addLayout(titles)
        header.addStretch(1)
        # A failure, with Retry: the row says it too, this is for the one the user did not see.
        self.message = Banner()
        self.message.setObjectName("message")
        self.message.action_clicked.connect(self._retry_failed)
        self._failed_id: str | None = None

        self.empty = EmptyState(
            "downloads", tr("No downloads"),
            tr("Find a model in Discover and press Download. Downloads survive closing Hearth "
               "and resume where they stopped."), tr("Discover models"))
        self.empty.activated.connect(self.discover_requested)
        self.list = self._make_list()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACING.xxl, SPACING.xl, SPACING.xxl, SPACING.lg)
        layout.setSpacing(SPACING.lg)
        layout.addLayout(header)
        layout.addWidget(self.message)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.list)
        layout.addStretch(0)  # under a short queue: the panel ends with its last row

        downloads.changed.connect(self.rebuild)
        downloads.progress.connect(self._on_progress)
        downloads.failed.connect(self._on_failed)
        self.rebuild()

    # ---- public ----------------------------------------------------------------------------------

    def rebuild(self) -> None:
        """Show the service's rows again (rows added, removed, a state changed)."""
        rows = self._downloads.rows()
        self.model.set_rows(rows)
        self.empty.setVisible(not rows)
        failed = self.model.row(self._failed_id) if self._failed_id else None
        if not rows or (self._failed_id and (failed is None or failed.state != "failed")):
            self.message.hide()  # the failure it spoke of is retried or gone
            self._failed_id = None
        self.list.setVisible(bool(rows))
        self._update_total()

    def row_widget(self, download_id: str) -> DownloadRowWidget | None:
        """The widget showing ``download_id`` (for tests and the screenshot script)."""
        index = self.model.index_of(download_id)
        widget = self.list.indexWidget(index) if index.isValid() else None
        return widget if isinstance(widget, DownloadRowWidget) else None

    def pause(self, download_id: str) -> None:
        self._downloads.pause(download_id)

    def resume(self, download_id: str) -> None:
        self._downloads.resume(download_id)

    def retry(self, download_id: str) -> None:
        self.message.hide()
        self._downloads.retry(download_id)

    def cancel(self, download_id: str) -> bool:
        """Cancel after asking (it deletes the partial file); returns whether it was cancelled."""
        row = self.model.row(download_id)
        title = row.title if row is not None else download_id
        if row is not None and row.done:
            question = tr("Cancel {title} and delete the {size} downloaded so far? It would have "
                          "to start again from the beginning.").format(
                              title=title, size=human_size(row.done))
        else:
            question = tr("Cancel {title}? It would have to start again from the "
                          "beginning.").format(title=title)
        if not self._confirm(self, tr("Cancel the download?"), question,
                             action=tr("Cancel download"), keep=tr("Keep downloading")):
            return False
        self._downloads.cancel(download_id)
        return True

    # ---- building --------------------------------------------------------------------------------

    def _make_list(self) -> QListView:
        view = QListView()
        view.setObjectName("downloads")
        view.setAccessibleName(tr("Download queue"))
        view.setModel(self.model)
        view.setFrameShape(QFrame.Shape.NoFrame)
        # As tall as its rows (up to the page; then it scrolls), not a half-empty panel.
        view.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents)
        view.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        view.setSpacing(0)  # the rows' own margins and rules part them
        view.setUniformItemSizes(False)  # a status line that wraps makes its row taller
        view.setResizeMode(QListView.ResizeMode.Adjust)  # rows follow the width (and wrapping)
        view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        view.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        # The rows' buttons take the keyboard focus; the list itself is no stop of its own.
        view.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        delegate = DownloadDelegate(view)
        delegate.action.connect(self._on_action)
        view.setItemDelegate(delegate)
        # Every row is a live widget: open one for each row the model gains (a reset gains all).
        self.model.modelReset.connect(lambda: self._open_rows(0, self.model.rowCount() - 1))
        self.model.rowsInserted.connect(lambda _p, first, last: self._open_rows(first, last))
        return view

    def _open_rows(self, first: int, last: int) -> None:
        for row in range(first, last + 1):
            self.list.openPersistentEditor(self.model.index(row, 0))

    def _on_action(self, what: str, download_id: str) -> None:
        if what == PAUSE:
            self.pause(download_id)
        elif what == RESUME:
            self.resume(download_id)
        elif what == RETRY:
            self.retry(download_id)
        elif what == CANCEL:
            self.cancel(download_id)
        else:
            log.warning("a download row asked for an unknown action: %r", what)

    # ---- service signals -------------------------------------------------------------------------

    def _on_progress(self, row: DownloadRow) -> None:
        old = self.model.row(row.id)
        if not self.model.update_row(row):
            # A download the list does not show yet (its `changed` is still on the way).
            self.rebuild()
            return
        if old is None or old.state != row.state:
            log.debug("download %s is now %s", row.id, row.state)
        self._update_total()

    def _on_failed(self, download_id: str, sentence: str) -> None:
        row = self.model.row(download_id)
        self._failed_id = download_id if row is not None and row.state == "failed" else None
        if self._failed_id is not None and row is not None \
                and ui_text(row.error) == ui_text(sentence):
            # The row says why under its title: the banner only points at it, with Retry.
            text = tr("{title} failed.").format(title=row.title)
        elif row is not None:
            text = tr("{title} failed: {sentence}").format(title=row.title,
                                                           sentence=ui_text(sentence))
        else:
            text = tr("A download failed: {sentence}").format(sentence=ui_text(sentence))
        self.message.show_message(text, "danger", tr("Retry") if self._failed_id else "")

    def _retry_failed(self) -> None:
        if self._failed_id is not None:
            self.retry(self._failed_id)
            self._failed_id = None

    def _update_total(self) -> None:
        self.total.setText(queue_summary(self.model.rows()))
