"""The welcome page's recommended models (app/ui/welcome.py): the curated cards that may fit
this computer, each with a Download button, the line above them, and Retry when offline.

The section keeps what the Hub said (each card's details and the verdicts of its files) and
shows which cards fit; the page owns the downloads its buttons start, and says through
``has_download`` which buttons are its to label. Offline is a normal first start: the cards
whose details never came say why instead of "Checking…" for ever, Retry asks again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QPushButton, QVBoxLayout, QWidget

from app.hub.recommended import Recommendation
from app.hub.types import RepoDetails
from app.hub.verdict import Verdict
from app.services.protocols import HubLike
from app.ui.common import plain_label, scrolling_column
from app.ui.lang import tr, ui_text
from app.ui.recommendation_card import RecommendationCard, show_fitting
from app.ui.style.components import Banner, ProgressRow, heading, repolish, set_tone
from app.ui.style.icons import icon
from app.ui.style.tokens import SPACING

# The English words of the buttons, for tests (the buttons show them translated).
DOWNLOAD = "Download"
RETRY = "Retry"


class MainActionButton(QPushButton):
    """A card's primary button (Download, Start chatting), drawn as a plain button while it is
    disabled: the sheet's disabled primary keeps its bold weight and muted text, so offline
    every card's Download read as an enabled button."""

    def __init__(self, text: str, icon_name: str) -> None:
        super().__init__(icon(icon_name, "on_accent"), text)
        self.setAccessibleName(text)
        self.setProperty("primary", True)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.EnabledChange \
                and bool(self.property("primary")) != self.isEnabled():
            self.setProperty("primary", self.isEnabled())
            repolish(self)


def first_sentence(line: str) -> str:
    """The cause without the advice: a card has room for why, the line above it says what to
    do ("Hugging Face cannot be reached (the connection was refused). Check the ..." gives the
    part before "Check")."""
    line = line.strip()
    m = re.match(r"(.+?[.!?])(?:\s|$)", line, re.DOTALL)
    return m.group(1) if m else line


