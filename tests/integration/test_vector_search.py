"""Search by meaning (issue 30): an embedding runner searches Hearth's passage index
(runner/vectors.py), started and ended by the app's EmbeddingRunner, fused with BM25 in fit().

No real embedding model can be had here: a generated model serves as one, so what is shown is
the plumbing (a passage's own text finds it, vectors are kept per version of the file, the
window's process never computes one), not the quality of real embeddings."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from app.documents.extract import Document, Section
from app.documents.fit import fit
from app.documents.index import PassageIndex
from app.runner_client.embedding import EmbeddingRunner, is_embedding_model
from tests.fixtures.models import TINY, model_path
from tests.integration.conftest import running

WORDS = ("harbour ferry pier coins fishing boat office morning evening lighthouse keeper heron "
         "dawn tide rope anchor sail mast deck cargo").split()


def _row(index: PassageIndex, text: str) -> int:
    db = sqlite3.connect(index.path)
    try:
        return int(db.execute("SELECT rowid FROM passages WHERE text = ?", (text,)).fetchone()[0])
    finally:
        db.close()


def _document(folder: Path, name: str, paragraphs: list[str]) -> Document:
    path = folder / name
    path.write_text("\n\n".join(paragraphs))
    return Document(str(path), name, tuple(Section(f"part {i + 1}", p)
                                           for i, p in enumerate(paragraphs)))


@pytest.fixture
def index(tmp_path: Path) -> tuple[PassageIndex, list[int], list[str], list[Document]]:
    idx = PassageIndex(tmp_path / "documents.db")
    texts = [" ".join(WORDS[(i * 3 + j) % len(WORDS)] for j in range(12)) for i in range(6)]
    docs = [_document(tmp_path, "a.txt", texts[:3]), _document(tmp_path, "b.txt", texts[3:])]
    return idx, [idx.add(d) for d in docs], texts, docs


def test_the_runner_finds_a_passage_by_its_own_text_and_keeps_the_vectors(index: Any) -> None:
    idx, ids, texts, _docs = index
    with running("--embedding", "--vectors-db", str(idx.path), model=model_path(TINY)) as r:
        with r.client() as http:
            found = http.post("/runner/vectors/search", json={
                "query": texts[4], "documents": ids, "limit": 3}).json()["results"]
            assert found[0][0] == _row(idx, texts[4]) and found[0][1] > 0.99, found
            assert len(found) == 3
            db = sqlite3.connect(idx.path)
            kept = db.execute("SELECT document, version FROM document_vectors").fetchall()
            assert sorted(d for d, _ in kept) == sorted(ids)
            # A changed file is a new version: its vectors are made again.
            doc_b = Path(db.execute("SELECT path FROM documents WHERE id = ?",
                                    (ids[1],)).fetchone()[0])
            db.close()
            new = _document(doc_b.parent, "b.txt", ["anchor rope sail", "tide dawn heron"])
            os.utime(doc_b, ns=(time.time_ns(), time.time_ns() + 10**9))
            new_id = idx.add(new)
            again = http.post("/runner/vectors/search", json={
                "query": "tide dawn heron", "documents": [new_id], "limit": 1}).json()
            assert again["results"][0][0] == _row(idx, "tide dawn heron")


def test_without_vectors_db_the_search_is_refused(index: Any) -> None:
    with running("--embedding", model=model_path(TINY)) as r, r.client() as http:
        resp = http.post("/runner/vectors/search", json={"query": "x", "documents": [1]})
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "vectors_not_enabled"


def test_the_app_starts_an_embedding_runner_and_fit_fuses_its_ranking(index: Any) -> None:
    idx, ids, texts, documents = index
    runner = EmbeddingRunner(str(model_path(TINY)), str(idx.path))
    try:
        keys = runner.similar(texts[1], ids, 2)
        assert keys[0] == _row(idx, texts[1])
        process = runner._process
        assert process is not None and process.poll() is None
        docs = list(zip(ids, documents, strict=True))
        # A question that shares no word with any passage: BM25 alone finds nothing, and
        # each document's beginning would go in; the embedding's ranking decides instead.
        fitted = fit(docs, "zzz qqq", 40, lambda texts: [len(t.split()) for t in texts], idx,
                     lambda q, d, k: runner.similar(texts[5], d, k))
        assert "[b.txt, part 3]" in fitted.text and texts[5] in fitted.text
        words_only = fit(docs, "zzz qqq", 40, lambda texts: [len(t.split()) for t in texts], idx)
        assert "[a.txt, part 1]" in words_only.text  # BM25 alone: the first beginning
    finally:
        runner.close()
    assert process.poll() is not None  # it ended with the window's close


def test_embedding_models_are_told_from_chat_models() -> None:
    assert is_embedding_model("nomic-embed-text-v1.5.Q8_0.gguf", "nomic-bert")
    assert is_embedding_model("bge-small-en-v1.5-f16.gguf", "bert")
    assert is_embedding_model("Qwen3-Embedding-0.6B-Q8_0.gguf", "qwen3")
    assert not is_embedding_model("Qwen3-8B-Q4_K_M.gguf", "qwen3")
