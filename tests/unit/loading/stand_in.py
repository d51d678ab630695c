"""A stand-in runner program (``HEARTH_RUNNER``): answers ``devices`` with a recorded device list
and ``probe`` with a canned dry run, or sleeps in ``probe`` to be cancelled. It records its pid
and each call, so tests can see what ran and whether it is still alive."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

RUNNER_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hardware" / "runner"

SCRIPT = '''#!{python}
import json, os, sys, time
folder = {folder!r}
cmd = sys.argv[1:2]
with open(os.path.join(folder, "calls.jsonl"), "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
if cmd == ["devices"]:
    print({devices!r}, flush=True)
    sys.exit(0)
if cmd == ["probe"]:
    with open(os.path.join(folder, "probe.pid"), "w") as f:
        f.write(str(os.getpid()))
    time.sleep({probe_sleep})
    print({probe!r}, flush=True)
    sys.exit(0)
print(json.dumps({{"error": "the stand-in runner only lists devices and probes"}}))
sys.exit(2)
'''


def recorded_devices(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RUNNER_FIXTURES / f"{name}.json").read_text())
    return data


class StandIn:
    def __init__(self, folder: Path, devices: dict[str, Any], probe: dict[str, Any] | None,
                 probe_sleep: float) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.path = folder / "hearth-runner"
        self.path.write_text(SCRIPT.format(
            python=sys.executable, folder=str(folder), devices=json.dumps(devices),
            probe=json.dumps(probe or {"devices": []}), probe_sleep=probe_sleep))
        self.path.chmod(self.path.stat().st_mode | stat.S_IXUSR)

    @property
    def program(self) -> list[str]:
        return [str(self.path)]

    def calls(self) -> list[list[str]]:
        log = self.folder / "calls.jsonl"
        if not log.exists():
            return []
        return [json.loads(x) for x in log.read_text().splitlines() if x.strip()]

    def probe_pid(self) -> int | None:
        f = self.folder / "probe.pid"
        return int(f.read_text()) if f.exists() and f.read_text() else None


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting for its parent counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def make_stand_in(folder: Path, monkeypatch: pytest.MonkeyPatch, *,
                  devices: str | dict[str, Any] = "cpu_only_build",
                  probe: dict[str, Any] | None = None, probe_sleep: float = 0.0) -> StandIn:
    """Write the stand-in and make it the runner this app starts."""
    if os.name == "nt":
        pytest.skip("the stand-in runner is a shebang script")
    data = recorded_devices(devices) if isinstance(devices, str) else devices
    fake = StandIn(folder, data, probe, probe_sleep)
    monkeypatch.setenv("HEARTH_RUNNER", str(fake.path))
    return fake