class RecommendedSection(QWidget):
    """The recommended cards with their buttons, the line above them and, offline, a banner
    with why and Retry."""

    browse_requested = Signal(str)  # a card was clicked: its repository id, for Discover
    button_clicked = Signal(str)  # a card's Download / Start chatting button: its repo id

    def __init__(self, hub: HubLike, has_download: Callable[[str], bool],
                 parent: QWidget | None = None) -> None:
        """``has_download(repo_id)``: the page started a download of it, so its button says
        how that goes and this section leaves it alone."""
        super().__init__(parent)
        self._hub = hub
        self._has_download = has_download
        self.loaded = False  # whether a list arrived at all
        self._cards: dict[str, RecommendationCard] = {}
        self._buttons: dict[str, QPushButton] = {}
        self._progress: dict[str, ProgressRow] = {}
        self._verdicts: dict[tuple[str, str], Verdict | str] = {}
        self._details: dict[str, RepoDetails] = {}
        # Offline: the Hub's line while its last answer was "unreachable", the cards whose
        # details never came (repo id -> why, for the card), and a Retry still waiting.
        self._unreachable = ""
        self._unchecked: dict[str, str] = {}
        self._retrying = False

        self.status = plain_label(tr("Checking which models fit this computer…"),
                                  selectable=False)
        self.status.setObjectName("recommended_status")
        set_tone(self.status, "muted")
        # Offline: why, and Retry (a state while it lasts, so it has no close button).
        self.banner = Banner(closable=False)
        self.banner.setObjectName("recommended_banner")
        self.retry_btn = self.banner.action
        self.retry_btn.setText(tr("Retry"))
        self.retry_btn.setAccessibleName(tr("Retry"))
        self.retry_btn.setToolTip(tr("Ask Hugging Face again about the recommended models"))
        self.banner.action_clicked.connect(self._retry)
        self._cards_box = QWidget()
        scroll, self._cards_layout = scrolling_column(self._cards_box)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._cards_layout.setSpacing(SPACING.md)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(SPACING.sm)
        layout.addWidget(heading(tr("Recommended for this computer"), "subheading"))
        layout.addWidget(self.status)
        layout.addWidget(self.banner)
        layout.addWidget(scroll, 1)

        # Bound methods: Qt disconnects them when the section goes; the hub stays.
        hub.recommended.connect(self._on_recommended)
        hub.verdict.connect(self._on_verdict)
        hub.unreachable.connect(self._on_unreachable)

    # ---- public ----------------------------------------------------------------------------------

    def cards(self) -> list[RecommendationCard]:
        """The recommendation cards, in the hub's order (hidden ones included)."""
        return list(self._cards.values())

    def card(self, repo_id: str) -> RecommendationCard | None:
        return self._cards.get(repo_id)

    def button(self, repo_id: str) -> QPushButton | None:
        """The card's Download / Start chatting button."""
        return self._buttons.get(repo_id)

    def progress(self, repo_id: str) -> ProgressRow | None:
        """The card's progress row (hidden until the page shows a download in it)."""
        return self._progress.get(repo_id)

    def details(self, repo_id: str) -> RepoDetails | None:
        """What the Hub said of the card's repository (None: not yet, or offline)."""
        return self._details.get(repo_id)

    # ---- what the hub says -----------------------------------------------------------------------

    def _on_recommended(self, entries: list[Any]) -> None:
        self.loaded = True
        wanted: list[str] = []
        for rec, details, verdict in entries:
            if not isinstance(rec, Recommendation):
                continue
            wanted.append(rec.repo_id)
            card = self._cards.get(rec.repo_id) or self._make_card(rec)
            if details is not None:
                self._details[rec.repo_id] = details
                self._unchecked.pop(rec.repo_id, None)  # the Hub answered for it after all
            card.set_details(self._details.get(rec.repo_id))
            why = self._unchecked.get(rec.repo_id)
            if why is not None:  # the list came again, but this one is still not checked
                card.set_verdict(None, why)
                continue
            card.show_verdict(verdict if isinstance(verdict, Verdict) else None,
                              self._verdicts.get((rec.repo_id, card.group.name))
                              if card.group else None)
        for repo_id in [r for r in self._cards if r not in wanted]:
            self._drop_card(repo_id)
        if self._unreachable and all(r in self._details for r in self._cards):
            self._unreachable = ""  # every card got its details: the Hub is back
        # Keep the hub's order (the stretch stays last).
        for i, repo_id in enumerate(wanted):
            self._cards_layout.insertWidget(i, self._cards[repo_id])
        self._update()

    def _make_card(self, rec: Recommendation) -> RecommendationCard:
        card = RecommendationCard(rec)
        card.setToolTip("")
        card.setCursor(Qt.CursorShape.ArrowCursor)
        # A click on the card opens its page in Discover; the button downloads.
        card.activated.connect(self.browse_requested)
        button = MainActionButton(tr("Download"), "get")
        button.setAccessibleName(tr("Download {title}").format(title=rec.title))
        button.clicked.connect(lambda _c=False, r=rec.repo_id: self.button_clicked.emit(r))
        card.action_row.addWidget(button)
        # The download's progress, inline; the Downloads tab pauses and cancels it.
        progress = ProgressRow(rec.title)
        progress.title.hide()
        progress.cancel.hide()
        progress.hide()
        card.body.addWidget(progress)
        self._cards[rec.repo_id] = card
        self._buttons[rec.repo_id] = button
        self._progress[rec.repo_id] = progress
        return card

    def _drop_card(self, repo_id: str) -> None:
        card = self._cards.pop(repo_id)
        self._buttons.pop(repo_id, None)
        self._progress.pop(repo_id, None)
        self._unchecked.pop(repo_id, None)
        card.hide()
        card.setParent(None)
        card.deleteLater()

    def _on_verdict(self, repo_id: str, group_name: str, verdict: object) -> None:
        if not isinstance(verdict, Verdict | str):
            return
        self._verdicts[(repo_id, group_name)] = verdict
        card = self._cards.get(repo_id)
        if card is not None and card.take_verdict(group_name, verdict):
            self._update()

    def _on_unreachable(self, line: str) -> None:
        """The Hub could not be asked: the cards whose details never came say so and why,
        instead of "Checking…" (their Download stays off: there is nothing to fetch)."""
        self._unreachable = ui_text(line).strip() or tr(
            "Hugging Face cannot be reached. Check the connection and press Retry.")
        self._retrying = False
        why = first_sentence(self._unreachable)
        for repo_id, card in self._cards.items():
            if repo_id not in self._details:
                self._unchecked[repo_id] = why
                card.set_verdict(None, why)
        self._update()

    def _retry(self) -> None:
        self._unreachable = ""
        self._unchecked.clear()  # being checked again: "Checking…" until the Hub answers
        self._retrying = True
        self._update()
        # Not hub.retry(): that repeats the hub's last request, which need not be this list.
        self._hub.load_recommended()

    # ---- showing ---------------------------------------------------------------------------------

    def _update(self) -> None:
        """Which cards show (those that fit, or are still being checked), their buttons, the
        line above them and Retry."""
        shown, _ = show_fitting(self._cards.values())
        for repo_id, card in self._cards.items():
            button = self._buttons[repo_id]
            if not self._has_download(repo_id):
                button.setEnabled(card.group is not None and repo_id in self._details)
                why = self._unchecked.get(repo_id)
                button.setToolTip(tr("{why} It can be downloaded once Retry reaches Hugging "
                                     "Face.").format(why=why)
                                  if why and not button.isEnabled() else "")
        if self._retrying and all(r in self._details for r in self._cards):
            self._retrying = False  # the Hub answered for every card
        offline = bool(self._unreachable or self._unchecked)
        text, error = self._status_line(shown)
        if offline or self._retrying:
            # The banner says it (and holds Retry); the muted line would only repeat it.
            self.banner.show_message(text, "warning" if error else "info", tr("Retry"))
            self.retry_btn.setEnabled(offline and not self._retrying)
            self.status.hide()
        else:
            self.banner.hide()
            self.status.setText(text)
            self.status.show()

    def _status_line(self, shown: int) -> tuple[str, bool]:
        """The line above the cards, and whether it is an error."""
        if self._unreachable:
            # The hub's line names the cause and what to do; Retry is beside it.
            return self._unreachable, True
        if self._retrying and not any(r in self._details for r in self._cards):
            return tr("Asking Hugging Face again…"), False
        if not self._cards:
            return tr("No recommendations are available now. The Discover tab searches all of "
                      "Hugging Face."), False
        if shown == 0:
            return tr("None of the recommended models fits this computer. The Discover tab can "
                      "find smaller ones."), False
        if any(self._checking(r, c) for r, c in self._cards.items()):
            return tr("Models that run well here. Still checking some of them…"), False
        return tr("Models that run well on this computer. Pick one to download it."), False

    def _checking(self, repo_id: str, card: RecommendationCard) -> bool:
        """Whether the card still waits for its verdict (not one that could not be checked)."""
        if card.verdict is not None or repo_id in self._unchecked:
            return False
        known = self._verdicts.get((repo_id, card.group.name)) if card.group else None
        return not isinstance(known, str)
