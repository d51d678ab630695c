"""Server API keys live in the OS keyring (app/remote/keys.py), never in a file; where no
keyring works, saving says so in words the user can act on."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import pytest
from keyring.backends import fail

from app.remote import keys
from app.remote.servers import ServerFormError
from tests.unit.hub.test_auth import MemoryKeyring


@pytest.fixture()
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@pytest.fixture()
def no_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


def test_save_get_delete(memory_keyring: MemoryKeyring) -> None:
    assert keys.get_key("s1") is None
    keys.save_key("s1", "sk-secret")
    assert memory_keyring.store == {("hearth", "server:s1"): "sk-secret"}
    assert keys.get_key("s1") == "sk-secret"
    keys.delete_key("s1")
    keys.delete_key("s1")  # nothing saved: no error
    assert keys.get_key("s1") is None


def test_no_keyring_is_a_clear_error_on_save_and_nothing_on_read(no_keyring: None) -> None:
    with pytest.raises(keys.KeyringUnavailableError, match="used until Hearth closes"):
        keys.save_key("s1", "sk-secret")
    assert keys.get_key("s1") is None
    keys.delete_key("s1")


def test_keys_are_checked_as_header_values() -> None:
    assert keys.check_key("  sk-abc \n") == "sk-abc"
    assert keys.check_key("Bearer sk-abc") == "sk-abc"  # pasted with the header's word
    assert keys.check_key("") == ""
    with pytest.raises(ServerFormError, match="spaces"):
        keys.check_key("sk abc")
    with pytest.raises(ServerFormError):
        keys.check_key("clé")
