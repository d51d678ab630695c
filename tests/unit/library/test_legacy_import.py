"""The JSON files of earlier versions come into the database once, and are kept, not deleted."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from app.library.conversations import ConversationStore
from app.library.models import ModelLibrary
from app.storage.db import open_database
from app.storage.legacy import UNTITLED, LegacySources, short_title


def _old_conversation(folder: Path, conv_id: str, messages: list[dict[str, str]],
                      created: float = 1_600_000_000.0, model: str = "/m/old.gguf") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{conv_id}.json"
    path.write_text(json.dumps({"id": conv_id, "created": created, "model": model,
                                "messages": messages}), "utf-8")
    return path


@pytest.fixture
def sources(tmp_path: Path) -> LegacySources:
    return LegacySources(tmp_path / "data" / "conversations", tmp_path / "config" / "recent_models.json")


def test_conversations_are_imported_once_and_moved_aside(
        tmp_path: Path, sources: LegacySources, caplog: pytest.LogCaptureFixture) -> None:
    folder = sources.conversations_dir
    assert folder is not None
    long_question = "Explain, in plain words, how a transformer decides which word comes next " * 2
    _old_conversation(folder, "aaa", [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": long_question},
        {"role": "assistant", "content": "It scores", "note": "Stopped."},
    ])
    _old_conversation(folder, "bbb", [], model="")
    (folder / "broken.json").write_text("{not json", "utf-8")
    (folder / "list.json").write_text("[1, 2]", "utf-8")
    (folder / "ccc.tmp").write_text("half a file", "utf-8")

    db_path = tmp_path / "hearth.sqlite3"
    with caplog.at_level(logging.WARNING):
        db = open_database(db_path, legacy=sources)
    try:
        assert db.imported.conversations == 2
        assert sorted(p.name for p in db.imported.skipped) == ["broken.json", "list.json"]
        assert "broken.json" in caplog.text
        store = ConversationStore(db)
        by_model = {s.model: s for s in store.summaries()}
        first = store.get(by_model["/m/old.gguf"].id)
        assert first.title == short_title(long_question) and first.title.endswith("…")
        assert len(first.title) <= 60
        assert first.created == 1_600_000_000.0
        assert [(m.role, m.content, m.note) for m in first.messages] == [
            ("system", "Be brief.", ""), ("user", long_question, ""),
            ("assistant", "It scores", "Stopped.")]
        assert store.get(by_model[""].id).title == UNTITLED
    finally:
        db.close()

    imported = folder / "imported"
    assert sorted(p.name for p in imported.iterdir()) == ["aaa.json", "bbb.json"]
    # Damaged files and other files stay where they were.
    assert sorted(p.name for p in folder.iterdir() if p.is_file()) == [
        "broken.json", "ccc.tmp", "list.json"]

    db = open_database(db_path, legacy=sources)
    try:
        assert db.imported.conversations == 0
        assert len(ConversationStore(db).summaries()) == 2
    finally:
        db.close()


def test_a_file_imported_but_not_moved_is_not_imported_twice(
        tmp_path: Path, sources: LegacySources) -> None:
    folder = sources.conversations_dir
    assert folder is not None
    original = _old_conversation(folder, "aaa", [{"role": "user", "content": "hi"}])
    db_path = tmp_path / "hearth.sqlite3"
    open_database(db_path, legacy=sources).close()
    # As if the app had died between the commit and the move.
    shutil.copy2(folder / "imported" / "aaa.json", original)
    db = open_database(db_path, legacy=sources)
    try:
        assert db.imported.conversations == 0
        assert len(ConversationStore(db).summaries()) == 1
    finally:
        db.close()
    assert not original.exists() and (folder / "imported" / "aaa.json").exists()
    assert (folder / "imported" / "aaa-1.json").exists()  # the earlier copy is not overwritten


def test_the_recent_models_list_is_imported_once_newest_first(
        tmp_path: Path, sources: LegacySources) -> None:
    recent = sources.recent_file
    assert recent is not None
    recent.parent.mkdir(parents=True)
    real = tmp_path / "real.gguf"
    real.write_bytes(b"x" * 1234)
    recent.write_text(json.dumps([str(real), "/gone/older.gguf", 7, "/gone/oldest.gguf"]), "utf-8")
    db_path = tmp_path / "hearth.sqlite3"
    db = open_database(db_path, legacy=sources)
    try:
        assert db.imported.models == 3
        models = ModelLibrary(db).recent()
        assert [m.path for m in models] == [str(real), "/gone/older.gguf", "/gone/oldest.gguf"]
        assert models[0].name == "real.gguf" and models[0].size == 1234
        assert models[1].size is None
        ModelLibrary(db).remove("/gone/older.gguf")
    finally:
        db.close()
    assert recent.exists()  # the window still reads it until it moves to the library
    db = open_database(db_path, legacy=sources)
    try:
        assert db.imported.models == 0
        assert [m.path for m in ModelLibrary(db).recent()] == [str(real), "/gone/oldest.gguf"]
    finally:
        db.close()


def test_a_damaged_recent_list_is_skipped(tmp_path: Path, sources: LegacySources) -> None:
    assert sources.recent_file is not None
    sources.recent_file.parent.mkdir(parents=True)
    sources.recent_file.write_text("{oops", "utf-8")
    db = open_database(tmp_path / "hearth.sqlite3", legacy=sources)
    try:
        assert db.imported.models == 0 and ModelLibrary(db).recent() == []
    finally:
        db.close()


def test_nothing_to_import_is_fine(tmp_path: Path, sources: LegacySources) -> None:
    db = open_database(tmp_path / "hearth.sqlite3", legacy=sources)
    try:
        assert db.imported.conversations == db.imported.models == 0
    finally:
        db.close()


def test_only_the_default_database_imports_from_the_default_places(tmp_path: Path) -> None:
    db = open_database(tmp_path / "elsewhere.sqlite3")
    try:
        assert db.imported.conversations == 0
    finally:
        db.close()


@pytest.mark.parametrize(("text", "title"), [
    ("  Hello\n  there ", "Hello there"),
    ("x" * 60, "x" * 60),
    ("x" * 61, "x" * 59 + "…"),
    ("word " * 20, ("word " * 12).rstrip() + "…"),
    ("abcdefgh " * 10, ("abcdefgh " * 6).rstrip() + "…"),
])
def test_short_titles(text: str, title: str) -> None:
    assert short_title(text) == title
