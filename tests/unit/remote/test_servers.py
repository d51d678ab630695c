"""Server records (app/remote/servers.py): the address as typed becomes a base URL, names are
checked, picker keys round-trip, and the file is read and written without ever losing it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.remote.servers import (
    RemoteModel,
    Server,
    ServerFormError,
    ServerList,
    check_name,
    load_servers,
    normalize_base_url,
    save_servers,
)


@pytest.mark.parametrize(("typed", "url"), [
    ("http://192.168.1.20:8080/v1", "http://192.168.1.20:8080/v1"),
    ("  http://192.168.1.20:8080/v1/  ", "http://192.168.1.20:8080/v1"),
    ("192.168.1.20:8080", "http://192.168.1.20:8080/v1"),  # no scheme, no path
    ("HTTPS://Api.Example.com", "https://api.example.com/v1"),
    ("https://example.com/openai/v1", "https://example.com/openai/v1"),
    ("http://[::1]:9000", "http://[::1]:9000/v1"),
    ("localhost:1234/api/v1", "http://localhost:1234/api/v1"),
])
def test_addresses_become_base_urls(typed: str, url: str) -> None:
    assert normalize_base_url(typed) == url


@pytest.mark.parametrize(("typed", "words"), [
    ("", "Enter the server's address"),
    ("ftp://host/v1", "http:// or https://"),
    ("http://host:99999/v1", "port"),
    ("http://user:secret@host/v1", "key field"),
    ("http://host/v1?x=1", "query"),
    ("http:///v1", "no server name"),
    ("http://my host/v1", "spaces"),
])
def test_bad_addresses_say_what_to_change(typed: str, words: str) -> None:
    with pytest.raises(ServerFormError, match=words):
        normalize_base_url(typed)


def test_names_are_trimmed_and_unique() -> None:
    others = [Server("a", "Office PC", "http://h/v1")]
    assert check_name("  My   laptop ", others) == "My laptop"
    with pytest.raises(ServerFormError, match="already called"):
        check_name("office pc", others)
    assert check_name("Office PC", others, own_id="a") == "Office PC"  # renaming itself
    with pytest.raises(ServerFormError, match="name"):
        check_name("   ", others)


def test_remote_model_keys_round_trip_and_paths_are_not_keys() -> None:
    m = RemoteModel("abc123", "org/model:Q4_K_M")  # ids may hold ':' and '/'
    assert RemoteModel.from_key(m.key) == m
    assert RemoteModel.from_key("/home/me/models/x.gguf") is None
    assert RemoteModel.from_key("C:\\models\\x.gguf") is None
    assert RemoteModel.from_key("remote:abc") is None
    assert RemoteModel.from_key(None) is None


def test_the_list_is_saved_and_read_back_without_keys(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    servers = ServerList(path=path)
    servers.put(Server("s1", "Office", "http://10.0.0.2:8080/v1", has_key=True,
                       models=("a", "b"), checked=12.5))
    servers.put(Server("s2", "Cloud", "https://api.example.com/v1"))
    servers.put(Server("s1", "Office PC", "http://10.0.0.2:8080/v1", has_key=True))  # replaced
    servers.save()
    text = path.read_text("utf-8")
    assert "key\":" not in text.replace("has_key", "")  # no key field at all
    again = ServerList.load(path)
    assert [s.name for s in again.servers] == ["Office PC", "Cloud"]
    assert again.get("s1") == Server("s1", "Office PC", "http://10.0.0.2:8080/v1", has_key=True)
    again.remove("s1")
    assert again.get("s1") is None and len(again.servers) == 1


def test_a_damaged_entry_is_skipped_and_a_damaged_file_is_kept_aside(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"version": 1, "servers": [
        {"id": "ok", "name": "Good", "base_url": "http://h:1/v1", "models": ["m", 3]},
        {"id": "bad", "name": "No address"},
        {"id": "x:y", "name": "Colon id", "base_url": "http://h/v1"},
    ]}), "utf-8")
    servers = load_servers(path)
    assert [(s.id, s.models) for s in servers] == [("ok", ("m",))]
    path.write_text("{not json", "utf-8")
    assert load_servers(path) == []
    kept = list(tmp_path.glob("servers.json.unreadable-*"))
    assert len(kept) == 1 and kept[0].read_text("utf-8") == "{not json"
    assert load_servers(tmp_path / "missing.json") == []
    save_servers([], path)
    assert load_servers(path) == []
