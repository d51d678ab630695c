"""The conversations sidebar: new chat, search, pinned first, rename, pin, export, delete.

Every change goes through the conversation service (app/services/storage.py), which answers on
the GUI thread; the list is asked for again whenever the service says the conversations changed,
with the current search text. Dialogs are injected so tests can answer them. When the list (or a
conversation) cannot be read, the sidebar says so above the list, where the empty list would
otherwise suggest there was nothing to read.

The list is a ``QListView`` over ``ConversationListModel`` (app/ui/conversation_list.py): the
model holds the rows the service answered, the view only shows them and reports clicks and Enter.

A new chat ends the search: clicking New chat clears it at once, and when a chat gets its row
(its first message is saved: whatever started it, the button, Ctrl+N, the menu) while a search
is on, the search is cleared too, so the new row is listed and selected, not hidden by a filter
its title may not match.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.library.conversations import ConversationSummary
from app.library.export import file_name
from app.services.protocols import ConversationsLike
from app.ui.common import ask, plain_label, set_text_color, text_color
from app.ui.conversation_list import ConversationListModel, Role

SEARCH_DELAY_MS = 200  # typing pauses this long before the search runs
ROLE_ID = Role.ID


AskText = Callable[[QWidget, str, str], str | None]  # (parent, label, current) -> text or None
AskPath = Callable[[QWidget, str, str], str | None]  # (parent, suggested name, filter) -> path


def _ask_text(parent: QWidget, label: str, current: str) -> str | None:
    text, ok = QInputDialog.getText(parent, "Rename conversation", label, text=current)
    return text if ok else None


def _ask_path(parent: QWidget, suggested: str, filter_: str) -> str | None:
    start = os.path.join(os.path.expanduser("~"), suggested)
    path, _ = QFileDialog.getSaveFileName(parent, "Export conversation", start, filter_)
    return path or None


class ConversationsSidebar(QWidget):
    open_requested = Signal(int)  # a conversation's id
    new_requested = Signal()
    deleted = Signal(int)  # a conversation's id, after the user confirmed
    exported = Signal(str)  # where an export was written

    def __init__(self, service: ConversationsLike, parent: QWidget | None = None, *,
                 ask_text: AskText = _ask_text, ask_path: AskPath = _ask_path,
                 confirm: Callable[[QWidget, str, str], bool] = ask) -> None:
        super().__init__(parent)
        self._service = service
        self._ask_text, self._ask_path, self._confirm = ask_text, ask_path, confirm
        self._current: int | None = None

        self.new_btn = QPushButton("New chat")
        self.new_btn.setToolTip("Start a new conversation (Ctrl+N)")
        self.new_btn.clicked.connect(self._on_new_clicked)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search conversations (Ctrl+K)")
        self.search.setAccessibleName("Search conversations")
        self.search.setClearButtonEnabled(True)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.refresh)
        self.search.textChanged.connect(lambda _t: self._search_timer.start())
        self.problem: QLabel = plain_label()  # why the list could not be read; hidden when it was
        self.problem.setAccessibleName("Conversations problem")
        set_text_color(self.problem, text_color(self.problem.palette(), "#d0342c"))
        self.problem.hide()
        self.model = ConversationListModel(self)  # the rows the service answered, no other copy
        self.list = QListView()
        self.list.setModel(self.model)
        self.list.setAccessibleName("Conversations")
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu_at)
        self.list.activated.connect(self._on_activated)
        self.list.clicked.connect(self._on_activated)
        self.list.setUniformItemSizes(True)
        QShortcut(QKeySequence(Qt.Key.Key_F2), self.list, self.rename_selected,
                  context=Qt.ShortcutContext.WidgetShortcut)
        QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.list, self.delete_selected,
                  context=Qt.ShortcutContext.WidgetShortcut)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.new_btn)
        layout.addWidget(self.search)
        layout.addWidget(self.problem)
        layout.addWidget(self.list, 1)
        self.setTabOrder(self.new_btn, self.search)
        self.setTabOrder(self.search, self.list)

        service.listed.connect(self._on_listed)
        service.changed.connect(self.refresh)
        service.exported.connect(self.exported.emit)
        # Not every ConversationsLike reports reads apart (app/services/protocols.py predates
        # it): the real service does, and a stand-in without it simply never shows a problem.
        read_failed = getattr(service, "read_failed", None)
        if read_failed is not None:
            read_failed.connect(self._on_read_failed)
        self.refresh()

    # ---- public --------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Ask for the list again (with the search text)."""
        self._service.list_conversations(self.search.text().strip())

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def set_current(self, conv_id: int | None) -> None:
        """Mark the conversation shown in the chat."""
        # From no conversation to one the list does not hold: the new chat's first message
        # made its row (a row picked from the list is current before the chat shows it).
        created = self._current is None and conv_id is not None and self._row(conv_id) is None
        self._current = conv_id
        if created and self.search.text().strip():
            self.clear_search()
        self._select_current()

    def clear_search(self) -> None:
        """Show every conversation again, now rather than after the typing pause."""
        if not self.search.text():
            return
        self.search.clear()
        self._search_timer.stop()
        self.refresh()

    def rows(self) -> list[ConversationSummary]:
        return self.model.summaries()

    def selected_id(self) -> int | None:
        value = self.list.currentIndex().data(ROLE_ID)
        return value if isinstance(value, int) else None

    def rename_selected(self) -> None:
        row = self._row(self.selected_id())
        if row is None:
            return
        title = self._ask_text(self, "New name:", row.title)
        if title is not None and title.strip() and title.strip() != row.title:
            self._service.rename(row.id, " ".join(title.split()))

    def toggle_pin_selected(self) -> None:
        row = self._row(self.selected_id())
        if row is not None:
            self._service.set_pinned(row.id, not row.pinned)

    def delete_selected(self) -> None:
        row = self._row(self.selected_id())
        if row is None:
            return
        if self._confirm(self, "Delete conversation",
                         f"Delete “{row.title}” and its {row.message_count} messages? "
                         f"This cannot be undone."):
            self._service.delete(row.id)
            self.deleted.emit(row.id)

    def export_selected(self, kind: str) -> None:
        """Write the selected conversation as "markdown" or "json" where the user chooses."""
        row = self._row(self.selected_id())
        if row is None:
            return
        suffix, filter_ = ((".json", "JSON (*.json)") if kind == "json"
                           else (".md", "Markdown (*.md)"))
        path = self._ask_path(self, file_name(row.title, suffix), filter_)
        if path:
            self._service.export(row.id, path, kind)

    # ---- inside --------------------------------------------------------------------------------

    def _on_new_clicked(self) -> None:
        self.clear_search()  # the person is done looking: the new chat goes on top of all
        self.new_requested.emit()

    def _row(self, conv_id: int | None) -> ConversationSummary | None:
        return self.model.summary(conv_id)

    def _on_read_failed(self, sentence: str) -> None:
        self.problem.setText(sentence)
        self.problem.show()

    def _on_listed(self, rows: list[ConversationSummary]) -> None:
        self.problem.hide()
        self.model.set_rows(rows, "No matches." if self.search.text().strip()
                            else "No conversations yet.")
        self._select_current()

    def _select_current(self) -> None:
        index = self.model.index_of(self._current) if self._current is not None \
            else QModelIndex()
        # An invalid index leaves no current row either: F2 and Delete act on nothing.
        self.list.setCurrentIndex(index)
        if not index.isValid():
            self.list.clearSelection()

    def _on_activated(self, index: QModelIndex) -> None:
        conv_id = index.data(ROLE_ID)
        if isinstance(conv_id, int) and conv_id != self._current:
            self._current = conv_id
            self.open_requested.emit(conv_id)

    def _menu_at(self, pos: QPoint) -> None:
        index = self.list.indexAt(pos)
        conv_id = index.data(ROLE_ID)
        if not isinstance(conv_id, int):
            return
        self.list.setCurrentIndex(index)
        row = self._row(conv_id)
        menu = QMenu(self)
        menu.addAction("Rename…", self.rename_selected)
        menu.addAction("Unpin" if row and row.pinned else "Pin to top", self.toggle_pin_selected)
        menu.addSeparator()
        menu.addAction("Export as Markdown…", lambda: self.export_selected("markdown"))
        menu.addAction("Export as JSON…", lambda: self.export_selected("json"))
        menu.addSeparator()
        menu.addAction("Delete…", self.delete_selected)
        menu.exec(self.list.viewport().mapToGlobal(pos))
