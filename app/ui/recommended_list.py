"""The Discover tab's recommended list: curated models, shown while they may fit this computer.

Each entry is a RecommendationCard whose verdict arrives with the list or later, one by one
(the verdicts are kept by the Discover tab, which also shows them on repository pages, and read
through ``verdict_of``). A card whose model does not fit is hidden; the line above the cards
says what the list holds. Offline, the cards whose details never came say why instead of
"Checking…" for ever, until the Hub answers for them.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.hub.recommended import Recommendation
from app.hub.types import RepoDetails
from app.hub.verdict import Verdict
from app.ui.common import plain_label, scrolling_column
from app.ui.lang import tr
from app.ui.recommendation_card import RecommendationCard, show_fitting
from app.ui.repo_files import VerdictOf, VerdictOrWhy
from app.ui.style.components import heading, set_tone
from app.ui.style.tokens import SPACING

# What the hub service's ``recommended`` signal carries, one per curated model.
Entry = tuple[Recommendation, RepoDetails | None, Verdict | None]


class RecommendedList(QWidget):
    """The recommended cards and the line that sums them up."""

    open_requested = Signal(str, str)  # (repo id, quant to select) when a card is activated

    def __init__(self, verdict_of: VerdictOf, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._verdict_of = verdict_of
        self.cards: dict[str, RecommendationCard] = {}
        # Offline: the cards whose details the Hub could not give, with why; an answer with
        # the details takes a card off.
        self._unchecked: dict[str, str] = {}
        self._with_details: set[str] = set()  # the cards whose details the Hub gave
        self.loaded = False  # whether a list arrived at all

        title = heading(tr("Recommended for this computer"), "subheading")
        title.setWordWrap(True)
        self.status = plain_label(tr("Checking which models fit this computer…"))
        set_tone(self.status, "muted")
        self._box = QWidget()
        scroll, self._column = scrolling_column(self._box)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._column.setSpacing(SPACING.md)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(SPACING.xs)
        layout.addWidget(title)
        layout.addWidget(self.status)
        layout.addWidget(scroll, 1)

    # ---- what the hub says -----------------------------------------------------------------------

    def set_entries(self, entries: list[Entry]) -> None:
        """A new list: its cards replace the old ones."""
        self.loaded = True
        for card in self.cards.values():
            card.hide()  # deleteLater acts later; until then it would still be painted
            card.setParent(None)
            card.deleteLater()
        self.cards.clear()
        self._with_details.clear()
        for rec, details, verdict in entries:
            card = RecommendationCard(rec)
            card.set_details(details)
            if details is not None:
                self._unchecked.pop(rec.repo_id, None)  # the Hub answered for it after all
                self._with_details.add(rec.repo_id)
            why = self._unchecked.get(rec.repo_id)
            if why is not None:  # the list came again, but this one is still not checked
                card.set_verdict(None, why)
            else:
                card.show_verdict(verdict, self._verdict_of(rec.repo_id, card.group.name)
                                  if card.group else None)
            card.activated.connect(lambda repo, quant=rec.quant:
                                   self.open_requested.emit(repo, quant))
            self._column.insertWidget(self._column.count() - 1, card)
            self.cards[rec.repo_id] = card
        wanted = {rec.repo_id for rec, _d, _v in entries}
        for repo_id in [r for r in self._unchecked if r not in wanted]:
            del self._unchecked[repo_id]
        self._update()

    def on_verdict(self, repo_id: str, group_name: str, verdict: VerdictOrWhy) -> None:
        card = self.cards.get(repo_id)
        if card is not None and card.take_verdict(group_name, verdict):
            self._update()

    def mark_unreachable(self, why: str) -> None:
        """The Hub cannot be reached: the cards whose details never came say so and why."""
        for repo_id, card in self.cards.items():
            if repo_id not in self._with_details:
                self._unchecked[repo_id] = why
                card.set_verdict(None, why)
        self._update()

    # ---- checking again --------------------------------------------------------------------------

    def has_unchecked(self) -> bool:
        """Whether some cards could not be checked (offline): Retry asks for the list again."""
        return bool(self._unchecked)

    def check_again(self) -> None:
        """"Checking…" on the cards without a verdict, until the Hub answers."""
        self._unchecked.clear()
        for card in self.cards.values():
            if card.verdict is None:
                card.set_verdict(None)
        self._update()

    # ---- inside --------------------------------------------------------------------------------

    def _update(self) -> None:
        shown, _ = show_fitting(self.cards.values())
        checking = any(self._checking(r, c) for r, c in self.cards.items())
        if not self.cards:
            text = tr("No recommendations are available. Search for a model above.")
        elif shown == 0:
            text = tr("None of the recommended models fits this computer. Search for a smaller "
                      "model above.")
        elif checking:
            text = tr("Curated models that run well here. Still checking some of them…")
        elif self._unchecked:
            text = tr("Curated models. Some could not be checked against this computer; Retry "
                      "checks them again.")
        else:
            text = tr("Curated models that run well on this computer.")
        self.status.setText(text)

    def _checking(self, repo_id: str, card: RecommendationCard) -> bool:
        """Whether the card still waits for its verdict (not one that could not be checked)."""
        if card.verdict is not None or repo_id in self._unchecked:
            return False
        known = self._verdict_of(repo_id, card.group.name) if card.group else None
        return not isinstance(known, str)
