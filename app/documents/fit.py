"""What of the attached documents goes into the model's context (no Qt).

When everything fits the room left (counted with the tokenizer the caller gives: the runner's
where one runs), the documents go in whole. Otherwise the passages that best answer the
question (app/documents/index.py, BM25), as many as fit, in their documents' order; a question
that shares no word with any passage gets each document's beginning. Each passage is headed
by its source in brackets, so the model can cite it, and the note says what went in ("3
passages from report.pdf, pages 4, 9, 12").
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.documents.extract import Document
from app.documents.index import Key, PassageIndex
from app.documents.passages import Passage

log = logging.getLogger(__name__)

# Passages asked of the index at most; more than ever fit a context, so the budget decides.
MAX_CANDIDATES = 64
HEADER = ("The person attached these documents. Answer from them where they say, and cite the "
          "source in brackets, e.g. [report.pdf, page 4].")

# Tokens of each text, in one call (one request to the runner for many passages).
Count = Callable[[Sequence[str]], list[int]]
# (question, document ids, limit) -> the passages most like it by embedding, best first.
Similar = Callable[[str, list[int], int], list[Key]]
RRF_K = 60  # reciprocal rank fusion's constant (the usual one: ranks past a few dozen count little)


@dataclass(frozen=True)
class Used:
    """What of one document went in: whole, or passages (their places, in order)."""

    name: str
    whole: bool
    passages: int = 0
    places: tuple[str, ...] = ()  # "page 4", ... ("" places left out)

    def to_meta(self) -> dict[str, Any]:
        return {"name": self.name, "whole": self.whole, "passages": self.passages,
                "places": list(self.places)}


@dataclass(frozen=True)
class Fitted:
    text: str  # the block sent before the person's question ("" when nothing fits)
    used: tuple[Used, ...]
    tokens: int


def fit(documents: Sequence[tuple[int, Document]], question: str, budget: int, count: Count,
        index: PassageIndex, similar: Similar | None = None) -> Fitted:
    """The block for ``documents`` (each with its index id) within ``budget`` tokens.
    ``similar``: the passages most like the question by embedding (an embedding runner's),
    fused with BM25's ranking; None: BM25 alone."""
    whole = _block([(d.name, "", d.text) for _, d in documents])
    (tokens,) = count([whole])
    if tokens <= budget:
        return Fitted(whole, tuple(Used(d.name, True) for _, d in documents), tokens)
    ids = [doc_id for doc_id, _ in documents]
    candidates = index.passages_at(ranked(question, ids, index, similar))
    if not candidates:  # no word in common: each document's beginning
        candidates = _beginnings([index.all_passages(i) for i in ids])
    header, *sizes = count([_block([]), *(_entry(p.source, p.text) for p in candidates)])
    room = budget - header
    chosen: list[Passage] = []
    for passage, size in zip(candidates, sizes, strict=True):
        if size <= room:
            chosen.append(passage)
            room -= size
    names = [d.name for _, d in documents]
    chosen.sort(key=lambda p: (names.index(p.document) if p.document in names else len(names),
                               p.number))
    text = _block([(p.document, p.where, p.text) for p in chosen]) if chosen else ""
    used = tuple(_used(name, [p for p in chosen if p.document == name]) for name in names)
    return Fitted(text, tuple(u for u in used if u.passages), budget - room if chosen else 0)


def ranked(question: str, ids: list[int], index: PassageIndex, similar: Similar | None
           ) -> list[Key]:
    """BM25's best passages, fused by reciprocal rank with the embedding's where there is one
    (a passage both rank high comes first; one only the embedding finds, a paraphrase with no
    word in common, still comes)."""
    words = index.search_keys(question, ids, MAX_CANDIDATES)
    if similar is None:
        return words
    try:
        meaning = similar(question, ids, MAX_CANDIDATES)
    except Exception as exc:  # the embedding runner failed: BM25 still answers
        log.info("embedding search failed, BM25 alone: %s", exc)
        return words
    return fuse([words, meaning])[:MAX_CANDIDATES]


def fuse(rankings: Sequence[Sequence[Key]], k: int = RRF_K) -> list[Key]:
    """Reciprocal rank fusion: each ranking gives a passage 1 / (k + its rank)."""
    score: dict[Key, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking):
            score[key] = score.get(key, 0.0) + 1.0 / (k + rank + 1)
    return sorted(score, key=lambda key: -score[key])


def _used(name: str, chosen: list[Passage]) -> Used:
    places = tuple(dict.fromkeys(p.where for p in chosen if p.where))
    return Used(name, False, len(chosen), places)


def _beginnings(per_document: list[list[Passage]]) -> list[Passage]:
    """Passages taken in turns from each document's start."""
    out: list[Passage] = []
    for row in range(max((len(p) for p in per_document), default=0)):
        out += [p[row] for p in per_document if row < len(p)]
    return out


def _entry(source: str, text: str) -> str:
    return f"[{source}]\n{text}\n\n"


def _block(entries: list[tuple[str, str, str]]) -> str:
    body = "".join(_entry(f"{name}, {where}" if where else name, text)
                   for name, where, text in entries)
    return f"{HEADER}\n\n{body}".rstrip() + "\n"
