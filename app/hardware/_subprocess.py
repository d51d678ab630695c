"""Run an external tool (vulkaninfo, rocm-smi, sysctl) without ever hanging or raising.

Detection must never freeze the app: every tool gets a short timeout, and the whole process group
is killed when it runs past it (a wrapper script's children would otherwise keep the pipes open and
`communicate` would wait for them). A frozen (PyInstaller) app puts its own library directory on
LD_LIBRARY_PATH / DYLD_LIBRARY_PATH; a system tool that picks up our bundled libstdc++ or libvulkan
crashes or lies, so those variables are restored to what the user had before the tool starts.
On Windows the bootloader uses SetDllDirectoryW instead, which child processes inherit just the
same (pyinstaller#3795), so it is cleared while a tool is being started.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from app.i18n import T_

log = logging.getLogger(__name__)

MAX_TIMEOUT = 3.0

# Variables a frozen app's bootloader changes; PyInstaller keeps the user's value in <NAME>_ORIG.
_LIBRARY_PATH_VARS = ("LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "DYLD_FRAMEWORK_PATH", "LIBPATH")
# Variables of our own Python/Qt that must not leak into a tool.
_DROP_VARS = ("PYTHONHOME", "PYTHONPATH", "QT_PLUGIN_PATH", "QML2_IMPORT_PATH", "SSL_CERT_FILE")


@dataclass(frozen=True)
class ToolResult:
    """What running a tool gave: `ok` with its stdout, or not `ok` with a reason a user can read."""

    ok: bool
    stdout: str = ""
    reason: str = ""
    returncode: int | None = None


def bundle_dir() -> str | None:
    """The frozen app's own directory, or None when running from source."""
    if not getattr(sys, "frozen", False):
        return None
    meipass = getattr(sys, "_MEIPASS", None)
    return str(meipass) if meipass else os.path.dirname(sys.executable)


def clean_env(
    environ: Mapping[str, str] | None = None, bundle: str | None = None
) -> dict[str, str]:
    """A copy of the environment fit for launching a system tool.

    Library path variables get back the user's original value (PyInstaller's ``*_ORIG``) or, when
    there was none, lose every entry inside the app bundle. Locale is forced to C so the output
    parses the same everywhere.
    """
    env = dict(os.environ if environ is None else environ)
    bundle = bundle_dir() if bundle is None else bundle
    for var in _LIBRARY_PATH_VARS:
        orig = env.pop(f"{var}_ORIG", None)
        if orig is not None:
            env[var] = orig
        elif var in env and bundle:
            kept = [
                p for p in env[var].split(os.pathsep)
                if p and not os.path.abspath(p).startswith(os.path.abspath(bundle))
            ]
            if kept:
                env[var] = os.pathsep.join(kept)
            else:
                del env[var]
        if var in env and not env[var]:
            del env[var]
    if bundle:
        for var in _DROP_VARS:
            env.pop(var, None)
    env["LC_ALL"] = "C"
    env["LANG"] = "C"
    return env


_DLL_DIRECTORY_LOCK = threading.Lock()


def _kernel32() -> Any:
    """kernel32 where a frozen app's DLL directory can leak into children; None elsewhere."""
    if os.name != "nt" or bundle_dir() is None:
        return None
    import ctypes

    return ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]


@contextmanager
def dll_directory_cleared() -> Iterator[None]:
    """While the body runs (start a child, nothing more), the process has no DLL directory.

    The setting is process-wide and our own later DLL loads need it, so it is put back at once;
    the lock keeps two detection threads from restoring each other's empty value.
    """
    kernel32 = _kernel32()
    if kernel32 is None:
        yield
        return
    import ctypes

    with _DLL_DIRECTORY_LOCK:
        buf = ctypes.create_unicode_buffer(32768)
        saved = buf.value if kernel32.GetDllDirectoryW(len(buf), buf) else ""
        if saved:
            kernel32.SetDllDirectoryW(None)
        try:
            yield
        finally:
            if saved:
                kernel32.SetDllDirectoryW(saved)


def which(tool: str) -> str | None:
    """The tool's path, or None. Separate so tests can pretend a tool is (not) installed."""
    return shutil.which(tool)


def run_tool(argv: list[str], timeout: float = MAX_TIMEOUT) -> ToolResult:
    """Run ``argv`` and return its stdout; never raises, never runs past ``timeout`` seconds.

    ``timeout`` is capped at MAX_TIMEOUT.
    """
    timeout = min(timeout, MAX_TIMEOUT)
    exe = which(argv[0])
    if exe is None:
        return ToolResult(False, reason=T_("{tool} is not installed", tool=argv[0]))
    kwargs: dict[str, object] = {}
    if os.name == "posix":
        kwargs["start_new_session"] = True  # own process group, so we can kill all of it
    else:
        kwargs["creationflags"] = getattr(subprocess, "CREATE_NO_WINDOW", 0) | getattr(
            subprocess, "CREATE_NEW_PROCESS_GROUP", 0
        )
    try:
        with dll_directory_cleared():
            proc = subprocess.Popen(
                [exe, *argv[1:]],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=clean_env(),
                **kwargs,  # type: ignore[call-overload]
            )
    except OSError as exc:
        return ToolResult(False, reason=T_("{tool} could not be started: {error}",
                                                 tool=argv[0], error=str(exc)))
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        try:
            proc.communicate(timeout=0.5)
        except subprocess.TimeoutExpired:
            log.warning("%s still holds its pipes after being killed", argv[0])
        return ToolResult(False, reason=T_("{tool} did not answer within {seconds:g} s",
                                                 tool=argv[0], seconds=timeout))
    stdout = out.decode("utf-8", "replace")
    if proc.returncode != 0:
        first = err.decode("utf-8", "replace").strip().splitlines()
        reason = T_("{tool} failed: {error}", tool=argv[0], error=first[0]) if first else \
            T_("{tool} failed: exit status {status}", tool=argv[0], status=proc.returncode)
        return ToolResult(False, stdout=stdout, reason=reason, returncode=proc.returncode)
    return ToolResult(True, stdout=stdout, returncode=0)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass
