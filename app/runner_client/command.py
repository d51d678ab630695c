"""Build the runner's command line and environment (pure, unit-tested; Vorta style).

The key travels in the environment, never on the command line: any local user can read another
process's argv.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import secrets
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RunnerLaunch:
    program: str
    args: list[str]
    env: dict[str, str] = field(repr=False)
    key: str = field(repr=False)


def base_program() -> list[str]:
    """How to start the runner, before a runtime is named: ``HEARTH_RUNNER`` if set, the
    ``hearth-runner`` executable beside a frozen (installed) app's own, else this interpreter
    with ``-m runner``."""
    return program_beside("HEARTH_RUNNER", "hearth-runner", "runner")


def program_beside(variable: str, executable: str, module: str) -> list[str]:
    """How to start one of Hearth's own programs: the environment ``variable`` if set, the
    ``executable`` beside a frozen (installed) app's own, else this interpreter with
    ``-m module``."""
    override = os.environ.get(variable)
    if override:
        return [override]
    if getattr(sys, "frozen", False):
        # PyInstaller: sys.executable is the app itself; the executables share one folder.
        here = os.path.dirname(sys.executable)
        return [os.path.join(here, executable + (".exe" if os.name == "nt" else ""))]
    return [sys.executable, "-m", module]


# Windows: the runner is a console program (its command line prints), and the windowed app
# starting it would flash a console window for every dry run and load.
NO_CONSOLE_WINDOW = 0x08000000 if os.name == "nt" else 0  # CREATE_NO_WINDOW


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


@dataclass(frozen=True)
class RunnerProgram:
    """How to start one runner build, and every command line the app gives it.

    ``program`` starts the runner (:func:`base_program`, or a stand-in in tests);
    ``runtime_args`` come before the command (``--runtime FOLDER``, ``--runtime=built-in``) and
    name the llama.cpp build. This is the only place that spells the runner's commands
    (tests/unit/test_runner_argv.py checks that, and that the runner's parsers accept them).
    Which runtime serves is not kept here: the app's choice is a value of its own
    (:class:`app.runtimes.select.RuntimeSelection`), whose :meth:`program` is one of these, and
    a plan carries its build's program on (``RunnerBuild.program``).
    """

    program: tuple[str, ...]
    runtime_args: tuple[str, ...] = ()

    @classmethod
    def base(cls) -> RunnerProgram:
        """The runner this app starts, with no runtime named."""
        return cls(tuple(base_program()))

    @classmethod
    def of(cls, argv: RunnerProgram | Sequence[str] | None) -> RunnerProgram:
        """A program already written out (a RunnerBuild's ``program``, a test's stand-in) or
        one given as this value; None or empty: :meth:`base`, a runner that chooses its
        runtime itself (by the app's rules, without its self-tests or settings)."""
        if isinstance(argv, RunnerProgram):
            return argv
        return cls(tuple(argv)) if argv else cls.base()

    def with_runtime(self, args: Sequence[str]) -> RunnerProgram:
        return dataclasses.replace(self, runtime_args=tuple(args))

    @property
    def argv(self) -> list[str]:
        """The command line before the runner's command."""
        return [*self.program, *self.runtime_args]

    def serve(self, model: str, flags: Sequence[str] = (), *, host: str = "127.0.0.1",
              port: int = 0, image_links: bool = False) -> list[str]:
        """Serve ``model`` for the app: it exits when the app closes its stdin or dies. A
        non-loopback ``host`` adds ``--allow-remote`` (sharing is on purpose);
        ``image_links`` lets it fetch images from links in requests (public addresses only:
        the settings' ``image_links``)."""
        return [*self.argv, "serve", "--model", model, "--host", host, "--port", str(port),
                *([] if _loopback(host) else ["--allow-remote"]),
                *(["--image-links"] if image_links else []),
                "--watch-stdin", *flags]

    def embed(self, model: str, vectors_db: str) -> list[str]:
        """Serve ``model`` for embeddings only, searching Hearth's passage index at
        ``vectors_db`` by similarity; on loopback, ending with the app (its stdin)."""
        return [*self.argv, "serve", "--model", model, "--host", "127.0.0.1", "--port", "0",
                "--watch-stdin", "--embedding", "--vectors-db", vectors_db,
                "--ctx-size", "2048", "--batch-size", "2048"]

    def probe(self, flags: Sequence[str]) -> list[str]:
        """The dry run of a load with ``flags`` (app/loading/flags.py, ``--model`` first)."""
        return [*self.argv, "probe", *flags]

    def devices(self) -> list[str]:
        """The devices this build drives, as JSON."""
        return [*self.argv, "devices"]

    def selftest(self) -> list[str]:
        """A tiny model loaded on every device, as one JSON object."""
        return [*self.argv, "selftest", "--json"]

    def rpc_worker(self, *, host: str = "127.0.0.1", port: int) -> list[str]:
        """Lend this computer's devices over llama.cpp's RPC; ends when the app closes its
        stdin. A non-loopback ``host`` adds ``--allow-remote``."""
        return [*self.argv, "rpc-worker", "--host", host, "--port", str(port), "--watch-stdin",
                *([] if _loopback(host) else ["--allow-remote"])]

    def rpc_check(self, endpoints: Sequence[str], *, timeout: float) -> list[str]:
        """Ask each ``host:port`` worker its version, devices and memory, as JSON."""
        return [*self.argv, "rpc-check", ",".join(endpoints), "--timeout", str(timeout)]


def build_launch(model: str, flags: list[str] | None = None,
                 base_env: Mapping[str, str] | None = None,
                 key: str | None = None,
                 program: RunnerProgram | Sequence[str] | None = None,
                 port: int = 0, host: str = "127.0.0.1",
                 image_links: bool = False) -> RunnerLaunch:
    """The ``serve`` command for ``model`` with extra runner ``flags`` (e.g. from a plan).

    ``port`` 0 lets the system pick a free one (the runner reports it); a fixed port is for
    other apps that the user lets use the model. ``host`` is loopback unless the user shares
    the model with other devices (an address of this computer, or 0.0.0.0 for every network):
    then ``--allow-remote`` says it is on purpose. Either way the key is required: ``key``
    where one is given (the shared model's kept key, app/remote/share.py, which other apps
    are set up with), else a new one for this start. ``image_links``: the runner fetches
    images from http(s) links in requests (RunnerProgram.serve).
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"the runner's port must be 0 (any free port) or 1–65535, not {port!r}")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(f"the runner's interface must be an IP address, not {host!r}") from None
    if key and (not key.isascii() or not key.isprintable() or any(c.isspace() for c in key)):
        # It becomes an HTTP header on both sides: refuse what a header cannot carry.
        raise ValueError("the runner's key must be printable ASCII without spaces")
    key = key or secrets.token_urlsafe(32)
    env = dict(os.environ if base_env is None else base_env)
    env["HEARTH_API_KEY"] = key
    env.setdefault("PYTHONUNBUFFERED", "1")
    # The program the plan was made for (its RunnerBuild), so the dry run, the devices and
    # the served model all come from one llama.cpp build.
    prog, *args = RunnerProgram.of(program).serve(model, flags or [], host=host, port=port,
                                                  image_links=image_links)
    return RunnerLaunch(program=prog, args=args, env=env, key=key)
