"""Server API keys (no Qt), kept by the one rule for Hearth's secrets (app/storage/secrets.py):
in the OS keyring where one is usable (service "hearth", user ``server:<id>``, the entries
Hearth has always written), else in the owner-only file in Hearth's config folder. A key never
goes into ``servers.json``.

Where even that fails (a locked keyring, a config folder that cannot be written),
:func:`save_key` raises :class:`KeyStoreError`; the service then keeps the key in memory for
this run only and says so. Every call here may block (a keyring can ask to be unlocked): call
them off the GUI thread.
"""

from __future__ import annotations

import logging

from app.i18n import T_, TextError
from app.remote.servers import ServerFormError
from app.storage import secrets

log = logging.getLogger(__name__)


class KeyStoreError(TextError):
    """The key could not be kept; ``str()`` says what that means for the user."""


    def __init__(self, detail: str = "") -> None:
        super().__init__(T_("Hearth could not keep the server's API key: {detail} It is used until "
                            "Hearth closes, and you will need to enter it again next time.",
                            detail=detail))
        self.detail = detail  # the store's own sentence, for the log


def _user(server_id: str) -> str:
    return f"server:{server_id}"


def check_key(key: str) -> str:
    """The key as it will be sent; ServerFormError with a sentence when it cannot be a header."""
    key = key.strip()
    if key.lower().startswith("bearer "):
        key = key[7:].strip()  # pasted with the header's word in front
    if key and (not key.isascii() or not key.isprintable() or any(c.isspace() for c in key)):
        raise ServerFormError(T_("The API key has spaces or unusual characters: copy it again."))
    return key


def save_key(server_id: str, key: str) -> None:
    """Keep ``key`` for the server (KeyStoreError when it cannot be kept)."""
    try:
        secrets.put(_user(server_id), key)
    except secrets.SecretStoreError as exc:
        raise KeyStoreError(str(exc)) from exc


def get_key(server_id: str) -> str | None:
    """The saved key, or None when none is saved or it cannot be read (logged)."""
    try:
        return secrets.get(_user(server_id)) or None
    except secrets.SecretStoreError as exc:
        log.info("the key of server %s cannot be read: %s", server_id, exc)
        return None


def delete_key(server_id: str) -> None:
    """Forget the server's key; nothing happens when none is saved or it cannot be reached."""
    try:
        secrets.delete(_user(server_id))
    except secrets.SecretStoreError as exc:
        log.info("could not delete server %s's key: %s", server_id, exc)
