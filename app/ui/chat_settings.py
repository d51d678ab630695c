"""The chat settings panel: a conversation's system prompt, a preset and each sampling setting.

Meant for a side drawer of the chat page. An empty field means "the model's default", and its
placeholder says what that default is (from the model file where it names one, else llama.cpp's).
The panel only shows and edits values: the owner stores them per conversation and sends them
with each request (``Sampling.to_params(model_defaults)``).

``changed`` is debounced: typing a system prompt emits once, a moment after the last key (or at
once when the field loses focus), not per keystroke; the same values are never emitted twice.
"""

from __future__ import annotations

import itertools
import logging

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.chat.sampling import (
    FIELD_BY_NAME,
    FIELDS,
    PRESETS,
    RUNNER_DEFAULTS,
    STYLE_FIELDS,
    Sampling,
    parse,
    preset_of,
    show,
)
from app.ui.common import heading_label, plain_label

log = logging.getLogger(__name__)

CUSTOM = "Custom"
# What an unset field means when neither the model file nor the runner has a value.
_NO_DEFAULT = {"max_tokens": "no limit", "seed": "random"}


class ChatSettingsPanel(QWidget):
    """The settings of one conversation. ``set_values`` shows a conversation's settings without
    emitting; user edits emit ``changed(system_prompt, sampling)`` after ``debounce_ms``."""

    changed = Signal(str, object)  # system prompt, app.chat.sampling.Sampling

    def __init__(self, parent: QWidget | None = None, debounce_ms: int = 600) -> None:
        super().__init__(parent)
        self.setObjectName("chatSettings")
        self.setAccessibleName("Conversation settings")
        self._defaults = Sampling()  # the model file's
        self._last: tuple[str, Sampling] = ("", Sampling())  # shown or emitted last
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self.flush)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(heading_label("Conversation settings"))

        prompt_label = plain_label("System prompt", selectable=False)
        self.prompt = QPlainTextEdit()
        self.prompt.setAccessibleName("System prompt")
        self.prompt.setAccessibleDescription("Instructions the model reads before the "
                                             "conversation. Empty: none.")
        self.prompt.setPlaceholderText("None. For example: You are a concise assistant.")
        self.prompt.setTabChangesFocus(True)  # Tab moves on, as in every other field
        self.prompt.setMinimumHeight(72)
        self.prompt.setMaximumHeight(160)
        prompt_label.setBuddy(self.prompt)
        self.prompt.textChanged.connect(self._edited)
        self.prompt.installEventFilter(self)  # focus out: emit now rather than after the timer
        layout.addWidget(prompt_label)
        layout.addWidget(self.prompt)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.preset = QComboBox()
        self.preset.setAccessibleName("Preset")
        self.preset.setAccessibleDescription("Fills the sampling settings with a style. Max "
                                             "tokens and the seed are kept.")
        self.preset.addItems([p.name for p in PRESETS] + [CUSTOM])
        self.preset.activated.connect(self._preset_chosen)
        form.addRow(self._label("Preset", self.preset), self.preset)

        self.fields: dict[str, QLineEdit] = {}
        for f in FIELDS:
            edit = QLineEdit()
            edit.setAccessibleName(f.label)
            edit.setClearButtonEnabled(True)
            edit.setInputMethodHints(Qt.InputMethodHint.ImhFormattedNumbersOnly)
            edit.textEdited.connect(self._edited)
            edit.editingFinished.connect(self.flush)
            self.fields[f.name] = edit
            form.addRow(self._label(f.label, edit), edit)
        layout.addLayout(form)

        self.error = plain_label("", selectable=False)
        self.error.setStyleSheet("color: #d0342c;")
        self.error.setAccessibleName("Settings error")
        self.error.hide()
        layout.addWidget(self.error)

        self.reset = QPushButton("Reset to model defaults")
        self.reset.setAccessibleName("Reset sampling to the model's defaults")
        self.reset.setToolTip("Empties every sampling setting, so the model's own defaults "
                              "apply. The system prompt is kept.")
        self.reset.clicked.connect(self._reset)
        layout.addWidget(self.reset)
        layout.addStretch(1)

        # Reading order: prompt, preset, the settings top to bottom, reset.
        chain: list[QWidget] = [self.prompt, self.preset, *self.fields.values(), self.reset]
        for a, b in itertools.pairwise(chain):
            QWidget.setTabOrder(a, b)
        self._show_defaults()
        self._sync_preset()

    # ---- the owner's API ----------------------------------------------------------------------

    def set_values(self, system_prompt: str, sampling: Sampling,
                   model_defaults: Sampling | None = None) -> None:
        """Show a conversation's settings (and the loaded model's defaults); emits nothing."""
        self._timer.stop()
        if model_defaults is not None:
            self._defaults = model_defaults
        blocked = [w.blockSignals(True) for w in (self.prompt, *self.fields.values())]
        try:
            if self.prompt.toPlainText() != system_prompt:
                self.prompt.setPlainText(system_prompt)
            for f in FIELDS:
                self.fields[f.name].setText(show(f, getattr(sampling, f.name)))
        finally:
            for w, was in zip((self.prompt, *self.fields.values()), blocked, strict=True):
                w.blockSignals(was)
        self._last = (system_prompt, sampling)
        self._validate()
        self._show_defaults()
        self._sync_preset()

    def set_model_defaults(self, model_defaults: Sampling) -> None:
        """The loaded model changed: show its defaults in the empty fields."""
        self._defaults = model_defaults
        self._show_defaults()

    def values(self) -> tuple[str, Sampling]:
        """The system prompt and sampling now shown; a field with an invalid value keeps the last
        valid one."""
        return self.prompt.toPlainText(), self._sampling()

    def flush(self) -> None:
        """Emit pending edits now (the owner calls it before sending a message)."""
        self._timer.stop()
        if self._validate():
            return  # an invalid field: wait until it is fixed rather than send half an edit
        now = self.values()
        if now != self._last:
            self._last = now
            self.changed.emit(*now)

    # ---- internals ----------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.prompt and event.type() == QEvent.Type.FocusOut:
            self.flush()
        return super().eventFilter(watched, event)

    @staticmethod
    def _label(text: str, buddy: QWidget) -> QLabel:
        label = plain_label(text, selectable=False, wrap=False)
        label.setBuddy(buddy)
        return label

    def _edited(self, *_: object) -> None:
        self._validate()
        self._sync_preset()
        self._timer.start()

    def _sampling(self) -> Sampling:
        values: dict[str, int | float | None] = {}
        for f in FIELDS:
            try:
                values[f.name] = parse(f, self.fields[f.name].text())
            except ValueError:
                values[f.name] = getattr(self._last[1], f.name)
        return Sampling(**values)  # type: ignore[arg-type]

    def _validate(self) -> str:
        """Mark invalid fields; the first problem's sentence, or "" when all are valid."""
        problems: list[str] = []
        for f in FIELDS:
            edit = self.fields[f.name]
            try:
                parse(f, edit.text())
                edit.setStyleSheet("")
            except ValueError as exc:
                problems.append(str(exc))
                edit.setStyleSheet("color: #d0342c;")
        self.error.setText(problems[0] if problems else "")
        self.error.setVisible(bool(problems))
        return problems[0] if problems else ""

    def _preset_chosen(self, index: int) -> None:
        if not 0 <= index < len(PRESETS):
            return  # "Custom" is where edits land, not a style of its own
        sampling = PRESETS[index].apply(self._sampling())
        for name in STYLE_FIELDS:
            self.fields[name].setText(show(FIELD_BY_NAME[name], getattr(sampling, name)))
        self._edited()

    def _reset(self) -> None:
        for edit in self.fields.values():
            edit.clear()
        self._edited()
        self.flush()

    def _sync_preset(self) -> None:
        preset = preset_of(self._sampling())
        self.preset.setCurrentIndex(PRESETS.index(preset) if preset else len(PRESETS))

    def _show_defaults(self) -> None:
        for f in FIELDS:
            edit = self.fields[f.name]
            mine = getattr(self._defaults, f.name)
            value = mine if mine is not None else getattr(RUNNER_DEFAULTS, f.name)
            shown = show(f, value) if value is not None else _NO_DEFAULT.get(f.name, "none")
            edit.setPlaceholderText(f"model default: {shown}")
            source = ("from the model file" if mine is not None else
                      "llama.cpp's default; the model file names none" if value is not None
                      else "")
            tip = f"{f.help}\nModel default: {shown}" + (f" ({source})." if source else ".")
            tip += f"\nRange: {show(f, f.minimum)} to {show(f, f.maximum)}."
            edit.setToolTip(tip)
            edit.setAccessibleDescription(tip)

