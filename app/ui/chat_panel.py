"""The chat under the model bar: the conversation, the composer (the message box with Send and
Stop), Continue, the quiet status line under it (speed, context), editing a question,
regenerating a reply, and the conversation's settings drawer.

A view of the chat session (app/services/chat_session.py) and of the model in use
(app/services/active_model.py): a reply is asked of the endpoint the model in use has now, and a
reply to an endpoint that goes away ends. It never waits: it reacts to signals.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from app.chat.message import Message
from app.chat.sampling import CHAT_DEFAULTS, Sampling, model_defaults
from app.chat.transcript import Transcript, can_continue
from app.library.conversations import Conversation
from app.remote.servers import RemoteModel
from app.services.active_model import ActiveModel
from app.services.chat_session import ChatSession
from app.services.protocols import ConversationsLike
from app.services.runner_process import RunnerState
from app.ui.attachments import Attachments
from app.ui.chat_settings import ChatSettingsPanel
from app.ui.chat_status import ChatStatus
from app.ui.chat_view import ChatView
from app.ui.lang import tr, ui_text
from app.ui.style.components import icon_button, tooltip_with_shortcut
from app.ui.style.tokens import SPACING
from app.ui.tool_approval import ToolApprovalBar

if TYPE_CHECKING:  # made by the composition root; not imported on the way to the first frame
    from app.loading.endpoint import ChatEndpoint
    from app.services.documents import DocumentService
    from app.services.images import ImageService


class MessageBox(QPlainTextEdit):
    """Enter sends, Shift+Enter starts a new line, Tab and Shift+Tab move the focus on (a chat
    message has no use for a tab character, and a keyboard user must be able to leave)."""

    def __init__(self, on_send: Callable[[], None]) -> None:
        super().__init__()
        self._on_send = on_send
        self.setTabChangesFocus(True)

    def keyPressEvent(self, e: QKeyEvent) -> None:
        if e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and \
                not e.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self._on_send()
            return
        super().keyPressEvent(e)


def _toolless(endpoint: ChatEndpoint | None, wanted: bool) -> str:
    """Why the tools turned on are not offered to the model in use ("": they are, or none
    is on)."""
    if endpoint is None or endpoint.tools or not wanted:
        return ""
    return tr("This model's chat template knows no tools, so the tools turned on in Settings → "
              "Tools are not offered to it. A model made for tool calling (Qwen, Llama 3.1, "
              "Mistral) can use them.")


def _blind(endpoint: ChatEndpoint | None) -> str:
    """Why a question's images will not reach the model in use ("": they will)."""
    if endpoint is None or endpoint.sees_images:
        return ""
    if endpoint.is_remote:
        return tr("Images are not sent to a server's model (whether it sees images is not "
                  "known); they stay with the message.")
    return tr("The loaded model cannot see images: no vision projector (an mmproj file) lies "
              "beside it. The images stay with the message for a model that can.")


