"""Start Hearth's model server at login: off by default, one entry per system (no Qt).

The setting writes one file and removing it turns the start off again:

- Linux: a systemd user unit, ``hearth-server.service`` in the user's unit folder, enabled for
  ``default.target`` (the target the user's service manager reaches at login).
- macOS: a LaunchAgent, ``~/Library/LaunchAgents/org.hearth.server.plist``, which launchd loads
  at the next login.
- Windows: a ``.cmd`` file in the Startup folder, which Explorer runs at login.

Each file's content is built by a pure function from the command that starts the server
(:func:`serve_command`), so the tests check all three on any system. :func:`enable`,
:func:`disable` and :func:`is_enabled` take the platform, home folder, environment and
subprocess runner as arguments for the same reason.

This module sits with the storage layer: it imports the standard library, app.paths and
app.i18n only. Its writes follow app/storage/atomic.py's recipe (temporary file, fsync,
rename) without importing it, as siblings in that layer do not import each other.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from app import paths
from app.i18n import T_, TextError
from app.storage.atomic import write_atomic

log = logging.getLogger(__name__)

UNIT_NAME = "hearth-server.service"
LABEL = "org.hearth.server"
STARTUP_FILE_NAME = "Hearth server.cmd"
# The server's stdout and stderr under launchd (which otherwise drops them): little goes there,
# the "listening" line and what fails before the server's own log is open.
LAUNCHD_LOG_NAME = "server-launchd.log"
# systemctl answers at once when its service manager is there; a hung bus must not hang the
# Settings page's worker for long.
SYSTEMCTL_TIMEOUT = 30.0

Kind = Literal["systemd", "launchd", "startup"]
Run = Callable[..., subprocess.CompletedProcess[Any]]


class AutostartError(TextError):
    """The start-at-login entry cannot be written, removed or made here; ``str()`` is a
    sentence for the person (an :class:`app.i18n.Text` the window translates)."""


# -- the command -----------------------------------------------------------------------------


# ``hearth serve``: the app's own subcommand (app/__main__.py), not the runner's ``serve``.
SERVE_SUBCOMMAND = "serve"


def serve_command() -> list[str]:
    """``hearth serve`` as this install runs it: the frozen app's own executable, else this
    Python running the ``app`` package."""
    executable = sys.executable
    if not executable:  # embedded interpreters may not know their own program
        raise AutostartError(T_("Hearth cannot tell which program is running it, so it cannot "
                                "set the model server to start at login."))
    program = os.path.abspath(executable)
    if getattr(sys, "frozen", False):
        return [program, SERVE_SUBCOMMAND]
    return [program, "-m", "app", SERVE_SUBCOMMAND]


def _check_command(command: Sequence[str]) -> list[str]:
    """The command as a list, or AutostartError: none of the three formats can carry a control
    character (a line break would end the entry's line), nor text that is not UTF-8."""
    args = list(command)
    if not args or not all(isinstance(a, str) for a in args) or not args[0]:
        raise AutostartError(T_("The command to start the model server is empty."))
    for arg in args:
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in arg):
            raise AutostartError(T_("The command to start the model server contains a control "
                                    "character ({arg}), which a start-at-login entry cannot "
                                    "hold.", arg=repr(arg)))
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:  # an undecodable file name (surrogate escapes)
            raise AutostartError(T_("The path {arg} is not valid text, which a start-at-login "
                                    "entry cannot hold: move Hearth to a folder with a plainer "
                                    "name.", arg=repr(arg))) from exc
    return args


# -- systemd ---------------------------------------------------------------------------------


