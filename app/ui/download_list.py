"""The download queue as a Qt item model, and the words a download's row shows.

The download service (app/services/downloads.py) owns the queue; this model holds the rows it
last reported, in its order, for a view to show. Progress arrives several times a second per
download, so ``update_row`` replaces one row and says so with ``dataChanged`` for that row alone;
``set_rows`` (the service's ``changed``: added, removed, a new state) updates the rows in place
when the same downloads are listed in the same order, and starts over only when the list itself
changed, so a row's widgets (and the button that has the keyboard focus) survive a new state.
"""

from __future__ import annotations

from enum import IntEnum

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, Qt

from app.services.protocols import DownloadRow
from app.ui.common import human_size
from app.ui.lang import tr, ui_text
from app.ui.model_index import ROOT, Index

ACTIVE_STATES = ("queued", "downloading", "paused")
PROGRESS_STEPS = 1000  # a progress bar's range: per mille, fine enough for a long download


class Role(IntEnum):
    """What a row answers besides its title (DisplayRole)."""

    ID = Qt.ItemDataRole.UserRole  # str: the download's id
    ROW = Qt.ItemDataRole.UserRole + 1  # the DownloadRow itself
    STATE = Qt.ItemDataRole.UserRole + 2  # str: queued | downloading | paused | failed | done
    STATUS = Qt.ItemDataRole.UserRole + 3  # str: the line under the title (row_status)
    PROGRESS = Qt.ItemDataRole.UserRole + 4  # int 0..PROGRESS_STEPS, or None: a busy bar
    DETAIL = Qt.ItemDataRole.UserRole + 5  # str: the error or phase, for the status's tooltip


def human_speed(bytes_per_s: float) -> str:
    return tr("{size}/s").format(size=human_size(int(bytes_per_s)))


def human_duration(seconds: float | None) -> str:
    """A remaining time, as coarse as a person wants it: "40 s", "2 min", "1 h 5 min"."""
    if seconds is None or seconds < 0:
        return ""
    s = int(seconds + 0.5)
    if s < 60:
        return tr("{seconds} s").format(seconds=s)
    if s < 3600:
        return tr("{minutes} min").format(minutes=(s + 30) // 60)
    h, rest = divmod(s, 3600)
    m = rest // 60
    return tr("{hours} h {minutes} min").format(hours=h, minutes=m) if m else \
        tr("{hours} h").format(hours=h)


def _amount(r: DownloadRow) -> str:
    return tr("{done} of {total}").format(done=human_size(r.done), total=human_size(r.total)) \
        if r.total else human_size(r.done)


def row_status(r: DownloadRow) -> str:
    """The line under a download's title: bytes, speed and time left, or what is happening."""
    amount = _amount(r)
    if r.state == "failed":
        return ui_text(r.error or r.phase) or tr("Failed.")
    if r.state == "done":
        return tr("Done · {size} · in the library").format(size=human_size(r.total or r.done))
    if r.state == "paused":
        why = r.error or (r.phase if r.phase and r.phase != "paused" else "")
        return tr("Paused · {amount} · {why}").format(amount=amount, why=ui_text(why)) if why \
            else tr("Paused · {amount}").format(amount=amount)
    if r.state == "queued":
        return tr("Waiting · {amount}").format(amount=amount) if r.done \
            else tr("Waiting to start")
    if r.phase and r.phase != "downloading":
        return tr("{amount} · {phase}").format(amount=amount, phase=ui_text(r.phase))
    parts = [amount]
    if r.speed > 0:
        parts.append(human_speed(r.speed))
    if r.eta is not None:
        parts.append(tr("{time} left").format(time=human_duration(r.eta)))
    return " · ".join(parts)


def row_progress(r: DownloadRow) -> int | None:
    """How far the download is, in PROGRESS_STEPS; None when nothing can be counted (a busy
    bar): the size is unknown, or the file is being hashed, which has no byte count here."""
    if r.state == "downloading" and r.phase.startswith("verifying"):
        return None
    if r.total:
        return min(PROGRESS_STEPS, int(PROGRESS_STEPS * r.done / r.total))
    if r.state == "downloading":
        return None
    return PROGRESS_STEPS if r.state == "done" else 0


def queue_summary(rows: list[DownloadRow]) -> str:
    """The line above the queue: how many are active, how much of how much, speed, time left."""
    active = [r for r in rows if r.state in ACTIVE_STATES]
    if not active:
        done = sum(1 for r in rows if r.state == "done")
        return tr("%n finished", None, done) if done else tr("No downloads in progress")
    done_bytes = sum(r.done for r in active)
    known = all(r.total for r in active)
    total_bytes = sum(r.total or 0 for r in active)
    speed = sum(r.speed for r in active if r.state == "downloading")
    parts = [tr("%n active", None, len(active))]
    parts.append(tr("{done} of {total}").format(done=human_size(done_bytes),
                                               total=human_size(total_bytes)) if known
                 else tr("{done} so far").format(done=human_size(done_bytes)))
    if speed > 0:
        parts.append(human_speed(speed))
        # Paused downloads wait for the user, not for the network: not in the time left.
        going = [r for r in active if r.state != "paused"]
        if all(r.total for r in going):
            left = sum((r.total or 0) - r.done for r in going)
            parts.append(tr("{time} left").format(time=human_duration(left / speed)))
    return " · ".join(parts)


class DownloadListModel(QAbstractListModel):
    """The service's download rows, in its order, one list row each."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[DownloadRow] = []

    # ---- filling -------------------------------------------------------------------------------

    def set_rows(self, rows: list[DownloadRow]) -> None:
        """The whole queue again. The same downloads in the same order: only the rows that
        differ change (``dataChanged`` each); otherwise the list starts over."""
        if [r.id for r in rows] != [r.id for r in self._rows]:
            self.beginResetModel()
            self._rows = list(rows)
            self.endResetModel()
            return
        for row, r in enumerate(rows):
            if r != self._rows[row]:
                self._rows[row] = r
                self._changed(row)

    def update_row(self, r: DownloadRow) -> bool:
        """Replace the row of ``r.id`` (a progress report); False when the list has no such row
        (its ``changed`` is still on the way)."""
        row = self._row_of(r.id)
        if row is None:
            return False
        if r != self._rows[row]:
            self._rows[row] = r
            self._changed(row)
        return True

    # ---- reading -------------------------------------------------------------------------------

    def rows(self) -> list[DownloadRow]:
        return list(self._rows)

    def row(self, download_id: str) -> DownloadRow | None:
        row = self._row_of(download_id)
        return self._rows[row] if row is not None else None

    def index_of(self, download_id: str) -> QModelIndex:
        """The row of ``download_id``; an invalid index when it is not listed."""
        row = self._row_of(download_id)
        return self.index(row, 0) if row is not None else QModelIndex()

    # ---- QAbstractListModel ----------------------------------------------------------------------

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def flags(self, index: Index) -> Qt.ItemFlag:
        # Enabled for the persistent editor that shows it; nothing to select: the row's own
        # buttons are what acts on it.
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemNeverHasChildren if index.isValid() \
            else Qt.ItemFlag.NoItemFlags

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        r = self._rows[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole,
                    Qt.ItemDataRole.AccessibleTextRole):
            return r.title
        if role == Role.ID:
            return r.id
        if role == Role.ROW:
            return r
        if role == Role.STATE:
            return r.state
        if role == Role.STATUS:
            return row_status(r)
        if role == Role.PROGRESS:
            return row_progress(r)
        if role == Role.DETAIL:
            return r.error or r.phase
        return None

    # ---- inside --------------------------------------------------------------------------------

    def _row_of(self, download_id: str) -> int | None:
        return next((i for i, r in enumerate(self._rows) if r.id == download_id), None)

    def _changed(self, row: int) -> None:
        index = self.index(row, 0)
        self.dataChanged.emit(index, index)
