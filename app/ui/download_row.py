"""How one download's row looks: its title, a progress bar, a status line and its buttons.

``DownloadDelegate`` gives each row of a view over ``DownloadListModel`` a persistent editor,
``DownloadRowWidget``, and refills it from the model whenever the model reports that row
changed (Qt calls ``setEditorData`` on ``dataChanged``). Real widgets rather than painted ones:
the buttons take the keyboard focus and a screen reader names them, and the status line wraps
and can be selected to copy an error. The widget only shows the row and says which button was
pressed; the view decides what that does.
"""

from __future__ import annotations

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QObject,
    QSize,
    Signal,
)
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QListView,
    QProgressBar,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from app.services.protocols import DownloadRow
from app.ui.common import plain_label, set_text_color, text_color
from app.ui.download_list import PROGRESS_STEPS, Role
from app.ui.model_index import Index, plain

ERROR_HUE = "#d0342c"
_DONE_HUE = "#1e9e4a"
# What a row's buttons ask for; DownloadsView maps each to the service's method.
PAUSE, RESUME, RETRY, CANCEL = "pause", "resume", "retry", "cancel"


class DownloadRowWidget(QFrame):
    """One download: its title, a progress bar, a status line and the buttons its state allows."""

    action = Signal(str, str)  # (PAUSE | RESUME | RETRY | CANCEL, download id)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("download_row")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        # Inside an item view the inherited background role is Base, whose text role is Text:
        # the labels would ignore the WindowText colour set_text_color gives them.
        self.setBackgroundRole(QPalette.ColorRole.Window)
        self.row: DownloadRow | None = None
        self.title = plain_label(wrap=False)
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
        buttons = QHBoxLayout()
        buttons.setSpacing(4)
        for what, b in ((PAUSE, self.pause_btn), (RESUME, self.resume_btn),
                        (RETRY, self.retry_btn), (CANCEL, self.cancel_btn)):
            b.clicked.connect(lambda _c=False, what=what: self._pressed(what))
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

    def show_row(self, r: DownloadRow, status: str, progress: int | None) -> None:
        """Show ``r``; ``status`` and ``progress`` are the model's words and bar for it."""
        self.row = r
        self.title.setText(r.title)
        self.title.setToolTip(r.title)
        if progress is None:
            self.bar.setRange(0, 0)  # nothing to count: a busy bar
        else:
            self.bar.setRange(0, PROGRESS_STEPS)
            self.bar.setValue(progress)
        self.status.setText(status)
        self.status.setToolTip(r.error or r.phase)
        self._color_status()
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

    def changeEvent(self, e: QEvent) -> None:
        super().changeEvent(e)
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and \
                hasattr(self, "status"):
            self._color_status()  # the colours were mixed from the old palette

    def _color_status(self) -> None:
        r = self.row
        if r is None:
            return
        palette = self.palette()
        if r.state == "failed" or (r.state == "paused" and r.error):
            set_text_color(self.status, text_color(palette, ERROR_HUE))
        elif r.state == "done":
            set_text_color(self.status, text_color(palette, _DONE_HUE))
        else:
            set_text_color(self.status, palette.color(QPalette.ColorRole.PlaceholderText))

    def _pressed(self, what: str) -> None:
        if self.row is not None:
            self.action.emit(what, self.row.id)


class DownloadDelegate(QStyledItemDelegate):
    """Shows each row of a view over DownloadListModel as a DownloadRowWidget; the view opens
    one persistent editor per row (``openPersistentEditor``) and this keeps it filled."""

    action = Signal(str, str)  # a row's button: (PAUSE | RESUME | RETRY | CANCEL, download id)

    FALLBACK_HEIGHT = 72  # before a row's widget exists to say how tall it is

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem,
                     index: Index) -> QWidget:
        editor = DownloadRowWidget(parent)
        editor.action.connect(self.action)
        return editor

    def setEditorData(self, editor: QWidget, index: Index) -> None:
        row = index.data(Role.ROW)
        if not isinstance(editor, DownloadRowWidget) or not isinstance(row, DownloadRow):
            return
        progress = index.data(Role.PROGRESS)
        editor.show_row(row, str(index.data(Role.STATUS)),
                        progress if isinstance(progress, int) else None)
        # A status that now wraps onto another line (or no longer does) changes the row's height.
        if self._height(editor) != editor.height():
            self.sizeHintChanged.emit(plain(index))

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: Index) -> None:
        pass  # the row is shown, never edited: nothing goes back to the model

    def updateEditorGeometry(self, editor: QWidget, option: QStyleOptionViewItem,
                             index: Index) -> None:
        editor.setGeometry(option.rect)

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        editor = self._view.indexWidget(plain(index))
        height = self._height(editor) if editor is not None else self.FALLBACK_HEIGHT
        return QSize(self._width(), height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        pass  # the row's widget covers the item: painting its title too would show through

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        # An item delegate treats its editors as input fields (Escape closes, Tab commits);
        # these rows are not edited, so their keys stay theirs.
        return False

    def _width(self) -> int:
        return max(1, self._view.viewport().width() - 2 * self._view.spacing())

    def _height(self, editor: QWidget) -> int:
        height = editor.heightForWidth(self._width())
        return height if height > 0 else editor.sizeHint().height()
