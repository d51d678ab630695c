"""The Downloads view: the queue, one row per download, with progress and its controls.

The queue belongs to the download service (app/services/downloads.py); the view shows its rows
and sends the user's wishes back. Progress arrives several times a second per download, so a
``progress`` signal updates only that download's row; ``changed`` (added, removed, a new state)
rebuilds the list. Cancel deletes what was downloaded, so it asks first; the question is a
constructor argument so tests can answer it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.services.protocols import DownloadRow, DownloadsLike
from app.ui.common import (
    ask,
    heading_label,
    human_size,
    plain_label,
    scrolling_column,
    set_text_color,
    text_color,
)

log = logging.getLogger(__name__)

ACTIVE_STATES = ("queued", "downloading", "paused")
_ERROR_HUE = "#d0342c"
_DONE_HUE = "#1e9e4a"


def human_speed(bytes_per_s: float) -> str:
    return f"{human_size(int(bytes_per_s))}/s"


def human_duration(seconds: float | None) -> str:
    """A remaining time, as coarse as a person wants it: "40 s", "2 min", "1 h 5 min"."""
    if seconds is None or seconds < 0:
        return ""
    s = int(seconds + 0.5)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{(s + 30) // 60} min"
    h, rest = divmod(s, 3600)
    m = rest // 60
    return f"{h} h {m} min" if m else f"{h} h"


def row_status(r: DownloadRow) -> str:
    """The line under a download's title: bytes, speed and time left, or what is happening."""
    amount = f"{human_size(r.done)} of {human_size(r.total)}" if r.total else human_size(r.done)
    if r.state == "failed":
        return r.error or r.phase or "Failed."
    if r.state == "done":
        return f"Done · {human_size(r.total or r.done)} · in the library"
    if r.state == "paused":
        why = r.error or (r.phase if r.phase and r.phase != "paused" else "")
        return f"Paused · {amount}" + (f" · {why}" if why else "")
    if r.state == "queued":
        return f"Waiting · {amount}" if r.done else "Waiting to start"
    if r.phase and r.phase != "downloading":
        return f"{amount} · {r.phase}"
    parts = [amount]
    if r.speed > 0:
        parts.append(human_speed(r.speed))
    if r.eta is not None:
        parts.append(f"{human_duration(r.eta)} left")
    return " · ".join(parts)


class _DownloadRowWidget(QFrame):
    """One download: its title, a progress bar, a status line and the buttons its state allows."""

    def __init__(self, row: DownloadRow, view: DownloadsView) -> None:
        super().__init__()
        self.setObjectName("download_row")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.row = row
        self.title = plain_label(row.title, wrap=False)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.bar = QProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setMaximumHeight(10)
        self.status = plain_label(wrap=True)
        self.pause_btn = QPushButton("Pause")
        self.resume_btn = QPushButton("Resume")
        self.retry_btn = QPushButton("Retry")
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setToolTip("Stop and delete what was downloaded")
        self.pause_btn.clicked.connect(lambda: view.pause(self.row.id))
        self.resume_btn.clicked.connect(lambda: view.resume(self.row.id))
        self.retry_btn.clicked.connect(lambda: view.retry(self.row.id))
        self.cancel_btn.clicked.connect(lambda: view.cancel(self.row.id))
        buttons = QHBoxLayout()
        buttons.setSpacing(4)
        for b in (self.pause_btn, self.resume_btn, self.retry_btn, self.cancel_btn):
            buttons.addWidget(b)
        text = QVBoxLayout()
        text.setSpacing(3)
        text.addWidget(self.title)
        text.addWidget(self.bar)
        text.addWidget(self.status)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 8, 6)
        layout.addLayout(text, 1)
        layout.addLayout(buttons)
        self.update_row(row)

    def update_row(self, r: DownloadRow) -> None:
        self.row = r
        self.title.setText(r.title)
        self.title.setToolTip(r.title)
        if r.total:
            self.bar.setRange(0, 1000)
            self.bar.setValue(min(1000, int(1000 * r.done / r.total)))
        elif r.state == "downloading":
            self.bar.setRange(0, 0)  # size unknown: a busy bar
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(1000 if r.state == "done" else 0)
        if r.state == "downloading" and r.phase.startswith("verifying"):
            self.bar.setRange(0, 0)  # hashing has no byte count the row knows of
        self.status.setText(row_status(r))
        self.status.setToolTip(r.error or r.phase)
        palette = self.palette()
        if r.state == "failed" or (r.state == "paused" and r.error):
            set_text_color(self.status, text_color(palette, _ERROR_HUE))
        elif r.state == "done":
            set_text_color(self.status, text_color(palette, _DONE_HUE))
        else:
            set_text_color(self.status, palette.color(QPalette.ColorRole.PlaceholderText))
        state = r.state
        self.pause_btn.setEnabled(state in ("queued", "downloading"))
        self.resume_btn.setEnabled(state == "paused")
        self.retry_btn.setEnabled(state == "failed")
        self.cancel_btn.setEnabled(state != "done")
        # Pause and Resume take turns in one place; Retry shows only when it can help.
        self.resume_btn.setVisible(state == "paused")
        self.retry_btn.setVisible(state == "failed")
        self.cancel_btn.setVisible(state != "done")
        self.pause_btn.setVisible(state in ("queued", "downloading"))


