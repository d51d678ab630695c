"""Telling a person why Hearth cannot start, where they look, when Qt itself cannot show it.

A person who starts Hearth from the desktop's menu has no terminal: what Hearth prints there
before it gives up reaches nobody. :func:`tell` writes the message to Hearth's log file and
shows it on the desktop with the first of these that works: a notification (``notify-send``,
libnotify), a dialog (``zenity``, GNOME's; ``kdialog``, KDE's), a Tk dialog (Python's tkinter,
which needs libX11 and libtk, not Qt's xcb plugin). Each needs a display: without
``$DISPLAY`` or ``$WAYLAND_DISPLAY`` (a console, ssh) nothing is tried. The caller prints the
terminal line itself, as before.

Standard library only and no Qt: this runs precisely when Qt cannot (app/qtdeps.py), and
installers/dev.py imports app/qtdeps.py, and so this module, before the virtual environment
exists. Linux only in practice: on Windows and macOS Qt's libraries ship inside the app, and
the check that calls this never fails there.
"""

from __future__ import annotations

import html
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

LOG_NAME = "hearth.log"  # the file app.__main__.setup_logging rotates
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # and its format
# notify-send returns at once, unless the session bus hangs: then the dialogs are tried. The
# dialogs themselves wait for the person, as long as they take.
NOTIFY_TIMEOUT_S = 15.0

Find = Callable[[str], str | None]  # a program's name -> its path on PATH, or None
# (argv, environment, timeout in seconds or None) -> the exit status; None when it could not run
Run = Callable[[list[str], dict[str, str], float | None], int | None]
ShowTk = Callable[[str, str], bool]  # (title, text) -> True when the dialog was shown


@dataclass(frozen=True)
class Notice:
    """What went wrong, worded for the desktop and for the terminal."""

    title: str  # one line: "Hearth cannot open its window"
    body: str  # a few short lines under it: what is missing, the command that fixes it
    text: str  # the whole message as the terminal shows it; the log keeps this one


def has_display(environ: Mapping[str, str]) -> bool:
    """True when a graphical session is there to show something in (X11 or Wayland)."""
    return bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))


def tell(notice: Notice, *, environ: Mapping[str, str] | None = None,
         log_file: Path | None = None, find: Find | None = None, run: Run | None = None,
         show_tk: ShowTk | None = None, frozen: bool | None = None) -> str | None:
    """Write ``notice`` to the log file and show it on the desktop; the way it was shown
    ("notify-send", "zenity", "kdialog", "tk"), or None when it was not. Never raises: the
    app is ending anyway, and the terminal line was printed before.

    ``log_file`` defaults to Hearth's log; ``find``, ``run``, ``show_tk`` and ``frozen`` (a
    PyInstaller build) are for tests.
    """
    env = dict(os.environ if environ is None else environ)
    log = _app_log() if log_file is None else log_file
    logged = log is not None and _append(log, notice.text.rstrip("\n"))
    body = notice.body
    if logged:
        # A notification cannot be copied from; the log file can.
        body += f"\n\nThis message is also in {log}."
    if not has_display(env):
        way = None
        outcome = "no display: the message is in the terminal and this log only"
    else:
        child_env = _child_environment(env, getattr(sys, "frozen", False)
                                       if frozen is None else frozen)
        way = _show(notice.title, body, env, child_env,
                    find or (lambda name: shutil.which(name, path=env.get("PATH"))),
                    run or _run, show_tk or _tk_dialog)
        outcome = (f"shown through {way}" if way else
                   "the message could not be shown on the desktop (no notify-send, zenity, "
                   "kdialog or Tk that worked)")
    if log is not None and logged:
        _append(log, outcome, logging.INFO)
    return way


def _show(title: str, body: str, env: Mapping[str, str], child_env: dict[str, str],
          find: Find, run: Run, show_tk: ShowTk) -> str | None:
    # notify-send and zenity read Pango markup: a "<" or "&" in the text would hide it.
    marked = html.escape(body, quote=False)
    notify = find("notify-send")
    # Critical: GNOME and KDE keep it on screen until the person dismisses it.
    if notify and run([notify, "--app-name=Hearth", "--urgency=critical", "--icon=dialog-error",
                       title, marked], child_env, NOTIFY_TIMEOUT_S) == 0:
        return "notify-send"
    # A dialog's 1 is Esc or the window's close button: the person saw it, and a second
    # dialog after it would be one too many. What cannot start ends otherwise (or None).
    zenity = find("zenity")
    if zenity and run([zenity, "--error", "--title=Hearth", "--width=520",
                       f"--text=<b>{html.escape(title, quote=False)}</b>\n\n{marked}"],
                      child_env, None) in (0, 1):
        return "zenity"
    kdialog = find("kdialog")
    if kdialog and run([kdialog, "--title", "Hearth", "--error", f"{title}\n\n{body}"],
                       child_env, None) in (0, 1):
        return "kdialog"
    # Tk draws through X11 only (XWayland gives a Wayland session a DISPLAY too).
    if env.get("DISPLAY") and show_tk(title, f"{title}\n\n{body}"):
        return "tk"
    return None


def _child_environment(env: Mapping[str, str], frozen: bool) -> dict[str, str]:
    """The environment for the system's tools. A PyInstaller build's bootloader puts the app's
    own library folder first on LD_LIBRARY_PATH (saving the original in LD_LIBRARY_PATH_ORIG):
    a system program given it would load Hearth's copies of GLib and friends, not its own."""
    child = dict(env)
    if frozen:
        original = child.pop("LD_LIBRARY_PATH_ORIG", None)
        if original:
            child["LD_LIBRARY_PATH"] = original
        else:
            child.pop("LD_LIBRARY_PATH", None)
    return child


def _run(argv: list[str], env: dict[str, str], timeout: float | None) -> int | None:
    try:
        return subprocess.run(argv, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=timeout, check=False).returncode
    except (OSError, subprocess.SubprocessError):  # not executable, gone, or it hung
        return None


def _tk_dialog(title: str, text: str) -> bool:
    try:
        import tkinter
        from tkinter import messagebox
    except ImportError:  # the frozen app leaves tkinter out (hearth.spec); so may a distro
        return False
    try:
        root = tkinter.Tk()
    except tkinter.TclError:  # no X server at that DISPLAY, or no libtk
        return False
    try:
        root.withdraw()  # the message box alone, without Tk's empty main window
        messagebox.showerror(title, text, parent=root)
    except tkinter.TclError:
        return False
    finally:
        root.destroy()
    return True


def _app_log() -> Path | None:
    """Hearth's log file, found the way the app finds it (HEARTH_HOME, else platformdirs)."""
    # Imported here: app.paths needs platformdirs, which installers/dev.py's Python, importing
    # this module through app/qtdeps.py before the virtual environment exists, may not have.
    try:
        from app import paths

        return paths.log_dir() / LOG_NAME
    except (ImportError, OSError):
        return None


def _append(log: Path, message: str, level: int = logging.ERROR) -> bool:
    """One record in the log's own format (the logging setup has not run: Qt never started)."""
    record = logging.LogRecord("app", level, __file__, 0, "%s", (message,), None)
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as f:
            f.write(logging.Formatter(LOG_FORMAT).format(record) + "\n")
    except OSError:
        return False
    return True
