"""Huge pages for the runner's big request buffers (Linux with glibc 2.35 or later).

A 32 MiB request body becomes several 32 MiB buffers in turn (the body, its parsed text, the
rendered prompt, its UTF-8 bytes). glibc serves each allocation that large with fresh pages from
the kernel and gives them back when it is freed, so every such request faults in some 40,000
pages of 4 KiB: on a 2-core VM, 220 ms of the 330 ms of CPU the runner spent on one 32 MiB body
went to the kernel, time the decode threads lose. glibc's ``glibc.malloc.hugetlb=1`` tunable marks
those mappings for transparent huge pages (2 MiB, 512 times fewer faults): 140 ms in all
(tests/bench/hostile.py). The tunable is read only when a process starts, so ``serve`` starts
itself once more with it, keeping its process id, pipes and arguments (``exec``).
``HEARTH_NO_HUGEPAGES=1`` turns this off.
"""

from __future__ import annotations

import logging
import os
import platform
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

TUNABLE = "glibc.malloc.hugetlb"
THP_ENABLED = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def _glibc_has_tunable() -> bool:
    name, version = platform.libc_ver()
    if name != "glibc":
        return False
    try:
        major, minor = (int(p) for p in version.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (2, 35)


def _thp_allowed(enabled: Path = THP_ENABLED) -> bool:
    """Whether the kernel gives huge pages to memory that asks (its mode is "always" or
    "madvise", not "never")."""
    try:
        text = enabled.read_text()
    except OSError:
        return False
    return "[always]" in text or "[madvise]" in text


def restart_command(environ: Mapping[str, str], *, platform_name: str = sys.platform,
                    has_tunable: bool | None = None, thp: bool | None = None,
                    frozen: bool = bool(getattr(sys, "frozen", False)),
                    executable: str = sys.executable,
                    orig_argv: Sequence[str] = tuple(getattr(sys, "orig_argv", ())),
                    argv: Sequence[str] = tuple(sys.argv),
                    ) -> tuple[list[str], dict[str, str]] | None:
    """The command line and environment to start this runner again with the tunable, or None
    where it is set already, unavailable, or turned off."""
    tunables = environ.get("GLIBC_TUNABLES", "")
    if platform_name != "linux" or environ.get("HEARTH_NO_HUGEPAGES") == "1" \
            or TUNABLE in tunables:
        return None
    if not (_glibc_has_tunable() if has_tunable is None else has_tunable):
        return None
    if not (_thp_allowed() if thp is None else thp):
        return None
    if frozen:  # PyInstaller: the executable is the runner itself
        command = [executable, *argv[1:]]
    elif orig_argv:  # the interpreter's own options kept: -m runner, -X …
        command = [executable, *orig_argv[1:]]
    else:
        return None
    env = dict(environ)
    env["GLIBC_TUNABLES"] = f"{tunables}:{TUNABLE}=1" if tunables else f"{TUNABLE}=1"
    return command, env


def restart_with_huge_pages() -> None:
    """Replace this process with the same runner using huge pages for big buffers, where that
    applies; return (and go on without) where it does not or the restart cannot happen."""
    planned = restart_command(os.environ)
    if planned is None:
        return
    command, env = planned
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(command[0], command, env)
    except OSError:
        return


def log_state(log: logging.Logger, environ: Mapping[str, str] = os.environ) -> None:
    """Say whether big buffers get huge pages (the restart happened), for whoever reads the log."""
    on = f"{TUNABLE}=1" in environ.get("GLIBC_TUNABLES", "")
    log.info("huge pages for big request buffers: %s", "on" if on else "off",
             extra={"event": "huge_pages", "on": on})
