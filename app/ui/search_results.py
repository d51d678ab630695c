"""The Hub's search results as a Qt item model, and the delegate that draws each in two lines.

A search answers in pages: the first page replaces the list (``set_results``), "Load more"
appends the next (``append``: rows inserted, so the selection and the scroll position stay).
Names come from the Hub and are not trusted: an item view shows its text as plain text, and
the delegate draws it with ``drawText``, which never reads markup either.
"""

from __future__ import annotations

import time
from enum import IntEnum

from PySide6.QtCore import QAbstractListModel, QObject, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from app.hub.types import RepoSummary
from app.ui.common import tone_color
from app.ui.lang import format_number, tr
from app.ui.model_index import ROOT, Index
from app.ui.style.tokens import SPACING


class Role(IntEnum):
    REPO_ID = Qt.ItemDataRole.UserRole  # str: "owner/name", what opening the result asks for
    SUMMARY = Qt.ItemDataRole.UserRole + 1  # the RepoSummary itself


def human_count(n: int) -> str:
    """A count for a narrow column: 950, 12.3k, 1.2M (the number and the short unit in the
    person's language: "12,3k", "1,2 Mio.")."""
    if n >= 1_000_000:
        return tr("{count}M", "millions, short").format(count=format_number(n / 1_000_000, ".1f"))
    if n >= 1_000:
        return tr("{count}k", "thousands, short").format(count=format_number(n / 1_000, ".1f"))
    return format_number(n, "")


def human_date(t: float | None) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(t)) if t else "—"


def result_text(r: RepoSummary) -> str:
    """A result's two lines: its name; its author and numbers."""
    facts = [r.author, f"↓ {human_count(r.downloads)}", f"♥ {human_count(r.likes)}"]
    if r.last_modified:
        facts.append(human_date(r.last_modified))
    if r.gated:
        facts.append(tr("gated"))
    return f"{r.name}\n{' · '.join(facts)}"


class SearchResultsModel(QAbstractListModel):
    """The repositories a search found so far, in the Hub's order."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._repos: list[RepoSummary] = []

    def set_results(self, repos: list[RepoSummary]) -> None:
        """A new search's first page (or none: ``[]`` empties the list)."""
        self.beginResetModel()
        self._repos = list(repos)
        self.endResetModel()

    def append(self, repos: list[RepoSummary]) -> None:
        """The next page of the same search, below the rows already listed."""
        if not repos:
            return
        first = len(self._repos)
        self.beginInsertRows(ROOT, first, first + len(repos) - 1)
        self._repos.extend(repos)
        self.endInsertRows()

    def repos(self) -> list[RepoSummary]:
        return list(self._repos)

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._repos)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._repos):
            return None
        r = self._repos[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return result_text(r)
        if role == Qt.ItemDataRole.ToolTipRole:
            return tr("{repo}\n{downloads} downloads · {likes} likes · updated {date}").format(
                repo=r.repo_id, downloads=format_number(r.downloads, ","),
                likes=format_number(r.likes, ","),
                date=human_date(r.last_modified))
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return result_text(r).replace("\n", ", ")
        if role == Role.REPO_ID:
            return r.repo_id
        if role == Role.SUMMARY:
            return r
        return None


class TwoLineDelegate(QStyledItemDelegate):
    """Draws a "name\nfacts" item as a rich row: a bold first line over a muted second one,
    with room around them (a plain item view would run the lines of neighbouring results
    together). The row's hover and selection are the stylesheet's."""

    PAD = SPACING.md

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        # initStyleOption turns "\n" into Unicode line separators.
        first, _, second = text.replace("\u2028", "\n").partition("\n")
        rect = opt.rect.adjusted(self.PAD + SPACING.xs, self.PAD, -self.PAD, -self.PAD)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        pal = opt.palette
        main = pal.color(QPalette.ColorRole.HighlightedText if selected
                         else QPalette.ColorRole.Text)
        muted = main if selected else tone_color("muted", pal)
        bold_font = QFont(opt.font)
        bold_font.setBold(True)
        painter.save()
        bold_metrics = QFontMetrics(bold_font)
        painter.setFont(bold_font)
        painter.setPen(main)
        painter.drawText(rect.x(), rect.y() + bold_metrics.ascent(),
                         bold_metrics.elidedText(first, Qt.TextElideMode.ElideMiddle, rect.width()))
        metrics = QFontMetrics(opt.font)
        painter.setFont(opt.font)
        painter.setPen(muted)
        painter.drawText(rect.x(), rect.y() + bold_metrics.height() + SPACING.xxs +
                         metrics.ascent(),
                         metrics.elidedText(second, Qt.TextElideMode.ElideRight, rect.width()))
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        bold_font = QFont(option.font)
        bold_font.setBold(True)
        height = QFontMetrics(bold_font).height() + SPACING.xxs + \
            QFontMetrics(option.font).height()
        return QSize(200, height + 2 * self.PAD)
