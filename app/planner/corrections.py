"""Measure, then remember: measured against predicted bytes per (model, runner build, device).

After a real load the runner reports what llama.cpp allocated per device; the app stores it next
to what the planner predicted, and the next plan for the same model, build and device scales its
KV and compute figures by measured ÷ predicted. (Weights come from the file and are exact.)

The store is one small JSON file in the cache directory: losing it only costs a re-measurement.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.planner.memory import Correction
from app.storage.atomic import read_json_entries, write_json_atomic

log = logging.getLogger(__name__)

FILE_NAME = "planner-corrections.json"
SCHEMA = 1
# A factor outside this range is a measurement gone wrong (a different model, a crash mid-load),
# not a correction worth applying.
MIN_FACTOR, MAX_FACTOR = 0.5, 4.0
MAX_ENTRIES = 500


@dataclass(frozen=True)
class Measurement:
    """One device's predicted and measured bytes for one load."""

    device: str  # llama.cpp device name: CPU, CUDA0, Metal, ...
    predicted_kv: int
    predicted_compute: int
    measured_kv: int
    measured_compute: int

    def correction(self) -> Correction | None:
        kv = _ratio(self.measured_kv, self.predicted_kv)
        comp = _ratio(self.measured_compute, self.predicted_compute)
        if kv is None and comp is None:
            return None
        return Correction(kv=kv or 1.0, compute=comp or 1.0)


def _ratio(measured: int, predicted: int) -> float | None:
    if predicted <= 0 or measured <= 0:
        return None
    r = measured / predicted
    if not MIN_FACTOR <= r <= MAX_FACTOR:
        log.warning("ignoring an implausible correction factor %.3f", r)
        return None
    return r


def model_key(path: str | os.PathLike[str]) -> str:
    """Identifies a model file without hashing gigabytes: name, size and modification time."""
    p = Path(path)
    try:
        st = p.stat()
        return f"{p.name}:{st.st_size}:{int(st.st_mtime)}"
    except OSError:
        return p.name


def settings_key(settings: Mapping[str, Any]) -> str:
    keys = ("n_gpu_layers", "n_ctx", "n_ubatch", "flash_attn", "cache_type_k", "cache_type_v",
            "n_cpu_moe")
    return ",".join(f"{k}={settings.get(k)}" for k in keys)


class CorrectionStore:
    """Measured-vs-predicted entries, newest last, in ``<cache>/planner-corrections.json``."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from app.paths import cache_dir

            path = cache_dir() / FILE_NAME
        self.path = path

    def _load(self) -> list[dict[str, Any]]:
        return read_json_entries(self.path, SCHEMA)

    def _save(self, entries: list[dict[str, Any]]) -> None:
        write_json_atomic(self.path, {"schema": SCHEMA, "entries": entries[-MAX_ENTRIES:]},
                          indent=None)

    def record(self, model: str, build: str, settings: Mapping[str, Any],
               measurements: Sequence[Measurement]) -> None:
        entries = self._load()
        skey = settings_key(settings)
        for m in measurements:
            entries = [e for e in entries if not (
                e.get("model") == model and e.get("build") == build
                and e.get("device") == m.device and e.get("settings") == skey)]
            entries.append({
                "model": model, "build": build, "device": m.device, "settings": skey,
                "predicted_kv": m.predicted_kv, "predicted_compute": m.predicted_compute,
                "measured_kv": m.measured_kv, "measured_compute": m.measured_compute,
                "at": time.time(),
            })
        self._save(entries)

    def last_load(self, model: str, build: str) -> list[Measurement]:
        """What the newest recorded load of ``model`` on ``build`` measured, one per device.

        A panel opened after that load shows it beside its prediction: the load's own signal
        went out before the panel existed. (Entries are kept newest last; one load's devices
        share its settings key.)
        """
        entries = [e for e in self._load() if e.get("model") == model and e.get("build") == build]
        if not entries:
            return []
        newest = entries[-1].get("settings")
        found: dict[str, Measurement] = {}
        for e in entries:  # oldest first: a newer entry for a device wins
            if e.get("settings") != newest:
                continue
            dev = str(e.get("device"))
            try:
                found[dev] = Measurement(dev, int(e.get("predicted_kv", 0)),
                                         int(e.get("predicted_compute", 0)),
                                         int(e.get("measured_kv", 0)),
                                         int(e.get("measured_compute", 0)))
            except (TypeError, ValueError):  # a damaged entry: shown as not measured
                log.warning("ignoring a damaged measurement of %s on %s", model, dev)
        return list(found.values())

    def corrections(self, model: str, build: str,
                    settings: Mapping[str, Any] | None = None) -> dict[str, Correction]:
        """Per device: the entry for exactly these settings, else the newest for the model."""
        entries = [e for e in self._load() if e.get("model") == model and e.get("build") == build]
        skey = settings_key(settings) if settings is not None else None
        out: dict[str, Correction] = {}
        exact: set[str] = set()
        for e in entries:  # oldest first: newer entries overwrite
            dev = str(e.get("device"))
            is_exact = skey is not None and e.get("settings") == skey
            if dev in exact and not is_exact:
                continue
            m = Measurement(dev, int(e.get("predicted_kv", 0)), int(e.get("predicted_compute", 0)),
                            int(e.get("measured_kv", 0)), int(e.get("measured_compute", 0)))
            corr = m.correction()
            if corr is not None:
                out[dev] = corr
                if is_exact:
                    exact.add(dev)
        return out
