"""The token: environment first, then the OS keyring; never a plain file; checked against the Hub."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.errors
import pytest
from keyring.backends import fail

from app.hub import auth
from app.hub.client import HubClient
from app.hub.types import AuthError
from tests.fixtures.fake_hub import FakeHub
from tests.fixtures.keyrings import MemoryKeyring


@pytest.fixture()
def memory_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryKeyring]:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@pytest.fixture()
def no_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


def test_save_get_delete(memory_keyring: MemoryKeyring, tmp_path: Path) -> None:
    assert auth.get_token() is None
    auth.save_token("  hf_secret123 \n")
    assert memory_keyring.store == {("hearth", "huggingface"): "hf_secret123"}
    assert auth.get_token() == "hf_secret123"
    assert auth.token_source() == "keyring"
    auth.delete_token()
    assert auth.get_token() is None
    auth.delete_token()  # deleting nothing is fine
    assert auth.keyring_notice() is None


def test_environment_wins(memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch) -> None:
    auth.save_token("hf_saved")
    monkeypatch.setenv("HF_TOKEN", "hf_from_env")
    assert auth.get_token() == "hf_from_env"
    assert auth.token_source() == "environment"


def test_bad_token_shapes(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(AuthError):
        auth.save_token("   ")
    with pytest.raises(AuthError, match="does not look like"):
        auth.save_token("hf_abc def")
    assert memory_keyring.store == {}


def test_no_keyring_keeps_the_token_in_an_owner_only_file(no_keyring: None) -> None:
    """Issue 25, 6: one rule for every secret. Today: saving is refused, the person told to set
    HF_TOKEN by hand."""
    import stat

    from app.storage import secrets

    assert auth.get_token() is None  # browsing public models keeps working
    auth.save_token("hf_secret")
    assert auth.get_token() == "hf_secret"
    assert auth.token_source() == "file"
    path = secrets.secrets_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    notice = auth.keyring_notice()
    assert notice is not None and str(path) in notice
    auth.delete_token()
    assert auth.get_token() is None


def test_check_token(memory_keyring: MemoryKeyring) -> None:
    with FakeHub(user="alice") as hub:
        hub.token = "hf_right"
        with HubClient(endpoint=hub.url, token="hf_right") as c:
            assert auth.check_token(c) == "alice"
        with HubClient(endpoint=hub.url, token="hf_wrong") as c, pytest.raises(AuthError) as err:
            auth.check_token(c)
        assert err.value.reason == "invalid"
        with HubClient(endpoint=hub.url) as c, pytest.raises(AuthError) as err:
            auth.check_token(c)
        assert err.value.reason == "missing"
