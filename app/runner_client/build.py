"""The runner build as a value: which program serves, which llama.cpp build it is, what it drives.

A machine's GPUs are not what a plan can use: a CPU-only runner build on a PC with two RTX 3090s
sees no GPU at all. Only the runner knows, through ``<runner> devices`` (runner/devices.py). This
module asks it once, before any load, and keeps the answer as a frozen :class:`RunnerBuild` that
planning, the dry run, launching and the measured-memory records are all handed explicitly.

Asking costs a second (the runner imports llama.cpp), so the answer is cached per program in the
cache directory, keyed by a fingerprint of the program's files: reinstalling llama-cpp-python or
swapping the runner executable asks again. The cached free memory goes stale; the planner takes
free memory from the machine's own detection and only uses the runner's list to know *which*
devices the build drives.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.hardware.merge import RunnerDevicesError, runner_info_from_json
from app.hardware.report import RunnerDevice, RunnerInfo
from app.i18n import T_
from app.jobs import CancelledError, CancelToken
from app.planner.types import Reason
from app.runner_client.command import NO_CONSOLE_WINDOW, RunnerProgram
from app.storage.atomic import write_json_atomic

log = logging.getLogger(__name__)

BUILDS_FILE = "runner-builds.json"
SCHEMA = 2
DEVICES_TIMEOUT_S = 30.0  # importing llama.cpp and initialising CUDA can take a while
_GPU_TYPES = ("gpu", "igpu")


def build_key(version: str, gpu_offload: bool, system_info: str) -> str:
    """A short, stable name for a llama.cpp build, known before a load and after it.

    The version and the GPU support tell builds apart; the system info (compiled CPU features,
    backends) is hashed so two CPU builds with different SIMD sets stay apart without a long key.
    ``hearth-runner devices`` and ``/runner/status`` both report the version and system info; GPU
    support is a GPU among the devices before the load and ``llama_supports_gpu_offload`` after
    it, which agree but for an RPC build without a GPU. So the key made before a load names the
    build the status reports after it, and the load records under the key the plan read.
    """
    kind = "gpu" if gpu_offload else "cpu"
    digest = hashlib.sha256(system_info.encode("utf-8")).hexdigest()[:10]
    return f"llama-cpp-python-{version or 'unknown'}-{kind}-{digest}"


@dataclass(frozen=True)
class RunnerBuild:
    """One runner program and the llama.cpp build behind it.

    ``key`` is None when the build is not known: ``problem`` says why it could not be asked, or
    is empty when nobody asked (a plan for a recorded machine). Planning then falls back to the
    machine's own GPUs, and no measured corrections apply.
    """

    program: tuple[str, ...]
    key: str | None
    version: str = ""
    system_info: str = ""
    devices: tuple[RunnerDevice, ...] = ()
    features: tuple[str, ...] = ()
    problem: str = ""
    # Why this build serves (the runtime choice, app/runtimes): shown among the plan's reasons.
    notes: tuple[Reason, ...] = ()

    @property
    def known(self) -> bool:
        return self.key is not None

    @property
    def program_key(self) -> str:
        return program_key(self.program)

    @property
    def gpu_devices(self) -> tuple[RunnerDevice, ...]:
        return tuple(d for d in self.devices if d.type in _GPU_TYPES)

    @property
    def gpu_offload(self) -> bool:
        """Whether this build can put layers on any device but the CPU."""
        return bool(self.gpu_devices)

    def runner_info(self) -> RunnerInfo:
        """A fresh :class:`RunnerInfo` for merging into a hardware report."""
        return RunnerInfo(devices=list(self.devices), features=list(self.features),
                          system_info=self.system_info)

    def to_json(self) -> dict[str, Any]:
        """The ``hearth-runner devices`` shape (what the cache stores and merge reads)."""
        return {
            "devices": [{"name": d.name, "description": d.description, "type": d.type,
                         "free": d.free, "total": d.total} for d in self.devices],
            "system_info": self.system_info,
            "cpu_features": list(self.features),
            "llama_cpp_version": self.version,
        }

    @classmethod
    def unknown(cls, program: Sequence[str], problem: str) -> RunnerBuild:
        return cls(program=tuple(program), key=None, problem=problem)


def program_key(program: Sequence[str]) -> str:
    """Which runner a build belongs to: the command that starts it."""
    return " ".join(program)


def runner_build_from_json(program: Sequence[str], data: Mapping[str, Any]) -> RunnerBuild:
    """Read ``<program> devices`` output; raises RunnerDevicesError if it is not that."""
    info = runner_info_from_json(dict(data))
    gpu = any(d.type in _GPU_TYPES for d in info.devices)
    version = str(data.get("llama_cpp_version", "") or "")
    return RunnerBuild(
        program=tuple(program),
        key=build_key(version, gpu, info.system_info),
        version=version,
        system_info=info.system_info,
        devices=tuple(info.devices),
        features=tuple(info.features),
    )


# -- running the runner ---------------------------------------------------------------------------


def run_runner(argv: Sequence[str], *, timeout: float,
               token: CancelToken | None = None) -> subprocess.CompletedProcess[str]:
    """Run a runner subcommand to its end; cancelling the token kills it at once.

    Raises :class:`CancelledError` when cancelled, ``subprocess.TimeoutExpired`` past
    ``timeout`` and OSError when it cannot start. The child gets a process group of its own so
    that a wrapper script's children die with it: a killed shell whose ``sleep`` or ``python``
    lives on would keep the pipes open and the wait would not end.
    """
    if token is not None:
        token.check()
    posix = os.name == "posix"
    proc = subprocess.Popen(
        list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, encoding="utf-8", errors="replace", start_new_session=posix,
        creationflags=0 if posix else getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        | NO_CONSOLE_WINDOW)

    def kill() -> None:
        if proc.poll() is not None:
            return
        if posix:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            proc.kill()

    unregister = token.on_cancel(kill) if token is not None else (lambda: None)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill()
        proc.communicate()
        raise
    except BaseException:
        kill()
        raise
    finally:
        unregister()
    if token is not None and token.cancelled:
        raise CancelledError()
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)


def query_devices(program: RunnerProgram | Sequence[str], *,
                  timeout: float = DEVICES_TIMEOUT_S,
                  token: CancelToken | None = None) -> dict[str, Any]:
    """Run ``<program> devices`` and return its JSON; raises RunnerDevicesError."""
    return query_runner_devices(RunnerProgram.of(program).devices(), timeout=timeout, token=token)


def query_runner_devices(command: Sequence[str], timeout: float = DEVICES_TIMEOUT_S,
                         token: CancelToken | None = None) -> dict[str, Any]:
    """Run ``command`` (a ``hearth-runner devices`` command line) and return its JSON; raises
    RunnerDevicesError (and CancelledError when ``token`` is cancelled: the child is killed at
    once)."""
    try:
        proc = run_runner(command, timeout=timeout, token=token)
    except subprocess.TimeoutExpired as exc:
        raise RunnerDevicesError(T_("The runner did not list its devices within {timeout:g} s.",
                                    timeout=timeout)) from exc
    except OSError as exc:
        raise RunnerDevicesError(T_("The runner could not be started: {error}", error=str(exc))) from exc
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip().startswith(("{", "["))]
    try:
        data = json.loads(lines[-1] if lines else "")
    except ValueError as exc:
        detail = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise RunnerDevicesError(T_("The runner did not answer with its devices: {detail}",
                                    detail=detail)) from exc
    if isinstance(data, dict) and "error" in data:
        raise RunnerDevicesError(str(data["error"]))
    if not isinstance(data, dict):
        raise RunnerDevicesError(T_("The runner answered with something other than a device list."))
    return data


# -- the cache ------------------------------------------------------------------------------------


def program_fingerprint(program: Sequence[str]) -> str:
    """Size and modification time of the files that make up the runner build.

    The program's own file; when the runner runs from source (``python -m runner``) also
    llama-cpp-python's native libraries, found without importing llama_cpp (the GUI process never
    does); and ``LLAMA_CPP_LIB_PATH``, which points llama_cpp at other libraries.
    """
    if not program:
        return ""
    files: list[Path] = []
    exe = shutil.which(program[0]) or program[0]
    files.append(Path(exe))
    rest = list(program[1:])
    if rest[:2] == ["-m", "runner"]:
        rest = rest[2:]
        if "--runtime" not in rest:
            files += _llama_libraries()
    if "--runtime" in rest[:-1]:
        # A runtime's own libraries and manifest (app/runtimes): rebuilding it asks again.
        folder = Path(rest[rest.index("--runtime") + 1])
        files.append(folder / "manifest.json")
        files += _files_in(folder / "lib")
    parts = [_stat(f) for f in files]
    parts.append("LLAMA_CPP_LIB_PATH=" + os.environ.get("LLAMA_CPP_LIB_PATH", ""))
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


def _llama_libraries() -> list[Path]:
    try:
        spec = importlib.util.find_spec("llama_cpp")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.origin:
        return []
    return _files_in(Path(spec.origin).parent / "lib")


def _files_in(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_file())
    except OSError:
        return [folder]


def _stat(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return f"{path}:missing"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


class BuildCache:
    """The last ``devices`` answer of each runner program, in ``<cache>/runner-builds.json``."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from app.paths import cache_dir

            path = cache_dir() / BUILDS_FILE
        self.path = path

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("runner build cache unreadable, starting afresh: %s", exc)
            return {}
        # An older file (schema 1 kept only build keys) is simply replaced.
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            return {}
        programs = data.get("programs")
        return programs if isinstance(programs, dict) else {}

    def get(self, program: str, fingerprint: str) -> dict[str, Any] | None:
        entry = self._load().get(program)
        if not isinstance(entry, dict) or entry.get("fingerprint") != fingerprint:
            return None
        devices = entry.get("devices")
        return devices if isinstance(devices, dict) else None

    def put(self, program: str, fingerprint: str, devices: Mapping[str, Any]) -> None:
        programs = self._load()
        programs[program] = {"fingerprint": fingerprint, "devices": dict(devices),
                             "at": time.time()}
        write_json_atomic(self.path, {"schema": SCHEMA, "programs": programs})


