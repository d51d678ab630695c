"""The first-run page: a short welcome, what this computer has, the recommended models that
fit it (each one click from downloading and then chatting), and the models already on this
computer (another app's, or a GGUF file the person opens).

Shown until the settings say ``first_run_done``; the window decides that and listens to the
page's signals (:attr:`WelcomePage.chat_requested`, :attr:`WelcomePage.done`, ...). The page
talks only to protocols (hub, downloads, hardware, local models), reuses the Discover tab's
recommendation cards and the hub's verdicts, and shows every text from the Hub as plain text.
Its sections are widgets of their own: the recommended cards (app/ui/welcome_recommended.py)
and the models on this computer (app/ui/welcome_local.py); the page follows the downloads its
cards start and turns their buttons into "Start chatting".

Offline is a normal first start, not a dead end: when the Hub cannot be reached the cards say
they could not be checked and why, Retry asks again, and the models on this computer are one
click from a chat.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.hardware.report import HardwareReport
from app.hub.types import FileGroup, HubError
from app.services.protocols import DownloadRow, DownloadsLike, HardwareLike, HubLike, LocalModelsLike
from app.ui.common import human_size, plain_label
from app.ui.first_frame import after_first_frame
from app.ui.hardware_panel import human_bytes
from app.ui.icon import app_icon
from app.ui.lang import tr, ui_text
from app.ui.recommendation_card import RecommendationCard, error_text
from app.ui.style.components import Banner, Card, heading, set_tone, set_type
from app.ui.style.icons import icon, pixmap
from app.ui.style.tokens import SPACING
from app.ui.welcome_local import AskFile, LocalModelsSection
from app.ui.welcome_recommended import DOWNLOAD, RecommendedSection

# DOWNLOAD is the recommended section's button text, named here for the page's tests.
__all__ = ["DOWNLOAD", "WelcomePage", "hardware_summary"]

log = logging.getLogger(__name__)


def hardware_summary(r: HardwareReport) -> str:
    """One line about the machine for people: CPU, memory, the GPUs and their memory (alike
    GPUs counted once: "2 × RTX 3090 (24.0 GiB each)")."""
    parts = [tr("{cpu} (%n core(s))", None, r.cpu.physical_cores).format(cpu=r.cpu.model),
             tr("{size} of RAM").format(size=human_bytes(r.memory.total))]
    alike = Counter((g.name, g.total, g.unified) for g in r.gpus)
    for (name, total, unified), n in alike.items():
        size = human_bytes(total)
        if n > 1:
            parts.append(tr("{n} × {gpu} ({size} each, shared with the system)") if unified
                         else tr("{n} × {gpu} ({size} each)"))
        else:
            parts.append(tr("{gpu} ({size}, shared with the system)") if unified
                         else tr("{gpu} ({size})"))
        parts[-1] = parts[-1].format(n=n, gpu=name, size=size)
    if not r.gpus:
        parts.append(tr("no GPU: models run on the CPU"))
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


LOGO = 48  # the app's picture beside the title, in device-independent pixels


def _welcome_header(hardware_label: QLabel) -> QHBoxLayout:
    """The logo beside a large title, what Hearth does, and this computer in one small line."""
    logo = QLabel()
    logo.setPixmap(app_icon().pixmap(QSize(LOGO, LOGO)))
    logo.setAccessibleName("Hearth")
    title = heading(tr("Welcome to Hearth"), "title")
    intro = plain_label(tr("Run open language models on this computer: what you type stays "
                           "here. Pick a model that fits; Hearth downloads it, then you chat."),
                        selectable=False)
    set_tone(intro, "muted")
    chip_icon = QLabel()
    chip_icon.setPixmap(pixmap("hardware", 16, "muted"))
    machine = QHBoxLayout()
    machine.setSpacing(SPACING.sm)
    machine.addWidget(chip_icon)
    machine.addWidget(hardware_label, 1)
    head_text = QVBoxLayout()
    head_text.setSpacing(SPACING.xs)
    head_text.addWidget(title)
    head_text.addWidget(intro)
    head_text.addSpacing(SPACING.xs)
    head_text.addLayout(machine)
    head = QHBoxLayout()
    head.setSpacing(SPACING.xl)
    head.addWidget(logo, 0, Qt.AlignmentFlag.AlignTop)
    head.addLayout(head_text, 1)
    return head


class WelcomePage(QWidget):
    """Welcome, this computer, and the models to start with."""

    queued = Signal(str)  # a download id, after the queue took it (the window may show it)
    chat_requested = Signal(str)  # a model's path (downloaded, found or opened): load, chat
    browse_requested = Signal(str)  # a repository id to open in the Discover tab
    done = Signal()  # the user is finished with the page: set first_run_done, show the chat

    def __init__(self, hub: HubLike, downloads: DownloadsLike, hardware: HardwareLike,
                 parent: QWidget | None = None, *, local: LocalModelsLike | None = None,
                 ask_file: AskFile = QFileDialog.getOpenFileName) -> None:
        """``local``: the models already on this computer (None: only "Open GGUF file…" is
        offered); ``ask_file`` asks for a model file (a parameter so tests can answer it)."""
        super().__init__(parent)
        self._hub = hub
        self._downloads = downloads
        self._hardware = hardware
        self._shown_once = False
        self._downloads_by_id: dict[str, _Download] = {}

        self.hardware_label = plain_label(tr("Looking at this computer's hardware…"))
        self.hardware_label.setObjectName("hardware_summary")
        self.hardware_label.setAccessibleName(tr("This computer"))
        set_tone(self.hardware_label, "muted")
        set_type(self.hardware_label, "small")
        self.recommended_section = RecommendedSection(hub, self._has_download)
        self.recommended_section.browse_requested.connect(self.browse_requested)
        self.recommended_section.button_clicked.connect(self._on_button)
        self.local_section = LocalModelsSection(local, ask_file)
        self.local_section.use_requested.connect(self._use)
        # The sections' lines and buttons, reachable from the page as before they were split.
        self.recommended_status = self.recommended_section.status
        self.retry_btn = self.recommended_section.retry_btn
        self.local_status, self.open_btn = self.local_section.status, self.local_section.open_btn

        # The models already here sit in a card beside the recommended ones: offline, they are
        # the way in, and a person sees both at once.
        local_card = Card()
        local_card.setObjectName("local_models")
        local_card.body.addWidget(self.local_section)
        columns = QHBoxLayout()
        columns.setSpacing(SPACING.xxl)
        columns.addWidget(self.recommended_section, 3)
        columns.addWidget(local_card, 2, Qt.AlignmentFlag.AlignTop)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACING.xxxl, SPACING.xxl, SPACING.xxxl, SPACING.xl)
        layout.setSpacing(SPACING.xl)
        layout.addLayout(_welcome_header(self.hardware_label))
        layout.addLayout(columns, 1)
        layout.addLayout(self._bottom_row())

        # Bound methods: Qt disconnects them when the page goes; the services stay.
        hardware.report_changed.connect(self._on_report)
        hardware.failed.connect(self._on_hardware_failed)
        downloads.progress.connect(self._on_progress)
        downloads.finished.connect(self._on_finished)
        downloads.failed.connect(self._on_download_failed)
        if hardware.report is not None:
            self._on_report(hardware.report)

    def _bottom_row(self) -> QHBoxLayout:
        """The page's message line and the way out."""
        self.message = Banner()
        self.message.setObjectName("message")
        self.skip_btn = QPushButton(tr("Skip: I'll look around myself"))
        self.skip_btn.setAccessibleName(self.skip_btn.text())
        self.skip_btn.setProperty("flat", True)
        self.skip_btn.setToolTip(tr("Go to the chat; models can be found in the Discover tab "
                                    "at any time"))
        self.skip_btn.clicked.connect(self.done)
        bottom = QHBoxLayout()
        bottom.setSpacing(SPACING.md)
        bottom.addWidget(self.message, 1)
        bottom.addStretch(0)
        bottom.addWidget(self.skip_btn, 0, Qt.AlignmentFlag.AlignBottom)
        return bottom

    # ---- public ----------------------------------------------------------------------------------

    def download(self, repo_id: str) -> str | None:
        """Queue the recommended file of ``repo_id``; the download id, or None (the reason is
        shown)."""
        card = self.recommended_section.card(repo_id)
        details = self.recommended_section.details(repo_id)
        button = self.recommended_section.button(repo_id)
        if card is None or details is None or card.group is None or button is None:
            return None
        try:
            download_id = self._downloads.enqueue(details, card.group)
        except HubError as exc:
            self._set_message(error_text(exc), error=True)
            return None
        self._downloads_by_id[download_id] = _Download(repo_id, card.group)
        button.setEnabled(False)
        button.setText(tr("Downloading…"))
        self._show_progress(repo_id, 0.0, tr("Starting…"))
        self._set_message(tr("{name} is downloading. It can be used as soon as it is "
                             "here.").format(name=card.rec.title))
        self.queued.emit(download_id)
        return download_id

    def cards(self) -> list[RecommendationCard]:
        """The recommendation cards, in the hub's order (hidden ones included)."""
        return self.recommended_section.cards()

    def button(self, repo_id: str) -> QPushButton | None:
        """The card's Download / Start chatting button."""
        return self.recommended_section.button(repo_id)

    # ---- hardware ------------------------------------------------------------------------------

    def _on_report(self, report: HardwareReport) -> None:
        self.hardware_label.setText(hardware_summary(report))

    def _on_hardware_failed(self, sentence: str) -> None:
        if self._hardware.report is None:
            self.hardware_label.setText(tr("The hardware could not be detected: {why}").format(
                why=ui_text(sentence)))
            set_tone(self.hardware_label, "warning")

    # ---- choosing a model ----------------------------------------------------------------------

    def _use(self, path: str) -> None:
        """As "Start chatting" does: the window selects and loads it, the page is done."""
        self.chat_requested.emit(path)
        self.done.emit()

    # ---- downloading ---------------------------------------------------------------------------

    def _has_download(self, repo_id: str) -> bool:
        return any(d.repo_id == repo_id for d in self._downloads_by_id.values())

    def _on_button(self, repo_id: str) -> None:
        mine = [(i, d) for i, d in self._downloads_by_id.items() if d.repo_id == repo_id]
        done = next((d for _i, d in mine if d.state == "done"), None)
        if done is not None:
            self._use(done.path)
            return
        failed = next((i for i, d in mine if d.state == "failed"), None)
        if failed is not None:  # the button says "Try again"
            self._downloads_by_id[failed].state = "downloading"
            self._downloads.retry(failed)
            button = self.recommended_section.button(repo_id)
            if button is not None:
                button.setEnabled(False)
                button.setText(tr("Downloading…"))
            self._show_progress(repo_id, None, tr("Trying again…"))
            return
        if not mine:
            self.download(repo_id)

    def _on_progress(self, row: DownloadRow) -> None:
        d = self._downloads_by_id.get(row.id)
        button = self.recommended_section.button(d.repo_id) if d is not None else None
        if button is None or d is None or d.state != "downloading":
            return
        if row.state == "downloading" and row.total:
            button.setText(tr("Downloading…"))
            detail = tr("{percent}% · {done} of {total}").format(
                percent=100 * row.done // row.total, done=human_size(row.done),
                total=human_size(row.total))
            if row.speed > 0:
                detail = tr("{progress} · {speed}/s").format(progress=detail,
                                                             speed=human_size(int(row.speed)))
            self._show_progress(d.repo_id, row.done / row.total, detail)
        elif row.state == "paused":
            button.setText(tr("Paused"))
            why = ui_text(row.error or row.phase)
            button.setToolTip(why)
            self._show_progress(d.repo_id, row.done / row.total if row.total else None,
                                tr("Paused: {why}").format(why=why) if why else tr("Paused"))

    def _on_finished(self, path: str) -> None:
        for d in self._downloads_by_id.values():
            if d.state != "done" and d.is_file(path):
                d.state, d.path = "done", path
                button = self.recommended_section.button(d.repo_id)
                self._hide_progress(d.repo_id)
                if button is not None:
                    button.setText(tr("Start chatting"))
                    button.setAccessibleName(tr("Start chatting"))
                    button.setIcon(icon("chat", "on_accent"))
                    button.setEnabled(True)
                    button.setDefault(True)
                    button.setFocus()
                card = self.recommended_section.card(d.repo_id)
                name = card.rec.title if card is not None else d.group.name
                self._set_message(tr("{name} is downloaded and checked. Press “Start "
                                     "chatting”.").format(name=name), tone="success")
                return

    def _on_download_failed(self, id: str, sentence: str) -> None:
        d = self._downloads_by_id.get(id)
        if d is None:
            return
        d.state = "failed"
        self._hide_progress(d.repo_id)
        button = self.recommended_section.button(d.repo_id)
        if button is not None:
            button.setText(tr("Try again"))
            button.setEnabled(True)
        self._set_message(ui_text(sentence), error=True)

    # ---- helpers -------------------------------------------------------------------------------

    def _set_message(self, text: str, error: bool = False, tone: str = "info") -> None:
        if text:
            self.message.show_message(text, "danger" if error else tone)
        else:
            self.message.hide()

    def _show_progress(self, repo_id: str, fraction: float | None, detail: str) -> None:
        row = self.recommended_section.progress(repo_id)
        if row is not None:
            row.set_progress(fraction, detail)
            row.show()

    def _hide_progress(self, repo_id: str) -> None:
        row = self.recommended_section.progress(repo_id)
        if row is not None:
            row.hide()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            # The cards fill the page a moment after it is drawn (app/ui/first_frame.py).
            after_first_frame(self, self._fill)

    def _fill(self) -> None:
        if self._hardware.report is None:
            self._hardware.refresh()
        if not self.recommended_section.loaded:
            self._hub.load_recommended()
