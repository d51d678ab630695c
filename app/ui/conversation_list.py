"""The conversations the sidebar lists, as a Qt item model.

The conversation service answers with the whole list (searched, pinned first); this model turns
it into the rows a ``QListView`` shows: the pinned ones under "Pinned", the others under the day
they last changed ("Today", "Yesterday", "Previous 7 days", "Older"), one row per conversation, or
one line saying the list is empty. Headings and the empty line are rows too (a view lays them out
like the others) but carry no conversation and cannot be selected, so the keyboard skips them and
F2 or Delete never act on one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from enum import Enum, IntEnum

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, Qt
from PySide6.QtGui import QFont

from app.library.conversations import ConversationSummary
from app.ui.lang import tr
from app.ui.model_index import ROOT, Index


class When(Enum):
    """The groups of unpinned conversations, newest first, by the day they last changed."""

    TODAY = "today"
    YESTERDAY = "yesterday"
    WEEK = "week"  # the 7 days before yesterday
    OLDER = "older"


def when(updated: float, today: date) -> When:
    """The group of a conversation last changed at ``updated`` (seconds since the epoch, read
    as local time) on ``today``. Pure: the caller says which day it is."""
    day = datetime.fromtimestamp(updated).date()
    if day >= today:
        return When.TODAY  # today, or a clock set back: never "Older" for the newest
    if day == today - timedelta(days=1):
        return When.YESTERDAY
    if day >= today - timedelta(days=7):
        return When.WEEK
    return When.OLDER


def group_title(group: When | None) -> str:
    """A heading's words (None: the pinned conversations)."""
    if group is None:
        return tr("Pinned")
    return {When.TODAY: tr("Today"), When.YESTERDAY: tr("Yesterday"),
            When.WEEK: tr("Previous 7 days"), When.OLDER: tr("Older")}[group]


class Role(IntEnum):
    """What a row answers besides its text. ``ID`` is Qt's UserRole: what the list widget kept
    a conversation's id under, so a view or test asking for UserRole still finds it."""

    ID = Qt.ItemDataRole.UserRole  # int, or None for a heading or the empty line
    TITLE = Qt.ItemDataRole.UserRole + 1  # the stored title ("" for an untitled one)
    IS_HEADER = Qt.ItemDataRole.UserRole + 2  # bool: a "Pinned"/"Today"/… heading
    PINNED = Qt.ItemDataRole.UserRole + 3  # bool
    MESSAGE_COUNT = Qt.ItemDataRole.UserRole + 4  # int
    SUMMARY = Qt.ItemDataRole.UserRole + 5  # the ConversationSummary itself


@dataclass(frozen=True)
class _Line:
    """One row of the list: a conversation, or a heading or the empty line (``summary`` None)."""

    text: str
    summary: ConversationSummary | None = None
    header: bool = False


class ConversationListModel(QAbstractListModel):
    """The listed conversations with their headings; ``set_rows`` replaces them all."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lines: list[_Line] = []
        self._rows: list[ConversationSummary] = []
        self._bold = QFont()
        self._bold.setBold(True)

    # ---- filling -------------------------------------------------------------------------------

    def set_rows(self, rows: list[ConversationSummary], empty_text: str,
                 today: date | None = None) -> None:
        """Show ``rows`` (pinned ones first, as the service orders them) under their headings
        (``today``: the day the groups count from, the clock's by default); ``empty_text`` is
        the line shown when there are none ("No matches." while searching)."""
        self.beginResetModel()
        self._rows = list(rows)
        self._lines = _lines(self._rows, empty_text,
                             today or datetime.fromtimestamp(time.time()).date())
        self.endResetModel()

    # ---- reading -------------------------------------------------------------------------------

    def summaries(self) -> list[ConversationSummary]:
        """The conversations listed, without headings."""
        return list(self._rows)

    def summary(self, conv_id: int | None) -> ConversationSummary | None:
        return next((r for r in self._rows if r.id == conv_id), None)

    def index_of(self, conv_id: int) -> QModelIndex:
        """The row of conversation ``conv_id``; an invalid index when it is not listed."""
        for row, line in enumerate(self._lines):
            if line.summary is not None and line.summary.id == conv_id:
                return self.index(row, 0)
        return QModelIndex()

    # ---- QAbstractListModel ----------------------------------------------------------------------

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._lines)

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid() or self._lines[index.row()].summary is None:
            return Qt.ItemFlag.NoItemFlags  # a heading or the empty line, not a conversation
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | \
            Qt.ItemFlag.ItemNeverHasChildren

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._lines):
            return None
        line = self._lines[index.row()]
        s = line.summary
        if role == Qt.ItemDataRole.DisplayRole:
            return line.text  # plain text: a title is the user's first message, as typed
        if role == Qt.ItemDataRole.FontRole:
            return QFont(self._bold) if line.header else None
        if role == Role.IS_HEADER:
            return line.header
        if s is None:
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            return tr("%n message(s)", None, s.message_count)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return line.text
        by_role: dict[int, object] = {Role.ID: s.id, Role.TITLE: s.title, Role.PINNED: s.pinned,
                                      Role.MESSAGE_COUNT: s.message_count, Role.SUMMARY: s}
        return by_role.get(role)


def _lines(rows: list[ConversationSummary], empty_text: str, today: date) -> list[_Line]:
    if not rows:
        return [_Line(empty_text)]
    lines: list[_Line] = []
    heading: object = ()  # the group of the last heading written (() before the first)
    for r in rows:
        group = None if r.pinned else when(r.updated, today)
        if group != heading:
            lines.append(_Line(group_title(group), header=True))
            heading = group
        lines.append(_Line(r.title or tr("Untitled"), r))
    return lines
