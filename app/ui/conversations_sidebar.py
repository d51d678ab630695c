"""The conversations sidebar: new chat, search, the pinned conversations first and the others
under the day they last changed, and per row pin, rename, export and delete (a pin and a "more"
button over the row under the mouse, or the current row while the list has the keyboard; the
same menu on a right click; F2 and Delete). With no conversation at all it says so, with a New
chat button, instead of showing an empty list.

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

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QKeySequence, QPainter, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QListView,
    QMenu,
    QStackedWidget,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from app.library.conversations import ConversationSummary
from app.library.export import file_name
from app.services.protocols import ConversationsLike
from app.ui.common import Confirm, ask
from app.ui.conversation_list import ConversationListModel, Role
from app.ui.lang import tr, ui_text
from app.ui.style.components import (
    Banner,
    EmptyState,
    heading,
    icon_button,
    tooltip_with_shortcut,
)
from app.ui.style.icons import icon
from app.ui.style.palette import roles
from app.ui.style.tokens import SPACING, TYPE

SEARCH_DELAY_MS = 200  # typing pauses this long before the search runs
ROLE_ID = Role.ID

_Index = QModelIndex | QPersistentModelIndex

AskText = Callable[[QWidget, str, str], str | None]  # (parent, label, current) -> text or None
AskPath = Callable[[QWidget, str, str], str | None]  # (parent, suggested name, filter) -> path


def _ask_text(parent: QWidget, label: str, current: str) -> str | None:
    text, ok = QInputDialog.getText(parent, tr("Rename conversation"), label, text=current)
    return text if ok else None


def _ask_path(parent: QWidget, suggested: str, filter_: str) -> str | None:
    start = os.path.join(os.path.expanduser("~"), suggested)
    path, _ = QFileDialog.getSaveFileName(parent, tr("Export conversation"), start, filter_)
    return path or None


class _RowDelegate(QStyledItemDelegate):
    """Rows with room to breathe, and the headings drawn as section headers (small, muted,
    bold, with space above) rather than as rows."""

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        size = super().sizeHint(option, index)
        metrics = QFontMetrics(option.font)
        if index.data(Role.IS_HEADER):
            return QSize(size.width(), metrics.height() + SPACING.lg + SPACING.xs)
        return QSize(size.width(), metrics.height() + 2 * SPACING.md)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        if not index.data(Role.IS_HEADER):
            super().paint(painter, option, index)
            return
        rect: QRect = option.rect
        font = QFont(option.font)
        if font.pointSizeF() > 0:
            font.setPointSizeF(TYPE.size(TYPE.caption, font.pointSizeF()))
        font.setWeight(QFont.Weight.DemiBold)
        painter.save()
        painter.setFont(font)
        painter.setPen(QColor(roles(option.palette).muted_text))
        painter.drawText(rect.adjusted(SPACING.sm, SPACING.lg, -SPACING.sm, -SPACING.xs),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom,
                         str(index.data() or ""))
        painter.restore()


class _RowActions(QWidget):
    """Pin and "more" over the right end of the row under the mouse (or the current row while
    the list has the keyboard): the actions are where the row is, not only in a right-click
    menu. Keyboard users have the same actions as F2, Delete and the menu key."""

    def __init__(self, sidebar: ConversationsSidebar) -> None:
        super().__init__(sidebar.list.viewport())
        self.setObjectName("sunken")  # the sheet's fill: the title under it does not show through
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._sidebar = sidebar
        self.conv_id: int | None = None
        self.pin = icon_button("pin", tr("Pin to top"))
        self.more = icon_button("more", tr("More actions"))
        row = QHBoxLayout(self)
        row.setContentsMargins(SPACING.xxs, 0, SPACING.xxs, 0)
        row.setSpacing(0)
        for button in (self.pin, self.more):
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the list keeps the keyboard
            button.setIconSize(QSize(16, 16))
            row.addWidget(button)
        self.pin.clicked.connect(self._on_pin)
        self.more.clicked.connect(self._on_more)
        self.hide()

    def show_for(self, index: QModelIndex) -> None:
        conv_id = index.data(ROLE_ID) if index.isValid() else None
        if not isinstance(conv_id, int):
            self.conv_id = None
            self.hide()
            return
        self.conv_id = conv_id
        pinned = bool(index.data(Role.PINNED))
        tip = tr("Unpin") if pinned else tr("Pin to top")
        self.pin.setIcon(icon("unpin" if pinned else "pin"))
        self.pin.setToolTip(tip)
        self.pin.setAccessibleName(tip)
        rect = self._sidebar.list.visualRect(index)
        self.adjustSize()
        height = min(self.sizeHint().height(), rect.height() - SPACING.xxs)
        self.setGeometry(rect.right() - self.sizeHint().width() - SPACING.xs,
                         rect.top() + (rect.height() - height) // 2,
                         self.sizeHint().width(), height)
        self.show()
        self.raise_()

    def _select(self) -> None:
        if self.conv_id is not None:
            self._sidebar.list.setCurrentIndex(self._sidebar.model.index_of(self.conv_id))

    def _on_pin(self) -> None:
        self._select()
        self._sidebar.toggle_pin_selected()

    def _on_more(self) -> None:
        self._select()
        self._sidebar.menu().exec(self.more.mapToGlobal(QPoint(0, self.more.height())))


class ConversationsSidebar(QWidget):
    open_requested = Signal(int)  # a conversation's id
    new_requested = Signal()
    deleted = Signal(int)  # a conversation's id, after the user confirmed
    exported = Signal(str)  # where an export was written

    def __init__(self, service: ConversationsLike, parent: QWidget | None = None, *,
                 ask_text: AskText = _ask_text, ask_path: AskPath = _ask_path,
                 confirm: Confirm = ask) -> None:
        super().__init__(parent)
        self._service = service
        self._ask_text, self._ask_path, self._confirm = ask_text, ask_path, confirm
        self._current: int | None = None

        self.title = heading(tr("Chats"), "subheading")
        self.new_btn = icon_button("new", tr("New chat"), tone="accent")
        # The shortcut is the window's (its menu holds it); the tooltip only says it.
        self.new_btn.setToolTip(tooltip_with_shortcut(tr("New chat"), "Ctrl+N"))
        self.new_btn.clicked.connect(self._on_new_clicked)
        self.search = QLineEdit()
        self.search.setPlaceholderText(tooltip_with_shortcut(tr("Search"), "Ctrl+K"))
        self.search.setAccessibleName(tr("Search conversations"))
        self.search.setToolTip(tooltip_with_shortcut(tr("Search titles and messages"), "Ctrl+K"))
        self.search.setClearButtonEnabled(True)
        self.search.addAction(icon("search", "muted"), QLineEdit.ActionPosition.LeadingPosition)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.refresh)
        self.search.textChanged.connect(lambda _t: self._search_timer.start())
        # Why the list could not be read; hidden when it was.
        self.problem = Banner(closable=False)
        self.model = ConversationListModel(self)  # the rows the service answered, no other copy
        self.list = QListView()
        self.list.setModel(self.model)
        self.list.setItemDelegate(_RowDelegate(self.list))
        self.list.setAccessibleName(tr("Conversations"))
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu_at)
        self.list.activated.connect(self._on_activated)
        self.list.clicked.connect(self._on_activated)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setMouseTracking(True)
        self.list.entered.connect(self._on_hover)
        self.list.viewport().installEventFilter(self)
        self.list.installEventFilter(self)
        self.actions_bar = _RowActions(self)
        QShortcut(QKeySequence(Qt.Key.Key_F2), self.list, self.rename_selected,
                  context=Qt.ShortcutContext.WidgetShortcut)
        QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.list, self.delete_selected,
                  context=Qt.ShortcutContext.WidgetShortcut)
        self.empty = EmptyState("chat", tr("No conversations yet"),
                                tr("Your chats are kept here, on this computer."),
                                tr("New chat"))
        self.empty.activated.connect(self._on_new_clicked)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.list)
        self.pages.addWidget(self.empty)

        top = QHBoxLayout()
        top.setContentsMargins(SPACING.xs, 0, 0, 0)
        top.addWidget(self.title, 1)
        top.addWidget(self.new_btn)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(SPACING.sm)
        layout.addLayout(top)
        layout.addWidget(self.search)
        layout.addWidget(self.problem)
        layout.addWidget(self.pages, 1)
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
        title = self._ask_text(self, tr("New name:"), row.title)
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
        if self._confirm(self, tr("Delete conversation"),
                         tr("Delete “{title}” and its %n message(s)? This cannot be undone.",
                            None, row.message_count).format(title=row.title or tr("Untitled")),
                         action=tr("Delete")):
            self._service.delete(row.id)
            self.deleted.emit(row.id)

    def export_selected(self, kind: str) -> None:
        """Write the selected conversation as "markdown" or "json" where the user chooses."""
        row = self._row(self.selected_id())
        if row is None:
            return
        suffix, filter_ = ((".json", tr("JSON (*.json)")) if kind == "json"
                           else (".md", tr("Markdown (*.md)")))
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
        self.problem.show_message(ui_text(sentence), "danger")
        self.pages.setCurrentWidget(self.list)  # not "no conversations": they could not be read

    def _on_listed(self, rows: list[ConversationSummary]) -> None:
        self.problem.hide()
        searching = bool(self.search.text().strip())
        self.actions_bar.hide()
        self.model.set_rows(rows, tr("No matches.") if searching
                            else tr("No conversations yet."))
        self.pages.setCurrentWidget(self.empty if not rows and not searching else self.list)
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

    def menu(self) -> QMenu:
        """The selected conversation's actions (the "more" button's and the right click's)."""
        row = self._row(self.selected_id())
        menu = QMenu(self)
        menu.addAction(icon("edit"), tr("Rename…"), self.rename_selected).setShortcut(
            QKeySequence(Qt.Key.Key_F2))
        pinned = row is not None and row.pinned
        menu.addAction(icon("unpin" if pinned else "pin"),
                       tr("Unpin") if pinned else tr("Pin to top"), self.toggle_pin_selected)
        menu.addSeparator()
        menu.addAction(icon("file"), tr("Export as Markdown…"),
                       lambda: self.export_selected("markdown"))
        menu.addAction(icon("file"), tr("Export as JSON…"), lambda: self.export_selected("json"))
        menu.addSeparator()
        menu.addAction(icon("delete", "danger"), tr("Delete…"), self.delete_selected).setShortcut(
            QKeySequence(QKeySequence.StandardKey.Delete))
        return menu

    def _menu_at(self, pos: QPoint) -> None:
        index = self.list.indexAt(pos)
        if not isinstance(index.data(ROLE_ID), int):
            return
        self.list.setCurrentIndex(index)
        self.menu().exec(self.list.viewport().mapToGlobal(pos))

    # ---- the row actions: on the row under the mouse, else the current one with the keyboard --

    def _on_hover(self, index: QModelIndex) -> None:
        self.actions_bar.show_for(index)

    def _rest_actions(self) -> None:
        """The mouse left the list: the actions go back to the current row, if the list has
        the keyboard, else away."""
        current = self.list.currentIndex()
        if self.list.hasFocus() and current.isValid():
            self.actions_bar.show_for(current)
        else:
            self.actions_bar.hide()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if watched is self.list.viewport() and kind == QEvent.Type.Leave:
            self._rest_actions()
        elif watched is self.list and kind == QEvent.Type.FocusIn \
                and self.list.currentIndex().isValid():
            self.actions_bar.show_for(self.list.currentIndex())
        elif watched is self.list and kind == QEvent.Type.FocusOut \
                and not self.list.viewport().underMouse():
            self.actions_bar.hide()
        elif watched is self.list and kind == QEvent.Type.KeyRelease:
            self.actions_bar.show_for(self.list.currentIndex())
        elif watched is self.list.viewport() and kind == QEvent.Type.Resize:
            self.actions_bar.hide()
        return super().eventFilter(watched, event)
