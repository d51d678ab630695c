"""What the item models of app/ui share: the index type Qt hands them and the root index."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex

# Qt calls a model's rowCount, data and flags with either kind of index.
Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()  # the invisible parent of a list's or a table's rows


def plain(index: Index) -> QModelIndex:
    """``index`` as a QModelIndex (what signals such as sizeHintChanged take)."""
    if isinstance(index, QModelIndex):
        return index
    model = index.model()
    return model.index(index.row(), index.column(), index.parent()) if model is not None \
        else QModelIndex()
