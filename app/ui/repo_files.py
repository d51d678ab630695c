"""A repository's files on the Discover page: which to download and whether each fits here.

``RepoFilesModel`` is a table of the repository's file groups (one row per download: a split
model's parts are one row) with their size and fit; the fit comes from the verdicts the hub
service sends, which the Discover tab keeps (they may arrive before or after the page), so the
model asks for them through ``verdict_of`` and is told when one arrived (``verdict_changed``:
``dataChanged`` for that one cell). ``FilesTable`` shows it with a Download button on each
model's row; the button is a real widget so Tab reaches it and a screen reader names it.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum

from PySide6.QtCore import QAbstractTableModel, QEvent, QObject, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from app.hub.types import FileGroup, FileKind, RepoDetails
from app.hub.verdict import Verdict
from app.ui.common import fit_color, human_size, tone_color
from app.ui.lang import format_number, tr, ui_text
from app.ui.model_index import ROOT, Index
from app.ui.style.icons import icon
from app.ui.style.tokens import RADII, SPACING

# The English words, for tests and other modules (each is shown translated).
CHECKING = "Checking…"
KIND_LABELS = {
    FileKind.MMPROJ: "Vision projector (not a chat model)",
    FileKind.IMATRIX: "Importance matrix (not a model)",
}


def kind_label(kind: FileKind) -> str:
    """What a file that is not a chat model is, in a few words."""
    if kind is FileKind.MMPROJ:
        return tr("Vision projector (not a chat model)")
    if kind is FileKind.IMATRIX:
        return tr("Importance matrix (not a model)")
    return tr("Not a model")


def kind_explained(kind: FileKind) -> str:
    """Why a file that is not a chat model cannot be chatted with."""
    if kind is FileKind.MMPROJ:
        return tr("A vision projector lets a model that understands images see them. It is "
                  "loaded beside that model and cannot be chatted with on its own.")
    if kind is FileKind.IMATRIX:
        return tr("Importance-matrix data is used when quantizing a model. It is not a model "
                  "and cannot be loaded.")
    return ""

# A verdict, or the sentence saying why there is none; None while it is being worked out.
VerdictOrWhy = Verdict | str
VerdictOf = Callable[[str, str], VerdictOrWhy | None]  # (repo id, group name) -> what is known


class Column(IntEnum):
    FILE = 0
    SIZE = 1
    FIT = 2
    ACTION = 3  # the Download button (an index widget); no text of its own


HEADERS = ("File", "Size", "On this computer", "")  # English, for tests


def _headers() -> tuple[str, ...]:
    return (tr("File"), tr("Size"), tr("On this computer"), "")
NAME_ROLE = Qt.ItemDataRole.UserRole  # on the File column: the group's full name
GROUP_ROLE = Qt.ItemDataRole.UserRole + 1  # on every column: the FileGroup


def fit_reasons(g: FileGroup, verdict: VerdictOrWhy | None) -> str:
    """The lines under the table for the selected file: why it fits, or why it cannot be told."""
    if g.kind is not FileKind.MODEL:
        return kind_explained(g.kind)
    if verdict is None:
        return tr("{name}: checking whether it fits this computer…").format(name=g.name)
    if isinstance(verdict, str):
        return tr("{name}: could not check whether it fits. {why}").format(
            name=g.name, why=ui_text(verdict))
    return tr("{name}: {verdict}\n{reasons}").format(
        name=g.name, verdict=ui_text(verdict.label()), reasons=ui_text(verdict.tooltip()))


class RepoFilesModel(QAbstractTableModel):
    """One repository's file groups, their sizes and their fit on this computer."""

    def __init__(self, verdict_of: VerdictOf, palette_of: Callable[[], QPalette],
                 parent: QObject | None = None) -> None:
        """``palette_of`` gives the palette the fit colours are mixed from, asked each time so
        a theme change needs only ``refresh_colors``."""
        super().__init__(parent)
        self._verdict_of = verdict_of
        self._palette_of = palette_of
        self._repo_id = ""
        self._groups: list[FileGroup] = []
        self._model_quants: list[str | None] = []

    # ---- filling -------------------------------------------------------------------------------

    def set_details(self, d: RepoDetails | None) -> None:
        """Show ``d``'s file groups (None: no repository, no rows)."""
        self.beginResetModel()
        self._repo_id = d.repo_id if d is not None else ""
        self._groups = list(d.groups) if d is not None else []
        self._model_quants = [g.quant for g in self._groups if g.kind is FileKind.MODEL]
        self.endResetModel()

    def verdict_changed(self, group_name: str) -> None:
        """A verdict for ``group_name`` arrived: its fit cell shows it."""
        for row, g in enumerate(self._groups):
            if g.name == group_name:
                index = self.index(row, Column.FIT)
                self.dataChanged.emit(index, index)

    def refresh_colors(self) -> None:
        """The palette changed: the fit colours are mixed again."""
        if self._groups:
            self.dataChanged.emit(self.index(0, Column.FIT),
                                  self.index(len(self._groups) - 1, Column.FIT),
                                  [Qt.ItemDataRole.ForegroundRole])

    # ---- reading -------------------------------------------------------------------------------

    def groups(self) -> list[FileGroup]:
        return list(self._groups)

    def group(self, row: int) -> FileGroup | None:
        return self._groups[row] if 0 <= row < len(self._groups) else None

    def row_of_quant(self, quant: str) -> int | None:
        """The first model row of quantization ``quant`` (any case)."""
        return next((row for row, g in enumerate(self._groups)
                     if g.kind is FileKind.MODEL and g.quant == quant.upper()), None)

    def verdict(self, g: FileGroup) -> VerdictOrWhy | None:
        return self._verdict_of(self._repo_id, g.name)

    # ---- QAbstractTableModel ---------------------------------------------------------------------

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._groups)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(HEADERS):
            return _headers()[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | \
            Qt.ItemFlag.ItemNeverHasChildren

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        g = self.group(index.row()) if index.isValid() else None
        if g is None:
            return None
        if role == GROUP_ROLE:
            return g
        column = index.column()
        if column == Column.FILE:
            return self._file_data(g, role)
        if column == Column.SIZE:
            return _size_data(g, role)
        if column == Column.FIT:
            return self._fit_data(g, role)
        return None

    # ---- inside --------------------------------------------------------------------------------

    def _identified_by_quant(self, g: FileGroup) -> bool:
        # The quantization is what tells the files of one repository apart, and the whole file
        # name would leave the verdict no room; the name is shown where the quant does not
        # identify the file (one quant twice, none read from the name, not a model).
        return g.kind is FileKind.MODEL and g.quant is not None and \
            self._model_quants.count(g.quant) == 1

    def _file_data(self, g: FileGroup, role: int) -> object:
        if role == Qt.ItemDataRole.DisplayRole:
            return g.quant if self._identified_by_quant(g) and g.quant else g.name
        if role == NAME_ROLE:
            return g.name
        if role == Qt.ItemDataRole.ToolTipRole:
            return "\n".join(f.path for f in g.files)
        if role == Qt.ItemDataRole.FontRole and self._identified_by_quant(g):
            font = QFont()
            font.setBold(True)
            return font
        return None

    def _fit_data(self, g: FileGroup, role: int) -> object:
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole,
                        Qt.ItemDataRole.ForegroundRole):
            return None
        text, tip, color = self._fit(g)
        if role == Qt.ItemDataRole.DisplayRole:
            return text
        return tip if role == Qt.ItemDataRole.ToolTipRole else color

    def _fit(self, g: FileGroup) -> tuple[str, str, QColor]:
        palette = self._palette_of()
        muted = tone_color("muted", palette)
        if g.kind is not FileKind.MODEL:
            return kind_label(g.kind), kind_explained(g.kind), muted
        verdict = self.verdict(g)
        if verdict is None:
            return tr("Checking…"), tr("Hearth is reading this file's header to plan it for "
                                       "this computer."), muted
        if isinstance(verdict, str):
            # A caution, not an error: the file may well fit; the reason is in the tooltip.
            return tr("Could not check"), ui_text(verdict), tone_color("warning", palette)
        return ui_text(verdict.label()), ui_text(verdict.tooltip()), \
            fit_color(palette, verdict.fit)


