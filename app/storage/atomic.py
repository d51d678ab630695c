"""Whole-file writes that a crash or a full disk can never leave half done (no Qt).

Every JSON cache shares this one recipe: write a uniquely named temporary file in the target's own
folder (so the final rename never crosses file systems), flush it to the disk, then
``os.replace`` it over the target. Readers see the old file or the new one, never a mix. Two
writers of the same file no longer trip over one fixed ``.tmp`` name: the last rename wins.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_atomic(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8), all at once or not at all.

    The parent folder is created if needed. On any failure the temporary file is removed, the
    previous content of ``path`` is untouched, and the ``OSError`` propagates as the system
    reported it (for example ``errno.ENOSPC`` when the disk is full). The new file is readable by
    the user only (``tempfile.mkstemp``'s 0600): these files belong to one person.
    """
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            # Without this a power cut after the rename can leave an empty file behind it.
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _sync_folder(target.parent)


def write_json_atomic(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 1) -> None:
    """Serialize ``obj`` as JSON (UTF-8, non-ASCII kept) and :func:`write_atomic` it.

    Serializing happens before any file is touched, so an object JSON cannot represent (``TypeError``)
    or a circular one (``ValueError``) leaves nothing behind. Python's defaults otherwise, as the
    caches wrote before: NaN and infinities are written as ``NaN``/``Infinity``, which ``json``
    reads back.
    """
    text = json.dumps(obj, ensure_ascii=False, indent=indent)
    write_atomic(path, text)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); best effort, as some systems refuse it."""
    if os.name != "posix":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_json_entries(path: Path, schema: int) -> list[dict[str, Any]]:
    """The ``entries`` of a ``{"schema": N, "entries": [...]}`` cache file written with
    :func:`write_json_atomic`; empty when it is missing, unreadable or of another schema (a
    cache: losing it only costs measuring again)."""
    import logging

    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        logging.getLogger(__name__).warning("%s is unreadable, starting afresh: %s", path, exc)
        return []
    if not isinstance(data, dict) or data.get("schema") != schema:
        return []
    entries = data.get("entries", [])
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def keep_json_entries(path: Path, schema: int, entries: list[dict[str, Any]], most: int,
                      what: str) -> None:
    """Write the last ``most`` of ``entries`` as :func:`read_json_entries` reads them; a failure
    (a full disk) is logged, never raised: a measurement lost costs only measuring again."""
    import logging

    try:
        write_json_atomic(path, {"schema": schema, "entries": entries[-most:]}, indent=None)
    except OSError as exc:
        logging.getLogger(__name__).warning("could not keep the %s: %s", what, exc)
