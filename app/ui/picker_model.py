"""The model picker's list as a Qt item model: the loaded model, the other models on this
computer, the servers' models, then "Open GGUF file…".

Each row is a :class:`PickerEntry` (made by app/ui/model_picker.py from the library and the
model in use). The closed picker (a combo box) reads a row's one-line label, its data (a model
path, a remote model's key, or None for "Open…" and separators) and its tooltip; the popup
(app/ui/picker_popup.py) reads the parts it lays out apart through :class:`PickerRole`: the
name, the detail line (size, quantization, where the file came from), the fit verdict and the
section the row is listed under.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from app.hub.verdict import Fit

# What QComboBox's delegate draws as a line between groups (as QComboBox.insertSeparator marks).
_SEPARATOR = "separator"

_Index = QModelIndex | QPersistentModelIndex


class Section:
    """The groups the popup lists rows under, in this order."""

    LOADED = "loaded"
    LOCAL = "local"
    REMOTE = "remote"
    OPEN = "open"  # "Open GGUF file…": the popup offers it at its foot instead


class PickerRole(IntEnum):
    """What a row answers besides its label. ``DATA`` is Qt's UserRole (what the combo box's
    ``itemData``/``findData`` read)."""

    DATA = Qt.ItemDataRole.UserRole
    NAME = Qt.ItemDataRole.UserRole + 1  # the model's name, told apart from its namesakes
    DETAIL = Qt.ItemDataRole.UserRole + 2  # "4.9 GB · Q4_K_M · from LM Studio"
    FIT = Qt.ItemDataRole.UserRole + 3  # a Fit, or None (not planned, remote, Open…)
    SECTION = Qt.ItemDataRole.UserRole + 4  # a Section value ("" for a separator)
    MARK = Qt.ItemDataRole.UserRole + 5  # "Loaded", "In use" or ""
    SEPARATOR = Qt.ItemDataRole.UserRole + 6  # bool


@dataclass(frozen=True)
class PickerEntry:
    """One row: ``data`` is the model file, the remote model's key, or None (Open…).

    ``label`` is the whole row in one line (the closed picker's text, and what a screen reader
    says); ``name``, ``detail``, ``fit`` and ``mark`` are its parts, for the popup's layout."""

    label: str
    data: str | None
    tooltip: str = ""
    separator: bool = False
    name: str = ""
    detail: str = ""
    fit: Fit | None = None
    section: str = ""
    mark: str = ""

    @staticmethod
    def line() -> PickerEntry:
        """A line between groups: not selectable, no text, no data."""
        return PickerEntry("", None, separator=True)


class PickerModel(QAbstractListModel):
    """The picker's rows; replaced whole by :meth:`set_entries` when anything they show
    changed (a few dozen rows at most)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._entries: list[PickerEntry] = []

    def set_entries(self, entries: list[PickerEntry]) -> None:
        self.beginResetModel()
        self._entries = list(entries)
        self.endResetModel()

    def entries(self) -> list[PickerEntry]:
        return list(self._entries)

    def entry(self, row: int) -> PickerEntry | None:
        return self._entries[row] if 0 <= row < len(self._entries) else None

    def find(self, data: str | None) -> int:
        """The row whose data is ``data`` (-1: none)."""
        return next((i for i, e in enumerate(self._entries)
                     if e.data == data and not e.separator), -1)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._entries)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        entry = self._entries[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole,
                    Qt.ItemDataRole.AccessibleTextRole):
            return entry.label
        if role == Qt.ItemDataRole.ToolTipRole:
            return entry.tooltip or None
        if role == Qt.ItemDataRole.AccessibleDescriptionRole and entry.separator:
            return _SEPARATOR
        by_role: dict[int, object] = {
            PickerRole.DATA: entry.data, PickerRole.NAME: entry.name or entry.label,
            PickerRole.DETAIL: entry.detail, PickerRole.FIT: entry.fit,
            PickerRole.SECTION: entry.section, PickerRole.MARK: entry.mark,
            PickerRole.SEPARATOR: entry.separator}
        return by_role.get(role)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if self._entries[index.row()].separator:
            return Qt.ItemFlag.NoItemFlags  # arrows and the mouse pass over it
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
