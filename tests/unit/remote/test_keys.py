"""Server API keys (app/remote/keys.py) follow the rule for all of Hearth's secrets
(app/storage/secrets.py): the OS keyring, else the owner-only file in the config folder; a key
that cannot be kept at all is refused in words the user can act on."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

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
def no_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HEARTH_HOME", str(tmp_path))
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


def test_no_keyring_keeps_the_key_in_an_owner_only_file(no_keyring: None,
                                                        tmp_path: Path) -> None:
    keys.save_key("s1", "sk-secret")
    assert keys.get_key("s1") == "sk-secret"
    kept = tmp_path / "config" / "secrets.json"
    assert json.loads(kept.read_text("utf-8"))["secrets"] == {"server:s1": "sk-secret"}
    if os.name == "posix":
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    keys.delete_key("s1")
    assert keys.get_key("s1") is None


def test_keys_are_checked_as_header_values() -> None:
    assert keys.check_key("  sk-abc \n") == "sk-abc"
    assert keys.check_key("Bearer sk-abc") == "sk-abc"  # pasted with the header's word
    assert keys.check_key("") == ""
    with pytest.raises(ServerFormError, match="spaces"):
        keys.check_key("sk abc")
    with pytest.raises(ServerFormError):
        keys.check_key("clé")
