"""Every secret Hearth keeps follows one rule (app/storage/secrets.py, issue 25 defect 6): the OS
keyring where a usable one exists, else an owner-only (0600) file in the config folder, with a
notice saying which. Tested with an in-memory keyring backend installed as keyring's own (the
lowest boundary) and with keyring's "no backend" one, on the real file system; and the two
users of the rule: the shared model's key (app/remote/share.py) and servers' keys
(app/remote/keys.py). The fixed sharing port is here too (app/settings.py)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.errors
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import chainer, fail, null

from app import settings as st
from app.remote import keys, share
from app.storage import secrets
from tests.fixtures.keyrings import MemoryKeyring

POSIX = os.name == "posix"


class LockedKeyring(MemoryKeyring):
    """A keyring that exists but refuses every call now (locked, its service gone)."""

    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("the collection is locked")

    set_password = delete_password = get_password  # type: ignore[assignment]


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HEARTH_HOME", str(tmp_path))
    return tmp_path


def use(backend: KeyringBackend) -> Iterator[KeyringBackend]:
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def memory_keyring() -> Iterator[KeyringBackend]:
    yield from use(MemoryKeyring())


@pytest.fixture
def no_keyring() -> Iterator[KeyringBackend]:
    yield from use(fail.Keyring())


def secrets_file(home: Path) -> Path:
    return home / "config" / "secrets.json"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- the rule -------------------------------------------------------------------------------------


def test_with_a_keyring_secrets_live_there_and_never_in_a_file(memory_keyring: MemoryKeyring,
                                                               home: Path) -> None:
    assert secrets.keyring_usable() and secrets.where() == "the system keyring"
    assert secrets.notice() == "Hearth keeps its keys in the system keyring."
    assert secrets.get("runner:key") is None
    secrets.put("runner:key", "k-1")
    assert memory_keyring.store == {("hearth", "runner:key"): "k-1"}
    assert secrets.get("runner:key") == "k-1"
    secrets.delete("runner:key")
    secrets.delete("runner:key")  # nothing kept: no error
    assert memory_keyring.store == {} and secrets.get("runner:key") is None
    assert not secrets_file(home).exists()


def test_without_a_keyring_secrets_live_in_an_owner_only_file(no_keyring: None,
                                                              home: Path) -> None:
    path = secrets_file(home)
    assert not secrets.keyring_usable() and secrets.where() == str(path)
    assert secrets.notice() == (f"This computer has no system keyring, so Hearth keeps its keys "
                                f"in {path}, a file only your user account can read.")
    assert secrets.get("runner:key") is None and not path.exists()  # reading creates nothing
    old_umask = os.umask(0)  # even a umask that lets everyone read cannot widen it
    try:
        secrets.put("runner:key", "k-1")
        secrets.put("server:abc", "sk-2")
    finally:
        os.umask(old_umask)
    if POSIX:
        assert mode(path) == 0o600
    assert json.loads(path.read_text("utf-8")) == {
        "version": 1, "secrets": {"runner:key": "k-1", "server:abc": "sk-2"}}
    assert [p.name for p in path.parent.iterdir()] == ["secrets.json"]  # no temporary left
    assert secrets.get("runner:key") == "k-1"
    secrets.delete("runner:key")
    assert secrets.get("runner:key") is None and secrets.get("server:abc") == "sk-2"
    if POSIX:
        assert mode(path) == 0o600


@pytest.mark.skipif(not POSIX, reason="POSIX permissions")
def test_a_file_readable_by_others_is_made_private_when_read(no_keyring: None,
                                                             home: Path) -> None:
    secrets.put("runner:key", "k-1")
    path = secrets_file(home)
    path.chmod(0o644)  # restored from a backup, copied by hand
    assert secrets.get("runner:key") == "k-1"
    assert mode(path) == 0o600


def test_a_secret_kept_in_the_file_moves_into_a_keyring_that_appears(home: Path) -> None:
    for _ in use(fail.Keyring()):
        secrets.put("server:abc", "sk-2")
    for backend in use(MemoryKeyring()):
        assert secrets.get("server:abc") == "sk-2"
        assert backend.store == {("hearth", "server:abc"): "sk-2"}  # type: ignore[attr-defined]
        assert json.loads(secrets_file(home).read_text("utf-8"))["secrets"] == {}
        assert secrets.get("server:abc") == "sk-2"


def test_a_keyring_that_fails_now_is_an_error_and_nothing_goes_to_a_file(home: Path) -> None:
    for _ in use(LockedKeyring()):
        assert secrets.keyring_usable()
        for call in (lambda: secrets.get("runner:key"), lambda: secrets.put("runner:key", "k"),
                     lambda: secrets.delete("runner:key")):
            with pytest.raises(secrets.SecretStoreError, match=r"keyring could not .* locked"):
                call()
    assert not secrets_file(home).exists()


def test_a_damaged_file_is_an_error_that_says_what_to_do(no_keyring: None, home: Path) -> None:
    path = secrets_file(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json", "utf-8")
    with pytest.raises(secrets.SecretStoreError, match=r"damaged .* move the file away"):
        secrets.get("runner:key")
    with pytest.raises(secrets.SecretStoreError):
        secrets.put("runner:key", "k")
    assert path.read_text("utf-8") == "{not json"  # left for the person to look at


def test_a_damaged_old_file_does_not_stop_a_keyring(memory_keyring: MemoryKeyring,
                                                    home: Path) -> None:
    path = secrets_file(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json", "utf-8")
    assert secrets.get("runner:key") is None
    secrets.put("runner:key", "k-1")
    assert secrets.get("runner:key") == "k-1"


@pytest.mark.parametrize("backend", [fail.Keyring(), null.Keyring()], ids=["fail", "null"])
def test_no_backend_means_the_file(backend: KeyringBackend) -> None:
    for _ in use(backend):
        assert not secrets.keyring_usable()


def test_a_chainer_with_nothing_to_chain_means_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chainer.ChainerBackend, "backends", [])
    for _ in use(chainer.ChainerBackend()):
        assert not secrets.keyring_usable()


def test_names_and_values_are_checked() -> None:
    with pytest.raises(ValueError):
        secrets.get("")
    with pytest.raises(ValueError):
        secrets.put("runner:key", "")


# -- the shared model's key -----------------------------------------------------------------------


@pytest.mark.parametrize("with_keyring", [True, False], ids=["keyring", "file"])
def test_the_shared_key_is_made_once_and_kept_until_rotated(with_keyring: bool,
                                                            home: Path) -> None:
    for backend in use(MemoryKeyring() if with_keyring else fail.Keyring()):
        first = share.SharedKey().get()
        assert len(first) >= 32 and first.isascii() and " " not in first
        # A new SharedKey is a new start of Hearth: it reads the same kept key.
        assert share.SharedKey().get() == first == secrets.get(share.KEY_NAME)
        rotated = share.SharedKey()
        new = rotated.rotate()
        assert new != first and rotated.get() == new
        assert share.SharedKey().get() == new
        if with_keyring:
            assert backend.store == {("hearth", "runner:key"): new}  # type: ignore[attr-defined]
            assert not secrets_file(home).exists()
        else:
            assert json.loads(secrets_file(home).read_text("utf-8"))["secrets"] == {
                "runner:key": new}
            if POSIX:
                assert mode(secrets_file(home)) == 0o600
        assert share.SharedKey().notice() == secrets.notice()


# -- servers' keys ----------------------------------------------------------------------------------


def test_a_servers_key_is_kept_in_the_file_without_a_keyring(no_keyring: None,
                                                             home: Path) -> None:
    keys.save_key("s1", "sk-secret")  # before: refused, and kept in memory for one run only
    assert keys.get_key("s1") == "sk-secret"
    assert json.loads(secrets_file(home).read_text("utf-8"))["secrets"] == {
        "server:s1": "sk-secret"}
    if POSIX:
        assert mode(secrets_file(home)) == 0o600
    keys.delete_key("s1")
    assert keys.get_key("s1") is None


def test_servers_keys_saved_in_the_keyring_before_are_still_read(
        memory_keyring: MemoryKeyring) -> None:
    memory_keyring.store[("hearth", "server:old")] = "sk-from-last-year"  # the entry keys.py wrote
    assert keys.get_key("old") == "sk-from-last-year"
    keys.save_key("s2", "sk-2")
    assert memory_keyring.store[("hearth", "server:s2")] == "sk-2"


def test_a_key_that_cannot_be_kept_says_it_lasts_this_run() -> None:
    for _ in use(LockedKeyring()):
        with pytest.raises(keys.KeyStoreError, match="used until Hearth closes"):
            keys.save_key("s1", "sk-secret")
        assert keys.get_key("s1") is None


# -- the fixed sharing port -------------------------------------------------------------------------


def test_sharing_has_a_fixed_default_port_that_no_other_local_model_app_takes() -> None:
    others = {1234: "LM Studio", 11434: "Ollama", 8080: "llama-server", 1337: "Jan"}
    port = st.AppSettings().runner_port
    assert port == share.DEFAULT_PORT and port not in others and st.valid_port(port) and port
    assert st.AppSettings(share_runner=True).launch_port == port
    assert st.AppSettings().launch_port == 0  # not sharing: nothing else connects
    assert st.AppSettings().with_changes(runner_port=9123).runner_port == 9123  # configurable


def test_a_file_with_the_old_any_free_port_gets_the_fixed_one(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"version": 1, "runner_port": 0, "share_runner": True}), "utf-8")
    s = st.load_settings(path)
    assert s.runner_port == share.DEFAULT_PORT and s.launch_port == share.DEFAULT_PORT
    path.write_text(json.dumps({"version": 1, "runner_port": 8765}), "utf-8")
    assert st.load_settings(path).runner_port == 8765  # a port chosen on purpose stays
    st.save_settings(st.AppSettings(runner_port=0), path)  # chosen now: any free port
    assert st.load_settings(path).runner_port == 0
