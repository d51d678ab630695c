"""A curated model on the Discover and welcome pages: a card with its title, a line about it, its
quantization and size at a glance, and the live verdict as a chip (words and a tone).

The card names what it is and the stylesheet draws it (app/ui/style): no colours of its own. A
verdict that could not be worked out (offline, a header that could not be read) is a short
warning chip, "Could not check", with the reason in its tooltip: offline, every card would
otherwise repeat the page's banner sentence.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QWidget

from app.hub.recommended import Recommendation, pick_group, worth_showing
from app.hub.types import FileGroup, RepoDetails
from app.hub.verdict import Verdict
from app.ui.common import FIT_TONES, human_size, plain_label
from app.ui.lang import tr, ui_text
from app.ui.style.components import Card, chip, heading, repolish, set_tone
from app.ui.style.tokens import SPACING


def error_text(exc: BaseException) -> str:
    """An error's sentence in the window's language (a Hub or download error carries an
    ``app.i18n.Text`` as its first argument)."""
    first = exc.args[0] if exc.args else None
    return ui_text(first) if isinstance(first, str) else str(exc)


def show_verdict_on(label: QLabel, verdict: Verdict | None, error: str = "") -> None:
    """``verdict`` on ``label`` as a chip in its fit's tone; none yet: a muted "Checking…"
    chip; ``error`` (why there is none): a warning chip "Could not check" whose tooltip and
    accessible name say why ("Could not check: ...")."""
    if verdict is not None:
        text, tip, tone = ui_text(verdict.label()), ui_text(verdict.tooltip()), \
            FIT_TONES[verdict.fit]
        name = text
    elif error:
        text, tone = tr("Could not check"), "warning"
        tip = name = tr("Could not check: {why}").format(why=ui_text(error))
    else:
        text, tip, tone = tr("Checking…"), "", "muted"
        name = text
    label.setText(text)
    label.setToolTip(tip)
    label.setAccessibleName(name)
    label.setWordWrap(False)
    label.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)
    if label.property("chip") != tone:
        label.setProperty("chip", tone)
        repolish(label)
    label.setIndent(-1)  # a framed label indents its text otherwise
    set_tone(label, "")


class RecommendationCard(Card):
    """One curated model: title, blurb, size and the live verdict; a click opens its page.

    ``action_row`` is the card's bottom row, right of its verdict: the welcome page puts its
    Download button there."""

    activated = Signal(str)  # repo id

    def __init__(self, rec: Recommendation, parent: QWidget | None = None) -> None:
        super().__init__(parent, spacing=SPACING.sm)
        self.rec = rec
        self.group: FileGroup | None = None
        self.verdict: Verdict | None = None
        self.setObjectName("recommendation")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setToolTip(tr("Open {repo}").format(repo=rec.repo_id))
        self.setAccessibleName(rec.title)
        # The title is a model's name, shown as written; the blurb is a curated sentence in
        # the catalog (app/hub/recommended_words.py).
        self.title = heading(rec.title, "subheading")
        self.title.setWordWrap(True)
        self.blurb = plain_label(ui_text(rec.blurb), wrap=True, selectable=False)
        set_tone(self.blurb, "muted")
        self.size_label = chip("", "muted")
        self.size_label.setToolTip(tr("Quantization and download size"))
        self.verdict_label = QLabel()
        self.verdict_label.setTextFormat(Qt.TextFormat.PlainText)
        show_verdict_on(self.verdict_label, None)
        top = QHBoxLayout()
        top.setSpacing(SPACING.md)
        top.addWidget(self.title, 1)
        top.addWidget(self.size_label, 0, Qt.AlignmentFlag.AlignTop)
        # The verdict has a row of its own: a chip with the context size is long.
        self.action_row = QHBoxLayout()
        self.action_row.setSpacing(SPACING.md)
        self.action_row.addWidget(self.verdict_label, 0, Qt.AlignmentFlag.AlignVCenter)
        self.action_row.addStretch(1)
        self.body.addLayout(top)
        self.body.addWidget(self.blurb)
        self.body.addLayout(self.action_row)

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
        show_verdict_on(self.verdict_label, verdict, error)

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
