"""Embedding similarity over Hearth's passage index, in an embedding runner (issue 30).

The window's process may not use numpy, and its SQLite cannot load extensions, so the vectors
live here: a runner loaded with ``--embedding --vectors-db documents.db`` embeds each document's
passages once per version of its file (the index's size and modification time) and keeps them in
that database (``document_vectors``, one float32 blob per document and model), and in memory while
it runs; a search is one matrix product. Only this computer may ask (the database path is the
runner's own flag, never a request's), and a passage is named by its row in the index, as the
window's index names it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS document_vectors (
    document INTEGER NOT NULL,
    model TEXT NOT NULL,
    version TEXT NOT NULL,
    dim INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (document, model)
);
"""
MAX_DOCUMENTS = 2000  # per search, as many as a conversation may attach from one folder

# Texts in, unit-length float32 vectors out (the scheduler's embedding, in batches).
Embed = Callable[[list[str]], Any]


class VectorIndex:
    def __init__(self, path: str, model: str) -> None:
        self.path = path
        self.model = model  # the embedding model's file name and size: vectors of another differ
        self._cache: dict[int, tuple[str, list[int], Any]] = {}  # document -> version, rows, vectors
        self._lock = threading.Lock()  # one search at a time holds the connection and the cache
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        """The one connection (searches take turns under the lock), made with the table."""
        if self._conn is None:
            self._conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            self._conn.executescript(SCHEMA)
        return self._conn

    def search(self, query: Any, documents: Sequence[int], limit: int, embed: Embed
               ) -> list[tuple[int, float]]:
        """The ``limit`` passages of ``documents`` most like ``query`` (a unit vector): (row,
        cosine), best first. Documents not embedded yet (or changed since) are embedded first."""
        import numpy as np

        wanted = list(dict.fromkeys(documents))[:MAX_DOCUMENTS]
        with self._lock:
            db = self._db()
            marks = ",".join("?" * len(wanted))
            versions = {int(doc): f"{size}:{mtime}" for doc, size, mtime in db.execute(
                f"SELECT id, size, mtime_ns FROM documents WHERE id IN ({marks})", wanted)}
            matrices = [self._vectors(db, doc, versions[doc], embed) for doc in wanted
                        if doc in versions]
        rows = [r for rowids, _ in matrices for r in rowids]
        blocks = [m for rowids, m in matrices if len(rowids)]
        if not blocks:
            return []
        scores = np.concatenate(blocks) @ np.asarray(query, dtype=np.float32)
        top = np.argsort(-scores)[:limit]
        return [(rows[i], float(scores[i])) for i in top]

    def _vectors(self, db: sqlite3.Connection, doc: int, version: str, embed: Embed
                 ) -> tuple[list[int], Any]:
        """A document's passages (rows) and their vectors, from memory, the database or the
        model, in that order of preference."""
        import numpy as np

        cached = self._cache.get(doc)
        if cached is not None and cached[0] == version:
            return cached[1], cached[2]
        # FTS5 reads every row to filter by document: once per version, then kept.
        rows = db.execute("SELECT rowid, text FROM passages WHERE document = ? ORDER BY rowid",
                          (doc,)).fetchall()
        rowids = [int(r) for r, _ in rows]
        stored = db.execute("SELECT version, dim, data FROM document_vectors WHERE "
                            "document = ? AND model = ?", (doc, self.model)).fetchone()
        if stored is not None and stored[0] == version:
            matrix = np.frombuffer(stored[2], dtype="<f4").reshape(-1, int(stored[1]))
        else:
            matrix = np.asarray(embed([text for _, text in rows]), dtype=np.float32)
            with db:
                db.execute("INSERT OR REPLACE INTO document_vectors VALUES (?, ?, ?, ?, ?)",
                           (doc, self.model, version, int(matrix.shape[1]),
                            matrix.astype("<f4").tobytes()))
        if matrix.shape[0] != len(rowids):
            return [], None  # the passages changed under us; the next search embeds again
        self._cache[doc] = (version, rowids, matrix)
        return rowids, matrix


def embedder(model: Any, scheduler: Any, batch: int = 64) -> Embed:
    """``texts`` → unit vectors through the scheduler (blocking: call it off the event loop).
    A passage longer than the embedding context is cut to it (its beginning is what it is
    about, and a refusal would lose the whole document)."""
    def embed(texts: list[str]) -> Any:
        import numpy as np

        from runner.engine import EmbedJob, EngineError

        most = scheduler.max_embed_tokens
        out: list[Any] = []
        for start in range(0, len(texts), batch):
            inputs = [model.tokenize(t or " ", special=False)[:most] or [0]
                      for t in texts[start:start + batch]]
            done = threading.Event()
            result: list[Any] = []

            def ok(vectors: list[Any], result: list[Any] = result, done: threading.Event = done
                   ) -> None:
                result.append(vectors)
                done.set()

            def failed(exc: Exception, result: list[Any] = result,
                       done: threading.Event = done) -> None:
                result.append(exc)
                done.set()

            scheduler.submit_embed(EmbedJob(inputs, on_done=ok, on_error=failed))
            done.wait()
            if isinstance(result[0], Exception):
                raise EngineError(f"Embedding failed: {result[0]}")
            out += result[0]
        return np.stack(out) if out else np.zeros((0, model.n_embd), dtype=np.float32)

    return embed
