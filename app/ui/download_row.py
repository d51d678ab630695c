"""How one download's row looks: a state icon, its title, a progress bar, a status line in the
state's tone, and its buttons.

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
    Qt,
    Signal,
)
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from app.services.protocols import DownloadRow
from app.ui.download_list import PROGRESS_STEPS, Role
from app.ui.lang import tr, ui_text
from app.ui.model_index import Index, plain
from app.ui.style.components import ICON_SIZE, ProgressBar, icon_button, set_tone
from app.ui.style.icons import pixmap
from app.ui.style.tokens import SPACING

# What a row's buttons ask for; DownloadsView maps each to the service's method.
PAUSE, RESUME, RETRY, CANCEL = "pause", "resume", "retry", "cancel"


def state_tone(r: DownloadRow) -> str:
    """The tone of a row's status line: words always say the state, the tone repeats it."""
    if r.state == "failed" or (r.state == "paused" and r.error):
        return "danger"
    if r.state == "done":
        return "success"
    return "muted"


def _state_icon(r: DownloadRow) -> tuple[str, str]:
    """The icon (and its tone) before a row's title: what the download is doing at a glance."""
    if r.state == "failed":
        return "failed", "danger"
    if r.state == "done":
        return "ok", "success"
    if r.state == "paused":
        return "pause", "danger" if r.error else "muted"
    if r.state == "queued":
        return "recent", "muted"
    return "downloads", "info"


class DownloadRowWidget(QFrame):
    """One download: its title, a progress bar, a status line and the buttons its state allows."""

    action = Signal(str, str)  # (PAUSE | RESUME | RETRY | CANCEL, download id)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("download_row")
        self.row: DownloadRow | None = None
        self._icon: tuple[str, str] | None = None
        self.picture = QLabel()
        self.picture.setTextFormat(Qt.TextFormat.PlainText)
        self.picture.setFixedSize(QSize(ICON_SIZE + SPACING.sm, ICON_SIZE + SPACING.sm))
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setProperty("type", "subheading")
        self.bar = ProgressBar()
        self.bar.setTextVisible(False)
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.setProperty("type", "small")
        self.status.setProperty("tone", "muted")
        self.pause_btn = icon_button("pause", tr("Pause"))
        self.resume_btn = icon_button("load", tr("Resume"))
        self.retry_btn = icon_button("retry", tr("Retry"))
        self.cancel_btn = icon_button("close", tr("Cancel and delete what was downloaded"))
        buttons = QHBoxLayout()
        buttons.setSpacing(SPACING.xxs)
        for what, b in ((PAUSE, self.pause_btn), (RESUME, self.resume_btn),
                        (RETRY, self.retry_btn), (CANCEL, self.cancel_btn)):
            b.clicked.connect(lambda _c=False, what=what: self._pressed(what))
            buttons.addWidget(b, 0, Qt.AlignmentFlag.AlignTop)
        text = QVBoxLayout()
        text.setSpacing(SPACING.xs)
        text.addWidget(self.title)
        text.addWidget(self.bar)
        text.addWidget(self.status)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACING.lg, SPACING.md, SPACING.md, SPACING.md)
        layout.setSpacing(SPACING.md)
        layout.addWidget(self.picture, 0, Qt.AlignmentFlag.AlignTop)
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
        # The status says "Done" or why it failed: a full or stalled bar adds nothing there.
        self.bar.setVisible(r.state not in ("done", "failed"))
        self.bar.setAccessibleName(tr("Progress of {title}").format(title=r.title))
        # The icon buttons' names say which download they act on (a screen reader lists them).
        self.pause_btn.setAccessibleName(tr("Pause {title}").format(title=r.title))
        self.resume_btn.setAccessibleName(tr("Resume {title}").format(title=r.title))
        self.retry_btn.setAccessibleName(tr("Retry {title}").format(title=r.title))
        self.cancel_btn.setAccessibleName(tr("Cancel {title}").format(title=r.title))
        self.status.setText(status)
        self.status.setToolTip(ui_text(r.error) if r.error else status)  # the whole line
        set_tone(self.status, state_tone(r))
        self._paint_icon()
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
                hasattr(self, "picture"):
            self._icon = None  # a pixmap keeps the colour of the theme it was drawn in
            self._paint_icon()

    def _paint_icon(self) -> None:
        if self.row is None:
            return
        wanted = _state_icon(self.row)
        if wanted != self._icon:  # progress comes often: draw only when the state changes
            self._icon = wanted
            name, tone = wanted
            self.picture.setPixmap(pixmap(name, ICON_SIZE, tone))

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