def _size_data(g: FileGroup, role: int) -> object:
    if role == Qt.ItemDataRole.DisplayRole:
        size = human_size(g.size) if g.size is not None else tr("size unknown")
        return tr("{size} · {parts} parts").format(size=size, parts=len(g.files)) if g.split \
            else size
    if role == Qt.ItemDataRole.TextAlignmentRole:
        return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
    if role == Qt.ItemDataRole.ToolTipRole and g.size is not None:
        return tr("{count} bytes").format(count=format_number(g.size, ","))
    return None


class ChipDelegate(QStyledItemDelegate):
    """Draws a fit cell as a chip: its words in a rounded outline of its tone (the model's
    ForegroundRole), like the verdict chips elsewhere; words always, colour as a second sign."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text, opt.text = opt.text, ""
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        if not text:
            return
        color = index.data(Qt.ItemDataRole.ForegroundRole)
        if not isinstance(color, QColor):
            color = opt.palette.color(QPalette.ColorRole.Text)
        if opt.state & QStyle.StateFlag.State_Selected:
            color = opt.palette.color(QPalette.ColorRole.HighlightedText)
        font = QFont(opt.font)
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 0.85)  # the caption step of the type scale
        metrics = QFontMetrics(font)
        pad = SPACING.sm
        room = opt.rect.width() - 2 * pad - 2 * SPACING.xs
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, max(room, 0))
        width = metrics.horizontalAdvance(shown) + 2 * pad
        height = metrics.height() + SPACING.xxs * 2
        chip = QRectF(opt.rect.x() + SPACING.xs, opt.rect.center().y() - height / 2 + 0.5,
                      width, height)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(color)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(chip, RADII.sm, RADII.sm)
        painter.setFont(font)
        painter.drawText(chip, Qt.AlignmentFlag.AlignCenter, shown)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        hint = super().sizeHint(option, index)
        return QSize(hint.width() + 2 * SPACING.sm + SPACING.xs, hint.height())


class FilesTable(QTableView):
    """The files of the repository on show, one row per download, a Download button on each
    model's row."""

    download_requested = Signal(FileGroup)

    def __init__(self, verdict_of: VerdictOf, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.files_model = RepoFilesModel(verdict_of, self.palette, self)
        self.setModel(self.files_model)
        self.setObjectName("files")
        self.verticalHeader().hide()
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.setShowGrid(False)
        self.setItemDelegateForColumn(Column.FIT, ChipDelegate(self))
        # Rows with room: a button in each, and a chip.
        self.verticalHeader().setDefaultSectionSize(
            QFontMetrics(self.font()).height() + 2 * SPACING.lg)
        header = self.horizontalHeader()
        header.setHighlightSections(False)
        header.setSectionResizeMode(Column.FILE, QHeaderView.ResizeMode.Stretch)
        for column in (Column.SIZE, Column.FIT, Column.ACTION):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        # A reset drops the old buttons (the view deletes its index widgets): make the new ones.
        self.files_model.modelReset.connect(self._add_buttons)

    def current_group(self) -> FileGroup | None:
        """The file group of the current row, if any."""
        return self.files_model.group(self.currentIndex().row())

    def changeEvent(self, e: QEvent) -> None:
        super().changeEvent(e)
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and \
                hasattr(self, "files_model"):
            self.files_model.refresh_colors()  # the fit colours were mixed from the old palette

    def _add_buttons(self) -> None:
        for row, g in enumerate(self.files_model.groups()):
            if g.kind is FileKind.MODEL:
                button = QPushButton(tr("Download"))
                button.setIcon(icon("get"))
                button.setProperty("flat", True)
                button.setAccessibleName(tr("Download {name}").format(name=g.name))
                button.setToolTip(tr("Download {name}").format(name=g.name))
                button.clicked.connect(lambda _c=False, group=g:
                                       self.download_requested.emit(group))
                self.setIndexWidget(self.files_model.index(row, Column.ACTION), button)
