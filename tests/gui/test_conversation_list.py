"""The sidebar's item model (app/ui/conversation_list.py): rows, headings (pinned, then by day),
roles, flags."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from datetime import date, datetime
from typing import Any

from PySide6.QtCore import Qt

from app.library.conversations import ConversationSummary
from app.ui.conversation_list import ConversationListModel, Role, When, when

TODAY = date(2026, 3, 12)


def at(day: int, hour: int = 12) -> float:
    """A moment in March 2026, local time (the groups are the person's days)."""
    return datetime(2026, 3, day, hour).timestamp()


def summary(id: int, title: str, *, pinned: bool = False, messages: int = 2,
            updated: float = 2.0) -> ConversationSummary:
    return ConversationSummary(id, title, "/m/model.gguf", 1.0, updated, pinned, messages)


def shown(model: ConversationListModel) -> list[str]:
    return [model.index(i, 0).data() for i in range(model.rowCount())]


def test_pinned_and_older_under_headings_with_their_roles(qtmodeltester: Any) -> None:
    model = ConversationListModel()
    model.set_rows([summary(7, "Gamma", pinned=True, messages=1), summary(3, "Beta", messages=3),
                    summary(1, "", messages=5)], "No conversations yet.", TODAY)
    qtmodeltester.check(model, force_py=True)
    assert shown(model) == ["Pinned", "Gamma", "Older", "Beta", "Untitled"]
    selectable = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled
    for row in (0, 2):  # the headings: bold, no conversation, not selectable
        heading = model.index(row, 0)
        assert heading.data(Role.IS_HEADER) is True
        assert heading.data(Qt.ItemDataRole.FontRole).bold()
        assert heading.data(Role.ID) is None and heading.data(Role.SUMMARY) is None
        assert heading.flags() == Qt.ItemFlag.NoItemFlags
    gamma, beta, untitled = model.index(1, 0), model.index(3, 0), model.index(4, 0)
    for index in (gamma, beta, untitled):
        assert index.data(Role.IS_HEADER) is False
        assert index.flags() & selectable == selectable
        assert index.data(Qt.ItemDataRole.FontRole) is None
    assert (gamma.data(Role.ID), gamma.data(Role.PINNED), gamma.data(Role.MESSAGE_COUNT)) == \
        (7, True, 1)
    assert (beta.data(Role.ID), beta.data(Role.PINNED), beta.data(Role.TITLE)) == (3, False, "Beta")
    assert beta.data(Qt.ItemDataRole.ToolTipRole) == "3 messages"
    assert gamma.data(Qt.ItemDataRole.ToolTipRole) == "1 message"
    # The title as stored stays empty; only the text shown says "Untitled".
    assert untitled.data(Role.TITLE) == "" and untitled.data(Role.ID) == 1
    assert untitled.data(Role.SUMMARY) == summary(1, "", messages=5)
    # Role.ID is Qt's UserRole: what the list widget kept the id under.
    assert beta.data(Qt.ItemDataRole.UserRole) == 3


def test_unpinned_rows_are_grouped_by_the_day_they_last_changed(qtmodeltester: Any) -> None:
    model = ConversationListModel()
    rows = [summary(9, "Pinned long ago", pinned=True, updated=at(1)),
            summary(6, "This morning", updated=at(12, 8)), summary(5, "Just after midnight",
                                                                   updated=at(12, 0)),
            summary(4, "Last night", updated=at(11, 23)), summary(3, "Monday", updated=at(9)),
            summary(2, "A week ago", updated=at(5)), summary(1, "Last month", updated=at(4))]
    model.set_rows(rows, "No conversations yet.", TODAY)
    qtmodeltester.check(model, force_py=True)
    assert shown(model) == ["Pinned", "Pinned long ago", "Today", "This morning",
                            "Just after midnight", "Yesterday", "Last night", "Previous 7 days",
                            "Monday", "A week ago", "Older", "Last month"]
    headings = [i for i in range(model.rowCount()) if model.index(i, 0).data(Role.IS_HEADER)]
    assert headings == [0, 2, 5, 7, 10]
    assert model.summaries() == rows
    # Without pinned rows the first heading is the newest day's.
    model.set_rows(rows[1:3], "", TODAY)
    assert shown(model) == ["Today", "This morning", "Just after midnight"]


def test_the_day_groups() -> None:
    assert when(at(12, 23), TODAY) is When.TODAY
    assert when(at(14), TODAY) is When.TODAY  # a clock set back: still the newest group
    assert when(at(11, 0), TODAY) is When.YESTERDAY
    assert when(at(10), TODAY) is When.WEEK and when(at(5), TODAY) is When.WEEK
    assert when(at(4, 23), TODAY) is When.OLDER


def test_empty_list_is_one_line_that_is_not_a_conversation() -> None:
    model = ConversationListModel()
    model.set_rows([], "No matches.")
    assert shown(model) == ["No matches."]
    line = model.index(0, 0)
    assert line.flags() == Qt.ItemFlag.NoItemFlags
    assert line.data(Role.ID) is None and line.data(Role.IS_HEADER) is False
    assert model.summaries() == []


def test_finding_a_row_and_a_new_list_replacing_the_old() -> None:
    model = ConversationListModel()
    model.set_rows([summary(7, "Gamma", pinned=True), summary(3, "Beta")], "", TODAY)
    assert model.index_of(3).row() == 3 and model.index_of(7).row() == 1
    assert not model.index_of(99).isValid()
    assert model.summary(3) == summary(3, "Beta") and model.summary(None) is None
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    model.set_rows([summary(3, "Beta")], "", TODAY)
    assert resets == [True] and shown(model) == ["Older", "Beta"]
    assert model.index_of(3).row() == 1 and model.summary(7) is None