def detect_runner_build(program: RunnerProgram | Sequence[str] | None = None, *,
                        token: CancelToken | None = None, cache: BuildCache | None = None,
                        timeout: float = DEVICES_TIMEOUT_S) -> RunnerBuild:
    """The build behind ``program`` (default: the runner this app starts, with no runtime
    named; the app's chosen one is ``RuntimeSelection.chosen_build``, app/runtimes/select.py).

    Never raises for a runner that cannot answer: the build is then :meth:`RunnerBuild.unknown`
    with the reason, and planning goes on without it (the load itself will say what is wrong in
    the runner's own words). Raises CancelledError when ``token`` is cancelled.
    """
    prog = tuple(RunnerProgram.of(program).argv)
    key = program_key(prog)
    fingerprint = program_fingerprint(prog)
    if cache is not None:
        data = cache.get(key, fingerprint)
        if data is not None:
            try:
                return runner_build_from_json(prog, data)
            except RunnerDevicesError:
                log.info("cached device list of %s unreadable; asking again", key)
    try:
        data = query_devices(prog, timeout=timeout, token=token)
        build = runner_build_from_json(prog, data)
    except RunnerDevicesError as exc:
        log.warning("could not ask the runner %s for its devices: %s", key, exc)
        return RunnerBuild.unknown(prog, str(exc))
    if cache is not None:
        try:
            cache.put(key, fingerprint, data)
        except OSError as exc:  # only costs asking again next time
            log.info("could not cache the runner's devices: %s", exc)
    return build


__all__ = [
    "BuildCache",
    "RunnerBuild",
    "build_key",
    "detect_runner_build",
    "program_fingerprint",
    "program_key",
    "query_devices",
    "query_runner_devices",
    "run_runner",
    "runner_build_from_json",
]
