"""Hearth's main window: pick a model, load it with a plan, chat with it.

The window only lays out views and wires them to the services it is given (created in
app/__main__.py): the runner process, the loader (plans, fallback ladder), the chat session
(transcript, stream, saving) and the model library. It never waits on the runner, the network or
the disk: it reacts to signals. What a load says is worded in app/loading/text.py; what a reply
says when it ends, in app/chat/transcript.py.
"""

from __future__ import annotations

import html
import itertools
import logging
import os
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.chat.message import Message
from app.chat.model_kind import base_model_note
from app.chat.sampling import CHAT_DEFAULTS, Sampling, model_defaults
from app.chat.source import ReplySource
from app.chat.transcript import Transcript, can_continue
from app.hub.verdict import summarize
from app.library.models import telling_names
from app.loading import text as load_text
from app.remote.servers import RemoteModel
from app.services.chat_session import ChatSession
from app.services.chat_stream import StreamFailure
from app.services.protocols import (
    ConversationsLike,
    LibraryLike,
    LoaderLike,
    LocalModelsLike,
    RemoteLike,
    RunnerLike,
)
from app.services.runner_process import RunnerState
from app.ui.chat_settings import ChatSettingsPanel
from app.ui.chat_status import ChatStatus
from app.ui.chat_view import ChatView
from app.ui.common import fit_color, open_at, plain_label
from app.ui.conversations_sidebar import ConversationsSidebar
from app.ui.menus import MenuActions, MenuCallbacks, build_menus

log = logging.getLogger(__name__)

OPEN_ITEM = "Open GGUF file…"


class _Input(QPlainTextEdit):
    """Enter sends, Shift+Enter starts a new line, Tab and Shift+Tab move the focus on (a chat
    message has no use for a tab character, and a keyboard user must be able to leave)."""

    def __init__(self, on_send: Any) -> None:
        super().__init__()
        self._on_send = on_send
        self.setTabChangesFocus(True)

    def keyPressEvent(self, e: QKeyEvent) -> None:
        if e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and \
                not e.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self._on_send()
            return
        super().keyPressEvent(e)


def _focus_chain(container: QWidget) -> list[QWidget]:
    """The controls inside ``container`` that Tab stops at, in the order they were laid out: a
    panel another module builds keeps its own order inside the window's.

    (Found with findChildren, not by walking nextInFocusChain(): in PySide6 6.11 the wrappers
    that walk makes can delete widgets of other panels when they are collected.)"""
    found: list[QWidget] = []
    for widget in container.findChildren(QWidget):
        parent = widget.parentWidget()
        inner = parent is not None and parent.focusProxy() is widget  # a spin box's editor
        # A combo box's list lives in a popup window of its own: not a stop in this one.
        if not inner and widget.window() is container.window() and \
                widget.focusPolicy().value & Qt.FocusPolicy.TabFocus.value:
            found.append(widget)
    return found