class ChatPanel(QWidget):
    notice = Signal(str, int)  # a passing note for the window's status bar, and for how long
    updated = Signal()  # Send, Stop and Continue were enabled anew (the menu follows them)

    def __init__(self, session: ChatSession, active: ActiveModel, *,
                 conversations: ConversationsLike | None = None,
                 select_model: Callable[[str], None] = lambda _model: None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.active = active
        self.conversations = conversations
        self._select_model = select_model  # offers a model in the picker (not loaded)
        self._editing: Message | None = None  # the question being edited (Edit and resend)
        self._branched = False  # the reply streaming now makes a new version
        self._current: Callable[[int | None], None] = lambda _conv: None  # the sidebar's mark
        self._documents: DocumentService | None = None  # use_documents(): attaching shown
        self._build()
        self._follow_session(session)
        self._follow(active)
        self.chat.set_placeholder(tr("Pick a GGUF model above and press Load to start "
                                     "chatting."))
        self._show_chat_settings()

    def _build(self) -> None:
        self.chat = ChatView()
        self.chat.action.connect(self._on_message_action)
        self.chat.copied.connect(lambda what: self.notice.emit(
            tr("Copied the code.") if what == "the code" else tr("Copied the message."), 2500))
        self.chat_status = ChatStatus()
        self.edit_label = QLabel()
        self.edit_label.setTextFormat(Qt.TextFormat.PlainText)
        self.edit_label.setWordWrap(True)
        self.edit_label.setText(tr("Editing your message: Send asks it as a new version (the "
                                   "old one and its replies are kept). Esc cancels."))
        self.edit_label.setProperty("tone", "info")
        self.edit_label.setProperty("type", "small")
        self.edit_label.hide()
        self.input = MessageBox(self.send)
        self.input.setPlaceholderText(tr("Type a message. Enter sends, Shift+Enter for a new "
                                         "line."))
        self.input.setAccessibleName(tr("Message"))
        self.input.setFixedHeight(76)
        # The keys belong to the message box (Enter) and the menu (Esc): the buttons' tooltips
        # only name them, so no key has two owners.
        self.send_btn = icon_button("send", tr("Send"), tone="accent")
        self.send_btn.setToolTip(tooltip_with_shortcut(tr("Send"), "Return"))
        self.send_btn.clicked.connect(self.send)
        self.stop_btn = icon_button("stop", tr("Stop"), tone="danger", text=tr("Stop"))
        self.stop_btn.setToolTip(tooltip_with_shortcut(
            tr("Stop the reply; what it wrote so far is kept"), "Esc"))
        self.stop_btn.clicked.connect(self.session.stop)
        self.continue_btn = icon_button("next", tr("Continue"), text=tr("Continue"))
        self.continue_btn.setToolTip(tr("Let the model go on with its last reply, which was "
                                        "cut"))
        self.continue_btn.clicked.connect(self.continue_reply)
        self.attachments = Attachments()
        self.attachments.refused.connect(lambda text: self.notice.emit(text, 6000))
        self.attach_btn = icon_button("file", tr("Attach files"))
        self.attach_btn.setToolTip(tr("Attach documents or images to your next message: text, "
                                      "Markdown, code, PDF, DOCX, HTML; PNG, JPEG, WebP, GIF. "
                                      "An image can also be pasted (Ctrl+V)."))
        self.attach_btn.clicked.connect(self.attachments.choose)
        self.attach_btn.hide()  # until use_documents() or use_images()
        self.composer = QFrame()
        self.composer.setObjectName("composer")
        buttons = QVBoxLayout()
        buttons.setSpacing(SPACING.xs)
        buttons.addWidget(self.attach_btn)
        buttons.addStretch(1)
        buttons.addWidget(self.stop_btn)
        buttons.addWidget(self.send_btn)
        inside = QHBoxLayout(self.composer)
        inside.setContentsMargins(SPACING.sm, SPACING.sm, SPACING.sm, SPACING.sm)
        inside.setSpacing(SPACING.sm)
        inside.addWidget(self.input, 1)
        inside.addLayout(buttons)
        above = QHBoxLayout()  # what the box is doing now: editing, or a reply to go on with
        above.setContentsMargins(SPACING.xs, 0, 0, 0)
        above.addWidget(self.edit_label, 1)
        self.tools_note = QLabel()
        self.tools_note.setTextFormat(Qt.TextFormat.PlainText)
        self.tools_note.setWordWrap(True)
        self.tools_note.setProperty("tone", "muted")
        self.tools_note.setProperty("type", "small")
        self.tools_note.hide()
        above.addWidget(self.tools_note, 1)
        above.addStretch(0)
        above.addWidget(self.continue_btn)
        column = QVBoxLayout(self)
        column.setContentsMargins(SPACING.lg, SPACING.lg, SPACING.lg, SPACING.md)
        column.setSpacing(SPACING.sm)
        column.addWidget(self.chat, 1)
        column.addLayout(above)
        column.addWidget(self.attachments)
        self.approval = ToolApprovalBar(self.session.decide)
        column.addWidget(self.approval)
        column.addWidget(self.composer)
        column.addWidget(self.chat_status)
        # The conversation's settings: a drawer the window places beside the chat.
        self.chat_settings = ChatSettingsPanel()
        self.chat_settings.changed.connect(self._on_chat_settings)
        self.chat_settings.hide()

    def _follow_session(self, session: ChatSession) -> None:
        session.message_added.connect(self.chat.append_message)
        session.live_changed.connect(self.chat.set_live)
        session.reply_finished.connect(self.chat.append_message)
        session.reply_finished.connect(self._after_reply)
        session.shown_changed.connect(self.chat.set_messages)
        session.busy_changed.connect(lambda _busy: self.update_buttons())
        session.conversation_changed.connect(self._on_conversation)
        session.stats_changed.connect(self.chat_status.show_stats)
        session.trimmed.connect(self.chat_status.show_trimmed)
        session.approval_changed.connect(self.approval.show_approval)
        if session.tools is not None:  # a tool turned on or off: the composer's note follows
            session.tools.changed.connect(self.update_buttons)
            session.tools.changed.connect(self._show_conversation_tools)
        self.chat_settings.tools.changed.connect(session.set_tools_off)
        self.chat_settings.thinking.changed.connect(session.set_thinking)

    def _follow(self, active: ActiveModel) -> None:
        active.leaving.connect(lambda died: self.session.runner_died() if died
                               else self.session.stop())
        active.in_use.connect(self._set_conversation_model)
        active.planned.connect(self._show_model)
        active.runner_state.connect(self._on_runner_state)
        active.remote_ready.connect(self._on_remote_ready)
        active.ready.connect(lambda: self._say_hello(tr("The model is ready. Say hello.")))
        active.changed.connect(self.update_buttons)
        self.session.server_failed.connect(active.server_failed)

    def follow_sidebar(self, set_current: Callable[[int | None], None]) -> None:
        """``set_current(conversation id)`` marks the conversation shown in the sidebar."""
        self._current = set_current

    # ---- what the model in use reports -------------------------------------------------------

    def _say_hello(self, placeholder: str) -> None:
        self.chat.set_placeholder(placeholder)
        self.input.setFocus()

    def _on_runner_state(self, state: RunnerState) -> None:
        if state == RunnerState.STOPPED:
            self.chat_status.set_context_size(0)

    def _show_model(self, plan: object) -> None:
        """What the chat takes from the model's header: its sampling defaults and its context
        (a plan without its model, a test's, leaves Hearth's defaults)."""
        model = getattr(plan, "model", None)
        general = dict(getattr(model, "general", {}) or {})
        self._set_defaults(model_defaults(general) if model is not None else CHAT_DEFAULTS,
                           int(getattr(getattr(plan, "settings", None), "n_ctx", 0) or 0))

    def _set_defaults(self, defaults: Sampling, context_size: int) -> None:
        self.session.model_defaults = defaults
        self.chat_settings.set_model_defaults(defaults)
        self.session.context_size = context_size
        self.chat_status.set_context_size(context_size)

    def _on_remote_ready(self, model: RemoteModel) -> None:
        # Nothing here knows the server model's defaults or context: the server applies its
        # own, and nothing is trimmed on this side.
        self._set_defaults(CHAT_DEFAULTS, 0)
        endpoint = self.active.endpoint
        server = endpoint.source.server if endpoint is not None else ""
        self._say_hello(tr("{model} on {server} is ready. Say hello.").format(
            model=model.model, server=server))

    def _set_conversation_model(self, model: str) -> None:
        """The model the conversation goes on with (a path, or a remote model's key)."""
        self.session.transcript.model = model
        if self.conversations is not None:
            self.conversations.set_model(self.session.transcript)

    # ---- conversations -------------------------------------------------------------------------

    def new_conversation(self) -> None:
        """A new, empty chat (Ctrl+N) with the model in use now."""
        self.cancel_edit()
        self.session.new_conversation(self.active.model_in_use)
        self.input.setFocus()

    def open_conversation(self, conv: Conversation) -> None:
        self.cancel_edit()
        self.session.open_conversation(conv)
        model = conv.model
        if model and model != self.active.current_key:
            # The model it was written with is offered, not loaded: loading takes a while.
            self._select_model(model)
            if self.active.endpoint is not None:
                remote = RemoteModel.from_key(model)
                name = remote.model if remote is not None else os.path.basename(model)
                self.notice.emit(tr("This conversation was written with {name}; it goes on "
                                    "with the model in use now unless you switch.").format(
                                        name=name), 8000)

    def conversation_deleted(self, conv_id: int) -> None:
        if self.session.transcript.conversation_id == conv_id:
            self.new_conversation()

    def conversations_changed(self) -> None:
        self._current(self.session.transcript.conversation_id)

    def _on_chat_settings(self, system_prompt: str, sampling: Sampling) -> None:
        self.session.set_chat_settings(system_prompt, sampling)

    def _show_chat_settings(self) -> None:
        settings = self.session.chat_settings()
        self.chat_settings.set_values(settings.system_prompt, settings.sampling,
                                      self.session.model_defaults)

    def _on_conversation(self, transcript: Transcript) -> None:
        self.chat.set_messages(transcript.messages)
        self.chat_status.reset()
        self._show_chat_settings()
        self.chat_settings.knowledge.set_paths(self.session.knowledge)
        self._show_conversation_tools()
        if self._documents is not None:
            self._documents.watch(self.session.knowledge)
        self._current(transcript.conversation_id)
        self.update_buttons()

    def _show_conversation_tools(self) -> None:
        self.chat_settings.tools.set_sources(self.session.tool_sources(),
                                             self.session.tools_off())
        endpoint = self.active.endpoint
        self.chat_settings.thinking.show_choice(endpoint.thinking if endpoint else "",
                                                self.session.thinking)

    def _knowledge_changed(self, paths: list[str]) -> None:
        self.session.set_knowledge(paths)
        if self._documents is not None:
            self._documents.watch(paths)

    # ---- chatting --------------------------------------------------------------------------

    def use_documents(self, service: DocumentService) -> None:
        """Attaching documents to a question, made ready by ``service`` when it is sent."""
        self._documents = service
        self.attach_btn.show()
        self.attachments.take_drops(self.input.viewport())  # files dropped on the box
        service.ready.connect(self._send_with)
        service.failed.connect(lambda text: self.notice.emit(ui_text(text), 10000))
        service.busy_changed.connect(lambda _busy: self.update_buttons())
        service.progress.connect(lambda done, total: self.notice.emit(tr(
            "Reading the attached documents… {done} of {total}").format(
                done=done + 1, total=total), 0) if total > 1 else None)
        knowledge = self.chat_settings.knowledge
        knowledge.changed.connect(self._knowledge_changed)
        knowledge.refused.connect(lambda text: self.notice.emit(text, 6000))
        service.watch(self.session.knowledge)

    def use_images(self, service: ImageService) -> None:
        """Attaching images (file dialog, drops, Ctrl+V), made ready by ``service`` at once."""
        self.session.images = service.store
        self.chat.use_images(service.store)
        self.attach_btn.show()
        self.attachments.take_drops(self.input.viewport())
        self.attachments.take_paste(self.input)
        self.attachments.images_wanted.connect(service.add_files)
        self.attachments.image_pasted.connect(
            lambda image: service.add_image(image, tr("Pasted image")))
        service.ready.connect(self.attachments.add_images)
        service.refused.connect(lambda text: self.notice.emit(ui_text(text), 10000))

    def send(self) -> None:
        endpoint = self.active.endpoint
        if endpoint is None:
            return
        self.chat_settings.flush()  # an edit still waiting on its timer counts for this reply
        text = self.input.toPlainText()
        documents = [*self.attachments.paths, *self.session.knowledge]
        if self._documents is not None and documents and self._editing is None \
                and text.strip() and not self.session.busy:
            history = [str(m["content"]) for m in self.session.sent_messages()]
            self._documents.prepare(documents, text.strip(), endpoint, self.session.room(),
                                    history)
            self.notice.emit(tr("Reading the attached documents…"), 0)
            return
        if self._editing is not None:
            sent = self._branched = self.session.edit_and_resend(self._editing, text, endpoint)
        else:
            sent = self.session.send(text, endpoint, images=self.attachments.image_refs())
        if sent:
            self.input.clear()
            if self._editing is None:
                self.attachments.clear()
            self.cancel_edit()

    def _send_with(self, documents: dict[str, Any]) -> None:
        """The attached documents are ready: the question goes with them."""
        endpoint = self.active.endpoint
        if endpoint is not None and self.session.send(self.input.toPlainText(), endpoint,
                                                      documents, self.attachments.image_refs()):
            self.input.clear()
            self.attachments.clear()
            self.notice.emit("", 0)

    def continue_reply(self) -> None:
        messages = self.session.transcript.messages
        endpoint = self.active.endpoint
        if endpoint is not None and messages:
            self.session.continue_reply(messages[-1], endpoint)

    def _on_message_action(self, kind: str, message: Message) -> None:
        if self.session.busy:
            self.notice.emit(tr("Wait for the reply to finish, or press Stop."), 4000)
        elif kind == "edit":
            self._editing = message
            self.input.setPlainText(message.content)
            self.input.setFocus()
            self.edit_label.show()
            self.update_buttons()
        elif kind == "regenerate":
            endpoint = self.active.endpoint
            if endpoint is None:
                self.notice.emit(tr("Load a model to regenerate the reply."), 4000)
                return
            self.chat_settings.flush()
            self._branched = self.session.regenerate(message, endpoint)
        elif kind in ("prev", "next") and message.id is not None and message.siblings:
            self._show_sibling(message, 1 if kind == "next" else -1)

    def _show_sibling(self, message: Message, step: int) -> None:
        assert message.id is not None
        at = message.siblings.index(message.id) + step
        conv = self.session.transcript.conversation_id
        if self.conversations is not None and conv is not None and \
                0 <= at < len(message.siblings):
            self.conversations.show_branch(conv, message.siblings[at])

    def _after_reply(self, _reply: Message) -> None:
        """A new version was made: read the conversation again for its version links."""
        conv = self.session.transcript.conversation_id
        if self._branched and self.conversations is not None and conv is not None:
            self.conversations.open(conv)  # queued after the reply's save on the store thread
        self._branched = False

    def cancel_edit(self) -> None:
        if self._editing is not None:
            self._editing = None
            self.edit_label.hide()
            self.update_buttons()

    def escape(self) -> None:
        """Esc stops a reply, or else leaves editing a message."""
        if self.session.busy:
            self.session.stop()
        elif self._editing is not None:
            self.cancel_edit()
            self.input.clear()

    @property
    def can_stop(self) -> bool:
        """Esc has something to stop or leave (else it is free for other widgets)."""
        return self.session.busy or self._editing is not None

    def update_buttons(self) -> None:
        streaming = self.session.busy
        ready = self.active.endpoint is not None
        reading = self._documents is not None and self._documents.busy
        self.send_btn.setEnabled(ready and not streaming and not reading)
        self.attachments.set_blind(_blind(self.active.endpoint))
        self._show_conversation_tools()  # the model in use decides what thinking allows
        toolless = _toolless(self.active.endpoint, self.session.tools_wanted())
        self.tools_note.setText(toolless)
        self.tools_note.setVisible(bool(toolless) and self._editing is None)
        self.stop_btn.setEnabled(streaming)
        # One of the two in the composer's corner: Send, or Stop while a reply streams.
        self.send_btn.setVisible(not streaming)
        self.stop_btn.setVisible(streaming)
        self.continue_btn.setVisible(ready and not streaming and
                                     can_continue(self.session.transcript))
        self.updated.emit()
