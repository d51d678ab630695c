"""The download list survives crashes and bad files (app/hub/queue.py)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from app.hub.queue import DownloadQueue
from app.hub.types import HubFile

FILES = (HubFile("m-00001-of-00002.gguf", 10, "a" * 64), HubFile("m-00002-of-00002.gguf", 5, "b" * 64))


def test_add_persists_and_reloads(tmp_path: Path) -> None:
    path = tmp_path / "downloads.json"
    q = DownloadQueue(path)
    e = q.add("acme/m-GGUF", "c" * 40, "m.gguf", FILES, tmp_path / "models")
    assert e.state == "queued" and e.size == 15
    again = DownloadQueue(path).entries()
    assert again == [e]
    assert again[0].files == FILES
    assert again[0].folder == str((tmp_path / "models").resolve())


def test_add_deduplicates_and_requeues_failed(tmp_path: Path) -> None:
    q = DownloadQueue(tmp_path / "d.json")
    e = q.add("acme/m", "c" * 40, "m.gguf", FILES, tmp_path)
    assert q.add("acme/m", "c" * 40, "m.gguf", FILES, tmp_path).id == e.id
    q.set_state(e.id, "failed", "The disk is full.")
    back = q.add("acme/m", "c" * 40, "m.gguf", FILES, tmp_path)
    assert back.id == e.id and back.state == "queued" and back.error == ""
    other = q.add("acme/m", "d" * 40, "m.gguf", FILES, tmp_path)  # another revision: another entry
    assert other.id != e.id and len(q.entries()) == 2


def test_downloading_becomes_queued_after_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    q = DownloadQueue(path)
    a = q.add("acme/a", "1" * 40, "a.gguf", FILES[:1], tmp_path)
    b = q.add("acme/b", "2" * 40, "b.gguf", FILES[:1], tmp_path)
    c = q.add("acme/c", "3" * 40, "c.gguf", FILES[:1], tmp_path)
    q.set_state(a.id, "done")
    q.set_state(b.id, "downloading")
    q.set_state(c.id, "paused", "Paused by you.")
    # The process dies here: nothing else is written.
    states = {e.id: e.state for e in DownloadQueue(path).entries()}
    assert states == {a.id: "done", b.id: "queued", c.id: "paused"}
    assert DownloadQueue(path).next_queued() is not None
    assert DownloadQueue(path).next_queued().id == b.id  # type: ignore[union-attr]


def test_next_queued_is_oldest_and_remove(tmp_path: Path) -> None:
    q = DownloadQueue(tmp_path / "d.json")
    assert q.next_queued() is None
    a = q.add("acme/a", "1" * 40, "a.gguf", FILES[:1], tmp_path)
    b = q.add("acme/b", "2" * 40, "b.gguf", FILES[:1], tmp_path)
    assert q.next_queued() == a
    q.remove(a.id)
    assert q.next_queued() == b
    assert [e.id for e in DownloadQueue(tmp_path / "d.json").entries()] == [b.id]
    with pytest.raises(KeyError):
        q.set_state(a.id, "done")
    with pytest.raises(ValueError):
        q.set_state(b.id, "exploded")


@pytest.mark.parametrize("content", [
    "{not json",
    json.dumps({"format": "something-else", "entries": []}),
    json.dumps({"format": "hearth-downloads", "version": 1, "entries": [{"id": "x"}]}),
    json.dumps([1, 2, 3]),
])
def test_corrupt_file_is_set_aside(tmp_path: Path, content: str, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "downloads.json"
    path.write_text(content, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="app.hub.queue"):
        q = DownloadQueue(path)
    assert q.entries() == []
    assert (tmp_path / "downloads.json.bad").read_text(encoding="utf-8") == content
    assert "moved to" in caplog.text
    q.add("acme/a", "1" * 40, "a.gguf", FILES[:1], tmp_path)  # a fresh list works
    assert len(DownloadQueue(path).entries()) == 1
