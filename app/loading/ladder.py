"""The retry ladder around one load: start with the plan, step down on a memory or GPU failure.

A pure state machine. The Qt glue feeds it the runner's outcome and starts the plan it returns;
it never loops: :func:`app.planner.fallback.next_fallback` only ever shrinks the plan and takes
each step once, and ``max_attempts`` caps the runs on top of that, so a ladder whose step
function misbehaves still ends.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from enum import Enum

from app.i18n import T_
from app.planner import wording
from app.planner.fallback import FailureKind, next_fallback
from app.planner.plan import LaunchPlan
from runner.wire.exits import ExitCode

# A load refused because a worker could not be used names it so (runner/rpc.py's messages).
_WORKER_ERROR = re.compile(r"\bworker at \S+:\d+")

# The whole ladder of a 128k-context MoE model is 11 runs (six halvings of the context down to
# the 2048 floor, q8_0 KV, fewer layers, experts to RAM, the CPU); 16 leaves room for longer
# contexts, and still ends in a minute or two when every run fails.
MAX_ATTEMPTS = 16

# A load that failed with one of these in its message failed in the GPU driver or backend, not in
# the file: retrying on the CPU may work.
_DEVICE_ERROR = re.compile(
    r"\b(cuda|cublas|hip|rocm|vulkan|vk|sycl|opencl)\b|ggml_(cuda|vulkan|metal|sycl)|"
    r"device lost|devicelost",
    re.IGNORECASE,
)

StepFn = Callable[[LaunchPlan, str], LaunchPlan | None]


class LadderState(Enum):
    LOADING = "loading"  # the current plan is being tried
    LOADED = "loaded"
    FAILED = "failed"  # not retryable, or nothing smaller was left
    CANCELLED = "cancelled"  # the user unloaded


def classify_failure(exit_code: int | None, crashed: bool, message: str,
                     on_gpu: bool, model_path: str = "") -> FailureKind | None:
    """What kind of failure a load that ended this way was, for the ladder; None: not retryable.

    Out of memory is the runner's own verdict (``ExitCode.OUT_OF_MEMORY``, runner/wire/exits.py).
    A device error is only guessed, and only for a plan that used a GPU: a crash while loading, or
    a load failure that names a GPU backend.
    Everything else (a damaged file, bad arguments) would fail the same way at any size.
    The model's path is left out of the search: "cuda-notes.gguf is not a GGUF model" is not a
    GPU error.
    """
    if exit_code == ExitCode.WORKER_LOST and not crashed:
        return "worker_lost"
    if exit_code == ExitCode.LOAD_FAILED and _WORKER_ERROR.search(message):
        return "worker_lost"
    if exit_code == ExitCode.OUT_OF_MEMORY and not crashed:
        return "oom"
    if not on_gpu:
        return None
    if crashed:
        return "device"
    if model_path:
        message = message.replace(model_path, "").replace(os.path.basename(model_path), "")
    if exit_code == ExitCode.LOAD_FAILED and _DEVICE_ERROR.search(message):
        return "device"
    return None


def uses_gpu(plan: LaunchPlan) -> bool:
    return plan.settings.n_gpu_layers != 0 and bool(plan.gpus)


class LoadLadder:
    """One load and its retries. ``plan`` is always the plan being (or last) tried."""

    def __init__(self, first: LaunchPlan, max_attempts: int = MAX_ATTEMPTS,
                 step: StepFn = next_fallback) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.first = first
        self.plan = first
        self.max_attempts = max_attempts
        self.attempts = 1
        self.steps: list[str] = []  # the reason of each fallback step taken, in order
        self.state = LadderState.LOADING
        self.exhausted = False  # failed although retryable: no smaller plan, or the cap
        self._step = step

    @property
    def active(self) -> bool:
        return self.state is LadderState.LOADING

    def loaded(self) -> None:
        if self.state is LadderState.LOADING:
            self.state = LadderState.LOADED

    def cancel(self) -> None:
        if self.state is LadderState.LOADING:
            self.state = LadderState.CANCELLED

    def failed(self, kind: FailureKind | None) -> LaunchPlan | None:
        """The current plan failed; the plan to try next, or None when the load has failed."""
        if self.state is not LadderState.LOADING:
            return None
        if kind is None:
            self.state = LadderState.FAILED
            return None
        nxt = self._step(self.plan, kind) if self.attempts < self.max_attempts else None
        if nxt is None:
            self.state = LadderState.FAILED
            self.exhausted = True
            return None
        self.plan = nxt
        self.attempts += 1
        self.steps.append(wording.text(nxt.reasons[-1]) if nxt.reasons else
                          T_("Retrying with smaller settings."))
        return nxt
