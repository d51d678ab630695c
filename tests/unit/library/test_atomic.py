"""Atomic file writes: the whole new file or the old one, and no temporary file left behind."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from app.storage.atomic import write_atomic, write_json_atomic


def test_writes_and_replaces_whole_files(tmp_path: Path) -> None:
    target = tmp_path / "cache.json"
    write_atomic(target, "première")
    assert target.read_text("utf-8") == "première"
    write_atomic(target, b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01"
    assert os.listdir(tmp_path) == ["cache.json"]


def test_creates_the_folder(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "x.txt"
    write_atomic(target, "x")
    assert target.read_text() == "x"


def test_json_round_trips_with_unicode_kept(tmp_path: Path) -> None:
    target = tmp_path / "x.json"
    write_json_atomic(target, {"name": "モデル", "n": [1, 2.5]})
    assert json.loads(target.read_text("utf-8")) == {"name": "モデル", "n": [1, 2.5]}
    assert "モデル" in target.read_text("utf-8")


def test_a_failed_replace_keeps_the_old_file_and_removes_the_temporary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "x.json"
    write_atomic(target, "old")

    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space"):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["x.json"]


def test_a_failed_write_removes_the_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", no_sync)
    with pytest.raises(OSError, match="Input/output"):
        write_atomic(tmp_path / "x.json", "new")
    assert os.listdir(tmp_path) == []


def test_unserializable_json_touches_nothing(tmp_path: Path) -> None:
    target = tmp_path / "x.json"
    write_json_atomic(target, [1])
    with pytest.raises(TypeError):
        write_json_atomic(target, {"x": object()})
    assert json.loads(target.read_text()) == [1]
    assert os.listdir(tmp_path) == ["x.json"]


def test_concurrent_writers_never_share_a_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "x.json"
    payloads = [json.dumps({"writer": i, "pad": "x" * 10_000}) for i in range(8)]
    errors: list[BaseException] = []

    def write(text: str) -> None:
        try:
            for _ in range(20):
                write_atomic(target, text)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(p,)) for p in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert target.read_text() in payloads
    assert os.listdir(tmp_path) == ["x.json"]
