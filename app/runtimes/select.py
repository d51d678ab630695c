"""The runtime one app, or one terminal command, serves with, as a value: :class:`RuntimeSelection`.

``HEARTH_RUNTIME`` (or ``--runtime`` on the command line, or the settings) names one runtime by
name or folder; empty or ``auto`` lets :func:`~app.runtimes.choose.choose` decide, on the first
load (off the GUI thread: it may self-test). The selection then gives the runner program
(:meth:`RuntimeSelection.program`, a :class:`~app.runner_client.command.RunnerProgram`), so the
device list, the dry run, the served model and the measured corrections all come from one
build. It is made once where a process is composed (app/__main__.py, app/cli) and handed to
whoever plans or starts a runner: nothing about the choice lives in a module, so two
selections (two windows in one test session) never see each other's.

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


class RuntimeSelection:
    """What runtime was asked for, which one was chosen for it, and the runner program of that
    choice.

    ``wanted``: the settings' or the command line's choice ("" or "auto": automatic); None: the
    environment's (``HEARTH_RUNTIME``). ``folders``, ``selftests``, ``selftest`` and ``builds``
    are where runtimes are looked for, the kept self-test results, the self-test itself and the
    kept device lists (defaults: the installation's; tests give their own).
    """

    def __init__(self, wanted: str | None = None, *, folders: Iterable[Path] | None = None,
                 selftests: SelftestCache | None = None,
                 selftest: Callable[..., SelftestResult] = run_selftest,
                 builds: BuildCache | None = None) -> None:
        # One choice at a time: two loads planned at once self-test once. want() does not take
        # it (the GUI thread calls it, and a self-test may hold it for a minute).
        self._lock = threading.Lock()
        self._wanted = wanted
        self._choice: RuntimeChoice | None = None
        self._asked = 0  # bumped by want(): a choice made for an older wish is not kept
        self._folders = None if folders is None else tuple(folders)
        self._selftests = selftests
        self._selftest = selftest
        self._builds = builds

    @property
    def wanted(self) -> str:
        """The runtime asked for: the settings' choice, else ``HEARTH_RUNTIME``; "" is
        automatic."""
        return wish(self._wanted if self._wanted is not None
                    else os.environ.get(WISH_VARIABLE, ""))

    @property
    def choice(self) -> RuntimeChoice | None:
        """The runtime chosen so far (None before the first load, and after :meth:`want`)."""
        return self._choice

    def want(self, name: str | None) -> None:
        """Ask for a runtime ("" or "auto": automatic; None: the environment's); the next load
        chooses again."""
        self._wanted = name
        self._asked += 1
        self._choice = None

    def forget(self) -> None:
        """Choose again on the next load (a runtime was added)."""
        with self._lock:
            self._choice = None

    def program(self) -> RunnerProgram:
        """The runner program of the runtime chosen so far; before a choice, the runner with no
        runtime named (it then chooses by the same rules, without the self-tests)."""
        choice = self._choice
        base = RunnerProgram.base()
        return base if choice is None else base.with_runtime(runtime_args(choice))

    def select(self, report: Callable[[], HardwareReport], *,
               token: CancelToken | None = None) -> RuntimeChoice:
        """The runtime (chosen on the first call, then kept until :meth:`want` or
        :meth:`forget`). ``report`` is only called when there is no choice yet."""
        with self._lock:
            if self._choice is not None:
                return self._choice
            asked = self._asked
            runtimes = list_runtimes(self._folders)
            wanted = self.wanted
            cache = self._selftests if self._selftests is not None else SelftestCache()
            machine = report()
            driver = drivers(machine)
            base = RunnerProgram.base()
            selftest = self._selftest

            def test(rt: Runtime) -> SelftestResult | None:
                program = tuple(base.with_runtime(rt.args()).argv)
                key = cache.key(program_fingerprint(program), driver)
                found = cache.get(rt.name, key)
                if found is None:
                    log.info("self-testing the %s runtime", rt.name)
                    found = selftest(program, token=token)
                    if token is None or not token.cancelled:
                        cache.put(rt.name, key, found)
                return found

            choice = choose(machine, runtimes, test, wanted)
            if token is not None:
                token.check()
            if asked == self._asked:  # else the user chose again meanwhile: choose again next
                self._choice = choice
            log.info("runtime: %s", choice.runtime.name)
            return choice

    def chosen_program(self, report: Callable[[], HardwareReport], *,
                       token: CancelToken | None = None) -> RunnerProgram:
        """The runner program of the runtime chosen now (see :meth:`select`)."""
        choice = self.select(report, token=token)
        return RunnerProgram.base().with_runtime(runtime_args(choice))

    def chosen_build(self, token: CancelToken | None,
                     report: Callable[[], HardwareReport]) -> RunnerBuild:
        """The runner build to plan and load with: the chosen runtime's, with the choice's
        reasons. ``report`` is only called when the runtime has not been chosen yet."""
        choice = self.select(report, token=token)
        program = RunnerProgram.base().with_runtime(runtime_args(choice))
        # Asked once per install (keyed by the program's files), then read from the cache.
        builds = self._builds if self._builds is not None else BuildCache()
        build = detect_runner_build(program, token=token, cache=builds)
        return dataclasses.replace(build, notes=choice.reasons)


def runtime_args(choice: RuntimeChoice) -> tuple[str, ...]:
    """What goes before the runner's command so that it serves with ``choice``, as chosen.

    The built-in runtime is named unless ``HEARTH_RUNTIME``, which a runner reads too, already
    names it (as in the tests, whose stand-in runners take the command first).
    """
    if not choice.runtime.builtin:
        return choice.args
    return () if is_builtin(os.environ.get(WISH_VARIABLE, "")) else (PIN_BUILTIN,)
