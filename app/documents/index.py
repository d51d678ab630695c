"""The passages of the documents people attach, in an SQLite full-text index (FTS5, ranked by
BM25), so the passages a question needs are found in milliseconds (no Qt).

One database of its own in Hearth's data folder (``documents.db``), beside the conversations:
an index of a large folder never slows the conversation store, and it can be deleted and built
again at any time (it holds nothing that is not in the files). A document is indexed once per
version of its file (size and modification time): attached again unchanged, it is not read
again. Connections are made per call, on the calling (worker) thread.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from app.documents.extract import Document
from app.documents.passages import Passage, passages

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS passages USING fts5(
    text, document UNINDEXED, name UNINDEXED, place UNINDEXED, number UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);
"""
# Words shorter than this, and these, carry no meaning a search can use.
MIN_WORD = 2
STOPWORDS = frozenset("""a an and are as at be by for from has have how i in is it its of on or
that the this to was were what when where which who why will with you your does do did can
""".split())
MAX_QUERY_WORDS = 64
Key = int  # a passage: its row in the index (what BM25 and the embedding runner both name)


def default_path() -> Path:
    from app.paths import data_dir

    return data_dir() / "documents.db"


class PassageIndex:
    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self._ready = False  # the schema and WAL mode are set (once per index, not per call)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=30)
        try:
            if not self._ready:
                db.execute("PRAGMA journal_mode=WAL")  # kept in the file
                db.executescript(SCHEMA)
                self._ready = True
            with db:
                yield db
        finally:
            db.close()

    def known(self, path: str) -> int | None:
        """The document's id when this version of its file is indexed already."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        with self._db() as db:
            row = db.execute("SELECT id FROM documents WHERE path = ? AND size = ? AND "
                             "mtime_ns = ?", (path, st.st_size, st.st_mtime_ns)).fetchone()
        return int(row[0]) if row else None

    def add(self, document: Document) -> int:
        """Index ``document`` (its earlier version's passages replaced); its id."""
        st = os.stat(document.path)
        cut = passages(document)
        with self._db() as db:
            old = db.execute("SELECT id FROM documents WHERE path = ?",
                             (document.path,)).fetchone()
            if old:
                db.execute("DELETE FROM passages WHERE document = ?", (old[0],))
                db.execute("DELETE FROM documents WHERE id = ?", (old[0],))
            cursor = db.execute(
                "INSERT INTO documents (path, name, size, mtime_ns) VALUES (?, ?, ?, ?)",
                (document.path, document.name, st.st_size, st.st_mtime_ns))
            doc_id = int(cursor.lastrowid or 0)
            db.executemany(
                "INSERT INTO passages (text, document, name, place, number) "
                "VALUES (?, ?, ?, ?, ?)",
                [(p.text, doc_id, p.document, p.where, p.number) for p in cut])
        return doc_id

    def search(self, question: str, documents: Sequence[int], limit: int) -> list[Passage]:
        """The passages of ``documents`` that best answer ``question`` (BM25), best first."""
        return self.passages_at(self.search_keys(question, documents, limit))

    def search_keys(self, question: str, documents: Sequence[int], limit: int) -> list[Key]:
        """Like :meth:`search`, as the passages' keys (their rows in the index)."""
        query = fts_query(question)
        if not query or not documents:
            return []
        marks = ",".join("?" * len(documents))
        with self._db() as db:
            rows = db.execute(
                f"SELECT rowid FROM passages WHERE passages MATCH ? AND "
                f"document IN ({marks}) ORDER BY bm25(passages) LIMIT ?",
                (query, *documents, limit)).fetchall()
        return [int(rowid) for (rowid,) in rows]

    def passages_at(self, keys: Sequence[Key]) -> list[Passage]:
        """The passages of ``keys``, in their order (a key not in the index is left out). By
        row: FTS5 filters its other columns by reading every row."""
        if not keys:
            return []
        marks = ",".join("?" * len(keys))
        with self._db() as db:
            found = {int(rowid): Passage(name, place, int(number), text)
                     for rowid, name, place, number, text in db.execute(
                         f"SELECT rowid, name, place, number, text FROM passages WHERE rowid "
                         f"IN ({marks})", tuple(keys))}
        return [found[k] for k in keys if k in found]

    def all_passages(self, document: int) -> list[Passage]:
        with self._db() as db:
            rows = db.execute("SELECT name, place, number, text FROM passages WHERE document = ? "
                              "ORDER BY CAST(number AS INTEGER)", (document,)).fetchall()
        return [Passage(name, place, int(number), text) for name, place, number, text in rows]


def fts_query(question: str) -> str:
    """The question's words as an FTS5 query that any of them matches (each quoted: a word is
    never read as FTS5 syntax)."""
    words: list[str] = []
    for word in re.findall(r"\w+", question.lower()):
        if len(word) >= MIN_WORD and word not in STOPWORDS and word not in words:
            words.append(word)
    return " OR ".join(f'"{w}"' for w in words[:MAX_QUERY_WORDS])
