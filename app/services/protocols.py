"""What the widgets need of each service, as small protocols.

The real services (app/services/*.py) satisfy them; GUI tests hand the window in-memory fakes
(tests/gui/fakes.py) that satisfy them too, so window behaviour is tested in milliseconds while a
small smoke set still goes through the real runner. Signals are Qt ``Signal`` attributes; a
protocol can only name them (``Any``), their payloads are documented beside each.
"""

from __future__ import annotations

from typing import Any, Protocol

from app.runner_client import RunnerClient
from app.services.runner_process import RunnerState


class RunnerLike(Protocol):
    """The runner child process (app/services/runner_process.py)."""

    state_changed: Any  # Signal(RunnerState)
    progress: Any  # Signal(float): 0..1, llama.cpp's load progress
    ready: Any  # Signal()
    failed: Any  # Signal(str)
    url: str
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

    planned: Any  # Signal(LaunchPlan)
    retrying: Any  # Signal(str)
    failed: Any  # Signal(str)
    died: Any  # Signal(str)
    path: str

    @property
    def busy(self) -> bool: ...

    @property
    def planning(self) -> bool: ...

    @property
    def plan(self) -> Any: ...  # LaunchPlan | None

    @property
    def good_plan(self) -> Any: ...  # LaunchPlan | None

    @property
    def steps(self) -> list[str]: ...

    def load(self, path: str, flags: list[str] | None = None) -> bool: ...

    def restart(self) -> bool: ...

    def cancel(self) -> None: ...

    def shutdown(self) -> None: ...


class LibraryLike(Protocol):
    """The local model library (app/services/storage.py's ModelLibraryService)."""

    recent_changed: Any  # Signal(list[str]): model paths, most recently used first

    def recent(self) -> list[str]: ...

    def use(self, path: str) -> list[str]:
        """Record that ``path`` was chosen; returns the new list at once (saved in the
        background)."""
        ...