class MainWindow(QMainWindow):
    find_instruct = Signal(str)  # a search for the Discover tab (a base model's instruct version)
    settings_requested = Signal()  # the Settings button (the composition root opens the dialog)
    model_chosen = Signal(str)  # Ctrl+O chose a file (a first-run page showing then ends)

    def __init__(self, runner: RunnerLike, loader: LoaderLike, session: ChatSession,
                 library: LibraryLike, *, hardware_panel: QWidget | None = None,
                 runner_flags: list[str] | None = None,
                 local_models: LocalModelsLike | None = None,
                 conversations: ConversationsLike | None = None,
                 model_tabs: Sequence[tuple[QWidget, str]] = (),
                 remote: RemoteLike | None = None) -> None:
        super().__init__()
        self.runner = runner
        self.loader = loader
        self.session = session
        self.library = library
        self.local_models = local_models
        self.conversations = conversations
        self.runner_flags = list(runner_flags or [])
        # Servers the user added (Settings → Servers): their models are in the picker too.
        self.remote = remote
        self._remote: RemoteModel | None = None  # the remote model chats go to, if one
        self._checking: RemoteModel | None = None  # being checked before use
        self._switch_to: str | None = None  # a model to load once the current one has stopped
        self._switch_pins: Any = None  # Pins for the next load (the offload panel's Apply)
        self._editing: Message | None = None  # the question being edited (Edit and resend)
        self._branched = False  # the reply streaming now makes a new version
        # Model files left out of the picker for this session: deleted from the library, or
        # found to be gone or not a model when loaded. Choosing one again brings it back.
        self._hidden: set[str] = set()
        # The library's paths at its last change: one missing from the next has left it.
        self._row_paths = {r.path for r in local_models.rows()} if local_models else set()
        self._previewing = False  # the status line describes the selection (no news to keep)
        self._open_offload: Any = None  # set_offload_panel's callback
        self.setWindowTitle("Hearth")
        open_at(self, 1100, 720)  # smaller on a small screen

        # --- top bar: model picker, load/unload, progress ---
        self.picker = QComboBox()
        self.picker.setMinimumWidth(320)
        self.picker.setAccessibleName("Model")
        self.picker.activated.connect(self._on_pick)
        self.picker.currentIndexChanged.connect(lambda _i: self._on_selected())
        self.load_btn = QPushButton("Load")
        self.load_btn.setAccessibleName("Load")  # follows the text: Load, Switch or Use
        self.load_btn.clicked.connect(self.load_selected)
        self.unload_btn = QPushButton("Unload")
        self.unload_btn.setAccessibleName("Unload")
        self.unload_btn.clicked.connect(self.unload)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setFixedWidth(180)
        self.settings_btn = QToolButton()
        self.settings_btn.setText("Chat settings")
        self.settings_btn.setCheckable(True)
        self.settings_btn.setAccessibleName("Chat settings")
        self.settings_btn.setToolTip("System prompt and sampling for this conversation")
        # Plain text everywhere a runner error, a file name or a model's metadata can appear:
        # a label that guesses "rich text" would load an <img> such text names.
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.setAccessibleName("Model status")
        # Shown when the runner died after it was ready: same model, last plan that worked.
        self.restart_btn = QPushButton("Restart model")
        self.restart_btn.setAccessibleName("Restart model")
        self.restart_btn.setToolTip("Load the same model again with the settings that worked; "
                                    "the conversation is kept.")
        self.restart_btn.clicked.connect(self.restart_model)
        self.restart_btn.hide()
        # The plan's reasons, folded away: most people want the numbers, some want the why.
        self.why_btn = QToolButton()
        self.why_btn.setText("Why these settings?")
        self.why_btn.setAccessibleName("Why these settings?")
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
        # A base model may not follow instructions: say so, and offer its instruct version.
        self.base_label = plain_label()
        self.base_btn = QPushButton("Find the instruct version")
        self.base_btn.setAccessibleName("Find the instruct version")
        self.base_btn.clicked.connect(self._find_instruct)
        self._instruct_search = ""
        base_row = QHBoxLayout()
        base_row.addWidget(self.base_label, 1)
        base_row.addWidget(self.base_btn)
        self.base_box = QWidget()
        self.base_box.setLayout(base_row)
        self.base_box.hide()
        status_row = QHBoxLayout()
        status_row.addWidget(self.status, 1)
        status_row.addWidget(self.restart_btn)
        status_row.addWidget(self.why_btn)
        top = QHBoxLayout()
        model_label = QLabel("Model:")
        model_label.setBuddy(self.picker)  # screen readers name the list by its label too
        top.addWidget(model_label)
        top.addWidget(self.picker, 1)
        top.addWidget(self.load_btn)
        top.addWidget(self.unload_btn)
        top.addWidget(self.progress)
        top.addWidget(self.settings_btn)
        self._top = top

        # --- chat ---
        self.chat = ChatView()
        self.chat.action.connect(self._on_message_action)
        self.chat.copied.connect(lambda what: self.statusBar().showMessage(f"Copied {what}.", 2500))
        self.chat_status = ChatStatus()
        self.edit_label = plain_label("Editing your message: Send asks it as a new version "
                                      "(the old one and its replies are kept). Esc cancels.",
                                      muted=True)
        self.edit_label.hide()
        self.input = _Input(self.send)
        self.input.setPlaceholderText("Type a message. Enter sends, Shift+Enter for a new line.")
        self.input.setAccessibleName("Message")
        self.input.setFixedHeight(84)
        self.send_btn = QPushButton("Send")
        self.send_btn.setAccessibleName("Send")
        self.send_btn.clicked.connect(self.send)
        self.stop_btn = QPushButton("Stop")
        self.stop_btn.setAccessibleName("Stop")
        self.stop_btn.setToolTip("Stop the reply (Esc); what it wrote so far is kept")
        self.stop_btn.clicked.connect(session.stop)
        self.continue_btn = QPushButton("Continue")
        self.continue_btn.setAccessibleName("Continue")
        self.continue_btn.setToolTip("Let the model go on with its last reply, which was cut")
        self.continue_btn.clicked.connect(self.continue_reply)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_btn)
        buttons.addWidget(self.stop_btn)
        buttons.addWidget(self.continue_btn)
        bottom = QHBoxLayout()
        bottom.addWidget(self.input, 1)
        bottom.addLayout(buttons)

        root = QVBoxLayout()
        root.addLayout(top)
        root.addLayout(status_row)
        root.addWidget(self.steps_label)
        root.addWidget(self.reasons_label)
        root.addWidget(self.base_box)
        root.addWidget(self.chat, 1)
        root.addWidget(self.chat_status)
        root.addWidget(self.edit_label)
        root.addLayout(bottom)
        chat_column = QWidget()
        chat_column.setLayout(root)
        self.chat_settings = ChatSettingsPanel()
        self.chat_settings.changed.connect(self._on_chat_settings)
        self.chat_settings.hide()
        self.settings_btn.toggled.connect(self._toggle_chat_settings)
        self.sidebar: ConversationsSidebar | None = None
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        if conversations is not None:
            self.sidebar = ConversationsSidebar(conversations)
            self.sidebar.open_requested.connect(conversations.open)
            self.sidebar.new_requested.connect(self.new_conversation)
            self.sidebar.deleted.connect(self._on_deleted)
            self.sidebar.exported.connect(
                lambda path: self.statusBar().showMessage(f"Exported to {path}.", 5000))
            conversations.opened.connect(self._on_opened)
            conversations.changed.connect(self._on_conversations_changed)
            self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(chat_column)
        self.splitter.addWidget(self.chat_settings)
        self.splitter.setStretchFactor(self.splitter.indexOf(chat_column), 1)
        if self.sidebar is not None:
            self.splitter.setSizes([240, 860, 0])
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.splitter, "Chat")
        for widget, title in model_tabs:  # Discover, Models, Downloads
            self.tabs.addTab(widget, title)
        self.hardware_panel = hardware_panel
        if hardware_panel is not None:
            self.tabs.addTab(hardware_panel, "Hardware")
        self.prefs_btn = QToolButton()
        self.prefs_btn.setText("Settings")
        self.prefs_btn.setAccessibleName("Settings")
        self.prefs_btn.setAutoRaise(True)
        self.prefs_btn.setToolTip("Models folders, Hugging Face token, sharing, theme (Ctrl+,)")
        self.prefs_btn.clicked.connect(self.settings_requested.emit)
        self.tabs.setCornerWidget(self.prefs_btn, Qt.Corner.TopRightCorner)
        # The tabs, or the first-run page in front of them until the user is done with it.
        self.pages = QStackedWidget()
        self.pages.addWidget(self.tabs)
        self.setCentralWidget(self.pages)
        self.menu: MenuActions = build_menus(self.menuBar(), self, MenuCallbacks(
            open_file=self.open_file, settings=self.settings_requested.emit, quit=self._quit,
            choose_model=self.focus_picker, load=self.load_selected, unload=self.unload,
            offload=self._offload, new_chat=self.new_conversation, search=self._focus_search,
            stop=self._escape, about=self._about))
        self.menu.search.setEnabled(self.sidebar is not None)
        self._tab_order()

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
        session.reply_finished.connect(self._after_reply)
        session.shown_changed.connect(self.chat.set_messages)
        session.busy_changed.connect(self._on_busy)
        session.conversation_changed.connect(self._on_conversation)
        session.stats_changed.connect(self.chat_status.show_stats)
        session.trimmed.connect(self.chat_status.show_trimmed)
        session.save_failed.connect(
            lambda text: self._set_status(f"Could not save the conversation: {text}", True))
        library.recent_changed.connect(self._fill_picker)
        if local_models is not None:
            local_models.changed.connect(self._on_local_models)
        session.server_failed.connect(self._on_server_failed)
        if remote is not None:
            remote.changed.connect(self._on_servers_changed)
            remote.in_use.connect(self._on_remote_ready)
            remote.use_failed.connect(self._on_remote_failed)

        self._fill_picker(library.recent())
        self.chat.set_placeholder("Pick a GGUF model above and press Load to start chatting.")
        self._on_runner_state(runner.state)
        self._show_chat_settings()

    def show_welcome(self, page: QWidget) -> None:
        """The first-run page, in front of the tabs until :meth:`close_welcome`."""
        self.pages.addWidget(page)
        self.pages.setCurrentWidget(page)

    def close_welcome(self) -> None:
        page = self.pages.currentWidget()
        self.pages.setCurrentWidget(self.tabs)
        if page is not None and page is not self.tabs:
            self.pages.removeWidget(page)
            page.deleteLater()

    def _toggle_chat_settings(self, shown: bool) -> None:
        self.chat_settings.setVisible(shown)
        sizes = self.splitter.sizes()
        if shown and sizes[-1] < 200:  # a drawer closed to nothing: give it room from the chat
            room = min(340, max(0, sizes[-2] - 400))
            self.splitter.setSizes([*sizes[:-2], sizes[-2] - room, room])

    def set_offload_panel(self, open_panel: Any) -> None:
        """Offer "Offload…" beside the picker: ``open_panel(path)`` shows the settings panel
        for the selected model (the composition root owns the panel and its service)."""
        self._open_offload = open_panel
        self.offload_btn = QToolButton()
        self.offload_btn.setText("Offload…")
        self.offload_btn.setAccessibleName("Offload settings")
        self.offload_btn.setToolTip("GPU layers, context, batch, threads, KV cache for this "
                                    "model on this computer, with the memory each takes "
                                    "(Ctrl+Shift+O)")
        self.offload_btn.clicked.connect(self._offload)
        self._top.insertWidget(self._top.indexOf(self.settings_btn), self.offload_btn)
        self._tab_order()
        self._update_buttons()

    def _offload(self) -> None:
        path = self.selected_model()
        if self._open_offload is not None and path:
            self._open_offload(path)

    def load_with(self, path: str, pins: Any) -> None:
        """Load ``path`` with settings the user fixed (the offload panel's Apply). The model
        loaded now is unloaded first, and so is ``path`` itself: Apply means "reload with these",
        so a model already loaded, or being loaded, starts again with them."""
        self._switch_pins = pins
        self._hidden.discard(path)
        self._fill_picker(self.library.use(path), select=path)
        state = self.runner.state
        if state in (RunnerState.STOPPED, RunnerState.FAILED):
            if self.loader.busy:
                # A plan in the making, or a pause between two fallback steps: what they would
                # load is not what was applied; plan again with the pins.
                self.loader.cancel()
            self.load_selected()
            return
        # Running, starting or stopping: load once it has stopped (_on_runner_state).
        self.loader.cancel()  # no fallback step of the old settings after this
        self._switch_to = path
        self.session.stop()
        if state != RunnerState.STOPPING:
            self.runner.stop()
        name = os.path.basename(path)
        self._set_status(f"Unloading {name} to load it again with the new settings…"
                         if self.runner.model in ("", path) else
                         f"Unloading {os.path.basename(self.runner.model)} first; then "
                         f"{name} loads with the new settings…")
        self._update_buttons()

    def _tab_order(self) -> None:
        """Tab goes round the window in reading order: the tabs and Settings on top, the
        conversations on the left, the model bar, the chat, the message box and its buttons,
        the conversation's settings; Shift+Tab goes the same way back. (Hidden and disabled
        controls are passed over by Qt as they come and go.)"""
        chain: list[QWidget] = [self.tabs.tabBar(), self.prefs_btn]
        if self.sidebar is not None:
            chain += _focus_chain(self.sidebar)
        chain += [self.picker, self.load_btn, self.unload_btn]
        if self._open_offload is not None:
            chain.append(self.offload_btn)
        chain += [self.settings_btn, self.restart_btn, self.why_btn, self.base_btn, self.chat,
                  self.input, self.send_btn, self.stop_btn, self.continue_btn,
                  *_focus_chain(self.chat_settings)]
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

    def focus_picker(self) -> None:
        """Ctrl+L: the model list, open; arrows pick, Enter chooses (and Load or F5 loads)."""
        if self.pages.currentWidget() is not self.tabs:
            return  # the first-run page is in front: its own choices first
        self.tabs.setCurrentIndex(0)
        if self.picker.isEnabled():
            self.picker.setFocus(Qt.FocusReason.ShortcutFocusReason)
            self.picker.showPopup()

    def open_file(self) -> None:
        """Ctrl+O: choose a model file anywhere; it is selected in the list (not loaded)."""
        path = self._ask_for_file()
        if path:
            self.tabs.setCurrentIndex(0)
            self.choose_model(path)
            self.model_chosen.emit(path)

    def _quit(self) -> None:
        """Ctrl+Q: close the window, which unloads the model and ends the app (its last
        window; the dialogs are its children)."""
        self.close()

    def _about(self) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            release = f" {version('hearth')}"
        except PackageNotFoundError:  # run from a folder that was never installed
            release = ""
        box = QMessageBox(QMessageBox.Icon.Information, "About Hearth",
                          f"Hearth{release}", QMessageBox.StandardButton.Ok, self)
        box.setInformativeText("Runs open language models on this computer. It plans how each "
                               "model fits your hardware and says why; your conversations "
                               "stay here.")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # not exec(): the window goes on answering the runner meanwhile

    # ---- model picking and loading ----------------------------------------------------------

    def _fill_picker(self, paths: list[str], select: str | None = None) -> None:
        before = self.picker.currentData()
        chosen = bool(select)  # a model chosen now (not a list that changed under the picker)
        if select is None:
            select = self.selected_model()  # "": none (the first item then)
        rows = {r.path: r for r in (self.local_models.rows() if self.local_models else [])
                if not r.error}
        loaded = self.runner.model if self.runner.state == RunnerState.READY else ""
        # The loaded model's label says what it runs with (the plan after any fallback step),
        # not what the library's plan guessed before the user pinned or the ladder stepped.
        running = summarize(self.loader.plan) if loaded and self.loader.plan is not None \
            else None
        kept = [p for p in paths if p not in self._hidden or p in (select, loaded)]
        others = [r for r in rows.values() if r.path not in kept]
        local = [(p, os.path.basename(p)) for p in kept] + \
            [(r.path, f"{r.name} ({r.source})") for r in others]
        names = dict(zip((p for p, _ in local), telling_names(local), strict=True))
        self.picker.blockSignals(True)
        self.picker.clear()

        def add(path: str) -> None:
            row = rows.get(path)
            verdict = running if path == loaded and running is not None else \
                row.verdict if row is not None else None
            label = names[path] + (" (loaded)" if path == loaded else "")
            if verdict is not None:
                label += f"  —  {verdict.label()}"
            self.picker.addItem(label, path)
            i = self.picker.count() - 1
            tip = path if verdict is None else path + "\n\n" + "\n".join(verdict.reasons)
            self.picker.setItemData(i, tip, Qt.ItemDataRole.ToolTipRole)
            if verdict is not None:
                self.picker.setItemData(i, fit_color(self.palette(), verdict.fit),
                                        Qt.ItemDataRole.ForegroundRole)

        for p in kept:
            add(p)
        # Then every other model on this computer (the library), recent ones first.
        if others and kept:
            self.picker.insertSeparator(self.picker.count())
        for r in others:
            add(r.path)
        self._add_remote_models()
        self.picker.addItem(OPEN_ITEM, None)
        if select is not None:
            self.picker.setCurrentIndex(max(0, self.picker.findData(select)))
        self.picker.blockSignals(False)
        if self._previewing or (chosen and self.picker.currentData() != before):
            self._preview_selected()  # new facts about the one described, or a new choice
        else:
            # The line says something newer (a load, an error, a server removed): kept, even
            # when the list moved the selection because the item it was on went away.
            self._update_buttons()

    def _add_remote_models(self) -> None:
        """The models of the servers the user added, from their last check, marked remote."""
        for server in self.remote.servers() if self.remote is not None else []:
            if not server.models:
                continue
            if self.picker.count():
                self.picker.insertSeparator(self.picker.count())
            for model in server.models:
                key = RemoteModel(server.id, model).key
                using = self._remote is not None and self._remote.key == key
                self.picker.addItem(f"{model}  —  remote: {server.name}"
                                    + (" (in use)" if using else ""), key)
                i = self.picker.count() - 1
                self.picker.setItemData(
                    i, f"{model} on {server.name} ({server.base_url}).\nReplies come from that "
                       "server; nothing runs on this computer for them.",
                    Qt.ItemDataRole.ToolTipRole)

    def _on_pick(self, index: int) -> None:
        if self.picker.itemData(index) is None:
            path = self._ask_for_file()
            if path:
                self.choose_model(path)
            else:
                self.picker.setCurrentIndex(0)

    def _ask_for_file(self) -> str:
        path, _ = QFileDialog.getOpenFileName(self, "Open a GGUF model", "",
                                              "GGUF models (*.gguf);;All files (*)")
        return path

    def _on_selected(self) -> None:
        """The selection moved: describe it, and let go of the files left out of the list
        that stayed only while selected (after this turn of the event loop: the combo box is
        still inside its own signal and is about to report the index it chose)."""
        self._preview_selected()
        loaded = self.runner.model if self.runner.state == RunnerState.READY else ""
        current = self.picker.currentData()
        if any(self.picker.findData(p) >= 0 for p in self._hidden - {current, loaded}):
            QTimer.singleShot(0, self, lambda: self._fill_picker(self.library.recent()))

    def forget_model(self, path: str) -> None:
        """``path`` turned out to be gone or not a model (the loader's ``unusable``): it leaves
        the list once another model is chosen; until then the status line says why it did not
        load. Choosing it again (Open, or `hearth FILE`) brings it back."""
        self._hidden.add(path)

    def _on_local_models(self, _rows: object) -> None:
        now = {r.path for r in (self.local_models.rows() if self.local_models else [])}
        # A model that left the library (deleted in the Models tab, or gone at a rescan) leaves
        # the recent models too, selected or not; one that comes back (downloaded again) is
        # listed again.
        gone = self._row_paths - now
        self._hidden = (self._hidden | gone) - now
        self._row_paths = now
        self._fill_picker(self.library.recent(), select="" if self.selected_model() in gone
                          else None)

    def _preview_selected(self) -> None:
        """The status line describes the model selected: what the planner says about it on
        this machine before a load, how it runs when it is the one loaded. While a load is
        under way its own lines speak (the picker is disabled then)."""
        chosen = self.selected_remote()
        if chosen is not None:
            server = self.remote.server(chosen.server_id) if self.remote is not None else None
            if server is not None and self._checking is None:
                self._describe(self._remote_text(chosen.model, server.name) if
                               chosen == self._remote else
                               f"{chosen.model} runs on {server.name} ({server.base_url}). "
                               "Use checks that the server has it, then your messages go there.")
            self._update_buttons()
            return
        path = self.selected_model()
        state = self.runner.state
        busy = (self.loader.busy and state != RunnerState.READY) or state in (
            RunnerState.STARTING, RunnerState.LOADING, RunnerState.STOPPING)
        if path is None or busy or self._checking is not None:
            self._update_buttons()
            return
        name = os.path.basename(path)
        if path == self.runner.model and state == RunnerState.READY:
            plan = self.loader.plan
            self._describe(load_text.ready_text(name, plan) if self._remote is None else
                           f"{name} is loaded on this computer; Use chats with it again.")
            self._show_plan(plan)
            self._update_buttons()
            return
        row = next((r for r in (self.local_models.rows() if self.local_models else [])
                    if r.path == path), None)
        verdict = row.verdict if row is not None else None
        action = "Load switches to it" if state == RunnerState.READY else "Load"
        if verdict is not None:
            self._describe(f"{name}: {verdict.label()}. {action}; the settings are checked "
                           f"again with a dry run first.")
        else:
            self._describe(f"{name}: {action}; how it runs on this computer is planned first, "
                           "then checked with a dry run.")
        reasons = "\n".join(verdict.reasons) if verdict is not None else ""
        self.status.setToolTip("")
        self.reasons_label.setText(reasons)
        self.why_btn.setVisible(bool(reasons))
        self.reasons_label.setVisible(self.why_btn.isChecked() and bool(reasons))
        self.steps_label.hide()  # the steps of another model's load
        self._update_buttons()

    @staticmethod
    def _remote_text(model: str, server: str) -> str:
        return (f"Chatting with {model} on {server} (remote). Replies come from that server; "
                "nothing runs on this computer for them.")

    def _describe(self, text: str) -> None:
        """A status line about the selection: the next change of facts may redo it."""
        self._set_status(text)
        self._previewing = True

    def choose_model(self, path: str) -> None:
        """Put ``path`` at the top of the model list and select it."""
        self._hidden.discard(path)
        self._fill_picker(self.library.use(path), select=path)

    def use_model(self, path: str) -> None:
        """From the library or a finished download: select it and show the chat."""
        self.choose_model(path)
        self.tabs.setCurrentIndex(0)

    def selected_model(self) -> str | None:
        """The local model file selected in the picker (None: a remote model, or nothing)."""
        data = self.picker.currentData()
        return data if isinstance(data, str) and RemoteModel.from_key(data) is None else None

    def selected_remote(self) -> RemoteModel | None:
        """The remote model selected in the picker, if one is."""
        return RemoteModel.from_key(self.picker.currentData())

    @property
    def remote_model(self) -> RemoteModel | None:
        """The remote model the chat goes to now (None: the local runner)."""
        return self._remote

    def use_remote(self, model: RemoteModel) -> None:
        """Chat with ``model`` on its server: its key is read and the model checked first; the
        local runner is left as it is (it neither starts nor stops)."""
        if self.remote is None:
            return
        self._checking = model
        server = self.remote.server(model.server_id)
        self._set_status(f"Connecting to {server.name if server else 'the server'}…")
        self._update_buttons()
        self.remote.use(model)

    def load_selected(self) -> None:
        """Plan the selected model (off the GUI thread), then start it with the plan.

        With another model loaded, that one is stopped first; the load follows once it has.
        """
        chosen = self.selected_remote()
        if chosen is not None:
            if chosen != self._remote:
                self.use_remote(chosen)
            return
        path = self.selected_model()
        if path is None:
            self._on_pick(self.picker.currentIndex())
            path = self.selected_model()
            if path is None:
                return
        if self.runner.state not in (RunnerState.STOPPED, RunnerState.FAILED):
            if self.runner.model == path and self.runner.state == RunnerState.READY:
                if self._remote is not None:  # back to the model already loaded here
                    self._leave_remote()
                    self._set_status(f"Chatting with {os.path.basename(path)} on this "
                                     "computer again.")
                    self._set_conversation_model(path)
                    self._update_buttons()
                return
            self._switch_to = path  # the pins stay for that load
            self.session.stop()
            self.runner.stop()
            self._set_status(f"Unloading {os.path.basename(self.runner.model)} first…")
            return
        pins, self._switch_pins = self._switch_pins, None
        if not self.loader.load(path, self.runner_flags, pins=pins):
            return
        self._leave_remote()
        self._set_conversation_model(path)
        self.restart_btn.hide()
        self._show_plan(None)
        self._set_status(load_text.planning_text(os.path.basename(path)))
        self._update_buttons()

    def unload(self) -> None:
        """Stop the model; also ends a plan in the making and the fallback ladder."""
        self._switch_to = self._switch_pins = None
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
            self._leave_remote()
            self.restart_btn.hide()
        self._update_buttons()

    def _set_conversation_model(self, model: str) -> None:
        """The model the conversation goes on with (a path, or a remote model's key)."""
        self.session.transcript.model = model
        if self.conversations is not None:
            self.conversations.set_model(self.session.transcript)

    def _leave_remote(self) -> None:
        if self._remote is not None:
            self.session.stop()
            self._remote = None
            self._fill_picker(self.library.recent())

    # ---- remote models ------------------------------------------------------------------

    def _on_remote_ready(self, model: RemoteModel) -> None:
        if model != self._checking:
            return  # the user moved on meanwhile
        self._checking = None
        server = self.remote.server(model.server_id) if self.remote is not None else None
        if server is None:
            return
        self.session.stop()
        self._remote = model
        # Nothing here knows the server model's defaults or context: the server applies its
        # own, and nothing is trimmed on this side.
        self.session.model_defaults = CHAT_DEFAULTS
        self.session.context_size = 0
        self.chat_settings.set_model_defaults(CHAT_DEFAULTS)
        self.chat_status.set_context_size(0)
        self._show_plan(None)
        self.base_box.hide()
        self._set_conversation_model(model.key)
        self._set_status(self._remote_text(model.model, server.name))
        self._fill_picker(self.library.recent(), select=model.key)
        self.chat.set_placeholder(f"{model.model} on {server.name} is ready. Say hello.")
        self.input.setFocus()

    def _on_remote_failed(self, model: RemoteModel, sentence: str) -> None:
        if model != self._checking:
            return
        self._checking = None
        self._set_status(sentence, error=True)
        self._update_buttons()

    def _on_servers_changed(self) -> None:
        if self._remote is not None and (self.remote is None or
                                         self.remote.server(self._remote.server_id) is None):
            self.session.stop()  # its server was removed
            self._remote = None
            self._set_status("The server of the model in use was removed; pick another model.")
        self._fill_picker(self.library.recent())

    def _on_server_failed(self, failure: StreamFailure) -> None:
        """A server failed a reply: the note under the reply says what; a model that is gone
        makes its server's list fresh again."""
        self._set_status(failure.message, error=True)
        if failure.code == "model_gone" and self._remote is not None and self.remote is not None:
            self.remote.refresh(self._remote.server_id)

    def _target(self) -> tuple[str, str, ReplySource] | None:
        """Where a reply is asked now: (url, key, source); None when nothing can answer."""
        if self._remote is not None and self.remote is not None:
            server = self.remote.server(self._remote.server_id)
            if server is None:
                return None
            url, key = self.remote.connection(server.id)
            return url, key, ReplySource(self._remote.model, server.name, server.base_url)
        if self.runner.state == RunnerState.READY:
            return self.runner.url, self.runner.key or "", ReplySource(self.runner.model)
        return None

    def _on_planned(self, plan: Any) -> None:
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self._show_plan(plan)
        self._set_status(load_text.loading_text(os.path.basename(self.loader.path), plan))
        self._show_model(plan)
        self._update_buttons()

    def _show_model(self, plan: Any) -> None:
        """What the chat takes from the model's header: its sampling defaults, its context,
        whether it is a base model."""
        model = getattr(plan, "model", None)
        general = dict(getattr(model, "general", {}) or {})
        defaults = model_defaults(general) if model is not None else CHAT_DEFAULTS
        self.session.model_defaults = defaults
        self.chat_settings.set_model_defaults(defaults)
        settings = getattr(plan, "settings", None)
        self.session.context_size = int(getattr(settings, "n_ctx", 0) or 0)
        self.chat_status.set_context_size(self.session.context_size)
        note = base_model_note(getattr(model, "name", ""), bool(getattr(model, "chat_template", "")),
                               general, os.path.basename(self.loader.path)) \
            if model is not None else None
        self.base_label.setText(note.text if note else "")
        self._instruct_search = note.search if note else ""
        self.base_box.setVisible(note is not None)

    def _find_instruct(self) -> None:
        if self._instruct_search:
            self.find_instruct.emit(self._instruct_search)

    def _on_retrying(self, reason: str) -> None:
        self.progress.setValue(0)
        self._show_plan(self.loader.plan)
        self._set_status(reason)

    def _on_load_failed(self, message: str) -> None:
        self._set_status(message, error=True)
        self._update_buttons()

    def _on_runner_died(self, message: str) -> None:
        if self._remote is None:  # a remote reply goes on whatever happens here
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
            self.chat_status.set_context_size(0)
            self.base_box.hide()
        if state in (RunnerState.STOPPING, RunnerState.STOPPED) and self._remote is None:
            self.session.stop()
        if state in (RunnerState.READY, RunnerState.STOPPED):
            self._fill_picker(self.library.recent())  # the "(loaded)" mark
        self._update_buttons()
        if state in (RunnerState.STOPPED, RunnerState.FAILED) and self._switch_to:
            path, self._switch_to = self._switch_to, None
            self._fill_picker(self.library.use(path), select=path)
            self.load_selected()

    def _update_buttons(self) -> None:
        state = self.runner.state
        planning = self.loader.planning
        # The runner reports READY a moment before the loader hears of it (both listen to the
        # runner): a ready runner is never still loading, whichever of them heard it first.
        loading = self.loader.busy and state != RunnerState.READY
        busy = loading or state in (RunnerState.STARTING, RunnerState.LOADING,
                                    RunnerState.STOPPING)
        idle = state in (RunnerState.STOPPED, RunnerState.FAILED)
        other = self.selected_model() not in (None, self.runner.model)
        chosen = self.selected_remote()
        back = (self._remote is not None and state == RunnerState.READY and
                self.selected_model() == self.runner.model)  # from a remote model to this one
        if chosen is not None or back:
            self.load_btn.setEnabled(not loading and self._checking is None and
                                     chosen != self._remote)
            self.load_btn.setText("Use")
        else:
            self.load_btn.setEnabled(not loading and (idle or (
                state == RunnerState.READY and other)))
            self.load_btn.setText("Switch" if state == RunnerState.READY and other else "Load")
        self.load_btn.setAccessibleName(self.load_btn.text())
        self.unload_btn.setEnabled(self.loader.busy or state in (
            RunnerState.LOADING, RunnerState.READY, RunnerState.STARTING))
        self.picker.setEnabled(not busy)
        self.progress.setVisible(planning or state in (RunnerState.STARTING,
                                                       RunnerState.LOADING))
        if planning:
            self.progress.setRange(0, 0)  # busy indicator: planning has no steps to count
        # The menu offers what the buttons offer, under the same names.
        self.menu.load.setEnabled(self.load_btn.isEnabled())
        self.menu.load.setText(self.load_btn.text())
        self.menu.unload.setEnabled(self.unload_btn.isEnabled())
        self.menu.choose_model.setEnabled(not busy)
        self.menu.open_file.setEnabled(not busy)
        self._update_chat_buttons()

    def _on_ready(self) -> None:
        self.chat.set_placeholder("The model is ready. Say hello.")
        self.input.setFocus()
        self._update_buttons()  # the loader has heard of it too by now: the picker comes back

    def _set_status(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #b3261e;" if error else "")
        self._previewing = False

    # ---- conversations ------------------------------------------------------------------

    def new_conversation(self) -> None:
        """A new, empty chat (Ctrl+N) with the model loaded now."""
        self._cancel_edit()
        model = self._remote.key if self._remote is not None else \
            self.runner.model if self.runner.state == RunnerState.READY else ""
        self.session.new_conversation(model)
        self.input.setFocus()

    def _focus_search(self) -> None:
        if self.sidebar is not None:
            self.tabs.setCurrentIndex(0)
            self.sidebar.focus_search()

    def _on_opened(self, conv: Any) -> None:
        self._cancel_edit()
        self.session.open_conversation(conv)
        model = getattr(conv, "model", "")
        current = self._remote.key if self._remote is not None else self.runner.model
        if model and model != current:
            # The model it was written with is offered, not loaded: loading takes a while.
            if self.picker.findData(model) >= 0:
                self.picker.setCurrentIndex(self.picker.findData(model))
            if self._target() is not None:
                remote = RemoteModel.from_key(model)
                name = remote.model if remote is not None else os.path.basename(model)
                self.statusBar().showMessage(
                    f"This conversation was written with {name}; it goes on with the model in "
                    f"use now unless you switch.", 8000)

    def _on_deleted(self, conv_id: int) -> None:
        if self.session.transcript.conversation_id == conv_id:
            self.new_conversation()

    def _on_conversations_changed(self) -> None:
        if self.sidebar is not None:
            self.sidebar.set_current(self.session.transcript.conversation_id)

    def _on_chat_settings(self, system_prompt: str, sampling: Sampling) -> None:
        self.session.set_chat_settings(system_prompt, sampling)

    def _show_chat_settings(self) -> None:
        settings = self.session.chat_settings()
        self.chat_settings.set_values(settings.system_prompt, settings.sampling,
                                      self.session.model_defaults)

    # ---- chatting -----------------------------------------------------------------------

    def send(self) -> None:
        target = self._target()
        if target is None:
            return
        self.chat_settings.flush()  # an edit still waiting on its timer counts for this reply
        text = self.input.toPlainText()
        url, key, source = target
        if self._editing is not None:
            sent = self._branched = self.session.edit_and_resend(self._editing, text, url, key,
                                                                 source=source)
        else:
            sent = self.session.send(text, url, key, source=source)
        if sent:
            self.input.clear()
            self._cancel_edit()

    def continue_reply(self) -> None:
        messages = self.session.transcript.messages
        target = self._target()
        if target is not None and messages:
            url, key, source = target
            self.session.continue_reply(messages[-1], url, key, source=source)

    def _on_message_action(self, kind: str, message: Message) -> None:
        if self.session.busy:
            self.statusBar().showMessage("Wait for the reply to finish, or press Stop.", 4000)
            return
        if kind == "edit":
            self._editing = message
            self.input.setPlainText(message.content)
            self.input.setFocus()
            self.edit_label.show()
            self._update_chat_buttons()
        elif kind == "regenerate":
            target = self._target()
            if target is None:
                self.statusBar().showMessage("Load a model to regenerate the reply.", 4000)
                return
            self.chat_settings.flush()
            url, key, source = target
            self._branched = self.session.regenerate(message, url, key, source=source)
        elif kind in ("prev", "next") and message.id is not None and message.siblings:
            at = message.siblings.index(message.id) + (1 if kind == "next" else -1)
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

    def _cancel_edit(self) -> None:
        if self._editing is not None:
            self._editing = None
            self.edit_label.hide()
            self._update_chat_buttons()

    def _escape(self) -> None:
        """Esc stops a reply, or else leaves editing a message."""
        if self.session.busy:
            self.session.stop()
        elif self._editing is not None:
            self._cancel_edit()
            self.input.clear()

    def _on_conversation(self, transcript: Transcript) -> None:
        self.chat.set_messages(transcript.messages)
        self.chat_status.reset()
        self._show_chat_settings()
        if self.sidebar is not None:
            self.sidebar.set_current(transcript.conversation_id)
        self._update_chat_buttons()

    def _on_busy(self, _busy: bool) -> None:
        self._update_chat_buttons()

    def _update_chat_buttons(self) -> None:
        streaming = self.session.busy
        ready = self._target() is not None
        self.send_btn.setEnabled(ready and not streaming)
        self.stop_btn.setEnabled(streaming)
        self.continue_btn.setVisible(ready and not streaming and can_continue(self.session.transcript))
        # Esc is free for other widgets when there is nothing to stop or leave.
        self.menu.stop.setEnabled(streaming or self._editing is not None)

    # ---- closing ------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        self.session.close()
        self.loader.shutdown()
        self.runner.stop_and_wait()
        super().closeEvent(event)
