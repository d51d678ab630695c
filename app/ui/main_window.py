"""Hearth's main window: pick a model, load it with a plan, chat with it.

Services come in through the constructor; the window never waits on the runner, the network or
the disk: it reacts to signals. What a load says (the plan's numbers, its reasons, the fallback
steps) is worded in app/loading/text.py; the window only places it.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from PySide6.QtCore import Qt, QTimer
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

from app.library import recent
from app.library.conversation import Conversation, Message
from app.loading import text as load_text
from app.planner.plan import LaunchPlan
from app.services.chat_stream import ChatStreamer
from app.services.loader import LoadPhase, ModelLoader
from app.services.runner_process import RunnerProcess, RunnerState
from app.services.tasks import TaskRunner
from app.ui.chat_view import ChatView

log = logging.getLogger(__name__)

OPEN_ITEM = "Open GGUF file…"
FLUSH_MS = 40  # coalesce streamed text: at most ~25 repaints a second, however fast the model
# A stream that failed this shortly before the runner was reported dead failed because of it.
DEATH_AFTER_STREAM_S = 2.0


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
    def __init__(self, runner: RunnerProcess, streamer: ChatStreamer, tasks: TaskRunner,
                 runner_flags: list[str] | None = None,
                 chat_params: dict[str, Any] | None = None,
                 hardware_panel: QWidget | None = None,
                 loader: ModelLoader | None = None) -> None:
        super().__init__()
        self.runner = runner
        self.streamer = streamer
        self.tasks = tasks
        self.runner_flags = list(runner_flags or [])
        self.chat_params = dict(chat_params or {})
        self.conversation = Conversation()
        # Saves go through one thread, in order: an older snapshot never lands after a newer one.
        self._saver = TaskRunner(self, max_threads=1)
        self._live: Message | None = None
        self._pending = ""
        if loader is None:
            # Plans use the Hardware tab's report when it has one; otherwise the loader detects.
            panel = hardware_panel
            loader = ModelLoader(runner, tasks, parent=self,
                                 cached_hardware=lambda: getattr(panel, "report", None))
        self.loader = loader
        # The reply a stream failure just ended, and when: the runner's death may be reported a
        # moment after the stream noticed it.
        self._failed_reply: tuple[Message, float] | None = None
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
        self.status = QLabel()
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
        self.steps_label.setWordWrap(True)
        self.steps_label.setStyleSheet("color: #8a5a00;")
        self.steps_label.hide()
        self.reasons_label = QLabel()
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
        self.stop_btn.clicked.connect(self.streamer.stop)
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
        if hardware_panel is not None:
            self.tabs.addTab(hardware_panel, "Hardware")
        self.setCentralWidget(self.tabs)

        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(FLUSH_MS)
        self._flush_timer.timeout.connect(self._flush)

        runner.state_changed.connect(self._on_runner_state)
        runner.progress.connect(lambda p: self.progress.setValue(int(p * 1000)))
        runner.ready.connect(self._on_ready)
        loader.planned.connect(self._on_planned)
        loader.retrying.connect(self._on_retrying)
        loader.failed.connect(self._on_load_failed)
        loader.died.connect(self._on_runner_died)
        streamer.delta.connect(self._on_delta)
        streamer.done.connect(self._on_done)
        streamer.failed.connect(self._on_stream_failed)

        self._fill_picker(recent.load_recent())
        self.chat.set_placeholder("Pick a GGUF model above and press Load to start chatting.")
        self._on_runner_state(runner.state)

    # ---- model picking and loading ----------------------------------------------------------

    def _fill_picker(self, paths: list[str], select: str | None = None) -> None:
        self.picker.blockSignals(True)
        self.picker.clear()
        for p in paths:
            self.picker.addItem(os.path.basename(p), p)
            self.picker.setItemData(self.picker.count() - 1, p, Qt.ItemDataRole.ToolTipRole)
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

    def choose_model(self, path: str) -> None:
        """Put ``path`` at the top of the recent list and select it."""
        self._fill_picker(recent.add_recent(path), select=path)

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
        self.conversation.model = path
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

    def _on_planned(self, plan: LaunchPlan) -> None:
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
        self._set_status(load_text.died_text(message), error=True)
        self.restart_btn.setVisible(self.loader.good_plan is not None)
        note = "The model runner stopped during this reply. Restart the model to continue; the " \
               "conversation is kept."
        if self._live is not None:
            # The stream fails too, a moment later; say why on the partial reply now, keep it.
            self._live.note = note
            self._flush()
            self.chat.set_live(self._live)
        elif self._failed_reply is not None and \
                time.monotonic() - self._failed_reply[1] < DEATH_AFTER_STREAM_S:
            # The stream noticed first, with a vaguer note ("closed the connection"): say why.
            self._failed_reply[0].note = note
            self.chat.set_messages(self.conversation.messages)
            self._save()
        self._failed_reply = None
        self._update_buttons()

    def _show_plan(self, plan: LaunchPlan | None) -> None:
        """The plan's reasons (tooltip and the foldable list) and the fallback steps so far."""
        steps = self.loader.steps if plan is not None else []
        reasons = load_text.reasons_text(plan, steps) if plan is not None else ""
        self.status.setToolTip(reasons)
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
        if state != RunnerState.READY and self._live is not None and \
                state in (RunnerState.STOPPING, RunnerState.STOPPED):
            self.streamer.stop()
        self._update_buttons()

    def _update_buttons(self) -> None:
        state = self.runner.state
        planning = self.loader.phase == LoadPhase.PLANNING
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
        text = self.input.toPlainText().strip()
        if not text or self.streamer.busy or self.runner.state != RunnerState.READY:
            return
        self.input.clear()
        self._failed_reply = None
        user = Message("user", text)
        self.conversation.messages.append(user)
        self.chat.append_message(user)
        self._live = Message("assistant", "")
        self.conversation.messages.append(self._live)
        self._save()
        self.chat.set_live(self._live)
        self._pending = ""
        key = self.runner.key or ""
        self.streamer.send(self.runner.url, key, self.conversation.api_messages(),
                           self.chat_params)
        self._flush_timer.start()
        self._update_chat_buttons()

    def _on_delta(self, text: str) -> None:
        self._pending += text  # shown by the next flush tick

    def _flush(self) -> None:
        if self._live is not None and self._pending:
            self._live.content += self._pending
            self._pending = ""
            self.chat.set_live(self._live)

    def _on_done(self, reason: str, _usage: object) -> None:
        note = {"stopped": "Stopped.", "length": "The reply reached its length limit."}.get(reason)
        self._finish_reply(note)

    def _on_stream_failed(self, message: str) -> None:
        live = self._live
        self._finish_reply(message)
        self._failed_reply = (live, time.monotonic()) if live is not None else None

    def _finish_reply(self, note: str | None) -> None:
        self._flush_timer.stop()
        self._flush()
        live = self._live
        self._live = None
        if live is not None:
            if note and not live.note:
                live.note = note
            self.chat.set_live(None)
            self.chat.append_message(live)
            self._save()
        self._update_chat_buttons()

    def _update_chat_buttons(self) -> None:
        streaming = self.streamer.busy
        ready = self.runner.state == RunnerState.READY
        self.send_btn.setEnabled(ready and not streaming)
        self.stop_btn.setEnabled(streaming)

    def _save(self) -> None:
        conv = self.conversation
        # Off the GUI thread: the disk may be slow. A snapshot, so later edits don't race it.
        snapshot = Conversation(conv.id, conv.created, conv.model,
                                [Message(m.role, m.content, m.note) for m in conv.messages])
        self._saver.run(snapshot.save, lambda _r: None,
                       lambda e: self._set_status(f"Could not save the conversation: {e}", True))

    # ---- closing ------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        self._flush()
        self.streamer.shutdown()
        if self._live is not None:
            self._finish_reply("The window was closed during this reply.")
        self.loader.cancel()
        self.runner.stop_and_wait()
        self.tasks.wait(3000)
        self._saver.wait(3000)
        super().closeEvent(event)
