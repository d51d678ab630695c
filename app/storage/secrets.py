"""Every secret Hearth keeps, by name, under one rule (no Qt).

The rule: a secret lives in the OS keyring (service "hearth", the name as the user name) when a
usable keyring backend exists; where none does (a server without a desktop session, CI, a
minimal Linux), it lives in ``secrets.json`` in Hearth's config folder, a file only its owner
may read or write (0600). :func:`where` and :func:`notice` say which, for the UI.

Names in use: ``server:<id>`` (a remote server's API key, app/remote/keys.py), ``runner:key``
(the key other apps use for the shared model, app/remote/share.py). The keyring entries are the
ones Hearth wrote before this module existed, so nothing is migrated from the keyring.

- "Usable" means ``keyring.get_keyring()`` is a real backend: not keyring's fail or null
  backend, nor a chainer with nothing to chain. A usable keyring that fails at the moment
  (locked, its service gone) raises :class:`SecretStoreError`; it does not send the secret to
  the file behind the person's back.
- A secret found in the file while a keyring is usable (saved before one was installed) is
  moved into the keyring the first time it is read.
- The file is replaced whole with the one atomic write (app/storage/atomic.py), whose temporary
  file ``tempfile.mkstemp`` creates with mode 0600 in one system call: there is no moment when
  another user could open it, whatever the umask. A file found with wider permissions (copied
  by hand) is narrowed to 0600 when read. On Windows the mode bits mean little: the config
  folder in the user's profile is private to the user by its ACL.
- One Hearth runs per data folder (app/instance.py), so a lock between threads is enough.

Every call may block (a keyring can ask to be unlocked, the file is on disk): call them off the
GUI thread where that matters.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from app import paths
from app.i18n import T_, Text, TextError
from app.storage.atomic import write_json_atomic

log = logging.getLogger(__name__)

SERVICE = "hearth"
FILE_NAME = "secrets.json"
VERSION = 1
KEYRING = "the system keyring"

_lock = threading.Lock()


class SecretStoreError(TextError):
    """A secret could not be read, kept or forgotten; ``str()`` is a sentence for the person (an
    :class:`app.i18n.Text` the window translates)."""


def secrets_path() -> Path:
    """The owner-only file used where no keyring exists (``HEARTH_HOME`` moves it)."""
    return paths.config_dir() / FILE_NAME


def _keyring() -> ModuleType:
    """The keyring package, imported on first use: it and its backends take a sixth of a second
    to import, and the window imports this module (through the settings) as it starts."""
    import keyring
    import keyring.errors

    return keyring


def keyring_usable() -> bool:
    """Whether a real keyring backend is configured here (no call is made to it)."""
    from keyring.backends import chainer, fail, null

    backend = _keyring().get_keyring()
    if isinstance(backend, fail.Keyring | null.Keyring):
        return False
    if isinstance(backend, chainer.ChainerBackend):
        return bool(backend.backends)
    return True


def where() -> str:
    """Where secrets are kept: "the system keyring" or the file's path."""
    return KEYRING if keyring_usable() else str(secrets_path())


def notice() -> str:
    """One sentence for Settings saying where Hearth keeps its keys."""
    if keyring_usable():
        return T_("Hearth keeps its keys in the system keyring.")
    return T_("This computer has no system keyring, so Hearth keeps its keys in {path}, a file only "
              "your user account can read.", path=secrets_path())


def get(name: str) -> str | None:
    """The secret called ``name``, or None when none is kept (SecretStoreError when the
    keyring or the file cannot be read)."""
    _check_name(name)
    if not keyring_usable():
        with _lock:
            return _read_file().get(name)
    try:
        value = _keyring().get_password(SERVICE, name)
    except Exception as exc:  # backends raise their own types (dbus, secretstorage, ...)
        raise SecretStoreError(_keyring_trouble("read", exc)) from exc
    if value:
        return value
    kept = _leftover(name)
    if kept:
        _move_to_keyring(name, kept)
    return kept


