"""The Library view: the GGUF models on this computer, wherever they came from.

The local-models service (app/services/local_models.py) scans Hearth's own folder, the Hugging
Face cache, LM Studio, Ollama and folders the user added; the view shows its rows and sends the
user's wishes back. Only models in Hearth's own folder can be deleted from here: the others
belong to another app. A model's name and metadata come from its file and are shown as plain
text. Dialogs (folder picker, confirmation) and opening the file manager are constructor
arguments, so tests can answer them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, Qt, QUrl
from PySide6.QtGui import QBrush, QDesktopServices, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.hub.verdict import Verdict
from app.services.protocols import LocalModelsLike, LocalRow
from app.ui.common import (
    ask,
    fit_color,
    heading_label,
    human_params,
    human_size,
    human_tokens,
    plain_label,
    set_text_color,
    text_color,
)

log = logging.getLogger(__name__)

# Short headers where the cells are short: the header would set the column's width.
COLUMNS = ("Name", "Size", "Quant", "Architecture", "Params", "Context",
           "On this computer", "Source")
_ERROR_HUE = "#d0342c"
_OK_HUE = "#1e9e4a"
_WARN_HUE = "#d9822b"


class _Item(QTableWidgetItem):
    """A cell that sorts by a key of its own (sizes as numbers, not as text)."""

    def __init__(self, text: str, key: Any = None) -> None:
        super().__init__(text)
        self._key = key if key is not None else text.lower()

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, _Item):
            try:
                return bool(self._key < other._key)
            except TypeError:
                return str(self._key) < str(other._key)
        return super().__lt__(other)


def _choose_folder(parent: QWidget) -> str:
    return QFileDialog.getExistingDirectory(parent, "Add a folder of GGUF models")


def _models_table() -> QTableWidget:
    """The table of models: whole rows selected, read-only, sortable by clicking a header."""
    table = QTableWidget(0, len(COLUMNS))
    table.setObjectName("models")
    table.setHorizontalHeaderLabels(list(COLUMNS))
    table.verticalHeader().hide()
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    h = table.horizontalHeader()
    # The service's order until the user clicks a column (Qt would sort at once otherwise).
    h.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
    table.setSortingEnabled(True)
    h.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    h.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
    h.setSectionResizeMode(COLUMNS.index("On this computer"), QHeaderView.ResizeMode.Stretch)
    return table


class LibraryView(QWidget):
    """The models on this computer, with what can be done to each."""

    def __init__(self, models: LocalModelsLike, on_use: Callable[[str], None],
                 parent: QWidget | None = None, *,
                 open_url: Callable[[QUrl], object] | None = None,
                 choose_folder: Callable[[QWidget], str] | None = None,
                 confirm: Callable[[QWidget, str, str], bool] | None = None) -> None:
        """``on_use(path)`` loads a model for chat. ``open_url`` shows a folder in the file
        manager (default: QDesktopServices), ``choose_folder(parent)`` returns a folder or ""
        (default: QFileDialog), ``confirm(parent, title, question)`` asks before deleting
        (default: a QMessageBox)."""
        super().__init__(parent)
        self._models = models
        self._on_use = on_use
        self._open_url = open_url or QDesktopServices.openUrl
        self._choose_folder = choose_folder or _choose_folder
        self._confirm = confirm or ask
        self._rows: list[LocalRow] = []

        header = self._header()
        self.table = _models_table()
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.table.itemDoubleClicked.connect(lambda _item: self.use_selected())
        self.empty = plain_label("No models found on this computer yet. Find one in the Discover "
                                 "tab, or press “Add folder…” to list GGUF files you already "
                                 "have.", muted=True, selectable=False)
        self.empty.setObjectName("empty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.table)
        self.detail = plain_label(muted=True)  # the selected model's path or why it is broken
        self.detail.setObjectName("detail")
        self.message = plain_label()
        self.message.setObjectName("message")
        self.message.hide()
        self.action_bar = self._action_bar()

        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.detail)
        layout.addWidget(self.message)
        layout.addWidget(self.action_bar)

        models.changed.connect(self.set_rows)
        models.busy_changed.connect(self._set_busy)
        models.verified.connect(self._on_verified)
        models.failed.connect(self._on_failed)  # bound: disconnected when the view is gone
        self.set_rows(models.rows())

    def _header(self) -> QHBoxLayout:
        """The title, the scan's progress, and the buttons about where models are."""
        heading = heading_label("Models on this computer")
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setMaximumHeight(12)
        self.busy.setTextVisible(False)
        self.busy_label = plain_label("Scanning for models…", muted=True, wrap=False)
        self.add_btn = QPushButton("Add folder…")
        self.add_btn.setToolTip("Also list the GGUF models in a folder of your choice")
        self.add_btn.clicked.connect(self.add_folder)
        self.models_dir_btn = QPushButton("Download folder…")
        self.models_dir_btn.setToolTip("Where Hearth downloads models to (the only folder Hearth "
                                       "ever deletes from)")
        self.models_dir_btn.clicked.connect(self.change_models_dir)
        self.rescan_btn = QPushButton("Rescan")
        self.rescan_btn.setToolTip("Look for models again (in every known place)")
        self.rescan_btn.clicked.connect(self._models.rescan)
        header = QHBoxLayout()
        header.addWidget(heading)
        header.addStretch(1)
        for w in (self.busy_label, self.busy, self.models_dir_btn, self.add_btn,
                  self.rescan_btn):
            header.addWidget(w)
        self._set_busy(False)
        return header

    def _action_bar(self) -> QWidget:
        """What can be done to the selected model; Delete apart, at the right."""
        self.use_btn = QPushButton("Use in chat")
        self.use_btn.clicked.connect(self.use_selected)
        self.folder_btn = QPushButton("Show in folder")
        self.folder_btn.clicked.connect(self.show_in_folder)
        self.verify_btn = QPushButton("Verify")
        self.verify_btn.setToolTip("Check the file against the checksum it was downloaded with")
        self.verify_btn.clicked.connect(self.verify_selected)
        self.delete_btn = QPushButton("Delete")
        self.delete_btn.clicked.connect(self.delete_selected)
        bar = QWidget()
        buttons = QHBoxLayout(bar)
        buttons.setContentsMargins(0, 0, 0, 0)
        for b in (self.use_btn, self.folder_btn, self.verify_btn):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(self.delete_btn)
        return bar

    # ---- public ----------------------------------------------------------------------------------

    def set_rows(self, rows: list[LocalRow]) -> None:
        """Show ``rows`` (the service's list), keeping the selection where it can."""
        keep = self.selected()
        self._rows = list(rows)
        self.table.setSortingEnabled(False)  # rows land where they are put while filling
        self.table.clearSpans()
        self.table.setRowCount(0)
        self.table.setRowCount(len(rows))
        for i, r in enumerate(rows):
            self._fill_row(i, r)
        self.table.setSortingEnabled(True)
        # Names are the longest cells: as wide as they need, up to a point (the path is in the
        # tooltip and below the table).
        self.table.setColumnWidth(0, min(max(self.table.sizeHintForColumn(0), 160), 340))
        self.stack.setCurrentIndex(1 if rows else 0)
        self.action_bar.setVisible(bool(rows))
        self.detail.setVisible(bool(rows))
        if not rows:
            self.message.hide()
        if keep is not None:
            self.select(keep.path)
        self._update_buttons()

    def selected(self) -> LocalRow | None:
        indexes = self.table.selectionModel().selectedIndexes()
        if not indexes:
            return None
        item = self.table.item(indexes[0].row(), 0)
        path = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return next((r for r in self._rows if r.path == path), None)

    def select(self, path: str) -> bool:
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is not None and item.data(Qt.ItemDataRole.UserRole) == path:
                self.table.selectRow(row)
                return True
        return False

    def use_selected(self) -> None:
        r = self.selected()
        if r is not None and r.error is None:
            self._on_use(r.path)

    def show_in_folder(self) -> None:
        r = self.selected()
        if r is not None:
            self._open_url(QUrl.fromLocalFile(os.path.dirname(r.path)))

    def verify_selected(self) -> None:
        r = self.selected()
        if r is not None:
            self._set_message(f"Verifying {r.name}…", None)
            self._models.verify(r.path)

    def delete_selected(self) -> None:
        r = self.selected()
        if r is None or not r.own:
            return
        if self._confirm(self, "Delete the model?",
                         f"Delete {r.name} ({human_size(r.size)}) from this computer? It would "
                         "have to be downloaded again."):
            self._models.delete(r.path)

    def add_folder(self) -> None:
        folder = self._choose_folder(self)
        if folder:
            self._models.add_folder(folder)

    def change_models_dir(self) -> None:
        folder = self._choose_folder(self)
        if folder:
            self._models.set_models_dir(folder)

    def changeEvent(self, e: QEvent) -> None:
        super().changeEvent(e)
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and \
                hasattr(self, "table"):
            self.set_rows(self._rows)  # the fit colours were mixed from the old palette

    # ---- rows ----------------------------------------------------------------------------------

    def _fill_row(self, i: int, r: LocalRow) -> None:
        name = _Item(r.name)
        name.setData(Qt.ItemDataRole.UserRole, r.path)
        name.setToolTip(r.path)
        self.table.setItem(i, 0, name)
        size = _Item(human_size(r.size), r.size)
        size.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.table.setItem(i, 1, size)
        source = _Item(r.source)
        if r.own:
            source.setToolTip("In Hearth's models folder")
        else:
            source.setToolTip(f"Belongs to {r.source}: Hearth lists it but does not delete it")
        self.table.setItem(i, len(COLUMNS) - 1, source)
        if r.error is not None:
            # The header could not be read: the reason is what matters, in place of the facts.
            err = _Item(f"Cannot be used: {r.error}")
            err.setToolTip(r.error)
            err.setForeground(QBrush(text_color(self.palette(), _ERROR_HUE)))
            self.table.setItem(i, 2, err)
            for col in range(3, len(COLUMNS) - 1):
                self.table.setItem(i, col, _Item(""))
            self.table.setSpan(i, 2, 1, len(COLUMNS) - 3)
            return
        params = _Item(human_params(r.parameters) if r.parameters else "—", r.parameters or 0)
        ctx = _Item(human_tokens(r.context_length) if r.context_length else "—",
                    r.context_length or 0)
        for col, item in ((2, _Item(r.quantization or "—")), (3, _Item(r.architecture or "—")),
                          (4, params), (5, ctx)):
            self.table.setItem(i, col, item)
        v = r.verdict
        if isinstance(v, Verdict):
            fit = _Item(v.label(), v.fit.rank)
            fit.setToolTip(v.tooltip())
            fit.setForeground(QBrush(fit_color(self.palette(), v.fit)))
        else:
            fit = _Item("Not checked yet", 99)
            fit.setForeground(QBrush(self.palette().color(QPalette.ColorRole.PlaceholderText)))
        self.table.setItem(i, 6, fit)

    def _update_buttons(self) -> None:
        r = self.selected()
        usable = r is not None and r.error is None
        self.use_btn.setEnabled(usable)
        self.folder_btn.setEnabled(r is not None)
        self.verify_btn.setEnabled(r is not None)
        self.delete_btn.setEnabled(r is not None and r.own)
        if r is None:
            self.delete_btn.setToolTip("")
            self.detail.setText("")
        else:
            self.delete_btn.setToolTip(
                "Delete this model from Hearth's folder" if r.own else
                f"Only models in Hearth's own folder can be deleted here; this one belongs to "
                f"{r.source}.")
            self.detail.setText(r.path if r.error is None else f"{r.path}\n{r.error}")

    # ---- service signals -----------------------------------------------------------------------

    def _set_busy(self, busy: bool) -> None:
        self.busy.setVisible(busy)
        self.busy_label.setVisible(busy)
        self.rescan_btn.setEnabled(not busy)

    def _on_verified(self, path: str, ok: object, sentence: str) -> None:
        name = next((r.name for r in self._rows if r.path == path), os.path.basename(path))
        hue = _OK_HUE if ok is True else _ERROR_HUE if ok is False else _WARN_HUE
        self._set_message(f"{name}: {sentence}" if sentence else name, hue)

    def _on_failed(self, sentence: str) -> None:
        self._set_message(sentence, _ERROR_HUE)

    def _set_message(self, text: str, hue: str | None) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))
        set_text_color(self.message, text_color(self.palette(), hue) if hue else None)
