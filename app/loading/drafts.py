"""A draft model for a load: found among the models on this computer, used as this computer
measured (app/planner/speculation.py decides what can draft and keeps the verdicts).

The first load of a pair starts the runner with ``--spec-measure``: it measures at load whether
drafting is at least 10% faster and turns it off when not. Its verdict is kept; later loads use
the draft without measuring, or leave it out (the reasons say why either way).
"""

from __future__ import annotations

import logging
import os
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from app.gguf import GGUFError, ModelInfo, read_model
from app.gguf.model import DraftInfo
from app.planner.speculation import MAX_DRAFT_SHARE, SpecMemory, can_draft, pair_key, pick_draft
from app.planner.types import Reason

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DraftSense:
    """Where a load's draft comes from: ``candidates()`` lists the model files on this computer
    (called off the GUI thread), ``memory`` holds what earlier loads measured, ``computer``
    names this machine's processors (a verdict holds for one computer)."""

    candidates: Callable[[], Sequence[str]]
    memory: SpecMemory
    computer: str = ""


def this_computer() -> str:
    """Which computer a verdict was measured on: its name, processor and core count."""
    return f"{platform.node()}/{platform.machine()}/{os.cpu_count() or 0}"


def attach_draft(model: ModelInfo, sense: DraftSense | None, runtime: str | None
                 ) -> tuple[ModelInfo, Reason | None]:
    """``model`` with the draft to load beside it (measured or to measure), or as it is with
    the reason a draft that could draft for it is left out."""
    if sense is None or not model.vocab or not model.path or runtime is None:
        return model, None
    draft = pick_draft(model, _readable(sense.candidates(), model))
    if draft is None:
        return model, None
    measured = sense.memory.lookup(pair_key(model, draft, runtime, sense.computer))
    if measured is not None and not measured[1]:
        file = os.path.basename(draft.path or "")
        if measured[0] == 0:  # the runner refused it (another tokenizer than its header said)
            return model, Reason("draft_refused", {"file": file})
        return model, Reason("draft_left_out", {"file": file, "gain": measured[0]})
    return replace(model, draft=DraftInfo(draft, measured[0] if measured else None)), None


def record_trial(model: ModelInfo, sense: DraftSense | None, runtime: str | None,
                 status: dict[str, object]) -> float | None:
    """Keep what the runner measured of the model's draft (``/runner/status``), if it did."""
    spec = status.get("speculative")
    if sense is None or model.draft is None or runtime is None or not isinstance(spec, dict):
        return None
    trial = spec.get("measured")
    if not isinstance(trial, dict):
        return None
    return sense.memory.record(pair_key(model, model.draft.model, runtime, sense.computer),
                               trial)


def _readable(paths: Sequence[str], target: ModelInfo) -> list[ModelInfo]:
    """The headers of the files small enough to draft for ``target`` (only those are read)."""
    most = target.total_bytes * MAX_DRAFT_SHARE
    out: list[ModelInfo] = []
    for path in paths:
        try:
            if path == target.path or os.path.getsize(path) > most * 1.05:  # header and all
                continue
            info = read_model(path)
        except (OSError, GGUFError) as exc:
            log.debug("not a draft candidate: %s: %s", path, exc)
            continue
        if can_draft(info, target):
            out.append(info)
    return out
