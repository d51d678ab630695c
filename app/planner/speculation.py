"""Speculative decoding for a plan: which downloaded model can draft for which, and what this
computer measured of the pair.

A draft proposes a few tokens; the model checks them all in one batch and keeps those it would
have written itself (runner/speculative.py). So a draft must share the model's tokenizer exactly
(``ModelInfo.vocab``: its kind, size, special tokens and a digest of every token) and be much
smaller, since it runs once per drafted token: at most :data:`MAX_DRAFT_SHARE` of the model's
size; the smallest such model is chosen. Whether it pays is not guessed: the runner measures it
on the first load (runner/spec_trial.py, ``--spec-measure``) and turns it off unless it is at
least 10% faster; :class:`SpecMemory` keeps that verdict per model pair, runtime and computer,
so the next load uses the draft (or leaves it out) without measuring again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from app.gguf.model import ModelInfo
from app.storage.atomic import keep_json_entries, read_json_entries

MAX_DRAFT_SHARE = 0.25  # a draft's size as a share of the model's, at most
FILE_NAME = "speculation-measurements.json"
SCHEMA = 1
MAX_ENTRIES = 200


def can_draft(draft: ModelInfo, target: ModelInfo) -> bool:
    """Whether ``draft`` can draft for ``target``: the same tokenizer, much smaller, another
    file, a model that writes text (not a projector or an embedding model's kind)."""
    return (bool(draft.vocab) and draft.vocab == target.vocab
            and draft.path != target.path and draft.n_layer > 0
            and 0 < draft.total_bytes <= target.total_bytes * MAX_DRAFT_SHARE)


def pick_draft(target: ModelInfo, candidates: Iterable[ModelInfo]) -> ModelInfo | None:
    """The smallest of ``candidates`` that can draft for ``target`` (None if none can)."""
    fit = [c for c in candidates if can_draft(c, target)]
    return min(fit, key=lambda c: (c.total_bytes, c.path or "")) if fit else None


def pair_key(target: ModelInfo, draft: ModelInfo, runtime: str, computer: str) -> str:
    """Which measurements compare: these two files (by name and size), this runner build and
    this computer's processors."""
    def file(m: ModelInfo) -> str:
        return f"{os.path.basename(m.path or m.name)}:{m.total_bytes}"

    return f"{file(target)}|{file(draft)}|{runtime}|{computer}"


class SpecMemory:
    """The runner's speculation trials per pair, in ``<cache>/speculation-measurements.json``;
    losing it costs only a measurement at the next load."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from app.paths import cache_dir

            path = cache_dir() / FILE_NAME
        self.path = path

    def lookup(self, key: str) -> tuple[float, bool] | None:
        """The measured gain (tokens/s with the draft over without) and whether the runner
        kept drafting for it, or None if never measured."""
        for e in reversed(read_json_entries(self.path, SCHEMA)):
            if e.get("key") == key and isinstance(e.get("gain"), (int, float)):
                return float(e["gain"]), bool(e.get("kept"))
        return None

    def record(self, key: str, trial: Mapping[str, Any]) -> float | None:
        """Keep what ``/runner/status`` ``speculative.measured`` says; returns the gain."""
        gain = trial.get("gain")
        if not isinstance(gain, (int, float)) or isinstance(gain, bool) or gain < 0 or \
                (gain == 0 and not trial.get("refused")):  # 0: only a draft refused at load
            return None
        entries = [e for e in read_json_entries(self.path, SCHEMA) if e.get("key") != key]
        entries.append({"key": key, "gain": float(gain), "kept": bool(trial.get("kept")),
                        "at": time.time()})
        keep_json_entries(self.path, SCHEMA, entries, MAX_ENTRIES, "speculation measurement")
        return float(gain)
