"""The model bar above the chat: one compact strip with the picker, a chip saying where the model
is (Ready, Loading…, Failed, No model), Load / Switch / Use, Unload and Offload, the load's
progress and Restart; under it one quiet line with the whole status sentence (cut to fit, whole
in its tooltip) and "Why?", which unfolds the plan's reasons; the fallback steps taken; an
error or the note on a base model as a banner.

A view of app/services/active_model.py: it shows what the model in use reports and hands the
person's choices to it; what a load says is worded in app/loading/text.py.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
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
from app.ui.common import plain_label
from app.ui.lang import tr, ui_text
from app.ui.model_picker import ModelPicker
from app.ui.style.components import (
    Banner,
    ProgressBar,
    chip,
    icon_button,
    repolish,
    set_tone,
    set_type,
    tooltip_with_shortcut,
)
from app.ui.style.icons import icon
from app.ui.style.tokens import SPACING


def _plain(wrap: bool = True) -> QLabel:
    return plain_label(wrap=wrap, selectable=False)


class OneLine(QLabel):
    """A plain-text label drawn on one line, cut with "…" where it does not fit (its tooltip
    and text() keep every word): a long status never widens the window or pushes the chat
    down."""

    def __init__(self) -> None:
        super().__init__()
        self.setTextFormat(Qt.TextFormat.PlainText)

    def minimumSizeHint(self) -> QSize:
        return QSize(0, self.fontMetrics().height())

    def sizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance(self.text()),
                     self.fontMetrics().height())

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        area = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight,
                                              area.width())
        self.style().drawItemText(painter, area, int(self.alignment()), self.palette(),
                                  self.isEnabled(), shown, self.foregroundRole())


def _state_words(phase: Phase, remote: bool) -> tuple[str, str]:
    """The state chip's words and tone for ``phase``: a word always, the tone a second sign."""
    if remote and phase in (Phase.NONE, Phase.READY):
        return tr("Remote"), "info"
    if phase in (Phase.PLANNING, Phase.LOADING, Phase.SWITCHING):
        return tr("Loading…"), "info"
    if phase is Phase.UNLOADING:
        return tr("Unloading…"), "muted"
    if phase is Phase.READY:
        return tr("Ready"), "success"
    if phase is Phase.FAILED:
        return tr("Failed"), "danger"
    return tr("No model"), "muted"


