"""The RPC workers a load may split the model over: the list the user keeps, and its check.

The user adds workers by ``host:port`` (``hearth-runner rpc-worker`` on the other machine). The
list lives in ``workers.json`` in the config folder. Before a plan uses any of them, each is
asked its protocol version, devices and memory by ``hearth-runner rpc-check`` in a child
process: llama.cpp aborts the process that names a worker that is down or speaks another
version, and that must never be the app (nor, since the runner checks again, the runner).
"""

from __future__ import annotations

import json
import logging
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app import paths
from app.i18n import T_, TextError
from app.jobs import CancelToken
from app.planner.types import Reason, WorkerDevice
from app.runner_client.build import run_runner
from app.runner_client.command import RunnerProgram
from app.storage.atomic import write_json_atomic

log = logging.getLogger(__name__)

FILE_NAME = "workers.json"
CHECK_TIMEOUT_S = 5.0
DEFAULT_PORT = 50052  # llama.cpp's rpc-server default, and hearth-runner rpc-worker's


@dataclass(frozen=True)
class WorkerCheck:
    """What the check found: the devices of the workers that answered, and why others did not."""

    devices: tuple[WorkerDevice, ...] = ()
    problems: tuple[tuple[str, str], ...] = ()  # (endpoint, a sentence)

    def notes(self) -> list[Reason]:
        return [Reason("worker_unavailable", {"endpoint": e, "why": why})
                for e, why in self.problems]


class AddressError(TextError, ValueError):
    """What a person typed is not a worker's address; ``str()`` is the sentence to show, an
    :class:`app.i18n.Text` the window translates."""


def normalize(text: str) -> str:
    """``host:port`` from what a person typed (``host`` alone gets the default port);
    ValueError with a sentence for anything else."""
    t = text.strip().removeprefix("rpc://").rstrip("/")
    if not t:
        raise AddressError(T_("Type the worker's address, such as 192.168.1.20:50052."))
    if any(c.isspace() or c in "/@?#," for c in t):
        raise AddressError(T_("{typed} is not an address: type host:port, such as "
                              "192.168.1.20:50052.", typed=repr(text.strip())))
    host, sep, port = t.rpartition(":")
    if not sep or "]" in port:
        host, port = t, str(DEFAULT_PORT)
    host = host.strip("[]")
    if not host:
        raise AddressError(T_("{typed} is not an address: type host:port, such as "
                              "192.168.1.20:50052.", typed=repr(text.strip())))
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise AddressError(T_("The port in {typed} must be a number from 1 to 65535.",
                              typed=repr(text.strip())))
    return f"[{host}]:{int(port)}" if ":" in host else f"{host}:{int(port)}"


def workers_path() -> Path:
    return paths.config_dir() / FILE_NAME


def load_workers(path: Path | None = None) -> list[str]:
    """The saved workers, in the order the user added them; [] if none or unreadable."""
    path = path or workers_path()
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        log.warning("the worker list %s cannot be read (%s); starting with none", path, exc)
        return []
    out: list[str] = []
    for item in data.get("workers", []) if isinstance(data, dict) else []:
        try:
            endpoint = normalize(str(item))
        except ValueError:
            continue
        if endpoint not in out:
            out.append(endpoint)
    return out


def save_workers(endpoints: Sequence[str], path: Path | None = None) -> None:
    write_json_atomic(path or workers_path(), {"version": 1, "workers": list(endpoints)})


def check_workers(endpoints: Sequence[str],
                  program: RunnerProgram | Sequence[str] | None = None, *,
                  token: CancelToken | None = None,
                  timeout: float = CHECK_TIMEOUT_S) -> WorkerCheck:
    """Ask each worker for its devices, in a child process (``hearth-runner rpc-check``);
    ``program``: the runner to ask with (None: the one with no runtime named)."""
    if not endpoints:
        return WorkerCheck()
    cmd = RunnerProgram.of(program).rpc_check(endpoints, timeout=timeout)
    try:
        done = run_runner(cmd, timeout=timeout * len(endpoints) + 30, token=token)
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = T_("the check could not run ({error})", error=str(exc))
        return WorkerCheck((), tuple((e, why) for e in endpoints))
    return parse_check(done.stdout, endpoints, done.stderr)


def parse_check(stdout: str, endpoints: Sequence[str], stderr: str = "") -> WorkerCheck:
    lines = [ln for ln in stdout.splitlines() if ln.strip().startswith("{")]
    try:
        data: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    except ValueError:
        data = {}
    if not isinstance(data, dict) or ("workers" not in data and "errors" not in data):
        why = str(data.get("error") if isinstance(data, dict) and data.get("error") else
                  (stderr.strip().splitlines()[-1:] or ["the runner gave no answer"])[0])
        return WorkerCheck((), tuple((e, why) for e in endpoints))
    devices: list[WorkerDevice] = []
    for w in data.get("workers", []):
        for d in w.get("devices", []):
            devices.append(WorkerDevice(str(w["endpoint"]), int(d["index"]), int(d["free"]),
                                        int(d["total"])))
    problems = tuple((str(e.get("endpoint", "")), str(e.get("error", "")))
                     for e in data.get("errors", []))
    return WorkerCheck(tuple(devices), problems)


def worker_program(chosen: RunnerProgram) -> list[str]:
    """The runner program that can lend this computer: ``chosen`` (the app's runtime,
    ``RuntimeSelection.program()``) when it names a runtime folder, else the first usable
    runtime folder (llama-cpp-python's own build has no RPC backend); the plain runner when
    there is none (its refusal then says what to install)."""
    from app.runtimes.catalog import list_runtimes

    program = chosen
    if "--runtime" in program.runtime_args:  # a runtime folder was chosen
        return program.argv
    for rt in list_runtimes():
        if not rt.builtin and not rt.problem:
            return program.with_runtime(rt.args()).argv
    return program.argv


def worker_command(program: RunnerProgram | Sequence[str] | None = None, *,
                   port: int = DEFAULT_PORT,
                   host: str = "127.0.0.1") -> list[str]:
    """The command that lends this computer's devices (the app starts it with its stdin held
    open, so the worker ends with the app)."""
    return RunnerProgram.of(program).rpc_worker(host=host, port=port)
