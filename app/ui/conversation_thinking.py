"""A conversation's thinking, in its settings drawer: on or off for a model whose chat template
reads ``enable_thinking`` (Qwen 3), low, medium or high for one that reads ``reasoning_effort``
(gpt-oss), the model's own default otherwise. Hidden for a model whose template has neither.
The choice is kept with the conversation (its settings' ``thinking``); the box only edits it."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QVBoxLayout, QWidget

from app.ui.common import plain_label
from app.ui.lang import tr
from app.ui.style.components import heading, set_shown
from app.ui.style.tokens import SPACING


def _choices(control: str) -> list[tuple[str, str]]:
    if control == "toggle":
        return [("", tr("Model default")), ("on", tr("On")), ("off", tr("Off"))]
    if control == "effort":
        return [("", tr("Model default")), ("low", tr("Low")), ("medium", tr("Medium")),
                ("high", tr("High"))]
    return []


class ConversationThinkingBox(QWidget):
    changed = Signal(str)  # the choice, after the person changed it

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, SPACING.md, 0, 0)
        column.setSpacing(SPACING.xs)
        column.addWidget(heading(tr("Thinking"), "subheading"))
        column.addWidget(plain_label(tr(
            "Whether the model thinks before it answers, or how hard: slower, often better."),
            tone="muted", kind="small"))
        self.choice = QComboBox()
        self.choice.setAccessibleName(tr("Thinking"))
        self.choice.activated.connect(lambda _i: self.changed.emit(self.value()))
        column.addWidget(self.choice)
        self._control = ""
        set_shown(self, False)

    def show_choice(self, control: str, value: str) -> None:
        """The choices ``control`` allows ("toggle", "effort", "": hidden), ``value`` chosen;
        emits nothing."""
        if control != self._control:
            self._control = control
            self.choice.clear()
            for key, label in _choices(control):
                self.choice.addItem(label, key)
        index = self.choice.findData(value)
        self.choice.setCurrentIndex(max(0, index))
        set_shown(self, bool(control))

    def value(self) -> str:
        data = self.choice.currentData()
        return data if isinstance(data, str) else ""
