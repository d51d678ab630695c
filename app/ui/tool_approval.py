"""The question before a tool call runs: which tool, from where, with what, and the person's answer.

Everything shown comes from outside Hearth: the tool's name and description from its server (a
description may try to instruct the model, or the person), the arguments from the model. All of
it is plain text here, never rich text, and the description is labelled as the server's words.
The answers: Allow once, Allow in this conversation, Always allow (this tool as it is now: a
changed description or schema asks again) and Deny (the model is told). Esc is Stop, as
everywhere in the chat: it ends the reply and runs nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.chat.render import pretty_json
from app.services.tool_round import ALWAYS, CONVERSATION, DENY, ONCE, Approval
from app.tools.spec import BUILTIN
from app.ui.lang import tr
from app.ui.style.components import primary_button, set_shown
from app.ui.style.tokens import SPACING

SHOWN_ARGUMENTS = 4_000  # characters of the arguments shown (the rest: "…")
SHOWN_DESCRIPTION = 600


class ToolApprovalBar(QFrame):
    """Shown over the message box while a call waits for the person's answer."""

    def __init__(self, decide: Callable[[str, str], None], parent: QWidget | None = None
                 ) -> None:
        super().__init__(parent)
        self.setProperty("banner", "warning")
        self.setAccessibleName(tr("A tool call waits for your answer"))
        self._decide = decide
        self._uid = ""
        self.title = _plain(QLabel())
        self.title.setProperty("type", "heading")
        self.description = _plain(QLabel())
        self.description.setProperty("tone", "muted")
        self.description.setWordWrap(True)
        self.arguments = QPlainTextEdit()
        self.arguments.setReadOnly(True)
        self.arguments.setAccessibleName(tr("The call's arguments"))
        self.arguments.setMaximumHeight(96)
        self.once = primary_button(tr("Allow once"))
        self.here = QPushButton(tr("Allow in this conversation"))
        self.always = QPushButton(tr("Always allow"))
        self.always.setToolTip(tr("Run this tool without asking from now on, as long as its "
                                  "server describes it as it does now"))
        self.deny = QPushButton(tr("Deny"))
        self.deny.setToolTip(tr("Do not run it; the model is told you did not allow it"))
        row = QHBoxLayout()
        row.setSpacing(SPACING.sm)
        for button, choice in ((self.once, ONCE), (self.here, CONVERSATION),
                               (self.always, ALWAYS), (self.deny, DENY)):
            button.setAccessibleName(button.text())
            button.clicked.connect(lambda _=False, c=choice: self._answer(c))
            row.addWidget(button)
        row.addStretch(1)
        column = QVBoxLayout(self)
        column.setContentsMargins(SPACING.lg, SPACING.sm, SPACING.lg, SPACING.sm)
        column.setSpacing(SPACING.xs)
        column.addWidget(self.title)
        column.addWidget(self.description)
        column.addWidget(self.arguments)
        column.addLayout(row)
        self.hide()

    def show_approval(self, approval: Approval | None) -> None:
        """Ask about ``approval``; None hides the question (answered, or the reply ended)."""
        if approval is None:
            self._uid = ""
            set_shown(self, False)
            return
        self._uid = approval.uid
        spec = approval.spec
        where = tr("built into Hearth") if spec.source == BUILTIN else \
            tr("from the server {server}").format(server=spec.source)
        self.title.setText(tr("The model wants to run the tool {name} ({where}).").format(
            name=spec.name, where=where))
        about = spec.description.strip()
        if len(about) > SHOWN_DESCRIPTION:
            about = about[:SHOWN_DESCRIPTION] + "…"
        self.description.setText(tr("How the tool describes itself: {text}").format(
            text=about) if about else tr("The tool gives no description."))
        self.arguments.setPlainText(_pretty(str(approval.call.get("arguments") or "")))
        set_shown(self, True)
        self.once.setFocus(Qt.FocusReason.OtherFocusReason)

    def _answer(self, choice: str) -> None:
        uid, self._uid = self._uid, ""
        if uid:
            self._decide(uid, choice)


def _plain(label: QLabel) -> QLabel:
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label


def _pretty(arguments: str) -> str:
    text = pretty_json(arguments)
    return text if len(text) <= SHOWN_ARGUMENTS else text[:SHOWN_ARGUMENTS] + "…"
