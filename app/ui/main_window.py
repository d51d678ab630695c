"""Hearth's main window: pick a model, load it with a plan, chat with it.

The window only lays out views and wires them to the services it is given (created in
app/__main__.py): the runner process, the loader (plans, fallback ladder), the chat session
(transcript, stream, saving) and the model library. It never waits on the runner, the network or
the disk: it reacts to signals. What a load says is worded in app/loading/text.py; what a reply
says when it ends, in app/chat/transcript.py.
"""

from __future__ import annotations

import html
import logging
import os
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent, QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.chat.transcript import Transcript
from app.loading import text as load_text
from app.services.chat_session import ChatSession
from app.services.protocols import LibraryLike, LoaderLike, LocalModelsLike, RunnerLike
from app.services.runner_process import RunnerState
from app.ui.chat_view import ChatView

log = logging.getLogger(__name__)

OPEN_ITEM = "Open GGUF file…"


class _Input(QPlainTextEdit):
    """Enter sends, Shift+Enter starts a new line."""

    def __init__(self, on_send: Any) -> None:
        super().__init__()
        self._on_send = on_send

    def keyPressEvent(self, e: QKeyEvent) -> None:
        if e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and \
                not e.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self._on_send()
            return
        super().keyPressEvent(e)


class MainWindow(QMainWindow):
    def __init__(self, runner: RunnerLike, loader: LoaderLike, session: ChatSession,
                 library: LibraryLike, *, hardware_panel: QWidget | None = None,
                 runner_flags: list[str] | None = None,
                 local_models: LocalModelsLike | None = None,
                 model_tabs: Sequence[tuple[QWidget, str]] = ()) -> None:
        super().__init__()
        self.runner = runner
        self.loader = loader
        self.session = session
        self.library = library
        self.local_models = local_models
        self.runner_flags = list(runner_flags or [])
        self.setWindowTitle("Hearth")
        self.resize(900, 640)

        # --- top bar: model picker, load/unload, progress ---
        self.picker = QComboBox()
        self.picker.setMinimumWidth(320)
        self.picker.activated.connect(self._on_pick)
        self.load_btn = QPushButton("Load")
        self.load_btn.clicked.connect(self.load_selected)
        self.unload_btn = QPushButton("Unload")
        self.unload_btn.clicked.connect(self.unload)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setFixedWidth(180)
        # Plain text everywhere a runner error, a file name or a model's metadata can appear:
        # a label that guesses "rich text" would load an <img> such text names.
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Shown when the runner died after it was ready: same model, last plan that worked.
        self.restart_btn = QPushButton("Restart model")
        self.restart_btn.setToolTip("Load the same model again with the settings that worked; "
                                    "the conversation is kept.")
        self.restart_btn.clicked.connect(self.restart_model)
        self.restart_btn.hide()
        # The plan's reasons, folded away: most people want the numbers, some want the why.
        self.why_btn = QToolButton()
        self.why_btn.setText("Why these settings?")
        self.why_btn.setCheckable(True)
        self.why_btn.setAutoRaise(True)
        self.why_btn.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.why_btn.setArrowType(Qt.ArrowType.RightArrow)
        self.why_btn.toggled.connect(self._toggle_reasons)
        self.why_btn.hide()
        self.steps_label = QLabel()  # the fallback steps taken, one per line
        self.steps_label.setTextFormat(Qt.TextFormat.PlainText)
        self.steps_label.setWordWrap(True)
        self.steps_label.setStyleSheet("color: #8a5a00;")
        self.steps_label.hide()
        self.reasons_label = QLabel()
        self.reasons_label.setTextFormat(Qt.TextFormat.PlainText)
        self.reasons_label.setWordWrap(True)
        self.reasons_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reasons_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.reasons_label.hide()
        status_row = QHBoxLayout()
        status_row.addWidget(self.status, 1)
        status_row.addWidget(self.restart_btn)
        status_row.addWidget(self.why_btn)
        top = QHBoxLayout()
        top.addWidget(QLabel("Model:"))
        top.addWidget(self.picker, 1)
        top.addWidget(self.load_btn)
        top.addWidget(self.unload_btn)
        top.addWidget(self.progress)

        # --- chat ---
        self.chat = ChatView()
        self.input = _Input(self.send)
        self.input.setPlaceholderText("Type a message. Enter sends, Shift+Enter for a new line.")
        self.input.setFixedHeight(84)
        self.send_btn = QPushButton("Send")
        self.send_btn.clicked.connect(self.send)
        self.stop_btn = QPushButton("Stop")
        self.stop_btn.clicked.connect(session.stop)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_btn)
        buttons.addWidget(self.stop_btn)
        bottom = QHBoxLayout()
        bottom.addWidget(self.input, 1)
        bottom.addLayout(buttons)

        root = QVBoxLayout()
        root.addLayout(top)
        root.addLayout(status_row)
        root.addWidget(self.steps_label)
        root.addWidget(self.reasons_label)
        root.addWidget(self.chat, 1)
        root.addLayout(bottom)
        chat_page = QWidget()
        chat_page.setLayout(root)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(chat_page, "Chat")
        for widget, title in model_tabs:  # Discover, Models, Downloads
            self.tabs.addTab(widget, title)
        self.hardware_panel = hardware_panel
        if hardware_panel is not None:
            self.tabs.addTab(hardware_panel, "Hardware")
        self.setCentralWidget(self.tabs)

        runner.state_changed.connect(self._on_runner_state)
        runner.progress.connect(lambda p: self.progress.setValue(int(p * 1000)))
        runner.ready.connect(self._on_ready)
        loader.planned.connect(self._on_planned)
        loader.retrying.connect(self._on_retrying)
        loader.failed.connect(self._on_load_failed)
        loader.died.connect(self._on_runner_died)
        session.message_added.connect(self.chat.append_message)
        session.live_changed.connect(self.chat.set_live)
        session.reply_finished.connect(self.chat.append_message)
        session.busy_changed.connect(lambda _busy: self._update_chat_buttons())
        session.conversation_changed.connect(self._on_conversation)
        session.save_failed.connect(
            lambda text: self._set_status(f"Could not save the conversation: {text}", True))
        library.recent_changed.connect(self._fill_picker)
        if local_models is not None:
            local_models.changed.connect(self._on_local_models)

        self._fill_picker(library.recent())
        self.chat.set_placeholder("Pick a GGUF model above and press Load to start chatting.")
        self._on_runner_state(runner.state)

    # ---- model picking and loading ----------------------------------------------------------

    def _fill_picker(self, paths: list[str], select: str | None = None) -> None:
        select = select or self.selected_model()
        self.picker.blockSignals(True)
        self.picker.clear()
        for p in paths:
            self.picker.addItem(os.path.basename(p), p)
            self.picker.setItemData(self.picker.count() - 1, p, Qt.ItemDataRole.ToolTipRole)
        # Then every other model on this computer (the library), recent ones first.
        others = [r for r in (self.local_models.rows() if self.local_models else [])
                  if not r.error and r.path not in paths]
        if others and paths:
            self.picker.insertSeparator(self.picker.count())
        for r in others:
            self.picker.addItem(f"{r.name} ({r.source})", r.path)
            self.picker.setItemData(self.picker.count() - 1, r.path,
                                    Qt.ItemDataRole.ToolTipRole)
        self.picker.addItem(OPEN_ITEM, None)
        if select is not None:
            self.picker.setCurrentIndex(max(0, self.picker.findData(select)))
        self.picker.blockSignals(False)

    def _on_pick(self, index: int) -> None:
        if self.picker.itemData(index) is None:
            path, _ = QFileDialog.getOpenFileName(self, "Open a GGUF model", "",
                                                  "GGUF models (*.gguf);;All files (*)")
            if path:
                self.choose_model(path)
            else:
                self.picker.setCurrentIndex(0)

    def _on_local_models(self, _rows: object) -> None:
        self._fill_picker(self.library.recent())

    def choose_model(self, path: str) -> None:
        """Put ``path`` at the top of the model list and select it."""
        self._fill_picker(self.library.use(path), select=path)

    def use_model(self, path: str) -> None:
        """From the library or a finished download: select it and show the chat."""
        self.choose_model(path)
        self.tabs.setCurrentIndex(0)

    def selected_model(self) -> str | None:
        data = self.picker.currentData()
        return data if isinstance(data, str) else None

    def load_selected(self) -> None:
        """Plan the selected model (off the GUI thread), then start it with the plan."""
        path = self.selected_model()
        if path is None:
            self._on_pick(self.picker.currentIndex())
            path = self.selected_model()
            if path is None:
                return
        if not self.loader.load(path, self.runner_flags):
            return
        self.session.transcript.model = path
        self.restart_btn.hide()
        self._show_plan(None)
        self._set_status(load_text.planning_text(os.path.basename(path)))
        self._update_buttons()

    def unload(self) -> None:
        """Stop the model; also ends a plan in the making and the fallback ladder."""
        self.loader.cancel()
        self.restart_btn.hide()
        if self.runner.state in (RunnerState.STOPPED, RunnerState.FAILED):
            # No process to stop (planning, or between two fallback steps): nothing will
            # report a state change, so say it here.
            self._set_status("No model loaded.")
        else:
            self.runner.stop()
        self._update_buttons()

    def restart_model(self) -> None:
        """After the runner died: the same model with the last plan it was ready with."""
        if self.loader.restart():
            self.restart_btn.hide()
        self._update_buttons()

    def _on_planned(self, plan: Any) -> None:
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self._show_plan(plan)
        self._set_status(load_text.loading_text(os.path.basename(self.loader.path), plan))
        self._update_buttons()

    def _on_retrying(self, reason: str) -> None:
        self.progress.setValue(0)
        self._show_plan(self.loader.plan)
        self._set_status(reason)

    def _on_load_failed(self, message: str) -> None:
        self._set_status(message, error=True)
        self._update_buttons()

    def _on_runner_died(self, message: str) -> None:
        self.session.runner_died()
        self._set_status(load_text.died_text(message), error=True)
        self.restart_btn.setVisible(self.loader.good_plan is not None)
        self._update_buttons()

    def _show_plan(self, plan: Any) -> None:
        """The plan's reasons (tooltip and the foldable list) and the fallback steps so far."""
        steps = self.loader.steps if plan is not None else []
        reasons = load_text.reasons_text(plan, steps) if plan is not None else ""
        # Tooltips guess rich text too: escaped, with the line breaks kept.
        self.status.setToolTip(html.escape(reasons).replace("\n", "<br>") if reasons else "")
        self.reasons_label.setText(reasons)
        self.why_btn.setVisible(plan is not None)
        self.reasons_label.setVisible(plan is not None and self.why_btn.isChecked())
        self.steps_label.setText("\n".join(steps))
        self.steps_label.setVisible(bool(steps))

    def _toggle_reasons(self, shown: bool) -> None:
        self.why_btn.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.reasons_label.setVisible(shown and bool(self.reasons_label.text()))

    def _on_runner_state(self, state: RunnerState) -> None:
        name = os.path.basename(self.runner.model) if self.runner.model else ""
        if state == RunnerState.STARTING:
            self.progress.setRange(0, 1000)
            self.progress.setValue(0)
        text = load_text.runner_state_text(state.value, name, self.loader.plan)
        if text is not None:
            self._set_status(text)
        if state == RunnerState.STOPPED:
            self._show_plan(None)
        if state in (RunnerState.STOPPING, RunnerState.STOPPED):
            self.session.stop()
        self._update_buttons()

    def _update_buttons(self) -> None:
        state = self.runner.state
        planning = self.loader.planning
        busy = self.loader.busy or state in (RunnerState.STARTING, RunnerState.LOADING,
                                             RunnerState.STOPPING)
        idle = state in (RunnerState.STOPPED, RunnerState.FAILED)
        self.load_btn.setEnabled(idle and not self.loader.busy)
        self.unload_btn.setEnabled(self.loader.busy or state in (
            RunnerState.LOADING, RunnerState.READY, RunnerState.STARTING))
        self.picker.setEnabled(not busy and state != RunnerState.READY)
        self.progress.setVisible(planning or state in (RunnerState.STARTING,
                                                       RunnerState.LOADING))
        if planning:
            self.progress.setRange(0, 0)  # busy indicator: planning has no steps to count
        self._update_chat_buttons()

    def _on_ready(self) -> None:
        self.chat.set_placeholder("The model is ready. Say hello.")
        self.input.setFocus()

    def _set_status(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #b3261e;" if error else "")

    # ---- chatting -----------------------------------------------------------------------

    def send(self) -> None:
        if self.runner.state != RunnerState.READY:
            return
        if self.session.send(self.input.toPlainText(), self.runner.url, self.runner.key or ""):
            self.input.clear()

    def _on_conversation(self, transcript: Transcript) -> None:
        self.chat.set_messages(transcript.messages)

    def _update_chat_buttons(self) -> None:
        streaming = self.session.busy
        ready = self.runner.state == RunnerState.READY
        self.send_btn.setEnabled(ready and not streaming)
        self.stop_btn.setEnabled(streaming)

    # ---- closing ------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        self.session.close()
        self.loader.shutdown()
        self.runner.stop_and_wait()
        super().closeEvent(event)
