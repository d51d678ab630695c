"""The first-run page: a short welcome, what this computer has, and the recommended models that
fit it, each one click from downloading and then chatting.

Shown until the settings say ``first_run_done``; the window decides that and listens to the
page's signals (:attr:`WelcomePage.chat_requested`, :attr:`WelcomePage.done`, ...). The page
talks only to protocols (hub, downloads, hardware), reuses the Discover tab's recommendation
cards and the hub's verdicts, and shows every text from the Hub as plain text.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QPalette, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.hardware.report import HardwareReport
from app.hub.recommended import Recommendation
from app.hub.types import FileGroup, HubError, RepoDetails
from app.hub.verdict import Verdict
from app.services.protocols import DownloadRow, DownloadsLike, HardwareLike, HubLike
from app.ui.common import heading_label, plain_label, scrolling_column, set_text_color, text_color
from app.ui.discover import RecommendationCard, show_fitting
from app.ui.hardware_panel import human_bytes
from app.ui.icon import app_icon

log = logging.getLogger(__name__)

_ERROR_HUE = "#d0342c"
DOWNLOAD = "Download"


def hardware_summary(r: HardwareReport) -> str:
    """One line about the machine for people: CPU, memory, the GPUs and their memory (alike
    GPUs counted once: "2 × RTX 3090 (24.0 GiB each)")."""
    parts = [f"{r.cpu.model} ({r.cpu.physical_cores} cores)",
             f"{human_bytes(r.memory.total)} of RAM"]
    alike = Counter((g.name, g.total, g.unified) for g in r.gpus)
    for (name, total, unified), n in alike.items():
        memory = human_bytes(total) + (" each" if n > 1 else "") + \
            (", shared with the system" if unified else "")
        parts.append(f"{n} × {name} ({memory})" if n > 1 else f"{name} ({memory})")
    if not r.gpus:
        parts.append("no GPU: models run on the CPU")
    return " · ".join(parts)


@dataclass
class _Download:
    """A download started from this page."""

    repo_id: str
    group: FileGroup
    state: str = "downloading"  # downloading | failed | done
    path: str = ""  # the model file, once done

    def is_file(self, path: str) -> bool:
        """Whether ``path`` (what the queue reports when done) is this download's model: the
        queue puts the Hub's relative path under the repository's folder."""
        return PurePosixPath(path.replace("\\", "/")).as_posix().endswith(
            f"/{self.group.first.path}")


class WelcomePage(QWidget):
    """Welcome, this computer, and the models to start with."""

    queued = Signal(str)  # a download id, after the queue took it (the window may show it)
    chat_requested = Signal(str)  # the downloaded model's path: load it and start chatting
    browse_requested = Signal(str)  # a repository id to open in the Discover tab
    done = Signal()  # the user is finished with the page: set first_run_done, show the chat

    def __init__(self, hub: HubLike, downloads: DownloadsLike, hardware: HardwareLike,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._hub = hub
        self._downloads = downloads
        self._hardware = hardware
        self._shown_once = False
        self._recommended_loaded = False
        self._cards: dict[str, RecommendationCard] = {}
        self._buttons: dict[str, QPushButton] = {}
        self._verdicts: dict[tuple[str, str], Verdict | str] = {}
        self._details: dict[str, RepoDetails] = {}
        self._downloads_by_id: dict[str, _Download] = {}

        logo = QLabel()
        logo.setPixmap(app_icon().pixmap(QSize(56, 56)))
        logo.setAccessibleName("Hearth")
        title = heading_label("Welcome to Hearth")
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.5)
        title.setFont(font)
        intro = plain_label("Hearth runs open language models on this computer: what you type "
                            "stays here. Pick a model that fits below; Hearth downloads it, and "
                            "then you can chat with it.", selectable=False)
        head_text = QVBoxLayout()
        head_text.addWidget(title)
        head_text.addWidget(intro)
        head = QHBoxLayout()
        head.addWidget(logo, 0, Qt.AlignmentFlag.AlignTop)
        head.addLayout(head_text, 1)

        self.hardware_label = plain_label("Looking at this computer's hardware…", muted=True)
        self.hardware_label.setObjectName("hardware_summary")

        self.recommended_status = plain_label("Checking which models fit this computer…",
                                              muted=True, selectable=False)
        self.recommended_status.setObjectName("recommended_status")
        self._cards_box = QWidget()
        scroll, self._cards_layout = scrolling_column(self._cards_box)

        self.message = plain_label()
        self.message.setObjectName("message")
        self.message.hide()
        self.skip_btn = QPushButton("Skip: I'll look around myself")
        self.skip_btn.setToolTip("Go to the chat; models can be found in the Discover tab at "
                                 "any time")
        self.skip_btn.clicked.connect(self.done)
        bottom = QHBoxLayout()
        bottom.addWidget(self.message, 1)
        bottom.addWidget(self.skip_btn)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 18, 24, 12)
        layout.addLayout(head)
        layout.addSpacing(8)
        layout.addWidget(heading_label("This computer"))
        layout.addWidget(self.hardware_label)
        layout.addSpacing(8)
        layout.addWidget(heading_label("Recommended for this computer"))
        layout.addWidget(self.recommended_status)
        layout.addWidget(scroll, 1)
        layout.addLayout(bottom)

        # Bound methods: Qt disconnects them when the page goes; the services stay.
        hub.recommended.connect(self._on_recommended)
        hub.verdict.connect(self._on_verdict)
        hub.unreachable.connect(self._on_unreachable)
        hardware.report_changed.connect(self._on_report)
        hardware.failed.connect(self._on_hardware_failed)
        downloads.progress.connect(self._on_progress)
        downloads.finished.connect(self._on_finished)
        downloads.failed.connect(self._on_download_failed)
        if hardware.report is not None:
            self._on_report(hardware.report)

    # ---- public ----------------------------------------------------------------------------------

    def download(self, repo_id: str) -> str | None:
        """Queue the recommended file of ``repo_id``; the download id, or None (the reason is
        shown)."""
        card = self._cards.get(repo_id)
        details = self._details.get(repo_id)
        if card is None or details is None or card.group is None:
            return None
        try:
            download_id = self._downloads.enqueue(details, card.group)
        except HubError as exc:
            self._set_message(str(exc), error=True)
            return None
        self._downloads_by_id[download_id] = _Download(repo_id, card.group)
        button = self._buttons[repo_id]
        button.setEnabled(False)
        button.setText("Downloading…")
        self._set_message(f"{card.rec.title} is downloading. It can be used as soon as it is "
                          "here.")
        self.queued.emit(download_id)
        return download_id

    def cards(self) -> list[RecommendationCard]:
        """The recommendation cards, in the hub's order (hidden ones included)."""
        return list(self._cards.values())

    def button(self, repo_id: str) -> QPushButton | None:
        """The card's Download / Start chatting button."""
        return self._buttons.get(repo_id)

    # ---- hardware ------------------------------------------------------------------------------

    def _on_report(self, report: HardwareReport) -> None:
        self.hardware_label.setText(hardware_summary(report))
        self.hardware_label.setForegroundRole(QPalette.ColorRole.WindowText)

    def _on_hardware_failed(self, sentence: str) -> None:
        if self._hardware.report is None:
            self.hardware_label.setText(f"The hardware could not be detected: {sentence}")

    # ---- recommendations -----------------------------------------------------------------------

    def _on_recommended(self, entries: list[Any]) -> None:
        self._recommended_loaded = True
        wanted: list[str] = []
        for rec, details, verdict in entries:
            if not isinstance(rec, Recommendation):
                continue
            wanted.append(rec.repo_id)
            card = self._cards.get(rec.repo_id) or self._make_card(rec)
            if details is not None:
                self._details[rec.repo_id] = details
            card.set_details(self._details.get(rec.repo_id))
            card.show_verdict(verdict if isinstance(verdict, Verdict) else None,
                              self._verdicts.get((rec.repo_id, card.group.name))
                              if card.group else None)
        for repo_id in [r for r in self._cards if r not in wanted]:
            self._drop_card(repo_id)
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
        button = QPushButton(DOWNLOAD)
        button.setAccessibleName(f"Download {rec.title}")
        button.clicked.connect(lambda _c=False, r=rec.repo_id: self._on_button(r))
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(button)
        layout = card.layout()
        assert isinstance(layout, QVBoxLayout)
        layout.addLayout(row)
        self._cards[rec.repo_id] = card
        self._buttons[rec.repo_id] = button
        return card

    def _drop_card(self, repo_id: str) -> None:
        card = self._cards.pop(repo_id)
        self._buttons.pop(repo_id, None)
        card.hide()
        card.setParent(None)
        card.deleteLater()

    def _on_verdict(self, repo_id: str, group_name: str, verdict: object) -> None:
        if not isinstance(verdict, Verdict | str):
            return
        self._verdicts[(repo_id, group_name)] = verdict
        card = self._cards.get(repo_id)
        if card is not None and card.group is not None and card.group.name == group_name:
            if isinstance(verdict, Verdict):
                card.set_verdict(verdict)
            else:
                card.set_verdict(None, verdict)
            self._update()

    def _update(self) -> None:
        """Which cards show (those that fit, or are still being checked) and their buttons."""
        shown, checking = show_fitting(self._cards.values())
        for repo_id, card in self._cards.items():
            button = self._buttons[repo_id]
            if not any(d.repo_id == repo_id for d in self._downloads_by_id.values()):
                button.setEnabled(card.group is not None and repo_id in self._details)
        if not self._cards:
            self.recommended_status.setText("No recommendations are available now. The Discover "
                                            "tab searches all of Hugging Face.")
        elif shown == 0:
            self.recommended_status.setText("None of the recommended models fits this computer. "
                                            "The Discover tab can find smaller ones.")
        elif checking:
            self.recommended_status.setText("Models that run well here. Still checking some of "
                                            "them…")
        else:
            self.recommended_status.setText("Models that run well on this computer. Pick one "
                                            "to download it.")

    def _on_unreachable(self, line: str) -> None:
        self._set_message(line or "Hugging Face cannot be reached.", error=True)

    # ---- downloading ---------------------------------------------------------------------------

    def _on_button(self, repo_id: str) -> None:
        mine = [(i, d) for i, d in self._downloads_by_id.items() if d.repo_id == repo_id]
        done = next((d for _i, d in mine if d.state == "done"), None)
        if done is not None:
            self.chat_requested.emit(done.path)
            self.done.emit()
            return
        failed = next((i for i, d in mine if d.state == "failed"), None)
        if failed is not None:  # the button says "Try again"
            self._downloads_by_id[failed].state = "downloading"
            self._downloads.retry(failed)
            self._buttons[repo_id].setEnabled(False)
            self._buttons[repo_id].setText("Downloading…")
            return
        if not mine:
            self.download(repo_id)

    def _on_progress(self, row: DownloadRow) -> None:
        d = self._downloads_by_id.get(row.id)
        button = self._buttons.get(d.repo_id) if d is not None else None
        if button is None or d is None or d.state != "downloading":
            return
        if row.state == "downloading" and row.total:
            button.setText(f"Downloading… {100 * row.done // row.total}%")
        elif row.state == "paused":
            button.setText("Paused")
            button.setToolTip(row.error or row.phase)

    def _on_finished(self, path: str) -> None:
        for d in self._downloads_by_id.values():
            if d.state != "done" and d.is_file(path):
                d.state, d.path = "done", path
                button = self._buttons.get(d.repo_id)
                if button is not None:
                    button.setText("Start chatting")
                    button.setAccessibleName("Start chatting")
                    button.setEnabled(True)
                    button.setDefault(True)
                    button.setFocus()
                card = self._cards.get(d.repo_id)
                name = card.rec.title if card is not None else d.group.name
                self._set_message(f"{name} is downloaded and checked. Press “Start chatting”.")
                return

    def _on_download_failed(self, id: str, sentence: str) -> None:
        d = self._downloads_by_id.get(id)
        if d is None:
            return
        d.state = "failed"
        button = self._buttons.get(d.repo_id)
        if button is not None:
            button.setText("Try again")
            button.setEnabled(True)
        self._set_message(sentence, error=True)

    # ---- helpers -------------------------------------------------------------------------------

    def _set_message(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))
        set_text_color(self.message, text_color(self.palette(), _ERROR_HUE) if error else None)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            if self._hardware.report is None:
                self._hardware.refresh()
            if not self._recommended_loaded:
                self._hub.load_recommended()

    def changeEvent(self, e: QEvent) -> None:
        super().changeEvent(e)
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and \
                hasattr(self, "_cards"):
            for card in self._cards.values():  # the fit colours were mixed from the old palette
                card.set_verdict(card.verdict, card.verdict_label.toolTip()
                                 if card.verdict is None else "")
