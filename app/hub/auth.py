"""The Hugging Face access token: where it is kept and whether it works (no Qt).

The token is read from ``HF_TOKEN`` first (scripts, CI, a user who manages it themselves), then
from Hearth's secret store (app/storage/secrets.py, under the name "huggingface"): the OS
keyring (service "hearth", user "huggingface", the entry earlier versions wrote), or where no
keyring exists the owner-only secrets file, the one rule for every secret Hearth keeps.
"""

from __future__ import annotations

import logging
import os

from app.hub.client import HubClient
from app.hub.types import AuthError, HubError
from app.i18n import T_
from app.storage import secrets

NAME = "huggingface"
ENV_VAR = "HF_TOKEN"

_log = logging.getLogger(__name__)


class KeyringUnavailableError(HubError):
    """The keyring could not keep or forget the token right now (locked, its service gone);
    the text says what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


def get_token() -> str | None:
    """The token to use: HF_TOKEN if set, else the one kept in the secret store, else None.

    A keyring that cannot be read means no saved token, never an error here: browsing public
    models must keep working.
    """
    env = (os.environ.get(ENV_VAR) or "").strip()
    if env:
        return env
    try:
        saved = secrets.get(NAME)
    except secrets.SecretStoreError as exc:
        _log.info("the token could not be read: %s", exc)
        return None
    if not saved or not saved.strip():
        return None
    return saved.strip()


def token_source() -> str | None:
    """Where the current token comes from: "environment", "keyring", "file", or None."""
    if (os.environ.get(ENV_VAR) or "").strip():
        return "environment"
    if not get_token():
        return None
    return "keyring" if secrets.keyring_usable() else "file"


def keyring_notice() -> str | None:
    """Where a saved token is kept, when that is not the system keyring (None when it is)."""
    return None if secrets.keyring_usable() else secrets.notice()


def _check_shape(token: str) -> str:
    token = token.strip()
    if not token:
        raise AuthError(T_("The token is empty. Paste the token from your Hugging Face settings."),
                        "missing", "https://huggingface.co/settings/tokens")
    if not token.isascii() or not token.isprintable() or any(ch.isspace() for ch in token):
        raise AuthError(T_("That does not look like a Hugging Face token (it has spaces or unusual "
                           "characters). Copy it again from your Hugging Face settings."), "invalid",
                        "https://huggingface.co/settings/tokens")
    return token


def save_token(token: str) -> None:
    """Keep ``token`` in the secret store (KeyringUnavailableError when the keyring fails now)."""
    token = _check_shape(token)
    try:
        secrets.put(NAME, token)
    except (secrets.SecretStoreError, OSError) as exc:
        raise KeyringUnavailableError(str(exc)) from exc


def delete_token() -> None:
    """Forget the saved token; nothing happens when none is saved."""
    try:
        secrets.delete(NAME)
    except (secrets.SecretStoreError, OSError) as exc:
        raise KeyringUnavailableError(str(exc)) from exc


def check_token(client: HubClient) -> str:
    """The account name ``client``'s token belongs to; AuthError when it is missing or refused."""
    return client.whoami()
