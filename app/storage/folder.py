"""Can Hearth write to its data folder? Checked once at start (no Qt).

The data folder holds the library of conversations and the download queue. When it cannot be
written (a read-only file system, no permission, a full disk, a file where a folder should be),
every save would fail later, one confusing error at a time; before this check the app died in
app/paths.py with a traceback. The check writes a small file for real, because asking
permissions (``os.access``) says nothing about a read-only mount or a full disk, and nothing
about anything when running as root.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from app.i18n import T_
from app.paths import DATA_DIR_VARIABLE

# A whole file-system block: a full disk refuses this at write() (delayed allocation reserves
# blocks then), where creating an empty file would still succeed.
PROBE_BYTES = 4096


class FolderFault(Enum):
    """Why the folder cannot be written; each has its own advice."""

    READ_ONLY = "read-only"  # the file system is mounted read-only
    PERMISSION = "permission"  # the folder (or one above it) belongs to someone else
    FULL = "full"  # no space (or quota) left
    NOT_A_FOLDER = "not-a-folder"  # a file stands where the folder or one above it should be
    OTHER = "other"  # anything else the system said (an I/O error, a vanished network drive)


_FAULTS = {
    errno.EROFS: FolderFault.READ_ONLY,
    errno.EACCES: FolderFault.PERMISSION,
    errno.EPERM: FolderFault.PERMISSION,
    errno.ENOSPC: FolderFault.FULL,
    getattr(errno, "EDQUOT", errno.ENOSPC): FolderFault.FULL,  # quotas: not on every system
    errno.ENOTDIR: FolderFault.NOT_A_FOLDER,
    errno.EEXIST: FolderFault.NOT_A_FOLDER,  # mkdir(exist_ok=True) on a file
}

_WHAT: dict[FolderFault, str] = {
    FolderFault.READ_ONLY: T_("it is on a read-only file system"),
    FolderFault.PERMISSION: T_("you do not have permission to write there"),
    FolderFault.FULL: T_("the disk is full"),
    FolderFault.NOT_A_FOLDER: T_("a file stands where that folder (or one above it) should be"),
    FolderFault.OTHER: T_("the system refused"),
}

_FIX: dict[FolderFault, str] = {
    FolderFault.READ_ONLY: T_("Make that disk writable"),
    FolderFault.PERMISSION: T_("Give your user account permission to write to that folder (a "
                               "folder created by running Hearth as another user, for example "
                               "with sudo, belongs to that user)"),
    FolderFault.FULL: T_("Free some space on that disk"),
    FolderFault.NOT_A_FOLDER: T_("Move that file out of the way"),
    FolderFault.OTHER: T_("Check that the disk is connected and healthy"),
}


@dataclass(frozen=True)
class FolderProblem:
    """The data folder cannot be written: where, why, and what to do, as sentences."""

    folder: Path
    fault: FolderFault
    detail: str  # the system's own words, e.g. "Read-only file system"
    blocker: Path | None = None  # for NOT_A_FOLDER: the file in the way, when it was found

    def what(self) -> str:
        """What is wrong, one sentence naming the folder."""
        what = _WHAT[self.fault]
        if self.blocker is not None:
            what = T_("a file, {blocker}, stands where a folder should be", blocker=self.blocker)
        # The system's words add something only where they differ from ours.
        if self.detail.lower() not in what.lower():
            return T_("Hearth cannot save anything in its data folder, {folder}: {what} "
                      "({detail}).", folder=self.folder, what=what, detail=self.detail)
        return T_("Hearth cannot save anything in its data folder, {folder}: {what}.",
                  folder=self.folder, what=what)

    def advice(self) -> str:
        """What the person can do about it."""
        return T_("{fix}, or start Hearth with the environment variable {variable} set to a "
                  "folder you can write to; then start Hearth again.", fix=_FIX[self.fault],
                  variable=DATA_DIR_VARIABLE)

    def __str__(self) -> str:
        return T_("{what} {advice}", what=self.what(), advice=self.advice())


def check_writable(folder: Path) -> FolderProblem | None:
    """None when ``folder`` exists (created if needed) and takes a small file; else the problem.

    The probe file is removed again; a failure to remove it is not a problem for the person.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".hearth-write-check-")
    except OSError as exc:
        return _problem(folder, exc)
    try:
        try:
            os.write(fd, b"\0" * PROBE_BYTES)
        finally:
            os.close(fd)
    except OSError as exc:
        return _problem(folder, exc)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(probe)
    return None


def _problem(folder: Path, exc: OSError) -> FolderProblem:
    fault = _FAULTS.get(exc.errno or 0, FolderFault.OTHER)
    # strerror, not str(exc): the probe's random file name would only puzzle the person.
    detail = exc.strerror or str(exc)
    blocker = _file_in_the_way(folder) if fault is FolderFault.NOT_A_FOLDER else None
    return FolderProblem(folder, fault, detail, blocker)


def _file_in_the_way(folder: Path) -> Path | None:
    """The folder itself or the nearest folder above it that exists but is not a folder."""
    for candidate in (folder, *folder.parents):
        try:
            if candidate.exists() or candidate.is_symlink():
                return None if candidate.is_dir() else candidate
        except OSError:
            return None
    return None
