"""What the widgets need of each service, as small protocols.

The real services (app/services/*.py) satisfy them; GUI tests hand the window in-memory fakes
(tests/gui/fakes.py) that satisfy them too, so window behaviour is tested in milliseconds while a
small smoke set still goes through the real runner.

No ``Any`` here (mypy's ``disallow_any_explicit`` for this module, and
tests/unit/test_typed_boundary.py, check it). Signals are Qt ``Signal`` class attributes, which
read as a ``SignalInstance`` on an instance; PySide6's stubs do not carry a signal's payload types
(``emit`` takes anything, ``connect`` any callable), so a protocol names the attribute
``SignalInstance`` and documents the payload beside it, and the slots that receive it are typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from app.runner_client import RunnerClient
from app.services.runner_process import RunnerState

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

    from app.chat.transcript import Transcript
    from app.hardware.report import HardwareReport
    from app.hub.types import FileGroup, RepoDetails
    from app.hub.verdict import Verdict
    from app.loading.tuning import TuningContext
    from app.planner.plan import LaunchPlan
    from app.planner.types import Pins
    from app.remote.servers import RemoteModel, Server


class RunnerLike(Protocol):
    """The runner child process (app/services/runner_process.py)."""

    state_changed: SignalInstance  # Signal(RunnerState)
    progress: SignalInstance  # Signal(float): 0..1, llama.cpp's load progress
    ready: SignalInstance  # Signal()
    failed: SignalInstance  # Signal(str)
    url: str  # where Hearth reaches it (loopback when it listens on every interface)
    listen_url: str  # what it reported: the interface it listens on ("" when not listening)
    model: str

    @property
    def state(self) -> RunnerState: ...

    @property
    def key(self) -> str | None: ...

    def stop(self) -> None: ...

    def stop_and_wait(self, msecs: int = 3000) -> None: ...

    def client(self) -> RunnerClient: ...


class LoaderLike(Protocol):
    """Planning and loading a model (app/services/loader.py)."""

    planned: SignalInstance  # Signal(LaunchPlan)
    retrying: SignalInstance  # Signal(str)
    failed: SignalInstance  # Signal(str)
    died: SignalInstance  # Signal(str)
    path: str

    @property
    def busy(self) -> bool: ...

    @property
    def planning(self) -> bool: ...

    @property
    def plan(self) -> LaunchPlan | None: ...

    @property
    def good_plan(self) -> LaunchPlan | None: ...

    @property
    def steps(self) -> list[str]: ...

    def load(self, path: str, flags: list[str] | None = None, pins: Pins | None = None) -> bool: ...

    def restart(self) -> bool: ...

    def cancel(self) -> None: ...

    def shutdown(self) -> None: ...


class ConversationsLike(Protocol):
    """Stored conversations (app/services/storage.py's ConversationService): the sidebar's list
    and its changes, opening one, switching versions at a branch point. Answers are signals."""

    listed: SignalInstance  # Signal(list[ConversationSummary])
    opened: SignalInstance  # Signal(Conversation)
    changed: SignalInstance  # Signal(): the list's order or contents changed
    exported: SignalInstance  # Signal(str path)
    failed: SignalInstance  # Signal(str sentence)

    def list_conversations(self, query: str = "") -> None: ...

    def open(self, conv_id: int) -> None: ...

    def show_branch(self, conv_id: int, message_id: int) -> None: ...

    def rename(self, conv_id: int, title: str) -> None: ...

    def set_pinned(self, conv_id: int, pinned: bool) -> None: ...

    def delete(self, conv_id: int) -> None: ...

    def export(self, conv_id: int, path: str, kind: str) -> None: ...

    def set_model(self, transcript: Transcript) -> None: ...


class LibraryLike(Protocol):
    """The local model library (app/services/storage.py's ModelLibraryService)."""

    recent_changed: SignalInstance  # Signal(list[str]): model paths, most recently used first

    def recent(self) -> list[str]: ...

    def use(self, path: str) -> list[str]:
        """Record that ``path`` was chosen; returns the new list at once (saved in the
        background)."""
        ...


# -- getting models: the Discover tab, the downloads, the local library ---------------------------


@dataclass(frozen=True)
class DownloadRow:
    """One download as the queue view shows it."""

    id: str
    title: str  # "owner/repo · file.gguf"
    state: str  # queued | downloading | paused | failed | done
    done: int  # bytes
    total: int | None
    speed: float  # bytes/s, smoothed (0 when not downloading)
    eta: float | None  # seconds
    phase: str  # "downloading", "verifying", "retrying in 4 s: …", "paused: disk full", …
    error: str = ""  # the sentence to show when failed or paused by a problem


@dataclass(frozen=True)
class LocalRow:
    """One model on this computer as the library view shows it."""

    path: str  # the file to load (first part of a split model)
    name: str
    size: int
    source: str  # "Hearth", "Hugging Face cache", "LM Studio", "Ollama", "Jan", "GPT4All", "Folder"
    own: bool  # in Hearth's own models folder: the only ones Hearth may delete
    quantization: str | None
    architecture: str | None
    parameters: int | None
    context_length: int | None
    verdict: Verdict | None = None  # None: not planned yet
    error: str | None = None  # the header could not be read: why


class HubLike(Protocol):
    """Hugging Face search, repository pages and fit verdicts (app/services/hub.py).

    Every call returns at once; results come as signals on the GUI thread.
    """

    results: SignalInstance  # Signal(list[RepoSummary], bool append, bool has_more)
    details: SignalInstance  # Signal(RepoDetails)
    verdict: SignalInstance  # Signal(str repo_id, str group name, Verdict | str error sentence)
    recommended: SignalInstance  # Signal(list[tuple[Recommendation, RepoDetails | None, Verdict | None]])
    unreachable: SignalInstance  # Signal(str): one line for the banner (no network, DNS, 5xx)
    failed: SignalInstance  # Signal(str): anything else (repo not found, gated, …)

    def search(self, query: str, sort: str = "trending") -> None: ...

    def more(self) -> None: ...

    def open_repo(self, repo_id: str) -> None: ...

    def load_recommended(self) -> None: ...

    def retry(self) -> None:
        """Repeat the last request that found the Hub unreachable."""
        ...

    account: SignalInstance  # Signal(str): the account the saved token belongs to; "" after sign-out
    account_failed: SignalInstance  # Signal(str): a sentence (wrong token, no keyring, Hub unreachable)

    def sign_in(self, token: str) -> None: ...

    def sign_out(self) -> None: ...

    def token_note(self) -> str: ...


class DownloadsLike(Protocol):
    """The download queue (app/services/downloads.py)."""

    changed: SignalInstance  # Signal(): rows added, removed or changed state
    progress: SignalInstance  # Signal(DownloadRow): throttled, at most a few per second per download
    finished: SignalInstance  # Signal(str path): a verified model is in the library
    failed: SignalInstance  # Signal(str id, str sentence)

    def rows(self) -> list[DownloadRow]: ...

    def enqueue(self, details: RepoDetails, group: FileGroup) -> str:
        """Queue ``group`` of ``details``; returns the id, or raises
        HubError with a sentence (unsafe name, disk full before start)."""
        ...

    def pause(self, id: str) -> None: ...

    def resume(self, id: str) -> None: ...

    def cancel(self, id: str) -> None:
        """Stop and delete what was downloaded of it."""
        ...

    def retry(self, id: str) -> None: ...


class LocalModelsLike(Protocol):
    """The models on this computer (app/services/local_models.py)."""

    changed: SignalInstance  # Signal(list[LocalRow])
    busy_changed: SignalInstance  # Signal(bool): scanning

    def rows(self) -> list[LocalRow]: ...

    def rescan(self) -> None: ...

    def add_folder(self, folder: str) -> None: ...

    def set_models_dir(self, folder: str) -> None:
        """Download into ``folder`` from now on (what is already downloaded stays listed)."""
        ...

    def delete(self, path: str) -> None:
        """Delete a model in Hearth's own folder (refused with a sentence otherwise)."""
        ...

    def verify(self, path: str) -> None: ...

    verified: SignalInstance  # Signal(str path, bool ok | None unknown, str sentence)
    failed: SignalInstance  # Signal(str sentence)


class HardwareLike(Protocol):
    """The hardware report (app/services/hardware.py), for views that only show a summary."""

    report_changed: SignalInstance  # Signal(HardwareReport): the machine's, then merged with the runner's
    failed: SignalInstance  # Signal(str): a sentence for the user

    @property
    def report(self) -> HardwareReport | None: ...

    def refresh(self) -> None:
        """Detect again in the background; the answer comes as ``report_changed``."""
        ...


class TuningLike(Protocol):
    """The offload settings panel's service (app/services/tuning.py's TuningService)."""

    opened: SignalInstance  # Signal(TuningContext): the model opened with open() is ready to tune
    failed: SignalInstance  # Signal(str): it could not be opened, or pins not saved: a sentence
    saved: SignalInstance  # Signal(str path): its pins were saved

    def open(self, path: str) -> None:
        """Read the model and the machine off the GUI thread; ``opened`` follows."""
        ...

    def plan(self, ctx: TuningContext, pins: Pins) -> LaunchPlan:
        """The plan for ``pins`` on ``ctx``, without the dry run:
        synchronous, milliseconds."""
        ...

    def save(self, ctx: TuningContext, pins: Pins) -> None:
        """Keep ``pins`` for this model on this machine (used by its next load)."""
        ...


class RemoteLike(Protocol):
    """The servers the user added (app/services/remote.py's RemoteService). Changes return at
    once (a form problem raises ServerFormError); what the server says comes as signals."""

    changed: SignalInstance  # Signal(): the servers or their model lists changed
    checked: SignalInstance  # Signal(str server id, str sentence, bool error): a check's outcome
    in_use: SignalInstance  # Signal(RemoteModel): checked, ready to chat with
    use_failed: SignalInstance  # Signal(RemoteModel, str sentence)
    failed: SignalInstance  # Signal(str sentence): saving the list, the keyring

    def servers(self) -> list[Server]: ...

    def server(self, server_id: str) -> Server | None: ...

    def note(self, server_id: str) -> tuple[str, bool]: ...

    def connection(self, server_id: str) -> tuple[str, str]: ...

    def add(self, name: str, base_url: str, key: str) -> Server: ...

    def edit(self, server_id: str, name: str, base_url: str, key: str | None) -> Server: ...

    def remove(self, server_id: str) -> None: ...

    def refresh(self, server_id: str) -> None: ...

    def use(self, model: RemoteModel) -> None: ...
