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
from PySide6.QtGui import QAction
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
    Field,
    Sampling,
    parse,
    preset_of,
)
from app.ui.common import plain_label
from app.ui.conversation_thinking import ConversationThinkingBox
from app.ui.conversation_tools import ConversationToolsBox
from app.ui.knowledge_box import KnowledgeBox
from app.ui.lang import format_number, tr, ui_text
from app.ui.style.components import heading, set_tone
from app.ui.style.icons import icon
from app.ui.style.tokens import SPACING

log = logging.getLogger(__name__)

CUSTOM = "Custom"  # the English name of the preset entry where edits land (tests read it)


def _shown(f: Field, value: float | None) -> str:
    """A value as the panel shows it, in the locale's format ("0,7" in German, "40"); ``parse``
    reads a decimal comma back."""
    if value is None:
        return ""
    return format_number(int(value), "") if f.kind is int else format_number(float(value), "")


def _no_default(name: str) -> str:
    """What an unset field means when neither the model file nor the runner has a value."""
    return {"max_tokens": tr("no limit"), "seed": tr("random")}.get(name, tr("none"))


class ChatSettingsPanel(QWidget):
    """The settings of one conversation. ``set_values`` shows a conversation's settings without
    emitting; user edits emit ``changed(system_prompt, sampling)`` after ``debounce_ms``."""

    changed = Signal(str, object)  # system prompt, app.chat.sampling.Sampling

    def __init__(self, parent: QWidget | None = None, debounce_ms: int = 600) -> None:
        super().__init__(parent)
        self.setObjectName("chatSettings")
        self.setAccessibleName(tr("Conversation settings"))
        self._defaults = Sampling()  # the model file's
        self._last: tuple[str, Sampling] = ("", Sampling())  # shown or emitted last
        # An invalid field says so with an error sign inside it (not by colour alone), its
        # sentence in the sign's tooltip and under the fields.
        self._invalid_marks: dict[str, QAction] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self.flush)
        layout = QVBoxLayout(self)
        # A drawer at the window's right edge: room on both sides, so its fields do not run
        # into the edge (the splitter's handle is on the left).
        layout.setContentsMargins(SPACING.xl, SPACING.lg, SPACING.xl, SPACING.lg)
        layout.setSpacing(SPACING.sm)
        layout.addWidget(heading(tr("Conversation settings"), "subheading"))

        prompt_label = plain_label(tr("System prompt"), selectable=False)
        self.prompt = QPlainTextEdit()
        self.prompt.setAccessibleName(tr("System prompt"))
        self.prompt.setAccessibleDescription(tr("Instructions the model reads before the "
                                                "conversation. Empty: none."))
        self.prompt.setPlaceholderText(tr("None. For example: You are a concise assistant."))
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
        form.setHorizontalSpacing(SPACING.md)
        form.setVerticalSpacing(SPACING.sm)
        self.preset = QComboBox()
        self.preset.setAccessibleName(tr("Preset"))
        self.preset.setAccessibleDescription(tr("Fills the sampling settings with a style. Max "
                                                "tokens and the seed are kept."))
        self.preset.addItems([ui_text(p.name) for p in PRESETS] + [tr("Custom")])
        self.preset.activated.connect(self._preset_chosen)
        form.addRow(self._label(tr("Preset"), self.preset), self.preset)

        self.fields: dict[str, QLineEdit] = {}
        for f in FIELDS:
            edit = QLineEdit()
            edit.setAccessibleName(ui_text(f.label))
            edit.setClearButtonEnabled(True)
            edit.setInputMethodHints(Qt.InputMethodHint.ImhFormattedNumbersOnly)
            edit.textEdited.connect(self._edited)
            edit.editingFinished.connect(self.flush)
            self.fields[f.name] = edit
            form.addRow(self._label(ui_text(f.label), edit), edit)
        layout.addLayout(form)

        self.error = plain_label("", selectable=False)
        set_tone(self.error, "danger")
        self.error.setAccessibleName(tr("Settings error"))
        self.error.hide()
        layout.addWidget(self.error)

        self.reset = QPushButton(icon("regenerate"), tr("Reset to model defaults"))
        self.reset.setAccessibleName(tr("Reset sampling to the model's defaults"))
        self.reset.setToolTip(tr("Empties every sampling setting, so the model's own defaults "
                                 "apply. The system prompt is kept."))
        self.reset.clicked.connect(self._reset)
        layout.addWidget(self.reset)
        # The conversation's documents, tools and thinking (the chat panel edits them).
        self.knowledge, self.tools, self.thinking = (
            KnowledgeBox(), ConversationToolsBox(), ConversationThinkingBox())
        for box in (self.knowledge, self.tools, self.thinking):
            layout.addWidget(box)
        layout.addStretch(1)
        self._tab_order()
        self._show_defaults()
        self._sync_preset()

    def _tab_order(self) -> None:
        """Reading order: prompt, preset, the settings top to bottom, reset, the knowledge."""
        box = self.knowledge
        chain: list[QWidget] = [self.prompt, self.preset, *self.fields.values(), self.reset,
                                box.list, box.add_files, box.add_folder, box.remove]
        for a, b in itertools.pairwise(chain):
            QWidget.setTabOrder(a, b)

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
                self.fields[f.name].setText(_shown(f, getattr(sampling, f.name)))
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
            except ValueError as exc:
                problems.append(ui_text(exc.args[0]) if exc.args else str(exc))
                self._mark(f.name, edit, problems[-1])
            else:
                self._mark(f.name, edit, "")
        self.error.setText(problems[0] if problems else "")
        self.error.setVisible(bool(problems))
        return problems[0] if problems else ""

    def _mark(self, name: str, edit: QLineEdit, problem: str) -> None:
        """Show (``problem``) or take away the error sign inside the field ``name``."""
        mark = self._invalid_marks.get(name)
        if problem and mark is None:
            mark = edit.addAction(icon("error", "danger"),
                                  QLineEdit.ActionPosition.TrailingPosition)
            self._invalid_marks[name] = mark
        elif not problem and mark is not None:
            edit.removeAction(mark)
            del self._invalid_marks[name]
            mark = None
        if mark is not None:
            mark.setToolTip(problem)
            mark.setText(problem)

    def _preset_chosen(self, index: int) -> None:
        if not 0 <= index < len(PRESETS):
            return  # "Custom" is where edits land, not a style of its own
        sampling = PRESETS[index].apply(self._sampling())
        for name in STYLE_FIELDS:
            self.fields[name].setText(_shown(FIELD_BY_NAME[name], getattr(sampling, name)))
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
            shown = _shown(f, value) if value is not None else _no_default(f.name)
            edit.setPlaceholderText(tr("model default: {value}").format(value=shown))
            if mine is not None:
                default = tr("Model default: {value} (from the model file).")
            elif value is not None:
                default = tr("Model default: {value} (llama.cpp's default; the model file "
                             "names none).")
            else:
                default = tr("Model default: {value}.")
            tip = "\n".join((ui_text(f.help), default.format(value=shown),
                             tr("Range: {low} to {high}.").format(low=_shown(f, f.minimum),
                                                                 high=_shown(f, f.maximum))))
            edit.setToolTip(tip)
            edit.setAccessibleDescription(tip)

