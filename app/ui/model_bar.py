"""The model bar above the chat: the picker, Load / Switch / Use and Unload, the load's progress,
the status line, Restart, "Why these settings?" with the plan's reasons and fallback steps, and
the note on a base model.

A view of app/services/active_model.py: it shows what the model in use reports and hands the
person's choices to it; what a load says is worded in app/loading/text.py.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.chat.model_kind import base_model_note
from app.loading import text as load_text
from app.loading.state import Phase
from app.planner.plan import LaunchPlan
from app.remote.servers import RemoteModel
from app.services.active_model import ActiveModel
from app.services.protocols import LibraryLike, LocalModelsLike, RemoteLike
from app.services.runner_process import RunnerState
from app.ui.common import named_button, plain_label
from app.ui.model_picker import ModelPicker


def _plain(wrap: bool = True) -> QLabel:
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    return label


class ModelBar(QWidget):
    find_instruct = Signal(str)  # a search for the Discover tab (a base model's instruct version)
    updated = Signal()  # the buttons were enabled anew (the menu follows them)

    def __init__(self, active: ActiveModel, library: LibraryLike, *,
                 local_models: LocalModelsLike | None = None,
                 remote: RemoteLike | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.active = active
        self.library = library
        self.remote = remote
        self._previewing = False  # the status line describes the selection (no news to keep)
        self._shown_remote: RemoteModel | None = None  # the one the picker marks "in use"
        self._instruct_search = ""
        self.picker = ModelPicker(active, library, local_models=local_models, remote=remote,
                                  ask_file=self.ask_for_file, parent=self)
        self.offload_btn: QToolButton | None = None
        self._open_offload: Callable[[str], None] | None = None
        self._build()
        self.picker.refilled.connect(self._on_refilled)
        self.picker.moved.connect(self.preview_selected)
        self._follow(active)
        self.picker.refresh()
        self._on_runner_state(active.runner.state)  # "No model loaded.", or what it is doing

    def _build(self) -> None:
        self.load_btn = named_button("Load")  # its name follows the text: Load, Switch or Use
        self.load_btn.clicked.connect(self.load_selected)
        self.unload_btn = named_button("Unload")
        self.unload_btn.clicked.connect(self.active.unload)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setFixedWidth(180)
        self.settings_btn = QToolButton()  # the conversation's settings drawer (the window's)
        self.settings_btn.setText("Chat settings")
        self.settings_btn.setCheckable(True)
        self.settings_btn.setAccessibleName("Chat settings")
        self.settings_btn.setToolTip("System prompt and sampling for this conversation")
        # Plain text everywhere a runner error, a file name or a model's metadata can appear:
        # a label that guesses "rich text" would load an <img> such text names.
        self.status = _plain()
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.setAccessibleName("Model status")
        # Shown when the runner died after it was ready: same model, last plan that worked.
        self.restart_btn = named_button("Restart model", "Load the same model again with the "
                                   "settings that worked; the conversation is kept.")
        self.restart_btn.clicked.connect(self.active.restart)
        self.restart_btn.hide()
        self._build_reasons()
        self._build_base_note()
        self._lay_out()

    def _build_reasons(self) -> None:
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
        self.steps_label = _plain()  # the fallback steps taken, one per line
        self.steps_label.setStyleSheet("color: #8a5a00;")
        self.steps_label.hide()
        self.reasons_label = _plain()
        self.reasons_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reasons_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.reasons_label.hide()

    def _build_base_note(self) -> None:
        # A base model may not follow instructions: say so, and offer its instruct version.
        self.base_label = plain_label()
        self.base_btn = named_button("Find the instruct version")
        self.base_btn.clicked.connect(self._find_instruct)
        base_row = QHBoxLayout()
        base_row.addWidget(self.base_label, 1)
        base_row.addWidget(self.base_btn)
        self.base_box = QWidget()
        self.base_box.setLayout(base_row)
        self.base_box.hide()

    def _lay_out(self) -> None:
        top = QHBoxLayout()
        model_label = QLabel("Model:")
        model_label.setBuddy(self.picker.combo)  # screen readers name the list by its label
        for widget, stretch in ((model_label, 0), (self.picker.combo, 1), (self.load_btn, 0),
                                (self.unload_btn, 0), (self.progress, 0),
                                (self.settings_btn, 0)):
            top.addWidget(widget, stretch)
        self._top = top
        status_row = QHBoxLayout()
        status_row.addWidget(self.status, 1)
        status_row.addWidget(self.restart_btn)
        status_row.addWidget(self.why_btn)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(top)
        column.addLayout(status_row)
        column.addWidget(self.steps_label)
        column.addWidget(self.reasons_label)
        column.addWidget(self.base_box)

    def _follow(self, active: ActiveModel) -> None:
        active.said.connect(self.set_status)
        active.runner_state.connect(self._on_runner_state)
        active.progress.connect(lambda p: self.progress.setValue(int(p * 1000)))
        active.planned.connect(self._on_planned)
        active.retrying.connect(self._on_retrying)
        active.load_failed.connect(lambda message: self._failed(message))
        active.died.connect(lambda message: self._failed(load_text.died_text(message)))
        active.remote_ready.connect(self._on_remote_ready)
        active.chosen.connect(self.picker.choose)
        active.changed.connect(self._on_changed)

    def add_offload(self, open_panel: Callable[[str], None]) -> QToolButton:
        """Offer "Offload…" beside the picker: ``open_panel(path)`` shows the settings panel
        for the selected model."""
        self.offload_btn = QToolButton()
        self.offload_btn.setText("Offload…")
        self.offload_btn.setAccessibleName("Offload settings")
        self.offload_btn.setToolTip("GPU layers, context, batch, threads, KV cache for this "
                                    "model on this computer, with the memory each takes "
                                    "(Ctrl+Shift+O)")
        self._open_offload = open_panel
        self.offload_btn.clicked.connect(self.offload)
        self._top.insertWidget(self._top.indexOf(self.settings_btn), self.offload_btn)
        self.update_buttons()
        return self.offload_btn

    def offload(self) -> None:
        """The offload settings of the selected model (Ctrl+Shift+O)."""
        path = self.picker.selected_model()
        if self._open_offload is not None and path:
            self._open_offload(path)

    def ask_for_file(self) -> str:
        path, _ = QFileDialog.getOpenFileName(self, "Open a GGUF model", "",
                                              "GGUF models (*.gguf);;All files (*)")
        return path

    # ---- the person's intents ----------------------------------------------------------------

    def load_selected(self) -> None:
        """Load the selected model (a server's: use it once checked). With another model
        loaded, that one stops first; the load follows once it has."""
        chosen = self.picker.selected_remote()
        if chosen is not None:
            self.active.use_remote(chosen)
            return
        path = self.picker.selected_model()
        if path is None:
            self.picker.pick_at(self.picker.combo.currentIndex())
            path = self.picker.selected_model()
            if path is None:
                return
        self.active.load(path)

    # ---- what the model in use reports -------------------------------------------------------

    def _on_runner_state(self, state: RunnerState) -> None:
        name = os.path.basename(self.active.runner_model) if self.active.runner_model else ""
        if state == RunnerState.STARTING:
            self.progress.setRange(0, 1000)
            self.progress.setValue(0)
        text = load_text.runner_state_text(state.value, name, self.active.plan)
        if text is not None:
            self.set_status(text)
        if state == RunnerState.STOPPED:
            self.show_plan(None)
            self.base_box.hide()
        if state in (RunnerState.READY, RunnerState.STOPPED):
            self.picker.refresh()  # the "(loaded)" mark

    def _on_planned(self, plan: LaunchPlan | None) -> None:
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.show_plan(plan)
        self.set_status(load_text.loading_text(os.path.basename(self.active.path), plan))
        self._show_base_note(plan)

    def _on_retrying(self, reason: str) -> None:
        self.progress.setValue(0)
        self.show_plan(self.active.plan)
        self.set_status(reason)

    def _failed(self, text: str) -> None:
        self.set_status(text, error=True)
        self.update_buttons()

    def _on_remote_ready(self, model: RemoteModel) -> None:
        server = self.remote.server(model.server_id) if self.remote is not None else None
        self.show_plan(None)
        self.base_box.hide()
        self.set_status(remote_text(model.model, server.name if server else ""))
        self._shown_remote = model
        self.picker.fill(self.library.recent(), select=model.key)

    def _on_changed(self) -> None:
        if self.active.remote_model != self._shown_remote:
            self._shown_remote = self.active.remote_model
            self.picker.refresh()  # the "(in use)" mark
        self.update_buttons()

    def _on_refilled(self, moved: bool) -> None:
        if self._previewing or moved:
            self.preview_selected()  # new facts about the one described, or a new choice
        else:
            # The line says something newer (a load, an error, a server removed): kept, even
            # when the list moved the selection because the item it was on went away.
            self.update_buttons()

    def _show_base_note(self, plan: LaunchPlan | None) -> None:
        model = getattr(plan, "model", None)  # None: a plan without its model (tests' fakes)
        note = None if model is None else base_model_note(
            model.name, bool(model.chat_template), dict(model.general or {}),
            os.path.basename(self.active.path))
        self.base_label.setText(note.text if note else "")
        self._instruct_search = note.search if note else ""
        self.base_box.setVisible(note is not None)

    def _find_instruct(self) -> None:
        if self._instruct_search:
            self.find_instruct.emit(self._instruct_search)

    # ---- the status line and the plan ----------------------------------------------------------

    def set_status(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #b3261e;" if error else "")
        self._previewing = False

    def _describe(self, text: str) -> None:
        """A status line about the selection: the next change of facts may redo it."""
        self.set_status(text)
        self._previewing = True

    def show_plan(self, plan: LaunchPlan | None) -> None:
        """The plan's reasons (tooltip and the foldable list) and the fallback steps so far."""
        steps = self.active.steps if plan is not None else []
        reasons = load_text.reasons_text(plan, steps) if plan is not None else ""
        # Tooltips guess rich text too: escaped, with the line breaks kept.
        self.status.setToolTip(html.escape(reasons).replace("\n", "<br>") if reasons else "")
        self._show_reasons(reasons, plan is not None)
        self.steps_label.setText("\n".join(steps))
        self.steps_label.setVisible(bool(steps))

    def _show_reasons(self, reasons: str, shown: bool) -> None:
        self.reasons_label.setText(reasons)
        self.why_btn.setVisible(shown)
        self.reasons_label.setVisible(shown and self.why_btn.isChecked())

    def _toggle_reasons(self, shown: bool) -> None:
        self.why_btn.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.reasons_label.setVisible(shown and bool(self.reasons_label.text()))

    def preview_selected(self) -> None:
        """The status line describes the model selected: what the planner says about it on
        this machine before a load, how it runs when it is the one loaded. While a load is
        under way its own lines speak (the picker is disabled then)."""
        chosen = self.picker.selected_remote()
        if chosen is not None:
            self._preview_remote(chosen)
        else:
            path = self.picker.selected_model()
            if path is not None and not self.active.state.busy and self.active.checking is None:
                self._preview_local(path)
        self.update_buttons()

    def _preview_remote(self, chosen: RemoteModel) -> None:
        server = self.remote.server(chosen.server_id) if self.remote is not None else None
        if server is None or self.active.checking is not None:
            return
        self._describe(remote_text(chosen.model, server.name) if
                       chosen == self.active.remote_model else
                       f"{chosen.model} runs on {server.name} ({server.base_url}). "
                       "Use checks that the server has it, then your messages go there.")

    def _preview_local(self, path: str) -> None:
        name = os.path.basename(path)
        ready = self.active.phase is Phase.READY
        if path == self.active.runner_model and ready:
            plan = self.active.plan
            self._describe(load_text.ready_text(name, plan)
                           if self.active.remote_model is None else
                           f"{name} is loaded on this computer; Use chats with it again.")
            self.show_plan(plan)
            return
        local = self.picker.local_models
        row = next((r for r in (local.rows() if local is not None else []) if r.path == path),
                   None)
        verdict = row.verdict if row is not None else None
        action = "Load switches to it" if ready else "Load"
        if verdict is not None:
            self._describe(f"{name}: {verdict.label()}. {action}; the settings are checked "
                           f"again with a dry run first.")
        else:
            self._describe(f"{name}: {action}; how it runs on this computer is planned first, "
                           "then checked with a dry run.")
        self.status.setToolTip("")
        reasons = "\n".join(verdict.reasons) if verdict is not None else ""
        self._show_reasons(reasons, bool(reasons))
        self.steps_label.hide()  # the steps of another model's load

    # ---- the buttons ---------------------------------------------------------------------------

    def update_buttons(self) -> None:
        active, state = self.active, self.active.state
        ready = state.phase is Phase.READY
        selected = self.picker.selected_model()
        other = selected not in (None, active.runner_model)
        chosen = self.picker.selected_remote()
        # From a server's model back to the one loaded here.
        back = active.remote_model is not None and ready and selected == active.runner_model
        if chosen is not None or back:
            self.load_btn.setEnabled(not state.loading and active.checking is None and
                                     chosen != active.remote_model)
            self.load_btn.setText("Use")
        else:
            self.load_btn.setEnabled(not state.loading and (state.idle or (ready and other)))
            self.load_btn.setText("Switch" if ready and other else "Load")
        self.load_btn.setAccessibleName(self.load_btn.text())
        self.unload_btn.setEnabled(state.phase in (Phase.PLANNING, Phase.LOADING, Phase.READY))
        self.picker.combo.setEnabled(not state.busy)
        planning = state.phase is Phase.PLANNING
        self.progress.setVisible(planning or (state.phase is Phase.LOADING and state.running))
        if planning:
            self.progress.setRange(0, 0)  # busy indicator: planning has no steps to count
        self.restart_btn.setVisible(active.can_restart)
        self.updated.emit()


def remote_text(model: str, server: str) -> str:
    return (f"Chatting with {model} on {server} (remote). Replies come from that server; "
            "nothing runs on this computer for them.")
