"""The app settings file (app/settings.py): typed, versioned, migrated, never lost (no Qt)."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from app import settings as st
from app.remote.share import DEFAULT_PORT
from app.settings import AppSettings, SettingsFormatError, load_settings, save_settings


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "config" / "settings.json"


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), "utf-8")


def test_no_file_gives_the_defaults(path: Path) -> None:
    s = load_settings(path)
    assert s == AppSettings()
    assert (s.theme, s.runner_port, s.share_runner, s.first_run_done) == (
        "system", DEFAULT_PORT, False, False)
    assert not path.exists()  # reading writes nothing


def test_round_trip_with_window_bytes(path: Path) -> None:
    s = AppSettings(theme="dark", runner_port=8765, share_runner=True, first_run_done=True,
                    serve_models=True, runtime="cuda12", window_geometry=b"\x01\xd9\xd0\xcb\x00\x03\xff",
                    window_state=b"\x00state")
    save_settings(s, path)
    assert load_settings(path) == s
    data = json.loads(path.read_text("utf-8"))
    assert data["version"] == st.SCHEMA_VERSION
    assert isinstance(data["window_geometry"], str)  # base64 text, JSON-safe
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600  # the atomic write's private file
    assert [p.name for p in path.parent.iterdir()] == ["settings.json"]  # no temporary left


@pytest.mark.parametrize("content", [
    "{not json",  # broken
    "\xff\xfe garbage",  # not UTF-8 (written as UTF-8 text of odd characters, still not JSON)
    json.dumps(["a", "list"]),  # JSON, not an object
    json.dumps({"theme": "dark"}),  # no version: not ours
    json.dumps({"version": "two", "theme": "dark"}),
    json.dumps({"version": 0}),
    json.dumps({"version": True}),
])
def test_a_foreign_file_is_set_aside_with_a_warning(path: Path, content: str,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    write(path, content)
    with caplog.at_level(logging.WARNING, logger="app.settings"):
        assert load_settings(path) == AppSettings()
    assert not path.exists()
    aside = list(path.parent.glob("settings.json.unreadable-*"))
    assert len(aside) == 1 and aside[0].read_text("utf-8") == content  # nothing lost
    assert any(str(aside[0]) in r.getMessage() for r in caplog.records)


def test_invalid_bytes_are_set_aside_too(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xff\xfe\x00{")
    assert load_settings(path) == AppSettings()
    (aside,) = path.parent.glob("settings.json.unreadable-*")
    assert aside.read_bytes() == b"\xff\xfe\x00{"


def test_two_bad_files_in_a_row_are_both_kept(path: Path) -> None:
    write(path, "first")
    load_settings(path)
    write(path, "second")
    load_settings(path)
    kept = sorted(p.read_text("utf-8") for p in path.parent.glob("settings.json.unreadable-*"))
    assert kept == ["first", "second"]


def test_an_unreadable_file_is_left_alone(path: Path) -> None:
    path.mkdir(parents=True)  # a folder where the file should be: reading fails with OSError
    assert load_settings(path) == AppSettings()
    assert path.is_dir()  # not moved: it may be readable later


def test_one_bad_value_falls_back_alone(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write(path, {"version": 1, "theme": "purple", "runner_port": 80, "share_runner": "yes",
                 "serve_models": 1, "first_run_done": True, "runtime": ["not", "a", "name"],
                 "window_geometry": "%%% not base64",
                 "window_state": st.to_json(AppSettings(window_state=b"ok"))["window_state"]})
    with caplog.at_level(logging.WARNING, logger="app.settings"):
        s = load_settings(path)
    assert s == AppSettings(first_run_done=True, window_state=b"ok")
    warned = " ".join(r.getMessage() for r in caplog.records)
    for key in ("theme", "runner_port", "share_runner", "serve_models", "window_geometry",
                "runtime"):
        assert key in warned
    assert path.exists()  # the file itself is ours and kept


@pytest.mark.parametrize("port", [-1, 1, 1023, 65536, 3.5, True])
def test_ports_out_of_range_are_refused(path: Path, port: object) -> None:
    write(path, {"version": 1, "runner_port": port})
    assert load_settings(path).runner_port == DEFAULT_PORT
    with pytest.raises(ValueError):
        AppSettings().with_changes(runner_port=port)


def test_with_changes_checks_values() -> None:
    s = AppSettings().with_changes(theme="light", runner_port=1024, share_runner=True)
    assert (s.theme, s.runner_port, s.share_runner) == ("light", 1024, True)
    with pytest.raises(ValueError, match="theme"):
        s.with_changes(theme="purple")
    with pytest.raises(ValueError, match="share_runner"):
        s.with_changes(share_runner=1)
    with pytest.raises(ValueError, match="window_state"):
        s.with_changes(window_state="text")
    with pytest.raises(TypeError):
        s.with_changes(no_such_setting=1)


def test_the_fixed_port_is_used_only_while_sharing() -> None:
    assert AppSettings(runner_port=8080).launch_port == 0
    assert AppSettings(runner_port=8080, share_runner=True).launch_port == 8080
    assert AppSettings(share_runner=True).launch_port == DEFAULT_PORT
    assert AppSettings(runner_port=0, share_runner=True).launch_port == 0  # any free port


def test_the_runner_listens_on_loopback_unless_sharing_with_a_chosen_interface(
        path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert AppSettings().share_host == "127.0.0.1" and AppSettings().launch_host == "127.0.0.1"
    assert AppSettings(share_host="0.0.0.0").launch_host == "127.0.0.1"  # sharing is off
    on = AppSettings(share_runner=True, share_host="192.168.1.23")
    assert on.launch_host == "192.168.1.23"
    save_settings(on, path)
    assert load_settings(path) == on
    with pytest.raises(ValueError, match="IP address"):
        AppSettings().with_changes(share_host="my-laptop")
    # A file written before the choice existed reads as loopback; a bad value falls back alone.
    write(path, {"version": 1, "share_runner": True})
    assert load_settings(path).launch_host == "127.0.0.1"
    write(path, {"version": 1, "share_runner": True, "share_host": "evil; host"})
    with caplog.at_level("WARNING"):
        s = load_settings(path)
    assert s.share_runner and s.share_host == "127.0.0.1" and "share_host" in caplog.text


# -- migrations -----------------------------------------------------------------------------------


def test_every_older_version_has_a_migration_step() -> None:
    assert all(v in st.MIGRATIONS for v in range(1, st.SCHEMA_VERSION))


def test_migrations_run_step_by_step_from_version_1() -> None:
    def one_to_two(d: dict[str, Any]) -> dict[str, Any]:
        d = dict(d)
        d["theme"] = "dark" if d.pop("dark_mode", False) else "system"
        return d

    def two_to_three(d: dict[str, Any]) -> dict[str, Any]:
        assert d["version"] == 2  # each step sees the version it migrates from
        d = dict(d)
        d["runner_port"] = d.pop("port", 0)
        return d

    steps = {1: one_to_two, 2: two_to_three}
    out = st.migrate({"version": 1, "dark_mode": True, "port": 4242}, steps, target=3)
    assert out == {"version": 3, "theme": "dark", "runner_port": 4242}
    assert st.migrate({"version": 2, "theme": "light"}, steps, target=3)["runner_port"] == 0
    assert st.migrate({"version": 3, "x": 1}, steps, target=3) == {"version": 3, "x": 1}
    with pytest.raises(SettingsFormatError, match="no migration from version 1"):
        st.migrate({"version": 1}, {2: two_to_three}, target=3)


def test_a_migrated_file_is_read_with_the_current_checks() -> None:
    def one_to_two(d: dict[str, Any]) -> dict[str, Any]:
        d = dict(d)
        d["theme"] = "dark" if d.pop("dark_mode", False) else "system"
        return d

    s = st.from_json({"version": 1, "dark_mode": True, "runner_port": 5000,
                      "share_runner": True}, {1: one_to_two}, target=2)
    assert (s.theme, s.runner_port, s.share_runner) == ("dark", 5000, True)


def test_a_file_from_a_newer_hearth_is_read_and_kept_aside(path: Path) -> None:
    newer = {"version": st.SCHEMA_VERSION + 1, "theme": "dark", "first_run_done": True,
             "a_new_setting": {"deep": [1, 2]}}
    write(path, newer)
    s = load_settings(path)
    assert (s.theme, s.first_run_done) == ("dark", True)
    backup = path.with_name(f"settings.json.v{st.SCHEMA_VERSION + 1}.bak")
    assert json.loads(backup.read_text("utf-8")) == newer
    save_settings(s, path)  # this version's save drops the new key...
    assert "a_new_setting" not in json.loads(path.read_text("utf-8"))
    write(path, {**newer, "theme": "light"})
    load_settings(path)  # ...and a second read does not overwrite the first copy
    assert json.loads(backup.read_text("utf-8")) == newer


def test_settings_path_is_in_the_config_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEARTH_HOME", str(tmp_path))
    assert st.settings_path() == tmp_path / "config" / "settings.json"
    save_settings(AppSettings(theme="light"))
    assert load_settings().theme == "light"
