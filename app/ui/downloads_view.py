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
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QListView,
    QVBoxLayout,
    QWidget,
)

from app.services.protocols import DownloadRow, DownloadsLike
from app.ui.common import ask, heading_label, human_size, plain_label, set_text_color, text_color
from app.ui.download_list import DownloadListModel, queue_summary
from app.ui.download_list import human_duration as human_duration  # where tests look for them
from app.ui.download_list import row_status as row_status
from app.ui.download_row import (
    CANCEL,
    ERROR_HUE,
    PAUSE,
    RESUME,
    RETRY,
    DownloadDelegate,
    DownloadRowWidget,
)

log = logging.getLogger(__name__)


class DownloadsView(QWidget):
    """The download queue, kept in step with the download service."""

    def __init__(self, downloads: DownloadsLike, parent: QWidget | None = None, *,
                 confirm: Callable[[QWidget, str, str], bool] | None = None) -> None:
        """``confirm(parent, title, question)`` asks before a cancel deletes a partial file
        (default: a QMessageBox); tests pass one that answers at once."""
        super().__init__(parent)
        self._downloads = downloads
        self._confirm = confirm or ask
        self.model = DownloadListModel(self)  # the service's rows as last reported

        heading = heading_label("Downloads")
        self.total = plain_label(muted=True, wrap=False)
        self.total.setObjectName("total")
        self.message = plain_label()
        self.message.setObjectName("message")
        self.message.hide()
        header = QHBoxLayout()
        header.addWidget(heading)
        header.addStretch(1)
        header.addWidget(self.total)

        self.empty = plain_label("Nothing is downloading. Find a model in the Discover tab and "
                                 "press Download; downloads survive closing Hearth and resume "
                                 "where they stopped.", muted=True, selectable=False)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.list = self._make_list()

        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.message)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.list, 1)

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
        done = f" and delete the {human_size(row.done)} downloaded so far" if row and row.done \
            else ""
        if not self._confirm(self, "Cancel the download?",
                             f"Cancel {title}{done}? It would have to start again from the "
                             f"beginning."):
            return False
        self._downloads.cancel(download_id)
        return True

    # ---- building --------------------------------------------------------------------------------

    def _make_list(self) -> QListView:
        view = QListView()
        view.setObjectName("downloads")
        view.setAccessibleName("Download queue")
        view.setModel(self.model)
        view.setFrameShape(QFrame.Shape.NoFrame)
        view.viewport().setBackgroundRole(QPalette.ColorRole.Window)  # rows on the page, as before
        view.setSpacing(3)
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
        title = row.title if row is not None else "A download"
        self.message.setText(f"{title} failed: {sentence}")
        set_text_color(self.message, text_color(self.palette(), ERROR_HUE))
        self.message.show()

    def _update_total(self) -> None:
        self.total.setText(queue_summary(self.model.rows()))
