"""What is current, as a QObject: the model chats go to, its load, the plan and its endpoint.

The one owner of that state (app/loading/state.py's machine); the window and its views observe
it through the signals below and forward the person's intents to its methods (load, switch,
unload, restart, use a server's model). It drives the loader, the runner and the servers'
service; it never touches a widget. What it says in the status line it says with ``said``.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, Signal

from app.i18n import T_
from app.loading import text as load_text
from app.loading.endpoint import ChatEndpoint, thinking_control
from app.loading.state import ActiveState, Phase, Step
from app.planner.plan import LaunchPlan
from app.planner.types import Pins
from app.remote.servers import RemoteModel
from app.services.chat_stream import StreamFailure
from app.services.protocols import LoaderLike, RemoteLike, RunnerLike
from app.services.runner_process import RunnerState


class ActiveModel(QObject):
    changed = Signal()  # the phase, the model in use, the check or the endpoint changed
    said = Signal(object, bool)  # a sentence for the status line; True: it tells of a failure
    runner_state = Signal(RunnerState)  # the local runner's state (the view words it)
    progress = Signal(float)  # 0..1, the local model's load progress
    planned = Signal(object)  # LaunchPlan: the local model loads with it
    retrying = Signal(object)  # a fallback step's reason; the load goes on smaller
    load_failed = Signal(object)  # the local load's final failure, worded
    died = Signal(object)  # the local runner stopped after it was ready
    ready = Signal()  # the local model is ready
    remote_ready = Signal(RemoteModel)  # a server's model was checked and is in use now
    chosen = Signal(str)  # a pending switch loads this model file now (the picker shows it)
    in_use = Signal(str)  # the model the conversation goes on with: a path or a remote key
    # The endpoint chats went to is going away: a reply streaming to it ends (True: it died,
    # the reply says so; False: it is stopped, kept as far as it got).
    leaving = Signal(bool)

    def __init__(self, runner: RunnerLike, loader: LoaderLike, *,
                 remote: RemoteLike | None = None, runner_flags: list[str] | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.loader = loader
        self.remote = remote  # the servers the user added (None: none can be used)
        self.runner_flags = list(runner_flags or [])  # every load's extra flags (tests')
        self.state = ActiveState()
        # Connected before any view: each view reads a state already updated.
        runner.state_changed.connect(self._on_runner_state)
        runner.progress.connect(self.progress.emit)
        runner.ready.connect(self.ready.emit)
        loader.planned.connect(self._on_planned)
        loader.retrying.connect(self._on_retrying)
        loader.failed.connect(self._on_load_failed)
        loader.died.connect(self._on_died)
        if remote is not None:
            remote.in_use.connect(self._on_remote_ready)
            remote.use_failed.connect(self._on_remote_failed)
            remote.changed.connect(self._on_servers_changed)
        self.state.runner_state(runner.state.value, self._local_endpoint(runner.state))

    # ---- what is current --------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self.state.phase

    @property
    def endpoint(self) -> ChatEndpoint | None:
        """Where a reply is asked now (None: nothing can answer)."""
        return self.state.endpoint

    @property
    def remote_model(self) -> RemoteModel | None:
        """The server's model chats go to (None: the local model)."""
        return self.state.remote

    @property
    def checking(self) -> RemoteModel | None:
        return self.state.checking

    @property
    def runner_model(self) -> str:
        """The model file the runner serves or last served."""
        return self.runner.model

    @property
    def loaded_model(self) -> str:
        """The model file loaded and ready on this computer ("" when none)."""
        return self.runner.model if self.state.phase is Phase.READY else ""

    @property
    def model_in_use(self) -> str:
        """What a new conversation is written with (a path or a remote key; "": nothing)."""
        return self.state.model_in_use(self.runner.model)

    @property
    def current_key(self) -> str:
        """The remote model's key, else the runner's model file (ready or not)."""
        remote = self.state.remote
        return remote.key if remote is not None else self.runner.model

    @property
    def plan(self) -> LaunchPlan | None:
        """The plan being tried or in force."""
        return self.loader.plan

    @property
    def steps(self) -> list[str]:
        """The fallback steps the load has taken."""
        return self.loader.steps

    @property
    def pins(self) -> Pins | None:
        """Pins fixed for the next load (the offload panel's Apply), None when none."""
        return self.state.pins

    @property
    def path(self) -> str:
        """The model file the loader plans, loads or has loaded."""
        return self.loader.path

    @property
    def can_restart(self) -> bool:
        """The runner died after it was ready, and its last good plan can start again."""
        return self.state.died and self.loader.good_plan is not None

    # ---- the person's intents ---------------------------------------------------------------

    def load(self, path: str) -> None:
        """Load ``path``; with another model loaded, that one stops first and ``path`` loads
        once it has. The model loaded already: chats go to it again (from a server's)."""
        was = self.runner.model
        step = self.state.load(path)
        if step is Step.BACK:
            self.leaving.emit(False)
            self.said.emit(T_("Chatting with {name} on this computer again.",
                              name=os.path.basename(path)),
                           False)
            self.in_use.emit(path)
        elif step is Step.STOP:
            self.leaving.emit(False)
            self.runner.stop()
            self.said.emit(T_("Unloading {name} first…", name=os.path.basename(was)), False)
        elif step is Step.PLAN:
            self._plan(path)
            return
        self.changed.emit()

    def _plan(self, path: str) -> None:
        pins = self.state.take_pins()
        if not self.loader.load(path, self.runner_flags, pins=pins):
            return
        had_remote = self.state.remote is not None
        self.state.planning(path)
        if had_remote:
            self.leaving.emit(False)
        self.in_use.emit(path)
        self.said.emit(load_text.planning_text(os.path.basename(path)), False)
        self.changed.emit()

    def load_with(self, path: str, pins: Pins | None) -> None:
        """Load ``path`` with settings the person fixed (the offload panel's Apply): what is
        loaded or being loaded now stops first, ``path`` itself too."""
        was = self.runner.model
        steps = self.state.load_with(path, pins)
        if Step.CANCEL in steps:
            self.loader.cancel()  # no plan or fallback step of the old settings after this
        if Step.PLAN in steps:
            self.load(path)
            return
        self.leaving.emit(False)
        if Step.STOP in steps:
            self.runner.stop()
        name = os.path.basename(path)
        self.said.emit(f"Unloading {name} to load it again with the new settings…"
                       if was in ("", path) else
                       f"Unloading {os.path.basename(was)} first; then {name} loads with the "
                       "new settings…", False)
        self.changed.emit()

    def unload(self) -> None:
        """Stop the model; also ends a plan in the making, the fallback ladder and a pending
        switch."""
        steps = self.state.unload()
        self.loader.cancel()
        if Step.STOP in steps:
            self.runner.stop()
        else:
            # No process to stop (planning, or between two fallback steps): nothing will
            # report a state change, so say it here.
            self.said.emit(T_("No model loaded."), False)
        self.changed.emit()

    def restart(self) -> None:
        """After the runner died: the same model with the last plan it was ready with."""
        if self.loader.restart():
            had_remote = self.state.remote is not None
            self.state.restarted()
            if had_remote:
                self.leaving.emit(False)
        self.changed.emit()

    def use_remote(self, model: RemoteModel) -> None:
        """Chat with ``model`` on its server: its key is read and the model checked first; the
        local runner is left as it is (it neither starts nor stops)."""
        if self.remote is None or not self.state.use_remote(model):
            return
        server = self.remote.server(model.server_id)
        self.said.emit(T_("Connecting to {server}…",
                          server=server.name if server else T_("the server")), False)
        self.changed.emit()
        self.remote.use(model)

    def server_failed(self, failure: StreamFailure) -> None:
        """A server failed a reply: a model that is gone makes its server's list fresh."""
        self.said.emit(failure.message, True)
        remote = self.state.remote
        if failure.code == "model_gone" and remote is not None and self.remote is not None:
            self.remote.refresh(remote.server_id)

    def close(self) -> None:
        """The window closes: cancel what is under way, stop the runner and wait for it."""
        self.loader.shutdown()
        self.runner.stop_and_wait()

    # ---- what the loader, the runner and the servers report ---------------------------------

    def _local_endpoint(self, state: RunnerState) -> ChatEndpoint | None:
        if state != RunnerState.READY:
            return None
        model = getattr(self.loader.plan, "model", None)  # the plan the runner was started with
        template = getattr(model, "chat_template", None)
        template = template if isinstance(template, str) else ""
        return ChatEndpoint.local(self.runner.url, self.runner.key, self.runner.model,
                                  getattr(model, "projector", None) is not None,
                                  "tools" in template, thinking_control(template))

    def _on_runner_state(self, state: RunnerState) -> None:
        step = self.state.runner_state(state.value, self._local_endpoint(state))
        if state in (RunnerState.STOPPING, RunnerState.STOPPED) and self.state.remote is None:
            self.leaving.emit(False)
        self.runner_state.emit(state)
        self.changed.emit()
        if step is Step.PLAN:
            path = self.state.switch_target()
            if path:
                self.chosen.emit(path)
                self.load(path)

    def _on_planned(self, plan: LaunchPlan) -> None:
        self.state.planned()
        self.planned.emit(plan)
        self.changed.emit()

    def _on_retrying(self, reason: str) -> None:
        self.state.retrying()
        self.retrying.emit(reason)
        self.changed.emit()

    def _on_load_failed(self, message: str) -> None:
        self.state.load_failed()
        self.load_failed.emit(message)
        self.changed.emit()

    def _on_died(self, message: str) -> None:
        self.state.runner_died()
        if self.state.remote is None:  # a remote reply goes on whatever happens here
            self.leaving.emit(True)
        self.died.emit(message)
        self.changed.emit()

    def _remote_endpoint(self, model: RemoteModel) -> ChatEndpoint | None:
        server = self.remote.server(model.server_id) if self.remote is not None else None
        if self.remote is None or server is None:
            return None
        url, key = self.remote.connection(server.id)
        return ChatEndpoint.remote(url, key, model.model, server.name, server.base_url)

    def _on_remote_ready(self, model: RemoteModel) -> None:
        endpoint = self._remote_endpoint(model)
        if endpoint is None:  # its server was removed meanwhile
            if self.state.remote_failed(model):
                self.changed.emit()
            return
        if not self.state.remote_ready(model, endpoint):
            return  # the person moved on meanwhile
        self.leaving.emit(False)
        self.in_use.emit(model.key)
        self.remote_ready.emit(model)
        self.changed.emit()

    def _on_remote_failed(self, model: RemoteModel, sentence: str) -> None:
        if self.state.remote_failed(model):
            self.said.emit(sentence, True)
            self.changed.emit()

    def _on_servers_changed(self) -> None:
        remote = self.state.remote
        if remote is None:
            return
        if self.state.server_changed(self._remote_endpoint(remote)):
            self.leaving.emit(False)  # its server was removed
            self.said.emit(T_("The server of the model in use was removed; pick another model."),
                           False)
            self.changed.emit()