class DownloadsView(QWidget):
    """The download queue, kept in step with the download service."""

    def __init__(self, downloads: DownloadsLike, parent: QWidget | None = None, *,
                 confirm: Callable[[QWidget, str, str], bool] | None = None) -> None:
        """``confirm(parent, title, question)`` asks before a cancel deletes a partial file
        (default: a QMessageBox); tests pass one that answers at once."""
        super().__init__(parent)
        self._downloads = downloads
        self._confirm = confirm or ask
        self._rows: dict[str, DownloadRow] = {}
        self._widgets: dict[str, _DownloadRowWidget] = {}

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
        self._list = QWidget()
        scroll, self._list_layout = scrolling_column(self._list)

        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.message)
        layout.addWidget(self.empty, 1)
        layout.addWidget(scroll, 1)
        self._scroll = scroll

        downloads.changed.connect(self.rebuild)
        downloads.progress.connect(self._on_progress)
        downloads.failed.connect(self._on_failed)
        self.rebuild()

    # ---- public ----------------------------------------------------------------------------------

    def rebuild(self) -> None:
        """Show the service's rows again from scratch (rows added, removed, a state changed)."""
        rows = self._downloads.rows()
        for w in self._widgets.values():
            w.hide()  # deleteLater acts later; until then it would still be painted
            w.setParent(None)
            w.deleteLater()
        self._widgets.clear()
        self._rows = {r.id: r for r in rows}
        for r in rows:
            w = _DownloadRowWidget(r, self)
            self._list_layout.insertWidget(self._list_layout.count() - 1, w)
            self._widgets[r.id] = w
        self.empty.setVisible(not rows)
        self._scroll.setVisible(bool(rows))
        self._update_total()

    def row_widget(self, download_id: str) -> _DownloadRowWidget | None:
        """The widget showing ``download_id`` (for tests and the screenshot script)."""
        return self._widgets.get(download_id)

    def pause(self, download_id: str) -> None:
        self._downloads.pause(download_id)

    def resume(self, download_id: str) -> None:
        self._downloads.resume(download_id)

    def retry(self, download_id: str) -> None:
        self.message.hide()
        self._downloads.retry(download_id)

    def cancel(self, download_id: str) -> bool:
        """Cancel after asking (it deletes the partial file); returns whether it was cancelled."""
        row = self._rows.get(download_id)
        title = row.title if row is not None else download_id
        done = f" and delete the {human_size(row.done)} downloaded so far" if row and row.done \
            else ""
        if not self._confirm(self, "Cancel the download?",
                             f"Cancel {title}{done}? It would have to start again from the "
                             f"beginning."):
            return False
        self._downloads.cancel(download_id)
        return True

    def changeEvent(self, e: QEvent) -> None:
        super().changeEvent(e)
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and \
                hasattr(self, "_widgets"):
            for w in self._widgets.values():
                w.update_row(w.row)  # the status colours were mixed from the old palette

    # ---- service signals -------------------------------------------------------------------------

    def _on_progress(self, row: DownloadRow) -> None:
        widget = self._widgets.get(row.id)
        if widget is None:
            # A download the list does not show yet (its `changed` is still on the way).
            self.rebuild()
            return
        old = self._rows.get(row.id)
        self._rows[row.id] = row
        widget.update_row(row)
        if old is None or old.state != row.state:
            log.debug("download %s is now %s", row.id, row.state)
        self._update_total()

    def _on_failed(self, download_id: str, sentence: str) -> None:
        row = self._rows.get(download_id)
        title = row.title if row is not None else "A download"
        self.message.setText(f"{title} failed: {sentence}")
        set_text_color(self.message, text_color(self.palette(), _ERROR_HUE))
        self.message.show()

    def _update_total(self) -> None:
        active = [r for r in self._rows.values() if r.state in ACTIVE_STATES]
        if not active:
            done = sum(1 for r in self._rows.values() if r.state == "done")
            self.total.setText(f"{done} finished" if done else "No downloads in progress")
            return
        done_bytes = sum(r.done for r in active)
        known = all(r.total for r in active)
        total_bytes = sum(r.total or 0 for r in active)
        speed = sum(r.speed for r in active if r.state == "downloading")
        parts = [f"{len(active)} active" if len(active) != 1 else "1 active"]
        parts.append(f"{human_size(done_bytes)} of {human_size(total_bytes)}" if known
                     else f"{human_size(done_bytes)} so far")
        if speed > 0:
            parts.append(human_speed(speed))
            # Paused downloads wait for the user, not for the network: not in the time left.
            going = [r for r in active if r.state != "paused"]
            if all(r.total for r in going):
                left = sum((r.total or 0) - r.done for r in going)
                parts.append(f"{human_duration(left / speed)} left")
        self.total.setText(" · ".join(parts))
