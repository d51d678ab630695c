"""A document's text, in sections that say where they come from (no Qt).

Text, Markdown and code files are read as UTF-8 (one section); HTML without its scripts and
styles; DOCX from its XML (paragraphs, one section); PDF page by page with pypdf (one section a
page, so a passage can say "page 4"). OCR is out of scope: a PDF whose pages carry no text layer
(a scan) is refused with a sentence that says so.

Bad input gets a sentence and changes nothing on disk: a file too large to read whole, a binary
file under a text name, an encrypted or damaged PDF, a DOCX that is no zip. ``token`` is polled
between pages, so a long PDF stops when the person cancels.
"""

from __future__ import annotations

import html.parser
import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from app.documents.kinds import HTML_SUFFIXES, SUFFIXES, unreadable
from app.i18n import T_, TextError
from app.jobs import CancelToken

# Bigger than any document a chat takes in whole or in passages; a 2 GB "text" file is refused
# before it is read (it would hold the memory of the window's process).
MAX_FILE_BYTES = 200 * 2**20
# A DOCX's document.xml is compressed: read at most this much of it (a zip bomb stops here).
MAX_XML_BYTES = 64 * 2**20
# Share of a text file's first 64 KiB that may be control characters before it is called binary.
MAX_CONTROL_SHARE = 0.01

class DocumentError(TextError):
    """A document that cannot be read; ``str()`` says which and what to do."""


@dataclass(frozen=True)
class Section:
    """A piece of a document and where it is: "page 4", or "" for a file read whole."""

    where: str
    text: str


@dataclass(frozen=True)
class Document:
    path: str
    name: str  # the file's name, as passages cite it
    sections: tuple[Section, ...]

    @property
    def text(self) -> str:
        return "\n\n".join(s.text for s in self.sections)


def extract(path: str | os.PathLike[str], token: CancelToken | None = None) -> Document:
    """The document at ``path`` (DocumentError when it cannot be read)."""
    file = Path(path)
    name = file.name
    suffix = file.suffix.lower()
    if suffix not in SUFFIXES:
        raise DocumentError(unreadable(name))
    try:
        size = file.stat().st_size
    except OSError as exc:
        raise DocumentError(T_("{name} cannot be read: {reason}.", name=name,
                               reason=exc.strerror or exc)) from exc
    if size > MAX_FILE_BYTES:
        raise DocumentError(T_("{name} is {size} MB; Hearth takes documents of up to {limit} MB. "
                               "Split it, or attach the part you need.", name=name,
                               size=size // 2**20, limit=MAX_FILE_BYTES // 2**20))
    try:
        if suffix == ".pdf":
            sections = _pdf(file, token)
        elif suffix == ".docx":
            sections = (Section("", _docx(file)),)
        else:
            text = _text(file)
            sections = (Section("", _html_text(text) if suffix in HTML_SUFFIXES else text),)
    except OSError as exc:
        raise DocumentError(T_("{name} cannot be read: {reason}.", name=name,
                               reason=exc.strerror or exc)) from exc
    kept = tuple(s for s in sections if s.text.strip())
    if not kept:
        raise DocumentError(T_("{name} has no text in it.", name=name))
    return Document(str(file), name, kept)


def _text(file: Path) -> str:
    data = file.read_bytes()
    head = data[:65536]
    if b"\0" in head or _control_share(head) > MAX_CONTROL_SHARE:
        raise DocumentError(T_("{name} is not a text file (its bytes are binary), though its name "
                               "says it is.", name=file.name))
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")  # older editors' Western text


def _control_share(data: bytes) -> float:
    if not data:
        return 0.0
    controls = sum(1 for b in data if b < 32 and b not in (9, 10, 12, 13))
    return controls / len(data)


class _HtmlText(html.parser.HTMLParser):
    """The visible text of an HTML page: no script, style or head; blocks as paragraphs."""

    SKIP = frozenset({"script", "style", "head", "noscript", "template", "svg"})
    BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6",
                        "section", "article", "pre", "blockquote", "table", "ul", "ol"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skipping += 1
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self._skipping = max(0, self._skipping - 1)
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def _html_text(source: str) -> str:
    parser = _HtmlText()
    parser.feed(source)
    parser.close()
    return _tidy("".join(parser.parts))


def _tidy(text: str) -> str:
    lines = (re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _docx(file: Path) -> str:
    try:
        with zipfile.ZipFile(file) as archive:
            info = archive.getinfo("word/document.xml")
            if info.file_size > MAX_XML_BYTES:
                raise DocumentError(T_("{name} holds more text than Hearth reads from one "
                                       "document.", name=file.name))
            with archive.open(info) as f:
                xml = f.read(MAX_XML_BYTES + 1)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise DocumentError(T_("{name} is not a readable Word document (DOCX): it may be "
                               "damaged, or an older .doc renamed.", name=file.name)) from exc
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as exc:
        raise DocumentError(T_("{name} is not a readable Word document (DOCX): it may be "
                               "damaged, or an older .doc renamed.", name=file.name)) from exc
    paragraphs = []
    for p in root.iter(f"{_W}p"):
        runs = [t.text or "" for t in p.iter(f"{_W}t")]
        paragraphs.append("".join(runs))
    return _tidy("\n".join(paragraphs))


def _pdf(file: Path, token: CancelToken | None) -> tuple[Section, ...]:
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # a damaged file's every warning
    try:
        reader = PdfReader(file)
        if reader.is_encrypted:
            raise DocumentError(T_("{name} is a password-protected PDF: open it in a PDF reader, "
                                   "save a copy without the password, and attach that.",
                                   name=file.name))
        pages = reader.pages
        sections = []
        for number, page in enumerate(pages, start=1):
            if token is not None:
                token.check()
            sections.append(Section(f"page {number}", _tidy(page.extract_text() or "")))
    except DocumentError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, RecursionError,
            AssertionError) as exc:  # pypdf's ways of failing on a damaged file
        raise DocumentError(T_("{name} is a damaged PDF that cannot be read ({reason}).",
                               name=file.name, reason=type(exc).__name__)) from exc
    if sections and not any(s.text for s in sections):
        raise DocumentError(T_("{name} has no text layer (its {count} pages are images, as a "
                               "scan's are). Hearth does not read text in images (no OCR): use "
                               "a PDF with text, or a text file.", name=file.name,
                               count=len(sections)))
    return tuple(sections)
