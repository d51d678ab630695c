"""A document cut into passages of about the same length, each with its source ("report.pdf,
page 4"), so a reply can cite where its facts come from (no Qt).

Cuts fall between paragraphs where they can, else between lines, else between words: a passage
is something a person can read on its own. Pages are never joined: a passage is on one page.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.documents.extract import Document

# Characters per passage: about 300 tokens of English, a few passages per question fit even a
# 4096-token context beside the conversation.
PASSAGE_CHARS = 1200


@dataclass(frozen=True)
class Passage:
    document: str  # the file's name
    where: str  # "page 4", or "" for a file read whole
    number: int  # its place in the document, from 0
    text: str

    @property
    def source(self) -> str:
        return f"{self.document}, {self.where}" if self.where else self.document


def passages(document: Document, size: int = PASSAGE_CHARS) -> list[Passage]:
    out: list[Passage] = []
    for section in document.sections:
        for piece in _cut(section.text, size):
            out.append(Passage(document.name, section.where, len(out), piece))
    return out


def _cut(text: str, size: int) -> list[str]:
    return [p for p in _pack(_blocks(text, size), size, "\n\n") if p.strip()]


def _pack(units: list[str], size: int, joint: str) -> list[str]:
    """``units`` joined by ``joint`` into pieces of at most ``size`` (a unit longer than that
    stays whole, alone)."""
    pieces: list[str] = []
    current = ""
    for unit in units:
        if current and len(current) + len(joint) + len(unit) > size:
            pieces.append(current)
            current = unit
        else:
            current = f"{current}{joint}{unit}" if current else unit
    if current:
        pieces.append(current)
    return pieces


def _blocks(text: str, size: int) -> list[str]:
    """Paragraphs, each no longer than ``size`` (a long one cut at lines, then at words)."""
    out: list[str] = []
    for paragraph in (p.strip() for p in text.split("\n\n")):
        if not paragraph:
            continue
        out += [paragraph] if len(paragraph) <= size else _pack(_units(paragraph, size), size,
                                                                "\n")
    return out


def _units(paragraph: str, size: int) -> list[str]:
    units: list[str] = []
    for line in paragraph.split("\n"):
        while len(line) > size:
            cut = line.rfind(" ", 0, size)
            cut = cut if cut > size // 2 else size
            units.append(line[:cut].rstrip())
            line = line[cut:].lstrip()
        if line:
            units.append(line)
    return units
