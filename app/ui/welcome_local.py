"""The welcome page's models already on this computer (app/ui/welcome.py): a few of the best
of them, each one click from a chat, and "Open GGUF file…" for a file anywhere else.

The local-models service scans Hearth's folder and other apps' (LM Studio, Ollama, Jan,
GPT4All, the Hugging Face cache); this section only offers its rows. Without the service only
the button to open a file is shown.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from app.hub.verdict import Verdict
from app.services.protocols import LocalModelsLike, LocalRow
from app.ui.common import heading_label, human_size, plain_label

OPEN_FILE = "Open GGUF file…"
LOCAL_HEADING = "Use a model already on this computer"
LOCAL_SHOWN = 5  # a first start needs a few good choices; the Models tab lists them all
_WHERE = "Hearth's folder and other apps' (LM Studio, Ollama, Jan, GPT4All, the Hugging Face cache)"

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
    """Where a model is, its size and type, and whether it fits: "LM Studio · 1.2 MB · Q8_0"."""
    parts = [r.source, human_size(r.size)]
    if r.quantization:
        parts.append(r.quantization)
    if isinstance(r.verdict, Verdict):
        parts.append(r.verdict.label())
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
        self.status = plain_label("", muted=True, selectable=False)
        self.status.setObjectName("local_status")
        self._rows_box = QWidget()
        self._rows = QVBoxLayout(self._rows_box)
        self._rows.setContentsMargins(0, 0, 0, 0)
        self._rows.setSpacing(4)
        self.open_btn = QPushButton(OPEN_FILE)
        self.open_btn.setAccessibleName(OPEN_FILE)
        self.open_btn.setToolTip("Choose a .gguf model file on this computer and chat with it")
        self.open_btn.clicked.connect(self._open_file)
        open_row = QHBoxLayout()
        open_row.addWidget(self.open_btn)
        open_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(heading_label(LOCAL_HEADING))
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
        while self._rows.count():
            item = self._rows.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()
                widget.deleteLater()
        choices = local_choices(rows)
        for r in choices[:LOCAL_SHOWN]:
            self._rows.addWidget(self._row(r))
        # The list speaks for itself; the line says only what it does not show.
        self.status.setVisible(len(choices) == 0 or len(choices) > LOCAL_SHOWN)
        if not choices:
            self.status.setText(f"No models were found in {_WHERE}. Download one above, "
                                "or open a GGUF file.")
        else:
            self.status.setText(f"The first {LOCAL_SHOWN} of {len(choices)}; the Models "
                                "tab lists them all.")

    def _row(self, r: LocalRow) -> QWidget:
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
        use.clicked.connect(lambda _c=False, path=r.path: self.use_requested.emit(path))
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(name)
        layout.addWidget(about, 1)
        layout.addWidget(use)
        return row

    def _on_busy(self, busy: bool) -> None:
        if busy and self._rows.count() == 0:
            self.status.setText(f"Looking in {_WHERE}…")
            self.status.show()

    def _on_failed(self, sentence: str) -> None:
        if self._rows.count() == 0:
            self.status.setText(sentence)
            self.status.show()

    def _open_file(self) -> None:
        path, _filter = self._ask_file(self.window(), "Open a GGUF model", "",
                                       "GGUF models (*.gguf);;All files (*)")
        if path:  # an empty path: the person cancelled; the page stays
            self.use_requested.emit(path)
