"""A curated model on the Discover and welcome pages: a card with its size and live verdict."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QVBoxLayout, QWidget

from app.hub.recommended import Recommendation, pick_group, worth_showing
from app.hub.types import FileGroup, RepoDetails
from app.hub.verdict import Verdict
from app.ui.common import fit_color, human_size, plain_label, set_text_color
from app.ui.repo_files import CHECKING


class RecommendationCard(QFrame):
    """One curated model: title, blurb, size and the live verdict; a click opens its page."""

    activated = Signal(str)  # repo id

    def __init__(self, rec: Recommendation, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rec = rec
        self.group: FileGroup | None = None
        self.verdict: Verdict | None = None
        self.setObjectName("recommendation")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setToolTip(f"Open {rec.repo_id}")
        self.title = plain_label(rec.title, selectable=False)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.size_label = plain_label("", muted=True, wrap=False, selectable=False)
        self.blurb = plain_label(rec.blurb, muted=True, selectable=False)
        self.verdict_label = plain_label(CHECKING, wrap=True, selectable=False)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.size_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.blurb)
        layout.addWidget(self.verdict_label)

    def set_details(self, details: RepoDetails | None) -> None:
        self.group = pick_group(details.groups, self.rec.quant) if details is not None else None
        size = self.group.size if self.group is not None else None
        quant = self.group.quant if self.group is not None and self.group.quant else self.rec.quant
        self.size_label.setText(f"{quant} · {human_size(size)}" if size is not None else quant)

    def show_verdict(self, verdict: Verdict | None, known: Verdict | str | None) -> None:
        """The verdict that came with the recommendation, else the one already known for its
        group; a known failure (a sentence) says why instead of "Checking…"."""
        if verdict is None and isinstance(known, str):
            self.set_verdict(None, known)
        else:
            self.set_verdict(verdict if verdict is not None
                             else known if isinstance(known, Verdict) else None)

    def set_verdict(self, verdict: Verdict | None, error: str = "") -> None:
        self.verdict = verdict
        if verdict is None:
            self.verdict_label.setText(f"Could not check: {error}" if error else CHECKING)
            self.verdict_label.setToolTip(error)
            set_text_color(self.verdict_label,
                           self.palette().color(QPalette.ColorRole.PlaceholderText))
            return
        self.verdict_label.setText(verdict.label())
        self.verdict_label.setToolTip(verdict.tooltip())
        set_text_color(self.verdict_label, fit_color(self.palette(), verdict.fit))

    def take_verdict(self, group_name: str, verdict: Verdict | str) -> bool:
        """Show ``verdict`` (or why there is none) if it is for the file this card offers;
        whether it was."""
        if self.group is None or self.group.name != group_name:
            return False
        if isinstance(verdict, Verdict):
            self.set_verdict(verdict)
        else:
            self.set_verdict(None, verdict)
        return True

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and \
                self.rect().contains(event.position().toPoint()):
            self.activated.emit(self.rec.repo_id)
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.activated.emit(self.rec.repo_id)
            return
        super().keyPressEvent(event)


def show_fitting(cards: Iterable[RecommendationCard]) -> tuple[int, bool]:
    """Show the cards worth showing (those that fit, or are still being checked); returns how
    many are shown and whether some are still being checked."""
    shown, checking = 0, False
    for card in cards:
        visible = worth_showing(card.verdict)
        card.setVisible(visible)
        shown += visible
        checking = checking or card.verdict is None
    return shown, checking
