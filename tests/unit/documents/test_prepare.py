"""app/services/documents.py's job, without Qt: folders read file by file (odd files skipped,
a huge folder refused), a file read once per version, a sentence when nothing is readable."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from app.chat.transcript import DOCUMENTS, DOCUMENTS_USED
from app.documents.extract import DocumentError
from app.documents.index import PassageIndex
from app.jobs import CancelToken
from app.services import documents as service


def _words(texts: Sequence[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def _prepare(paths: list[Path], index: PassageIndex) -> dict[str, object]:
    return service._prepare([str(p) for p in paths], "Where is the key?", ["Where is the key?"],
                            _words, 5000, index, CancelToken())


def test_a_folder_gives_its_readable_files_and_skips_the_rest(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("The key is under the mat.")
    (folder / "sub" / "c.txt").write_text("The door is blue.")
    (folder / "noise.txt").write_bytes(b"\x00\x01binary" * 50)  # skipped, not fatal
    (folder / ".hidden.txt").write_text("secret")
    (folder / "photo.png").write_bytes(b"\x89PNG")
    meta = _prepare([folder], PassageIndex(tmp_path / "i.db"))
    used = meta[DOCUMENTS_USED]
    assert isinstance(used, list)
    assert [u["name"] for u in used] == ["a.md", "c.txt"] and all(u["whole"] for u in used)
    block = meta[DOCUMENTS]
    assert isinstance(block, str) and "under the mat" in block and "secret" not in block


def test_a_file_is_read_once_per_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    note = tmp_path / "a.md"
    note.write_text("The key is under the mat.")
    index = PassageIndex(tmp_path / "i.db")
    _prepare([note], index)

    def not_again(*_a: object) -> None:
        raise AssertionError("read again though unchanged")

    with monkeypatch.context() as m:
        m.setattr("app.documents.extract.extract", not_again)
        again = _prepare([note], index)
    assert "under the mat" in str(again[DOCUMENTS])
    note.write_text("The key is in the drawer now.")  # a new version: read again
    assert "drawer" in str(_prepare([note], index)[DOCUMENTS])


def test_a_huge_folder_and_a_folder_of_nothing_readable_get_sentences(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(5):
        (folder / f"n{i}.txt").write_text("x")
    monkeypatch.setattr(service, "MAX_FOLDER_FILES", 3)
    with pytest.raises(DocumentError, match="more than 3 documents"):
        _prepare([folder], PassageIndex(tmp_path / "i.db"))
    empty = tmp_path / "scans"
    empty.mkdir()
    (empty / "a.txt").write_bytes(b"\x00" * 10)
    with pytest.raises(DocumentError, match="None of the attached files"):
        _prepare([empty], PassageIndex(tmp_path / "i.db"))


def test_the_embedding_ranking_is_fused_and_a_failing_one_leaves_bm25(tmp_path: Path) -> None:
    """A passage with no word of the question comes in when the embedding ranks it first; an
    embedding runner that fails costs nothing but its ranking."""
    from app.documents.fit import fuse

    note = tmp_path / "harbour.md"
    paragraphs = [f"Paragraph {i}: " + " ".join(["anchor rope sail mast deck"] * 40)
                  for i in range(8)]
    paragraphs[6] = "The vessel's mooring charge is twelve coins. " + paragraphs[6]
    note.write_text("\n\n".join(paragraphs))
    index = PassageIndex(tmp_path / "i.db")
    asked: list[tuple[str, list[int]]] = []

    def similar(question: str, ids: list[int], limit: int) -> list[int]:
        asked.append((question, ids))
        return index.search_keys("mooring", ids, 1)  # as if it ranked by meaning

    def run(similar_: object) -> str:
        meta = service._prepare([str(note)], "What does a boat pay?", ["What does a boat pay?"],
                                _words, 400, index, CancelToken(), similar_)  # type: ignore[arg-type]
        return str(meta[DOCUMENTS])

    assert "mooring charge" in run(similar) and asked and asked[0][0] == "What does a boat pay?"

    def broken(*_a: object) -> list[int]:
        raise OSError("the embedding runner is gone")

    assert "mooring charge" not in run(broken)  # BM25 alone: no word in common, beginnings
    assert fuse([[11, 12], [12, 13]])[0] == 12  # both rank it: first


def test_reading_reports_its_progress_file_by_file(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (folder / name).write_text(f"The key is in {name}.")
    seen: list[tuple[int, int]] = []
    service._prepare([str(folder)], "Where is the key?", ["Where is the key?"], _words, 5000,
                     PassageIndex(tmp_path / "i.db"), CancelToken(),
                     progress=lambda done, total: seen.append((done, total)))
    assert seen == [(0, 3), (1, 3), (2, 3)]
