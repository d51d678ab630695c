"""What is current: the model chats go to, its load's state and its endpoint (no Qt).

One state machine, fed with what the person asks (load, unload, switch, use a server's model)
and with what the loader, the runner and the servers report; app/services/active_model.py is its
Qt glue, and every widget reads the state from there. The machine never acts itself: a method
that needs something done returns it (:class:`Step`), and the service does it.

The local load::

    NONE ──load──▶ PLANNING ──planned──▶ LOADING ──ready──▶ READY
      ▲               │                     │                 │ │
      │            failed                failed        unload│ │load another / apply pins
      │               ▼                     ▼                 ▼ ▼
      └──stopped── UNLOADING            FAILED ◀──died──   SWITCHING ──stopped──▶ PLANNING

A fallback step keeps LOADING (the runner fails, the loader retries smaller); only the loader's
final ``failed`` is FAILED. A runner someone else stops (Settings' "Apply now") goes UNLOADING,
then NONE, then LOADING again when it restarts.

Beside the local load, a server's model may be in use (:attr:`ActiveState.remote`): the local
runner is left as it is, and the chat endpoint is the server's until a local model is loaded or
used again. Local or remote is decided when the model is put in use, in one place
(:attr:`ActiveState.endpoint`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from app.loading.endpoint import ChatEndpoint
from app.planner.types import Pins
from app.remote.servers import RemoteModel


class Phase(Enum):
    NONE = "none"  # no local model loaded or loading
    PLANNING = "planning"  # the loader plans (no runner process yet)
    LOADING = "loading"  # the runner starts and loads, maybe on a fallback step
    READY = "ready"
    FAILED = "failed"  # planning or every fallback step failed, or the runner died when ready
    UNLOADING = "unloading"  # the runner stops; nothing loads after it
    SWITCHING = "switching"  # the runner stops; :attr:`ActiveState.next` loads after it


class Step(Enum):
    """What the service does after a transition."""

    NOTHING = "nothing"
    PLAN = "plan"  # ask the loader to plan and load (with :meth:`ActiveState.take_pins`)
    STOP = "stop"  # stop the runner process
    CANCEL = "cancel"  # end the loader's plan in the making, or its fallback ladder
    BACK = "back"  # the local model already loaded is in use again (no load)


# The runner process's states (RunnerState.value), as the machine is told them.
_RUNNING = ("starting", "loading", "ready", "stopping")


@dataclass
class ActiveState:
    """The state of what is current. Mutated only through its methods."""

    phase: Phase = Phase.NONE
    path: str = ""  # the local model file of the load under way or in force
    next: str | None = None  # SWITCHING: the model file to load once the runner stopped
    pins: Pins | None = None  # fixed for the next load (the offload panel's Apply)
    running: bool = False  # a runner process is up (starting, loading, ready or stopping)
    died: bool = False  # FAILED because the runner stopped after it was ready
    remote: RemoteModel | None = None  # a server's model chats go to (None: the local one)
    checking: RemoteModel | None = None  # a server's model being checked before use
    local_endpoint: ChatEndpoint | None = None  # the ready local model's, while it is ready
    remote_endpoint: ChatEndpoint | None = None  # :attr:`remote`'s

    # ---- what is current -----------------------------------------------------------------

    @property
    def endpoint(self) -> ChatEndpoint | None:
        """Where a reply is asked now; None when nothing can answer."""
        if self.remote is not None:
            return self.remote_endpoint
        return self.local_endpoint if self.phase is Phase.READY else None

    @property
    def busy(self) -> bool:
        """A load is under way, or the runner stops: the picker waits."""
        return self.phase in (Phase.PLANNING, Phase.LOADING, Phase.UNLOADING, Phase.SWITCHING)

    @property
    def loading(self) -> bool:
        return self.phase in (Phase.PLANNING, Phase.LOADING)

    @property
    def idle(self) -> bool:
        """No runner and no load under way: a load may start."""
        return self.phase in (Phase.NONE, Phase.FAILED) and not self.running

    def model_in_use(self, runner_model: str) -> str:
        """What the conversation goes on with: the remote model's key, or the local model
        file while it is ready ("" when nothing answers)."""
        if self.remote is not None:
            return self.remote.key
        return runner_model if self.phase is Phase.READY else ""

    # ---- what the person asks ------------------------------------------------------------

    def load(self, path: str) -> Step:
        """Load ``path`` (the Load or Switch button). PLAN: the loader is asked, and
        :meth:`planning` follows if it agrees."""
        if self.running:
            if self.phase is Phase.READY and path == self.path:
                if self.remote is None:
                    return Step.NOTHING
                self._leave_remote()
                return Step.BACK
            if self.phase is Phase.SWITCHING:
                self.next = path
                return Step.NOTHING  # already stopping
            self.next = path
            self.phase = Phase.SWITCHING
            return Step.STOP
        if self.phase in (Phase.PLANNING, Phase.LOADING):
            return Step.NOTHING  # a plan in the making, or a pause between fallback steps
        return Step.PLAN

    def planning(self, path: str) -> None:
        """The loader plans ``path``: it is the local model now, and chats go to it."""
        self.phase = Phase.PLANNING
        self.path = path
        self.next = None
        self.died = False
        self._leave_remote()

    def load_with(self, path: str, pins: Pins | None) -> list[Step]:
        """Load ``path`` again with ``pins`` (the offload panel's Apply): whatever runs or is
        being planned now stops first, even ``path`` itself."""
        self.pins = pins
        if not self.running:
            cancel = self.phase in (Phase.PLANNING, Phase.LOADING)
            if cancel:
                self.phase = Phase.NONE
            return [Step.CANCEL, Step.PLAN] if cancel else [Step.PLAN]
        stopping = self.phase in (Phase.UNLOADING, Phase.SWITCHING)
        self.next = path
        self.phase = Phase.SWITCHING
        return [Step.CANCEL] if stopping else [Step.CANCEL, Step.STOP]

    def take_pins(self) -> Pins | None:
        """The pins for the load about to be planned (each applies to one load)."""
        pins, self.pins = self.pins, None
        return pins

    def unload(self) -> list[Step]:
        """Stop the model, end a plan in the making and any pending switch."""
        self.next = None
        self.pins = None
        if not self.running:
            self.phase = Phase.NONE
            return [Step.CANCEL]
        self.phase = Phase.UNLOADING
        return [Step.CANCEL, Step.STOP]

    def restarted(self) -> None:
        """The loader starts the last plan again (after the runner died): chats go to it."""
        self.died = False
        self._leave_remote()

    # ---- what the loader and the runner report -------------------------------------------

    def planned(self) -> None:
        if self.phase in (Phase.NONE, Phase.PLANNING, Phase.FAILED):
            self.phase = Phase.LOADING

    def retrying(self) -> None:
        """A fallback step (or a lost worker) starts the runner again."""
        if self.phase in (Phase.NONE, Phase.FAILED, Phase.READY):
            self.phase = Phase.LOADING

    def load_failed(self) -> None:
        """The loader's final word: planning failed, the plan does not fit, or no smaller
        setting was left."""
        if self.phase in (Phase.NONE, Phase.PLANNING, Phase.LOADING, Phase.FAILED):
            self.phase = Phase.FAILED

    def runner_died(self) -> None:
        """The runner stopped after it was ready."""
        self.phase = Phase.FAILED
        self.died = True
        self.local_endpoint = None

    def runner_state(self, state: str, endpoint: ChatEndpoint | None = None) -> Step:
        """The runner process changed state (RunnerState.value). ``endpoint``: with "ready",
        where it answers. PLAN: a switch is pending and the runner has stopped: load
        :attr:`next` now."""
        self.running = state in _RUNNING
        if state == "ready":
            self.local_endpoint = endpoint
        elif self.local_endpoint is not None:
            self.local_endpoint = None
        if state in ("starting", "loading"):
            if self.phase in (Phase.NONE, Phase.FAILED, Phase.PLANNING):
                self.phase = Phase.LOADING
        elif state == "ready":
            # A ready runner is ready, whoever stopped it before (only a switch waits for
            # the stop it asked for).
            if self.phase is not Phase.SWITCHING:
                self.phase = Phase.READY
                self.died = False
                if endpoint is not None:
                    self.path = endpoint.model
        elif state == "stopping":
            if self.phase not in (Phase.UNLOADING, Phase.SWITCHING):
                self.phase = Phase.UNLOADING
        elif state in ("stopped", "failed"):
            return self._runner_gone(state)
        return Step.NOTHING

    def _runner_gone(self, state: str) -> Step:
        if self.phase is Phase.SWITCHING and self.next is not None:
            return Step.PLAN
        if self.phase is Phase.SWITCHING or self.phase is Phase.UNLOADING:
            self.phase = Phase.NONE
        elif self.phase is Phase.READY:
            # Stopped by someone else: nothing loaded. Failed: the loader says it died next.
            self.phase = Phase.NONE if state == "stopped" else Phase.FAILED
        elif self.phase is Phase.LOADING and state == "stopped":
            self.phase = Phase.NONE
        # LOADING and failed: a fallback step may follow; the loader's word decides.
        return Step.NOTHING

    def switch_target(self) -> str | None:
        """The file a pending switch loads now (the runner has stopped); it is no longer
        pending."""
        path, self.next = self.next, None
        if self.phase is Phase.SWITCHING:
            self.phase = Phase.NONE
        return path

    # ---- a server's model -----------------------------------------------------------------

    def use_remote(self, model: RemoteModel) -> bool:
        """Check ``model`` before use; False when it is in use already."""
        if model == self.remote:
            return False
        self.checking = model
        return True

    def remote_ready(self, model: RemoteModel, endpoint: ChatEndpoint) -> bool:
        """The server has ``model``: chats go to it. False: the person moved on meanwhile."""
        if model != self.checking:
            return False
        self.checking = None
        self.remote = model
        self.remote_endpoint = endpoint
        return True

    def remote_failed(self, model: RemoteModel) -> bool:
        """The check failed; False: the person moved on meanwhile."""
        if model != self.checking:
            return False
        self.checking = None
        return True

    def server_changed(self, endpoint: ChatEndpoint | None) -> bool:
        """The remote model's server changed: ``endpoint`` is its model's now, None when the
        server was removed (then nothing remote is in use; True)."""
        if self.remote is None:
            return False
        if endpoint is None:
            self._leave_remote()
            return True
        self.remote_endpoint = endpoint
        return False

    def _leave_remote(self) -> None:
        self.remote = None
        self.remote_endpoint = None