class BaseModelNote(Banner):
    """Says that a base model may not follow instructions, and offers its instruct version
    (``search`` carries what to look for on Discover)."""

    search = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label, self.button = self.text, self.action
        self.button.setText(tr("Find the instruct version"))
        self.button.setAccessibleName(self.button.text())
        self._search = ""
        self.action_clicked.connect(self._clicked)

    def _clicked(self) -> None:
        if self._search:
            self.search.emit(self._search)

    def show_for(self, plan: LaunchPlan | None, loaded_file: str) -> None:
        """Shown when ``plan``'s model is a base model, hidden otherwise."""
        model = getattr(plan, "model", None)  # None: a plan without its model (tests' fakes)
        note = None if model is None else base_model_note(
            model.name, bool(model.chat_template), dict(model.general or {}), loaded_file)
        self._search = note.search if note else ""
        if note is None:
            self.hide()
        else:
            self.show_message(ui_text(note.text), "warning", tr("Find the instruct version"))


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
        self._reasons = ""  # the plan's reasons, for the status line's tooltip
        self._error = False
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
        # Load is the place's main action while nothing runs; its name follows its text:
        # Load, Switch or Use.
        self.load_btn = QPushButton(tr("Load"))
        self.load_btn.setAccessibleName(self.load_btn.text())
        self.load_btn.setToolTip(tooltip_with_shortcut(tr("Load the model chosen in the list"),
                                                       "F5"))
        self.load_btn.clicked.connect(self.load_selected)
        # The keys live on the menu's actions (one owner per key): the tooltips only name them.
        self.unload_btn = icon_button("unload", tr("Unload"))
        self.unload_btn.setToolTip(tooltip_with_shortcut(
            tr("Unload: stop the model and free its memory"), "Shift+F5"))
        self.unload_btn.clicked.connect(self.active.unload)
        self.progress = ProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setFixedWidth(120)
        self.progress.setAccessibleName(tr("Loading progress"))
        self.state_chip = chip(tr("No model"))
        self.settings_btn = icon_button("drawer", tr("Chat settings"), checkable=True)
        self.settings_btn.setToolTip(tr("Chat settings: system prompt and sampling for this "
                                        "conversation"))
        # Plain text everywhere a runner error, a file name or a model's metadata can appear:
        # a label that guesses "rich text" would load an <img> such text names.
        self.status = OneLine()
        self.status.setAccessibleName(tr("Model status"))
        set_tone(self.status, "muted")
        set_type(self.status, "small")
        # Shown when the runner died after it was ready: same model, last plan that worked.
        self.restart_btn = icon_button("retry", tr("Restart model"), text=tr("Restart"))
        self.restart_btn.setToolTip(tr("Load the same model again with the settings that "
                                       "worked; the conversation is kept."))
        self.restart_btn.clicked.connect(self.active.restart)
        self.restart_btn.hide()
        self.banner = Banner()  # a failed load or a runner that died, in its own words
        self._build_reasons()
        self.base_box = BaseModelNote()  # a base model may not follow instructions
        self.base_label, self.base_btn = self.base_box.label, self.base_box.button
        self.base_box.search.connect(self.find_instruct)
        self._lay_out()

    def _build_reasons(self) -> None:
        # The plan's reasons, folded away: most people want the numbers, some want the why.
        self.why_btn = icon_button("info", tr("Why these settings?"), checkable=True,
                                   text=tr("Why?"))
        self.why_btn.setToolTip(tr("Why these settings? The plan's reasons, step by step"))
        self.why_btn.toggled.connect(self._toggle_reasons)
        self.why_btn.hide()
        self.steps_label = _plain()  # the fallback steps taken, one per line
        set_tone(self.steps_label, "warning")
        set_type(self.steps_label, "small")
        self.steps_label.hide()
        self.reasons_label = _plain()
        self.reasons_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reasons_label.setAccessibleName(tr("Why these settings"))
        self.reasons_label.setObjectName("sunken")  # a well under the line it explains
        self.reasons_label.setContentsMargins(SPACING.md, SPACING.sm, SPACING.md, SPACING.sm)
        set_type(self.reasons_label, "small")
        self.reasons_label.hide()

    def _lay_out(self) -> None:
        self.strip = QFrame()
        self.strip.setObjectName("statusStrip")
        top = QHBoxLayout()
        top.setSpacing(SPACING.sm)
        self.picker.combo.setMaximumWidth(560)  # a long name is cut, not the strip widened
        top.addWidget(self.picker.combo, 1)
        top.addWidget(self.state_chip)
        top.addSpacing(SPACING.sm)
        for widget in (self.load_btn, self.unload_btn, self.progress):
            top.addWidget(widget)
        top.addStretch(1)
        top.addWidget(self.restart_btn)
        top.addWidget(self.settings_btn)
        self._top = top
        status_row = QHBoxLayout()
        status_row.setSpacing(SPACING.sm)
        status_row.addWidget(self.status, 1)
        status_row.addStretch(0)  # Why? stays right while an error banner has the words
        status_row.addWidget(self.why_btn)
        strip_column = QVBoxLayout(self.strip)
        strip_column.setContentsMargins(SPACING.lg, SPACING.md, SPACING.lg, SPACING.sm)
        strip_column.setSpacing(SPACING.xs)
        strip_column.addLayout(top)
        strip_column.addLayout(status_row)
        strip_column.addWidget(self.steps_label)
        strip_column.addWidget(self.reasons_label)
        notes = QVBoxLayout()
        notes.setContentsMargins(SPACING.lg, 0, SPACING.lg, 0)
        notes.setSpacing(SPACING.sm)
        notes.addWidget(self.banner)
        notes.addWidget(self.base_box)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(SPACING.sm)
        column.addWidget(self.strip)
        column.addLayout(notes)

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
        self.offload_btn = icon_button("offload", tr("Offload settings"))
        self.offload_btn.setToolTip(tooltip_with_shortcut(
            tr("Offload settings: GPU layers, context, batch, threads, KV cache for this model "
               "on this computer, with the memory each takes"), "Ctrl+Shift+O"))
        self._open_offload = open_panel
        self.offload_btn.clicked.connect(self.offload)
        self._top.insertWidget(self._top.indexOf(self.unload_btn) + 1, self.offload_btn)
        self.update_buttons()
        return self.offload_btn

    def offload(self) -> None:
        """The offload settings of the selected model (Ctrl+Shift+O)."""
        path = self.picker.selected_model()
        if self._open_offload is not None and path:
            self._open_offload(path)

    def ask_for_file(self) -> str:
        path, _ = QFileDialog.getOpenFileName(self, tr("Open a GGUF model"), "",
                                              tr("GGUF models (*.gguf);;All files (*)"))
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
        self.base_box.show_for(plan, os.path.basename(self.active.path))

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

    # ---- the status line and the plan ----------------------------------------------------------

    def set_status(self, text: str, error: bool = False) -> None:
        """The one line under the strip (an error: a banner in its place, same words)."""
        text = ui_text(text)
        self.status.setText(text)
        self._error = error
        set_tone(self.status, "danger" if error else "muted")
        self.status.setVisible(not error)
        if error:
            self.banner.show_message(text, "danger")
        else:
            self.banner.hide()
        self._status_tip()
        self._previewing = False

    def _status_tip(self) -> None:
        """The status line's tooltip: its whole sentence (the line may be cut), then the
        plan's reasons. Tooltips guess rich text too: escaped, with the line breaks kept."""
        tip = "\n\n".join(t for t in (self.status.text(), self._reasons) if t)
        self.status.setToolTip(html.escape(tip).replace("\n", "<br>"))
        self.state_chip.setToolTip(self.status.toolTip())

    def _describe(self, text: str) -> None:
        """A status line about the selection: the next change of facts may redo it."""
        self.set_status(text)
        self._previewing = True

    def show_plan(self, plan: LaunchPlan | None) -> None:
        """The plan's reasons (tooltip and the foldable list) and the fallback steps so far."""
        steps = self.active.steps if plan is not None else []
        reasons = load_text.reasons_text(plan, steps) if plan is not None else ""
        self._reasons = ui_text(reasons)
        self._status_tip()
        self._show_reasons(self._reasons, plan is not None)
        self.steps_label.setText("\n".join(ui_text(step) for step in steps))
        self.steps_label.setVisible(bool(steps))

    def _show_reasons(self, reasons: str, shown: bool) -> None:
        self.reasons_label.setText(reasons)
        self.why_btn.setVisible(shown)
        self.reasons_label.setVisible(shown and self.why_btn.isChecked())

    def _toggle_reasons(self, shown: bool) -> None:
        self.why_btn.setIcon(icon("expand" if shown else "info"))
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
                       tr("{model} runs on {server} ({url}). Use checks that the server has "
                          "it, then your messages go there.").format(
                           model=chosen.model, server=server.name, url=server.base_url))

    def _preview_local(self, path: str) -> None:
        name = os.path.basename(path)
        ready = self.active.phase is Phase.READY
        if path == self.active.runner_model and ready:
            plan = self.active.plan
            self._describe(load_text.ready_text(name, plan)
                           if self.active.remote_model is None else
                           tr("{name} is loaded on this computer; Use chats with it "
                              "again.").format(name=name))
            self.show_plan(plan)
            return
        local = self.picker.local_models
        row = next((r for r in (local.rows() if local is not None else []) if r.path == path),
                   None)
        verdict = row.verdict if row is not None else None
        if verdict is not None:
            self._describe((tr("{name}: {verdict}. Load switches to it; the settings are "
                               "checked again with a dry run first.") if ready else
                            tr("{name}: {verdict}. Load; the settings are checked again with "
                               "a dry run first.")).format(name=name,
                                                           verdict=ui_text(verdict.label())))
        else:
            self._describe((tr("{name}: Load switches to it; how it runs on this computer is "
                               "planned first, then checked with a dry run.") if ready else
                            tr("{name}: Load; how it runs on this computer is planned first, "
                               "then checked with a dry run.")).format(name=name))
        reasons = "\n".join(ui_text(r) for r in verdict.reasons) if verdict is not None else ""
        self._reasons = ""
        self._status_tip()
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
            self.load_btn.setText(tr("Use"))
        else:
            self.load_btn.setEnabled(not state.loading and (state.idle or (ready and other)))
            self.load_btn.setText(tr("Switch") if ready and other else tr("Load"))
        self.load_btn.setAccessibleName(self.load_btn.text())
        self._show_state()
        self.unload_btn.setEnabled(state.phase in (Phase.PLANNING, Phase.LOADING, Phase.READY))
        self.picker.combo.setEnabled(not state.busy)
        planning = state.phase is Phase.PLANNING
        self.progress.setVisible(planning or (state.phase is Phase.LOADING and state.running))
        if planning:
            self.progress.setRange(0, 0)  # busy indicator: planning has no steps to count
        self.restart_btn.setVisible(active.can_restart)
        self.updated.emit()


    def _show_state(self) -> None:
        """The chip (where the model is, in a word) and Load as the main action while nothing
        runs."""
        phase = self.active.state.phase
        words, tone = _state_words(phase, self.active.remote_model is not None)
        self.state_chip.setText(words)
        self.state_chip.setAccessibleName(tr("Model: {state}").format(state=words))
        if self.state_chip.property("chip") != tone:
            self.state_chip.setProperty("chip", tone)
            repolish(self.state_chip)
        primary = phase in (Phase.NONE, Phase.FAILED) and self.active.remote_model is None
        if bool(self.load_btn.property("primary")) != primary or self.load_btn.icon().isNull():
            self.load_btn.setProperty("primary", primary)
            self.load_btn.setIcon(icon("load", "on_accent" if primary else "text"))
            repolish(self.load_btn)


def remote_text(model: str, server: str) -> str:
    return tr("Chatting with {model} on {server} (remote). Replies come from that server; "
              "nothing runs on this computer for them.").format(model=model, server=server)
