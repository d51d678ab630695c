"""The lists that grow are item models shown in views, not item widgets (issue 26; the sizes of
the window's pieces are tests/unit/test_ui_sizes.py). Read from the source: no display needed."""

from __future__ import annotations

import ast
from pathlib import Path

UI = Path(__file__).resolve().parents[2] / "app" / "ui"
# The lists that grow without bound, by the modules that show them, and the item model each
# must use (a class of that module or one it imports).
GROWING_LISTS = {
    "conversations": ("conversations_sidebar.py", "ConversationListModel"),
    "the picker's models": ("model_picker.py", "PickerModel"),
    "downloads": ("downloads_view.py", "DownloadListModel"),
    "search results": ("discover.py", "SearchResultsModel"),
}
ITEM_WIDGETS = {"QListWidget", "QTableWidget", "QTreeWidget"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _names(tree: ast.Module) -> set[str]:
    """Every name and attribute a module mentions, imported names included."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.name for alias in node.names)
    return names


def test_the_growing_lists_are_item_models_in_views() -> None:
    for what, (module, model) in GROWING_LISTS.items():
        names = _names(_tree(UI / module))
        assert not names & ITEM_WIDGETS, f"{what}: {module} uses {names & ITEM_WIDGETS}"
        assert model in names, f"{what}: {module} does not use {model}"
        defined = [p for p in UI.rglob("*.py") for node in ast.walk(_tree(p))
                   if isinstance(node, ast.ClassDef) and node.name == model]
        assert len(defined) == 1, f"{model} is defined {len(defined)} times"
        bases = {ast.unparse(b) for node in ast.walk(_tree(defined[0]))
                 if isinstance(node, ast.ClassDef) and node.name == model for b in node.bases}
        assert bases & {"QAbstractListModel", "QAbstractTableModel", "QAbstractItemModel"}, \
            f"{model} is not an item model ({bases})"
