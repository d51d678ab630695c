"""Choose this process's runtime once (off the GUI thread) and make the runner use it.

``HEARTH_RUNTIME`` (or ``--runtime`` on the command line, or the settings) names one runtime by
name or folder; empty or ``auto`` lets :func:`~app.runtimes.choose.choose` decide. The choice
sets the runner program (:func:`app.runner_client.command.set_runtime_args`, read by
:meth:`~app.runner_client.command.RunnerProgram.current`), so the device
list, the dry run, the served model and the measured corrections all come from one build.

A runner given no ``--runtime`` chooses for itself by the same rules, but without the app's
self-tests or settings: so the runner program always names the runtime the app chose, a folder
with ``--runtime FOLDER`` and the built-in one with ``--runtime=built-in``
(:func:`runtime_args`).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from app.hardware.report import HardwareReport
from app.jobs import CancelToken
from app.runner_client import command
from app.runner_client.build import (
    BuildCache,
    RunnerBuild,
    detect_runner_build,
    program_fingerprint,
)
from app.runner_client.command import RunnerProgram
from app.runtimes.catalog import Runtime, list_runtimes
from app.runtimes.choose import RuntimeChoice, choose
from app.runtimes.selftest import SelftestCache, SelftestResult, drivers, run_selftest
from runner.wire.runtimes import PIN_BUILTIN, WISH_VARIABLE, is_builtin, wish

log = logging.getLogger(__name__)

_lock = threading.Lock()
_choice: RuntimeChoice | None = None
_wanted: str | None = None  # the settings' choice; None: the environment's
_asked = 0  # bumped by want(): a choice made for an older wish is not kept


def wanted_runtime() -> str:
    """The runtime asked for: the settings' choice, else ``HEARTH_RUNTIME``; "" is automatic."""
    return wish(_wanted if _wanted is not None else os.environ.get(WISH_VARIABLE, ""))


def want(name: str | None) -> None:
    """Ask for a runtime ("" or "auto": automatic); the next load chooses again.

    No lock: the GUI thread calls this, and a self-test may hold the lock for a minute.
    """
    global _wanted, _choice, _asked
    _wanted = name
    _asked += 1
    _choice = None


def current_choice() -> RuntimeChoice | None:
    """The runtime chosen in this process so far (None before the first load)."""
    return _choice


def select_runtime(report: Callable[[], HardwareReport], *, token: CancelToken | None = None,
                   folders: Iterable[Path] | None = None, cache: SelftestCache | None = None,
                   runner: Callable[..., SelftestResult] = run_selftest) -> RuntimeChoice:
    """This process's runtime (chosen on the first call, then kept), set for the runner."""
    global _choice
    with _lock:
        if _choice is not None:
            return _choice
        asked = _asked
        runtimes = list_runtimes(folders)
        wanted = wanted_runtime()
        if cache is None:
            cache = SelftestCache()
        machine = report()
        driver = drivers(machine)
        base = RunnerProgram.base()

        def test(rt: Runtime) -> SelftestResult | None:
            program = tuple(base.with_runtime(rt.args()).argv)
            key = cache.key(program_fingerprint(program), driver)
            found = cache.get(rt.name, key)
            if found is None:
                log.info("self-testing the %s runtime", rt.name)
                found = runner(program, token=token)
                if token is None or not token.cancelled:
                    cache.put(rt.name, key, found)
            return found

        choice = choose(machine, runtimes, test, wanted)
        if token is not None:
            token.check()
        command.set_runtime_args(runtime_args(choice))
        if asked == _asked:  # else the user chose again meanwhile: choose again next time
            _choice = choice
        log.info("runtime: %s", choice.runtime.name)
        return choice


def chosen_build(token: CancelToken | None,
                 report: Callable[[], HardwareReport]) -> RunnerBuild:
    """The runner build to plan and load with: the chosen runtime's, with the choice's reasons.

    ``report`` is only called when the runtime has not been chosen yet in this process.
    """
    choice = select_runtime(report, token=token)
    program = tuple(RunnerProgram.base().with_runtime(runtime_args(choice)).argv)
    build = detect_runner_build(program, token=token, cache=BuildCache())
    return dataclasses.replace(build, notes=choice.reasons)


def runtime_args(choice: RuntimeChoice) -> tuple[str, ...]:
    """What goes before the runner's command so that it serves with ``choice``, as chosen.

    The built-in runtime is named unless ``HEARTH_RUNTIME``, which a runner reads too, already
    names it (as in the tests, whose stand-in runners take the command first).
    """
    if not choice.runtime.builtin:
        return choice.args
    return () if is_builtin(os.environ.get(WISH_VARIABLE, "")) else (PIN_BUILTIN,)


def forget() -> None:
    """Choose again on the next load (a runtime was added, or in tests)."""
    global _choice
    with _lock:
        _choice = None
        command.set_runtime_args(())
