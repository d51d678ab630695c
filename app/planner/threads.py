"""How many threads a load starts with, and why: the cores, the load on them now, the past.

One thread per physical performance core is right on an idle machine. A desktop is never idle:
llama.cpp waits for its slowest thread at every step, so a thread sharing its core with another
program holds the others back (on 2 cores with one kept busy: 71 tokens/s with 2 threads, 185
with 1). The plan starts with the cores other programs leave free now, or with what the last
load of the same model shape measured under a similar load; the runner has the last word
(``--adapt-threads``: it measures at load and while generating, runner/threads.py) and reports
what it measured, which :class:`ThreadMemory` keeps for the next plan.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.gguf.model import ModelInfo
from app.storage.atomic import keep_json_entries, read_json_entries

FILE_NAME = "thread-measurements.json"
SCHEMA = 1
MAX_ENTRIES = 200
# Below this many busy cores the machine counts as idle: a background blip, not a program.
BUSY_FLOOR = 0.5


@dataclass(frozen=True)
class Remembered:
    """What the runner measured on a past load of the same model shape."""

    threads: int
    busy: float  # cores other programs kept busy then
    tokens_per_second: Mapping[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CpuNow:
    """The CPU as the plan finds it: cores other programs keep busy (None: unknown) and the
    measurement remembered for this model shape under a similar load."""

    busy: float | None = None
    remembered: Remembered | None = None


def starting_threads(max_threads: int, now: CpuNow | None) -> tuple[int, dict[str, Any]]:
    """The count the runner starts with (it measures and may change it), and the reason's
    parameters."""
    now = now or CpuNow()
    busy = now.busy if now.busy is not None and now.busy >= BUSY_FLOOR else 0.0
    params: dict[str, Any] = {"max_threads": max_threads, "busy": round(busy, 1) or None}
    rem = now.remembered
    if rem is not None and 1 <= rem.threads <= max_threads:
        start = rem.threads
        params["remembered"] = {"threads": rem.threads, "busy": round(rem.busy, 1),
                                "tokens_per_second": {str(k): round(v, 1) for k, v in
                                                      sorted(rem.tokens_per_second.items())}}
    else:
        start = max(1, max_threads - round(busy))
    params["n_threads"] = start
    return start, params


def shape_key(model: ModelInfo, n_gpu_layers: int, cpu: str) -> str:
    """Which loads compare: the same processor, the same layer shapes and weight size, the same
    share of layers on the CPU (a fully offloaded model barely uses the threads)."""
    return (f"{cpu}|{model.architecture}|{model.n_layer}x{model.n_embd}|"
            f"{model.total_bytes >> 20}MiB|{model.quantization}|ngl{n_gpu_layers}")


class ThreadMemory:
    """The runner's thread measurements per model shape and load, in
    ``<cache>/thread-measurements.json``; losing it only costs a measurement at the next load."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from app.paths import cache_dir

            path = cache_dir() / FILE_NAME
        self.path = path

    def _load(self) -> list[dict[str, Any]]:
        return read_json_entries(self.path, SCHEMA)

    def record(self, shape: str, status: Mapping[str, Any]) -> Remembered | None:
        """Keep what ``/runner/status``'s ``threads`` says a trial measured; returns it."""
        got = _remembered(status)
        if got is None:
            return None
        bucket = round(got.busy)
        entries = [e for e in self._load()
                   if not (e.get("shape") == shape and e.get("bucket") == bucket)]
        entries.append({"shape": shape, "bucket": bucket, "threads": got.threads,
                        "busy": got.busy,
                        "tokens_per_second": {str(k): v for k, v in got.tokens_per_second.items()},
                        "at": time.time()})
        keep_json_entries(self.path, SCHEMA, entries, MAX_ENTRIES, "thread measurement")
        return got

    def lookup(self, shape: str, busy: float | None) -> Remembered | None:
        """The measurement for this shape under the load nearest to ``busy`` cores, if it was
        within half a core."""
        now = busy or 0.0
        best: Remembered | None = None
        for e in self._load():
            if e.get("shape") != shape:
                continue
            got = _remembered(e)
            if got is not None and abs(got.busy - now) < BUSY_FLOOR and (
                    best is None or abs(got.busy - now) < abs(best.busy - now)):
                best = got
        return best


def _remembered(d: Mapping[str, Any]) -> Remembered | None:
    """From a stored entry or the runner's status (``threads`` in use, ``tokens_per_second`` by
    count, ``busy`` or ``others_busy_cores``); None when it holds no measurement."""
    try:
        tps = {int(k): float(v) for k, v in dict(d.get("tokens_per_second") or {}).items()}
        threads = int(d.get("threads") or 0)
        busy = float(d.get("busy", d.get("measured_busy_cores")) or 0.0)
    except (TypeError, ValueError):
        return None
    if threads < 1 or len(tps) < 2:
        return None  # no trial compared counts: nothing learned
    return Remembered(threads, max(0.0, busy), tps)
