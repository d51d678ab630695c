"""The welcome page's models already on this computer (app/ui/welcome.py): a few of the best
of them, each one click from a chat, and "Open GGUF file…" for a file anywhere else.

The local-models service scans Hearth's folder and other apps' (LM Studio, Ollama, Jan,
GPT4All, the Hugging Face cache); this section only offers its rows. Without the service only
the button to open a file is shown.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.hub.verdict import Verdict
from app.services.protocols import LocalModelsLike, LocalRow
from app.ui.common import clear_layout, human_size, plain_label
from app.ui.lang import tr, ui_text
from app.ui.style.components import heading, set_tone, set_type, verdict_chip
from app.ui.style.icons import icon
from app.ui.style.tokens import SPACING

# The English words of the button and heading, for tests (shown translated).
OPEN_FILE = "Open GGUF file…"
LOCAL_HEADING = "Use a model already on this computer"
LOCAL_SHOWN = 5  # a first start needs a few good choices; the Models tab lists them all

# QFileDialog.getOpenFileName's shape: (parent, caption, folder, filters) -> (path, filter).
AskFile = Callable[[QWidget, str, str, str], tuple[str, str]]


def local_choices(rows: list[LocalRow]) -> list[LocalRow]:
    """The models on this computer worth offering first: readable ones, those that fit first,
    then those not judged yet, then the rest (the scan's order kept within each)."""
    def rank(r: LocalRow) -> int:
        if not isinstance(r.verdict, Verdict):
            return 1
        return 0 if r.verdict.fits else 2
    return sorted((r for r in rows if not r.error), key=rank)


def local_description(r: LocalRow) -> str:
    """Where a model is, its size and type: "LM Studio · 1.2 MB · Q8_0" (the verdict is a chip
    beside it)."""
    parts = [r.source, human_size(r.size)]
    if r.quantization:
        parts.append(r.quantization)
    return " · ".join(parts)


class LocalModelsSection(QWidget):
    """The heading, the line about the scan, a row per model offered, and Open GGUF file…"""

    use_requested = Signal(str)  # a model's path: load it and chat

    def __init__(self, local: LocalModelsLike | None,
                 ask_file: AskFile = QFileDialog.getOpenFileName,
                 parent: QWidget | None = None) -> None:
        """``local``: the models already on this computer (None: only "Open GGUF file…" is
        offered); ``ask_file`` asks for a model file (a parameter so tests can answer it)."""
        super().__init__(parent)
        self._ask_file = ask_file
        self.status = plain_label("", selectable=False)
        self.status.setObjectName("local_status")
        set_tone(self.status, "muted")
        self._rows_box = QWidget()
        self._rows = QVBoxLayout(self._rows_box)
        self._rows.setContentsMargins(0, 0, 0, 0)
        self._rows.setSpacing(SPACING.md)
        self.open_btn = QPushButton(tr("Open GGUF file…"))
        self.open_btn.setIcon(icon("open"))
        self.open_btn.setAccessibleName(tr("Open GGUF file…"))
        self.open_btn.setToolTip(tr("Choose a .gguf model file on this computer and chat with "
                                    "it"))
        self.open_btn.clicked.connect(self._open_file)
        open_row = QHBoxLayout()
        open_row.addWidget(self.open_btn)
        open_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(SPACING.md)
        layout.addWidget(heading(tr("Use a model already on this computer"), "subheading"))
        layout.addWidget(self.status)
        layout.addWidget(self._rows_box)
        layout.addLayout(open_row)
        if local is None:
            self.status.hide()
            return
        # Bound methods: Qt disconnects them when the section goes; the service stays.
        local.changed.connect(self._on_local)
        local.busy_changed.connect(self._on_busy)
        local.failed.connect(self._on_failed)
        self._on_local(local.rows())

    def _on_local(self, rows: list[LocalRow]) -> None:
        clear_layout(self._rows)
        choices = local_choices(rows)
        for r in choices[:LOCAL_SHOWN]:
            self._rows.addWidget(self._row(r))
        # The list speaks for itself; the line says only what it does not show.
        self.status.setVisible(len(choices) == 0 or len(choices) > LOCAL_SHOWN)
        if not choices:
            self.status.setText(tr("No models were found in Hearth's folder or other apps' "
                                   "(LM Studio, Ollama, Jan, GPT4All, the Hugging Face cache). "
                                   "Download a recommended one, or open a GGUF file."))
        else:
            self.status.setText(tr("The first {shown} of {count}; the Models tab lists them "
                                   "all.").format(shown=LOCAL_SHOWN, count=len(choices)))

    def _row(self, r: LocalRow) -> QWidget:
        row = QWidget()
        row.setToolTip(r.path)
        # A file name has no spaces to wrap at: it is cut at the row's edge (the tooltip has it).
        name = plain_label(r.name, wrap=False)
        font = name.font()
        font.setBold(True)
        name.setFont(font)
        name.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        about = plain_label(local_description(r), wrap=False)
        set_tone(about, "muted")
        set_type(about, "small")
        facts = QHBoxLayout()
        facts.setSpacing(SPACING.sm)
        facts.addWidget(about)
        if isinstance(r.verdict, Verdict):
            fit = verdict_chip(r.verdict.fit)
            fit.setToolTip(ui_text(r.verdict.label()))
            facts.addWidget(fit)
        facts.addStretch(1)
        text = QVBoxLayout()
        text.setSpacing(SPACING.xxs)
        text.addWidget(name)
        text.addLayout(facts)
        use = QPushButton(tr("Use"))
        use.setIcon(icon("chat"))
        use.setAccessibleName(tr("Use {name} from {source}").format(name=r.name, source=r.source))
        use.setToolTip(tr("Load {path} and chat with it").format(path=r.path))
        use.clicked.connect(lambda _c=False, path=r.path: self.use_requested.emit(path))
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(SPACING.md)
        layout.addLayout(text, 1)
        layout.addWidget(use, 0, Qt.AlignmentFlag.AlignVCenter)
        return row

    def _on_busy(self, busy: bool) -> None:
        if busy and self._rows.count() == 0:
            self.status.setText(tr("Looking in Hearth's folder and other apps' (LM Studio, "
                                   "Ollama, Jan, GPT4All, the Hugging Face cache)…"))
            self.status.show()

    def _on_failed(self, sentence: str) -> None:
        if self._rows.count() == 0:
            self.status.setText(ui_text(sentence))
            self.status.show()

    def _open_file(self) -> None:
        path, _filter = self._ask_file(self.window(), tr("Open a GGUF model"), "",
                                       tr("GGUF models (*.gguf);;All files (*)"))
        if path:  # an empty path: the person cancelled; the page stays
            self.use_requested.emit(path)
