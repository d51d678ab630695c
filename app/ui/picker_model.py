"""The model picker's list as a Qt item model: the models on this computer, the servers' models,
then "Open GGUF file…".

Each row is a :class:`PickerEntry` (made by app/ui/model_picker.py from the library and the
model in use); the combo box reads its text, its data (a model path, a remote model's key, or
None for "Open…" and separators), its tooltip and its colour from :class:`PickerModel`.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

OPEN_ITEM = "Open GGUF file…"

# What QComboBox's delegate draws as a line between groups (as QComboBox.insertSeparator marks).
_SEPARATOR = "separator"

_Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class PickerEntry:
    """One row: ``data`` is the model file, the remote model's key, or None (Open…)."""

    label: str
    data: str | None
    tooltip: str = ""
    color: QColor | None = None  # the verdict's colour (fits, tight, does not fit)
    separator: bool = False

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
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return entry.label
        if role == Qt.ItemDataRole.UserRole:
            return entry.data
        if role == Qt.ItemDataRole.ToolTipRole:
            return entry.tooltip or None
        if role == Qt.ItemDataRole.ForegroundRole:
            return entry.color
        if role == Qt.ItemDataRole.AccessibleDescriptionRole and entry.separator:
            return _SEPARATOR
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if self._entries[index.row()].separator:
            return Qt.ItemFlag.NoItemFlags  # arrows and the mouse pass over it
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
