"""The Hugging Face access token: where it is kept and whether it works (no Qt).

The token is read from ``HF_TOKEN`` first (scripts, CI, a user who manages it themselves), then
from the OS keyring (service "hearth", user "huggingface"). It is never written to a plain file:
where no keyring works, saving fails with :class:`KeyringUnavailableError`, whose text tells the
user to set ``HF_TOKEN`` instead.
"""

from __future__ import annotations

import logging
import os

import keyring
import keyring.errors

from app.hub.client import HubClient
from app.hub.types import AuthError, HubError

SERVICE = "hearth"
USERNAME = "huggingface"
ENV_VAR = "HF_TOKEN"

_log = logging.getLogger(__name__)

KEYRING_NOTICE = ("This computer has no working password store (keyring), so Hearth cannot keep a "
                  "Hugging Face token safely. Set the HF_TOKEN environment variable before starting "
                  "Hearth instead; gated models need it, public ones do not.")


class KeyringUnavailableError(HubError):
    """No keyring backend works here; the text says what to do instead."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(KEYRING_NOTICE)
        self.detail = detail  # the keyring library's own words, for the log


def get_token() -> str | None:
    """The token to use: HF_TOKEN if set, else the one saved in the keyring, else None.

    A missing or broken keyring means no saved token, never an error here: browsing public
    models must keep working. :func:`keyring_notice` tells the UI whether to say why.
    """
    env = (os.environ.get(ENV_VAR) or "").strip()
    if env:
        return env
    try:
        saved = keyring.get_password(SERVICE, USERNAME)
    except keyring.errors.KeyringError as exc:
        _log.info("keyring unavailable: %s", exc)
        return None
    except Exception as exc:  # backends raise their own types (dbus, secretstorage, ...)
        _log.warning("keyring failed: %s", exc)
        return None
    if not saved or not saved.strip():
        return None
    return saved.strip()


def token_source() -> str | None:
    """Where the current token comes from: "environment", "keyring", or None."""
    if (os.environ.get(ENV_VAR) or "").strip():
        return "environment"
    return "keyring" if get_token() else None


def keyring_notice() -> str | None:
    """The notice to show when no keyring works, or None when one does."""
    try:
        keyring.get_password(SERVICE, USERNAME)
    except Exception:
        return KEYRING_NOTICE
    return None


def _check_shape(token: str) -> str:
    token = token.strip()
    if not token:
        raise AuthError("The token is empty. Paste the token from your Hugging Face settings.",
                        "missing", "https://huggingface.co/settings/tokens")
    if not token.isascii() or not token.isprintable() or any(ch.isspace() for ch in token):
        raise AuthError("That does not look like a Hugging Face token (it has spaces or unusual "
                        "characters). Copy it again from your Hugging Face settings.", "invalid",
                        "https://huggingface.co/settings/tokens")
    return token


def save_token(token: str) -> None:
    """Keep ``token`` in the OS keyring (KeyringUnavailableError where there is none)."""
    token = _check_shape(token)
    try:
        keyring.set_password(SERVICE, USERNAME, token)
    except Exception as exc:
        raise KeyringUnavailableError(str(exc)) from exc


def delete_token() -> None:
    """Forget the saved token; nothing happens when none is saved."""
    try:
        keyring.delete_password(SERVICE, USERNAME)
    except keyring.errors.PasswordDeleteError:
        return  # nothing was saved
    except Exception as exc:
        raise KeyringUnavailableError(str(exc)) from exc


def check_token(client: HubClient) -> str:
    """The account name ``client``'s token belongs to; AuthError when it is missing or refused."""
    return client.whoami()
