"""Server API keys in the OS keyring (no Qt), the way app/hub/auth.py keeps the Hugging Face
token: service "hearth", user ``server:<id>``. A key is never written to a plain file.

Where no keyring works, :func:`save_key` raises :class:`KeyringUnavailableError`; the service
then keeps the key in memory for this run only and says so. Every call here may block (a
keyring can ask to be unlocked): call them off the GUI thread.
"""

from __future__ import annotations

import logging

import keyring
import keyring.errors

from app.remote.servers import ServerFormError

SERVICE = "hearth"

log = logging.getLogger(__name__)

KEYRING_NOTICE = ("This computer has no working password store (keyring), so Hearth cannot keep "
                  "the server's API key safely: it is used until Hearth closes, and you will "
                  "need to enter it again next time.")


class KeyringUnavailableError(Exception):
    """No keyring backend works here; ``str()`` says what that means for the user."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(KEYRING_NOTICE)
        self.detail = detail  # the keyring library's own words, for the log


def _user(server_id: str) -> str:
    return f"server:{server_id}"


def check_key(key: str) -> str:
    """The key as it will be sent; ServerFormError with a sentence when it cannot be a header."""
    key = key.strip()
    if key.lower().startswith("bearer "):
        key = key[7:].strip()  # pasted with the header's word in front
    if key and (not key.isascii() or not key.isprintable() or any(c.isspace() for c in key)):
        raise ServerFormError("The API key has spaces or unusual characters: copy it again.")
    return key


def save_key(server_id: str, key: str) -> None:
    """Keep ``key`` for the server (KeyringUnavailableError where no keyring works)."""
    try:
        keyring.set_password(SERVICE, _user(server_id), key)
    except Exception as exc:  # backends raise their own types (dbus, secretstorage, ...)
        raise KeyringUnavailableError(str(exc)) from exc


def get_key(server_id: str) -> str | None:
    """The saved key, or None when none is saved or no keyring works (logged)."""
    try:
        return keyring.get_password(SERVICE, _user(server_id)) or None
    except Exception as exc:
        log.info("keyring unavailable for server %s: %s", server_id, exc)
        return None


def delete_key(server_id: str) -> None:
    """Forget the server's key; nothing happens when none is saved or no keyring works."""
    try:
        keyring.delete_password(SERVICE, _user(server_id))
    except keyring.errors.PasswordDeleteError:
        return
    except Exception as exc:
        log.info("could not delete server %s's key: %s", server_id, exc)