def _systemd_quote(arg: str, *, executable: bool = False) -> str:
    """One ExecStart word, double-quoted by systemd's rules (systemd.service, "Command lines").

    systemd takes each word apart with C-style unquoting (``\\\\`` and ``\\"`` inside double
    quotes), then resolves specifiers in it (``%%`` is a ``%``), then, at start, expands
    environment variables in every argument (``$$`` is a ``$``). The executable's path is not
    expanded (it is used as written), so its ``$`` stays single; :func:`exec_start` keeps a
    path with a ``$`` out of that place altogether.
    """
    out = []
    for c in arg:
        if c in '\\"':
            out.append("\\" + c)
        elif c == "%":
            out.append("%%")
        elif c == "$" and not executable:
            out.append("$$")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _systemd_takes_as_executable(path: str) -> bool:
    """Whether systemd runs ``path`` as an ExecStart program (its "string_is_safe" check: no
    quote, backslash or control character; absolute; not a folder). A ``$`` is refused here
    too: systemd passes the path as argv[0] with variables expanded, and Python finds its
    virtual environment from argv[0]."""
    return (path.startswith("/") and not path.endswith("/")
            and not any(c in "\"'\\$" for c in path))


def exec_start(command: Sequence[str]) -> str:
    """The ExecStart value that runs ``command`` exactly, whatever its arguments hold.

    A program path that systemd refuses (a home folder like ``/home/o'brien``) is handed to
    ``/bin/sh -c 'exec "$0" "$@"'`` as an ordinary argument: the shell replaces itself with the
    program at once, so the server is still the service's main process and gets its signals.
    """
    args = _check_command(command)
    program, rest = args[0], args[1:]
    if not program.startswith("/"):
        raise AutostartError(T_("The program {path} is not named by a full path, which a "
                                "start-at-login entry needs.", path=program))
    if not _systemd_takes_as_executable(program):
        program, rest = "/bin/sh", ["-c", 'exec "$0" "$@"', *args]
    return " ".join([_systemd_quote(program, executable=True),
                     *(_systemd_quote(a) for a in rest)])


def systemd_unit(command: Sequence[str]) -> str:
    """The user unit that starts ``command`` at login.

    - No ``After=network.target``: a user's service manager cannot see the system's network
      targets (ordering on one is a no-op). The server binds loopback, which is always there;
      an address chosen for sharing that is not up yet at login fails the start, and the
      restarts below try again while the network comes up.
    - ``Restart=on-failure`` every 10 s, at most 5 starts in 5 minutes: a crash or a late
      network is retried; a server that cannot start at all (its port taken by another
      program) stops being retried instead of looping for the whole session.
    - ``KillMode=mixed``: SIGTERM to the server alone, which stops its model runners itself
      and exits cleanly; whatever is left after the stop time-out is killed.
    - ``WantedBy=default.target``: the user manager's target at login (and at boot with
      lingering on).
    """
    return "\n".join([
        "# Written by Hearth: its setting to start the model server at login adds and",
        "# removes this file.",
        "[Unit]",
        "Description=Hearth model server",
        "StartLimitIntervalSec=300",
        "StartLimitBurst=5",
        "",
        "[Service]",
        "Type=simple",
        f"ExecStart={exec_start(command)}",
        "Restart=on-failure",
        "RestartSec=10",
        "KillMode=mixed",
        "KillSignal=SIGTERM",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ])


# -- launchd ---------------------------------------------------------------------------------


def launch_agent(command: Sequence[str], label: str = LABEL,
                 log_file: Path | None = None) -> bytes:
    """The LaunchAgent plist that starts ``command`` at login.

    ``KeepAlive`` {``SuccessfulExit``: false} restarts a server that crashed, not one that was
    stopped (it exits 0 on SIGTERM). launchd drops a job's output unless told where it goes:
    ``log_file``, by default :data:`LAUNCHD_LOG_NAME` in Hearth's log folder.
    """
    args = _check_command(command)
    output = log_file if log_file is not None else paths.log_dir() / LAUNCHD_LOG_NAME
    import plistlib  # here: every start of the app reads this module, few write a plist

    return plistlib.dumps({
        "Label": label,
        "ProgramArguments": args,
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": str(output),
        "StandardErrorPath": str(output),
    })


# -- Windows ---------------------------------------------------------------------------------


