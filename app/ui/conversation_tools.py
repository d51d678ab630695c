"""A conversation's tools, in its settings drawer: which of the tools turned on in Settings →
Tools this conversation offers (the built-in ones together, each MCP server by its name). What a
conversation leaves out is kept with it (its settings' ``tools_off``); the box only edits it."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QVBoxLayout, QWidget

from app.tools.spec import BUILTIN
from app.ui.common import plain_label
from app.ui.lang import tr
from app.ui.style.components import heading, set_shown
from app.ui.style.tokens import SPACING


class ConversationToolsBox(QWidget):
    changed = Signal(list)  # the sources left out, after the person changed one

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._column = QVBoxLayout(self)
        self._column.setContentsMargins(0, SPACING.md, 0, 0)
        self._column.setSpacing(SPACING.xs)
        self._column.addWidget(heading(tr("Tools"), "subheading"))
        self._column.addWidget(plain_label(tr(
            "What this conversation offers a model that knows tools; each call is still asked "
            "about."), tone="muted", kind="small"))
        self.boxes: dict[str, QCheckBox] = {}
        self._off: list[str] = []

    def set_sources(self, sources: list[str], off: list[str]) -> None:
        """Show ``sources`` (BUILTIN and the servers turned on), those in ``off`` unchecked;
        emits nothing. Hidden when there is none."""
        if list(sources) == list(self.boxes) and list(off) == self._off:
            return  # the same (the panel asks on every change of the model in use)
        self._off = list(off)
        for box in self.boxes.values():
            box.deleteLater()
        self.boxes = {}
        for source in sources:
            label = tr("Built-in tools") if source == BUILTIN else source
            box = QCheckBox(label)
            box.setAccessibleName(tr("Offer {tools} in this conversation").format(tools=label))
            box.setChecked(source not in off)
            box.toggled.connect(lambda _on=False: self._emit())
            self.boxes[source] = box
            self._column.addWidget(box)
        set_shown(self, bool(sources))

    def off(self) -> list[str]:
        """The sources this conversation leaves out (those shown unchecked, and any it left
        out before that are not shown now: a server turned off in Settings stays left out)."""
        shown = set(self.boxes)
        return [s for s in self._off if s not in shown] + \
            [s for s, box in self.boxes.items() if not box.isChecked()]

    def _emit(self) -> None:
        self._off = self.off()
        self.changed.emit(self._off)
