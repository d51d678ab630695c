"""The model library and per-model settings."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from app.library.model_settings import ModelSettingsStore
from app.library.models import ModelLibrary
from app.storage.db import Database
from tests.unit.library.conftest import Clock


def test_models_newest_first_with_name_and_size(db: Database, clock: Clock, tmp_path: Path) -> None:
    lib = ModelLibrary(db, clock)
    a = tmp_path / "a.Q4_K_M.gguf"
    a.write_bytes(b"x" * 100)
    b = tmp_path / "b.gguf"
    b.write_bytes(b"y" * 7)
    added = lib.add_or_touch(a)
    assert (added.path, added.name, added.size) == (str(a), "a.Q4_K_M.gguf", 100)
    lib.add_or_touch(str(b))
    assert [m.name for m in lib.recent()] == ["b.gguf", "a.Q4_K_M.gguf"]
    a.write_bytes(b"x" * 50)
    lib.add_or_touch(str(a))
    assert [(m.name, m.size) for m in lib.recent()] == [("a.Q4_K_M.gguf", 50), ("b.gguf", 7)]
    assert [m.name for m in lib.recent(1)] == ["a.Q4_K_M.gguf"]
    lib.remove(a)
    lib.remove(a)  # unknown: fine
    assert [m.name for m in lib.recent()] == ["b.gguf"]
    assert b.exists()  # forgetting a model never deletes the file


def test_a_missing_file_keeps_its_last_known_size(db: Database, clock: Clock, tmp_path: Path) -> None:
    lib = ModelLibrary(db, clock)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"z" * 10)
    lib.add_or_touch(model)
    model.unlink()
    touched = lib.add_or_touch(model)
    assert touched.size is None
    assert lib.recent()[0].size == 10
    assert ModelLibrary(db, clock).add_or_touch("/never/there.gguf").size is None


def test_settings_round_trip_per_key(db: Database) -> None:
    settings = ModelSettingsStore(db)
    assert settings.get("repo/model:Q4_K_M") == {}
    settings.put("repo/model:Q4_K_M", {"n_ctx": 8192, "flash_attn": True, "name": "ünïcode"})
    settings.put("other", {"n_ctx": 4096})
    assert settings.get("repo/model:Q4_K_M") == {"n_ctx": 8192, "flash_attn": True, "name": "ünïcode"}
    settings.put("repo/model:Q4_K_M", {"n_ctx": 2048})
    assert settings.get("repo/model:Q4_K_M") == {"n_ctx": 2048}
    settings.delete("repo/model:Q4_K_M")
    assert settings.get("repo/model:Q4_K_M") == {}
    assert settings.get("other") == {"n_ctx": 4096}


def test_settings_that_json_cannot_hold_are_a_bug_and_write_nothing(db: Database) -> None:
    settings = ModelSettingsStore(db)
    settings.put("k", {"a": 1})
    with pytest.raises(TypeError):
        settings.put("k", {"a": object()})
    assert settings.get("k") == {"a": 1}
    settings.put("k", {"inf": math.inf})
    assert settings.get("k") == {"inf": math.inf}


def test_damaged_settings_read_as_none(db: Database) -> None:
    db.execute("INSERT INTO model_settings (key, settings, updated) VALUES ('bad', '{oops', 1),"
               " ('list', '[1]', 1)", action="test")
    settings = ModelSettingsStore(db)
    assert settings.get("bad") == {} and settings.get("list") == {}