def _cmd_quote(arg: str) -> str:
    """One argument for a ``.cmd`` line, read back the same by the program's C runtime.

    Always double-quoted, so cmd takes ``&|<>^()`` and spaces literally. Inside quotes cmd
    still expands ``%NAME%`` in a batch file, so ``%`` is doubled; ``!`` is safe because the
    file turns delayed expansion off. The C runtime reads backslashes literally except before a
    quote, so only the trailing ones, which stand before the closing quote, are doubled. A
    double quote itself cannot be carried safely through cmd, and no Windows file name holds
    one: refused.
    """
    if '"' in arg:
        raise AutostartError(T_("The command to start the model server contains a double quote "
                                "({arg}), which a Windows start-up entry cannot hold.", arg=arg))
    trailing = len(arg) - len(arg.rstrip("\\"))
    return '"' + arg.replace("%", "%%") + "\\" * trailing + '"'


def windows_startup(command: Sequence[str]) -> str:
    """The Startup folder's ``.cmd`` file that starts ``command`` at login (CRLF lines).

    Why a ``.cmd`` with ``start "Hearth server" /min``: it is a plain text file Hearth can write
    and test without Windows' COM (a ``.lnk`` shortcut needs it), with no script host (VBScript,
    the usual way to hide a window, is being removed from Windows). The console that runs the
    file closes as soon as ``start`` returns; the server runs in a minimised window of its own,
    titled "Hearth server" on the taskbar, where the person can see it is running and close it.
    ``chcp 65001`` lets cmd read the rest of the file as UTF-8 (the file is UTF-8 without a BOM,
    which cmd would read as part of the first command), so a user folder with accents works.
    """
    args = _check_command(command)
    line = 'start "Hearth server" /min ' + " ".join(_cmd_quote(a) for a in args)
    return "\r\n".join([
        "@echo off",
        "rem Written by Hearth: its setting to start the model server at login adds and removes",
        "rem this file.",
        "chcp 65001 >nul",
        "setlocal DisableDelayedExpansion",
        line,
        "",
    ])


# -- where the entry goes --------------------------------------------------------------------


def _kind(platform: str) -> Kind:
    if platform.startswith("linux"):
        return "systemd"
    if platform == "darwin":
        return "launchd"
    if platform == "win32":
        return "startup"
    raise AutostartError(T_("Starting the model server at login is not supported on "
                            "{platform}.", platform=platform))


def entry_path(platform: str, home: Path, env: Mapping[str, str]) -> Path:
    """Where the start-at-login entry lives for ``platform`` (a ``sys.platform`` value)."""
    kind = _kind(platform)
    if kind == "systemd":
        # The XDG rule: a relative XDG_CONFIG_HOME is invalid and ignored.
        config = env.get("XDG_CONFIG_HOME", "")
        base = Path(config) if config.startswith("/") else home / ".config"
        return base / "systemd" / "user" / UNIT_NAME
    if kind == "launchd":
        return home / "Library" / "LaunchAgents" / f"{LABEL}.plist"
    appdata = env.get("APPDATA", "")
    base = Path(appdata) if appdata else home / "AppData" / "Roaming"
    return base / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup" / \
        STARTUP_FILE_NAME


def _wants_link(unit: Path) -> Path:
    """The link ``systemctl --user enable`` makes for ``WantedBy=default.target``."""
    return unit.parent / "default.target.wants" / unit.name


# -- writing and removing --------------------------------------------------------------------


