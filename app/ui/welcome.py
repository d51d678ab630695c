"""The first-run page: a short welcome, what this computer has, the recommended models that
fit it (each one click from downloading and then chatting), and the models already on this
computer (another app's, or a GGUF file the person opens).

Shown until the settings say ``first_run_done``; the window decides that and listens to the
page's signals (:attr:`WelcomePage.chat_requested`, :attr:`WelcomePage.done`, ...). The page
talks only to protocols (hub, downloads, hardware, local models), reuses the Discover tab's
recommendation cards and the hub's verdicts, and shows every text from the Hub as plain text.

Offline is a normal first start, not a dead end: when the Hub cannot be reached the cards say
they could not be checked and why, Retry asks again, and the models on this computer are one
click from a chat.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QPalette, QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.hardware.report import HardwareReport
from app.hub.recommended import Recommendation
from app.hub.types import FileGroup, HubError, RepoDetails
from app.hub.verdict import Verdict
from app.services.protocols import (
    DownloadRow,
    DownloadsLike,
    HardwareLike,
    HubLike,
    LocalModelsLike,
    LocalRow,
)
from app.ui.common import (
    heading_label,
    human_size,
    plain_label,
    scrolling_column,
    set_text_color,
    text_color,
)
from app.ui.discover import RecommendationCard, show_fitting
from app.ui.hardware_panel import human_bytes
from app.ui.icon import app_icon

log = logging.getLogger(__name__)

_ERROR_HUE = "#d0342c"
DOWNLOAD = "Download"
RETRY = "Retry"
OPEN_FILE = "Open GGUF file…"
LOCAL_HEADING = "Use a model already on this computer"
LOCAL_SHOWN = 5  # a first start needs a few good choices; the Models tab lists them all
_WHERE = "Hearth's folder and other apps' (LM Studio, Ollama, Jan, GPT4All, the Hugging Face cache)"
_UNREACHABLE = "Hugging Face cannot be reached. Check the connection and press Retry."

# QFileDialog.getOpenFileName's shape: (parent, caption, folder, filters) -> (path, filter).
AskFile = Callable[[QWidget, str, str, str], tuple[str, str]]


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


def first_sentence(line: str) -> str:
    """The cause without the advice: a card has room for why, the line above it says what to
    do ("Hugging Face cannot be reached (the connection was refused). Check the ..." gives the
    part before "Check")."""
    line = line.strip()
    m = re.match(r"(.+?[.!?])(?:\s|$)", line, re.DOTALL)
    return m.group(1) if m else line


def local_choices(rows: list[LocalRow]) -> list[LocalRow]:
    """The models on this computer worth offering first: readable ones, those that fit first,
    then those not judged yet, then the rest (the scan's order kept within each)."""
    def rank(r: LocalRow) -> int:
        if not isinstance(r.verdict, Verdict):
            return 1
        return 0 if r.verdict.fits else 2
    return sorted((r for r in rows if not r.error), key=rank)


def local_description(r: LocalRow) -> str:
    """Where a model is, its size and type, and whether it fits: "LM Studio · 1.2 MB · Q8_0"."""
    parts = [r.source, human_size(r.size)]
    if r.quantization:
        parts.append(r.quantization)
    if isinstance(r.verdict, Verdict):
        parts.append(r.verdict.label())
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
        self._ask_file = ask_file
        self._shown_once = False
        self._recommended_loaded = False
        self._cards: dict[str, RecommendationCard] = {}
        self._buttons: dict[str, QPushButton] = {}
        self._verdicts: dict[tuple[str, str], Verdict | str] = {}
        self._details: dict[str, RepoDetails] = {}
        self._downloads_by_id: dict[str, _Download] = {}
        # Offline: the Hub's line while its last answer was "unreachable", the cards whose
        # details never came (repo id -> why, for the card), and a Retry still waiting.
        self._unreachable = ""
        self._unchecked: dict[str, str] = {}
        self._retrying = False

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
        self.retry_btn = QPushButton(RETRY)
        self.retry_btn.setAccessibleName(RETRY)
        self.retry_btn.setToolTip("Ask Hugging Face again about the recommended models")
        self.retry_btn.clicked.connect(self._retry)
        self.retry_btn.hide()
        status_row = QHBoxLayout()
        status_row.addWidget(self.recommended_status, 1)
        status_row.addWidget(self.retry_btn, 0, Qt.AlignmentFlag.AlignTop)
        self._cards_box = QWidget()
        scroll, self._cards_layout = scrolling_column(self._cards_box)

        self.local_status = plain_label("", muted=True, selectable=False)
        self.local_status.setObjectName("local_status")
        self._local_box = QWidget()
        self._local_layout = QVBoxLayout(self._local_box)
        self._local_layout.setContentsMargins(0, 0, 0, 0)
        self._local_layout.setSpacing(4)
        self.open_btn = QPushButton(OPEN_FILE)
        self.open_btn.setAccessibleName(OPEN_FILE)
        self.open_btn.setToolTip("Choose a .gguf model file on this computer and chat with it")
        self.open_btn.clicked.connect(self._open_file)
        open_row = QHBoxLayout()
        open_row.addWidget(self.open_btn)
        open_row.addStretch(1)

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
        layout.addLayout(status_row)
        layout.addWidget(scroll, 1)
        layout.addSpacing(8)
        layout.addWidget(heading_label(LOCAL_HEADING))
        layout.addWidget(self.local_status)
        layout.addWidget(self._local_box)
        layout.addLayout(open_row)
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
        if local is not None:
            local.changed.connect(self._on_local)
            local.busy_changed.connect(self._on_local_busy)
            local.failed.connect(self._on_local_failed)
            self._on_local(local.rows())
        else:
            self.local_status.hide()

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
        self._unchecked.pop(repo_id, None)
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
        """Which cards show (those that fit, or are still being checked), their buttons, the
        line above them and Retry."""
        shown, _ = show_fitting(self._cards.values())
        for repo_id, card in self._cards.items():
            button = self._buttons[repo_id]
            if not any(d.repo_id == repo_id for d in self._downloads_by_id.values()):
                button.setEnabled(card.group is not None and repo_id in self._details)
                why = self._unchecked.get(repo_id)
                button.setToolTip(f"{why} It can be downloaded once Retry reaches Hugging Face."
                                  if why and not button.isEnabled() else "")
        if self._retrying and all(r in self._details for r in self._cards):
            self._retrying = False  # the Hub answered for every card
        offline = bool(self._unreachable or self._unchecked)
        self.retry_btn.setVisible(offline or self._retrying)
        self.retry_btn.setEnabled(offline and not self._retrying)
        if self._unreachable:
            # The hub's line names the cause and what to do; Retry is beside it.
            self._set_status(self._unreachable, error=True)
        elif self._retrying and not any(r in self._details for r in self._cards):
            self._set_status("Asking Hugging Face again…")
        elif not self._cards:
            self._set_status("No recommendations are available now. The Discover tab searches "
                             "all of Hugging Face.")
        elif shown == 0:
            self._set_status("None of the recommended models fits this computer. The Discover "
                             "tab can find smaller ones.")
        elif any(self._checking(r, c) for r, c in self._cards.items()):
            self._set_status("Models that run well here. Still checking some of them…")
        else:
            self._set_status("Models that run well on this computer. Pick one to download it.")

    def _checking(self, repo_id: str, card: RecommendationCard) -> bool:
        """Whether the card still waits for its verdict (not one that could not be checked)."""
        if card.verdict is not None or repo_id in self._unchecked:
            return False
        known = self._verdicts.get((repo_id, card.group.name)) if card.group else None
        return not isinstance(known, str)

    def _set_status(self, text: str, error: bool = False) -> None:
        self.recommended_status.setText(text)
        self._color_status(error)

    def _color_status(self, error: bool) -> None:
        self.recommended_status.setProperty("error", error)
        if error:
            self.recommended_status.setForegroundRole(QPalette.ColorRole.WindowText)
            set_text_color(self.recommended_status, text_color(self.palette(), _ERROR_HUE))
        else:
            self.recommended_status.setForegroundRole(QPalette.ColorRole.PlaceholderText)

    def _on_unreachable(self, line: str) -> None:
        """The Hub could not be asked: the cards whose details never came say so and why,
        instead of "Checking…" (their Download stays off: there is nothing to fetch)."""
        self._unreachable = line.strip() or _UNREACHABLE
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

    # ---- models on this computer ---------------------------------------------------------------

    def _on_local(self, rows: list[LocalRow]) -> None:
        while self._local_layout.count():
            item = self._local_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()
                widget.deleteLater()
        choices = local_choices(rows)
        for r in choices[:LOCAL_SHOWN]:
            self._local_layout.addWidget(self._local_row(r))
        # The list speaks for itself; the line says only what it does not show.
        self.local_status.setVisible(len(choices) == 0 or len(choices) > LOCAL_SHOWN)
        if not choices:
            self.local_status.setText(f"No models were found in {_WHERE}. Download one above, "
                                      "or open a GGUF file.")
        else:
            self.local_status.setText(f"The first {LOCAL_SHOWN} of {len(choices)}; the Models "
                                      "tab lists them all.")

    def _local_row(self, r: LocalRow) -> QWidget:
        row = QWidget()
        row.setToolTip(r.path)
        name = plain_label(r.name, wrap=False)
        font = name.font()
        font.setBold(True)
        name.setFont(font)
        about = plain_label(local_description(r), muted=True, wrap=False)
        use = QPushButton("Use")
        use.setAccessibleName(f"Use {r.name} from {r.source}")
        use.setToolTip(f"Load {r.path} and chat with it")
        use.clicked.connect(lambda _c=False, path=r.path: self._use(path))
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(name)
        layout.addWidget(about, 1)
        layout.addWidget(use)
        return row

    def _on_local_busy(self, busy: bool) -> None:
        if busy and self._local_layout.count() == 0:
            self.local_status.setText(f"Looking in {_WHERE}…")
            self.local_status.show()

    def _on_local_failed(self, sentence: str) -> None:
        if self._local_layout.count() == 0:
            self.local_status.setText(sentence)
            self.local_status.show()

    def _open_file(self) -> None:
        path, _filter = self._ask_file(self, "Open a GGUF model", "",
                                       "GGUF models (*.gguf);;All files (*)")
        if path:  # an empty path: the person cancelled; the page stays
            self._use(path)

    def _use(self, path: str) -> None:
        """As "Start chatting" does: the window selects and loads it, the page is done."""
        self.chat_requested.emit(path)
        self.done.emit()

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
                hasattr(self, "open_btn"):
            for card in self._cards.values():  # the fit colours were mixed from the old palette
                card.set_verdict(card.verdict, card.verdict_label.toolTip()
                                 if card.verdict is None else "")
            self._color_status(bool(self.recommended_status.property("error")))  # and this one
