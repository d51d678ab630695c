"""``hearth-runner selftest --json`` as a value, run once per runtime and driver and cached.

The cache key is the runtime's program fingerprint (its library files' sizes and times) and the
GPU drivers of the hardware report: a rebuilt runtime or an updated driver is tested again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.hardware.report import HardwareReport
from app.i18n import T_
from app.jobs import CancelToken
from app.planner import wording
from app.storage.atomic import write_json_atomic

log = logging.getLogger(__name__)

CACHE_FILE = "runtime-selftests.json"
SELFTEST_TIMEOUT_S = 120.0  # lavapipe and a first CUDA start (PTX compiled by the driver) are slow


@dataclass(frozen=True)
class DeviceResult:
    device: str
    description: str
    type: str
    ok: bool
    tokens_per_s: float = 0.0
    load_s: float = 0.0
    layers_on_device: int = 0
    error: str = ""


@dataclass(frozen=True)
class SelftestResult:
    ok: bool
    devices: tuple[DeviceResult, ...] = ()
    error: str = ""  # the runtime could not even load
    cpu_variant: str = ""

    def why_not(self) -> str:
        """Why the runtime is skipped, a clause of the plan's reason (an :class:`app.i18n.Text`;
        the runner's own error words stay as it wrote them)."""
        if self.error:
            return T_("its self-test could not start it: {error}", error=self.error)
        failed = [d for d in self.devices if not d.ok]
        if not self.devices:
            return T_("its self-test found no device")
        parts: list[str] = [T_("{device} ({description}): {error}", device=d.device,
                               description=d.description, error=d.error or T_("no result"))
                            for d in failed]
        return T_("its self-test failed on {devices}", devices=wording.joined(parts, "; "))

    def summary(self) -> str:
        parts = [f"{d.device} {d.tokens_per_s:.0f} tokens/s" for d in self.devices]
        if self.cpu_variant:
            parts.append(f"CPU variant {self.cpu_variant}")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "error": self.error, "cpu_variant": self.cpu_variant,
                "devices": [d.__dict__ for d in self.devices]}


def parse(data: Any) -> SelftestResult:
    """The runner's JSON (or the cache's); anything malformed is a failed test, not a crash."""
    if not isinstance(data, dict):
        return SelftestResult(False, error="the self-test printed no result")
    devices = []
    for d in data.get("devices") or ():
        if not isinstance(d, dict):
            continue
        devices.append(DeviceResult(
            device=str(d.get("device", "?")), description=str(d.get("description", "")),
            type=str(d.get("type", "")), ok=bool(d.get("ok")),
            tokens_per_s=float(d.get("tokens_per_s") or 0.0),
            load_s=float(d.get("load_s") or 0.0),
            layers_on_device=int(d.get("layers_on_device") or 0),
            error=str(d.get("error") or "")))
    ok = bool(data.get("ok")) and bool(devices) and all(d.ok for d in devices)
    return SelftestResult(ok, tuple(devices), str(data.get("error") or ""),
                          str(data.get("cpu_variant") or ""))


def run_selftest(program: Sequence[str], *, token: CancelToken | None = None,
                 timeout: float = SELFTEST_TIMEOUT_S) -> SelftestResult:
    """Run ``<program> selftest --json`` (``program`` carries the ``--runtime`` folder)."""
    from app.runner_client.build import run_runner
    from app.runner_client.command import RunnerProgram

    try:
        done = run_runner(RunnerProgram.of(program).selftest(), timeout=timeout, token=token)
    except subprocess.TimeoutExpired:
        return SelftestResult(False, error=f"it did not finish within {timeout:.0f} s")
    except OSError as exc:
        return SelftestResult(False, error=f"the runner could not start ({exc})")
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        # A crash in a backend (a signal) says so: the runtime is unusable on this machine.
        return SelftestResult(False, error=tail[:300])
    try:
        return parse(json.loads(lines[-1]))
    except ValueError:
        return SelftestResult(False, error="the self-test printed something that is not JSON")


def drivers(report: HardwareReport) -> str:
    """What in a hardware report invalidates a self-test: the GPUs and their drivers."""
    return ";".join(f"{g.vendor}:{g.name}:{g.driver_version or ''}" for g in report.gpus)


class SelftestCache:
    """Results by runtime, in ``<cache>/runtime-selftests.json``."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from app.paths import cache_dir

            path = cache_dir() / CACHE_FILE
        self.path = path

    @staticmethod
    def key(fingerprint: str, driver: str) -> str:
        return hashlib.sha256(f"{fingerprint}\n{driver}".encode()).hexdigest()[:16]

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, name: str, key: str) -> SelftestResult | None:
        entry = self._load().get(name)
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        return parse(entry.get("result"))

    def put(self, name: str, key: str, result: SelftestResult) -> None:
        data = self._load()
        data[name] = {"key": key, "result": result.to_json(), "at": time.time()}
        try:
            write_json_atomic(self.path, data)
        except OSError as exc:  # costs a second test next time, nothing more
            log.info("could not cache the self-test of %s: %s", name, exc)