def enable(platform: str | None = None, home: Path | None = None,
           env: Mapping[str, str] | None = None, command: Sequence[str] | None = None,
           run: Run = subprocess.run) -> Path:
    """Write the entry that starts the server at login; returns its path.

    Safe to call again: the entry is rewritten with the current command (an updated or moved
    Hearth). On Linux the unit is also linked into ``default.target.wants`` (what
    ``systemctl --user enable`` does, done here so it holds where systemctl is missing or
    cannot reach the user's manager), then ``systemctl --user daemon-reload`` and ``enable``
    run, best effort: their failures are logged, never raised.
    """
    platform = platform or sys.platform
    kind = _kind(platform)
    path = entry_path(platform, home or Path.home(), os.environ if env is None else env)
    args = list(command) if command is not None else serve_command()
    content: str | bytes
    if kind == "systemd":
        content = systemd_unit(args)
    elif kind == "launchd":
        content = launch_agent(args)
    else:
        content = windows_startup(args)
    _write(path, content.encode("utf-8") if isinstance(content, str) else content)
    if kind == "systemd":
        _link(_wants_link(path), path)
        _systemctl(run, "daemon-reload")
        _systemctl(run, "enable", UNIT_NAME)
    log.info("the model server starts at login: %s", path)
    return path


def disable(platform: str | None = None, home: Path | None = None,
            env: Mapping[str, str] | None = None, run: Run = subprocess.run) -> Path:
    """Remove the entry (nothing to remove is fine); returns its path.

    A server already running is left running: the setting is about the next login.
    """
    platform = platform or sys.platform
    kind = _kind(platform)
    path = entry_path(platform, home or Path.home(), os.environ if env is None else env)
    if kind == "systemd":
        if path.exists():  # systemctl reads the unit's [Install] section to undo it
            _systemctl(run, "disable", UNIT_NAME)
        _remove(_wants_link(path))
    _remove(path)
    if kind == "systemd":
        _systemctl(run, "daemon-reload")
    log.info("the model server no longer starts at login (%s removed)", path)
    return path


def is_enabled(platform: str | None = None, home: Path | None = None,
               env: Mapping[str, str] | None = None) -> bool:
    """Whether the server starts at login: the entry exists (and, on Linux, is linked into
    ``default.target.wants``, so a unit disabled by hand reads as off)."""
    platform = platform or sys.platform
    kind = _kind(platform)
    path = entry_path(platform, home or Path.home(), os.environ if env is None else env)
    if not path.is_file():
        return False
    return kind != "systemd" or os.path.lexists(_wants_link(path))


def _write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once (owner-only: app/storage/atomic.py)."""
    try:
        write_atomic(path, data)
    except OSError as exc:
        raise AutostartError(T_("Hearth cannot write {path}, so the model server cannot be set "
                                "to start at login: {reason}.", path=path,
                                reason=exc.strerror or exc)) from exc


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise AutostartError(T_("Hearth cannot remove {path}, so the model server still starts "
                                "at login: {reason}.", path=path,
                                reason=exc.strerror or exc)) from exc


def _link(link: Path, target: Path) -> None:
    """Point ``link`` at ``target``, replacing what was there; logged, not raised, on failure
    (systemctl may still make it)."""
    try:
        link.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(link):
            link.unlink()
        link.symlink_to(target)
    except OSError as exc:
        log.warning("cannot link %s to %s: %s", link, target, exc)


def _systemctl(run: Run, *args: str) -> str:
    """Run ``systemctl --user ARGS``; '' when it worked, else a sentence (also logged) saying
    why not. Never raises: the unit file is what matters, and systemctl may be missing (a
    system without systemd) or unable to reach the user's manager (no login session)."""
    argv = ["systemctl", "--user", *args]
    shown = " ".join(argv)
    try:
        done = run(argv, capture_output=True, text=True, timeout=SYSTEMCTL_TIMEOUT, check=False)
    except FileNotFoundError:
        problem = (f"'{shown}' was not run: systemctl is not installed (this system may not use "
                   f"systemd, so the unit may not start at login)")
    except (OSError, subprocess.SubprocessError) as exc:
        problem = f"'{shown}' failed: {exc}"
    else:
        if done.returncode == 0:
            return ""
        said = (done.stderr or done.stdout or "").strip()
        problem = f"'{shown}' failed (exit status {done.returncode}): {said or 'no message'}"
    log.warning("%s", problem)
    return problem
