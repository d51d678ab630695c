"""Hearth's main window: pick a model, load it, chat with it.

Services come in through the constructor; the window never waits on the runner, the network or
the disk: it reacts to signals.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QCloseEvent, QKeyEvent
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
    QVBoxLayout,
    QWidget,
)

from app.library import recent
from app.library.conversation import Conversation, Message
from app.services.chat_stream import ChatStreamer
from app.services.runner_process import RunnerProcess, RunnerState
from app.services.tasks import TaskRunner
from app.ui.chat_view import ChatView

log = logging.getLogger(__name__)

OPEN_ITEM = "Open GGUF file…"
FLUSH_MS = 40  # coalesce streamed text: at most ~25 repaints a second, however fast the model


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
                 hardware_panel: QWidget | None = None) -> None:
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
        self.setWindowTitle("Hearth")
        self.resize(900, 640)

        # --- top bar: model picker, load/unload, progress ---
        self.picker = QComboBox()
        self.picker.setMinimumWidth(320)
        self.picker.activated.connect(self._on_pick)
        self.load_btn = QPushButton("Load")
        self.load_btn.clicked.connect(self.load_selected)
        self.unload_btn = QPushButton("Unload")
        self.unload_btn.clicked.connect(self.runner.stop)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setFixedWidth(180)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
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
        root.addWidget(self.status)
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
        runner.failed.connect(self._on_runner_failed)
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
        path = self.selected_model()
        if path is None:
            self._on_pick(self.picker.currentIndex())
            path = self.selected_model()
            if path is None:
                return
        if self.runner.state not in (RunnerState.STOPPED, RunnerState.FAILED):
            return
        self.conversation.model = path
        self.progress.setValue(0)
        self.runner.start(path, self.runner_flags)

    def _on_runner_state(self, state: RunnerState) -> None:
        busy = state in (RunnerState.STARTING, RunnerState.LOADING, RunnerState.STOPPING)
        self.load_btn.setEnabled(state in (RunnerState.STOPPED, RunnerState.FAILED))
        self.unload_btn.setEnabled(state in (RunnerState.LOADING, RunnerState.READY,
                                             RunnerState.STARTING))
        self.picker.setEnabled(not busy and state != RunnerState.READY)
        self.progress.setVisible(state in (RunnerState.STARTING, RunnerState.LOADING))
        name = os.path.basename(self.runner.model) if self.runner.model else ""
        text = {
            RunnerState.STOPPED: "No model loaded.",
            RunnerState.STARTING: f"Starting the runner for {name}…",
            RunnerState.LOADING: f"Loading {name}…",
            RunnerState.READY: f"{name} is ready.",
            RunnerState.STOPPING: "Unloading…",
        }.get(state)
        if text is not None:
            self._set_status(text)
        if state != RunnerState.READY and self._live is not None and \
                state in (RunnerState.STOPPING, RunnerState.STOPPED):
            self.streamer.stop()
        self._update_chat_buttons()

    def _on_ready(self) -> None:
        self.chat.set_placeholder("The model is ready. Say hello.")
        self.input.setFocus()

    def _on_runner_failed(self, message: str) -> None:
        self._set_status(message, error=True)
        if self._live is not None:
            # The stream will fail too; note why on the partial reply, and keep it.
            self._live.note = "The model runner stopped during this reply. Load the model again " \
                              "to continue; the conversation is kept."
        self._update_chat_buttons()

    def _set_status(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #b3261e;" if error else "")

    # ---- chatting -----------------------------------------------------------------------

    def send(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.streamer.busy or self.runner.state != RunnerState.READY:
            return
        self.input.clear()
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
        self._finish_reply(message)

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
        self.runner.stop_and_wait()
        self.tasks.wait(3000)
        self._saver.wait(3000)
        super().closeEvent(event)