def put(name: str, value: str) -> None:
    """Keep ``value`` as the secret ``name``, replacing any kept before."""
    _check_name(name)
    if not isinstance(value, str) or not value:
        raise ValueError("a secret must be a non-empty string")
    if not keyring_usable():
        with _lock:
            data = _read_file()
            data[name] = value
            _write_file(data)
        return
    try:
        _keyring().set_password(SERVICE, name, value)
    except Exception as exc:
        raise SecretStoreError(_keyring_trouble("keep", exc)) from exc
    _forget_in_file(name, strict=False)  # an older copy must not come back if the keyring goes


def delete(name: str) -> None:
    """Forget the secret ``name``; nothing happens when none is kept."""
    _check_name(name)
    usable = keyring_usable()
    if usable:
        try:
            _keyring().delete_password(SERVICE, name)
        except _keyring().errors.PasswordDeleteError:
            pass  # none kept there
        except Exception as exc:
            raise SecretStoreError(_keyring_trouble("delete", exc)) from exc
    _forget_in_file(name, strict=not usable)


# -- the file ----------------------------------------------------------------------------------


def _read_file() -> dict[str, str]:
    path = secrets_path()
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if os.name == "posix" and mode & 0o077:
            # Copied in by hand or restored from a backup: make it private before reading.
            log.warning("%s was readable by others (mode %o); made private (0600)", path, mode)
            path.chmod(0o600)
        raw = path.read_text("utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SecretStoreError(T_("Hearth's keys in {path} cannot be read: {error}.", path=path,
                                  error=exc.strerror or str(exc))
                               ) from exc
    try:
        data: Any = json.loads(raw)
    except ValueError as exc:
        raise SecretStoreError(T_("Hearth's keys in {path} are damaged (not JSON): move the file away "
                                  "and enter the keys again.", path=path)) from exc
    found = data.get("secrets") if isinstance(data, dict) else None
    if not isinstance(found, dict):
        raise SecretStoreError(T_("Hearth's keys in {path} are not in a form Hearth knows: move the "
                                  "file away and enter the keys again.", path=path))
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, str) and v}


def _write_file(data: dict[str, str]) -> None:
    path = secrets_path()
    try:
        write_json_atomic(path, {"version": VERSION, "secrets": data})
    except OSError as exc:
        raise SecretStoreError(T_("Hearth's keys could not be saved in {path}: {error}.", path=path,
                                  error=exc.strerror or str(exc))) from exc


def _forget_in_file(name: str, *, strict: bool) -> None:
    """Remove ``name`` from the file if it is there. ``strict``: the file is where secrets live
    now, so trouble with it is the caller's; else (a leftover beside a keyring) it is logged."""
    with _lock:
        if not secrets_path().exists():
            return  # never create the file only to say it is empty
        try:
            data = _read_file()
            if data.pop(name, None) is not None:
                _write_file(data)
        except SecretStoreError as exc:
            if strict:
                raise
            log.warning("the old copy of secret %s could not be removed: %s", name, exc)


def _leftover(name: str) -> str | None:
    """``name`` in a file written before a keyring was usable; trouble with that old file is
    logged, not raised: the keyring is where secrets live now."""
    with _lock:
        if not secrets_path().exists():
            return None
        try:
            return _read_file().get(name)
        except SecretStoreError as exc:
            log.warning("the old file of keys is not readable: %s", exc)
            return None


def _move_to_keyring(name: str, value: str) -> None:
    try:
        _keyring().set_password(SERVICE, name, value)
    except Exception as exc:  # still in the file; tried again at the next read
        log.info("could not move secret %s into the keyring: %s", name, exc)
        return
    _forget_in_file(name, strict=False)


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name or not name.isprintable():
        raise ValueError(f"not a secret's name: {name!r}")


def _keyring_trouble(what: str, exc: Exception) -> Text:
    detail = str(exc).strip() or type(exc).__name__
    if what == "read":
        return T_("The system keyring could not read the key ({detail}). If it is locked, unlock "
                  "it and try again.", detail=detail)
    if what == "keep":
        return T_("The system keyring could not keep the key ({detail}). If it is locked, unlock "
                  "it and try again.", detail=detail)
    return T_("The system keyring could not delete the key ({detail}). If it is locked, unlock "
              "it and try again.", detail=detail)
