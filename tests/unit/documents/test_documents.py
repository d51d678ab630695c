"""Documents in the chat, the Qt-free part (issue 30): each kind's text and where it is, the
bad inputs that get a sentence, passages with their sources, the BM25 index, and what fits."""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from app.documents.extract import MAX_FILE_BYTES, Document, DocumentError, Section, extract
from app.documents.fit import HEADER, fit
from app.documents.index import PassageIndex, fts_query
from app.documents.passages import passages
from app.jobs import CancelledError, CancelToken
from tests.fixtures.pdf import write_pdf


def _docx(path: Path, paragraphs: list[str]) -> Path:
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = "".join(f"<w:p><w:r><w:t>{p}</w:t></w:r></w:p>" for p in paragraphs)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("word/document.xml",
                   f'<w:document xmlns:w="{w}"><w:body>{body}</w:body></w:document>')
    return path


def test_each_kind_gives_its_text_and_where_it_is(tmp_path: Path) -> None:
    pdf = extract(write_pdf(tmp_path / "report.pdf", ["The budget is 40 coins.", "",
                                                      "Lunch is at noon."]))
    assert [(s.where, s.text) for s in pdf.sections] == [
        ("page 1", "The budget is 40 coins."), ("page 3", "Lunch is at noon.")]
    md = tmp_path / "notes.md"
    md.write_text("# Title\n\nSome *text*.\n", encoding="utf-8")
    assert extract(md).text == "# Title\n\nSome *text*.\n"
    page = tmp_path / "page.html"
    page.write_text("<html><head><title>t</title><style>p{}</style></head><body><p>One &amp; "
                    "two</p><script>alert(1)</script><div>Three</div></body></html>")
    assert extract(page).text == "One & two\n\nThree"
    doc = extract(_docx(tmp_path / "letter.docx", ["Dear Ann,", "The roof leaks."]))
    assert doc.text == "Dear Ann,\nThe roof leaks." and doc.name == "letter.docx"
    latin = tmp_path / "old.txt"
    latin.write_bytes("caf\xe9 cr\xe8me".encode("cp1252"))
    assert extract(latin).text == "café crème"


@pytest.mark.parametrize(("name", "make", "says"), [
    ("photo.png", lambda p: p.write_bytes(b"\x89PNG"), "not this kind of file"),
    ("data.txt", lambda p: p.write_bytes(b"\x00\x01\x02binary" * 100), "not a text file"),
    ("empty.txt", lambda p: p.write_text("  \n "), "no text"),
    ("broken.pdf", lambda p: p.write_bytes(b"%PDF-1.4\nnot really"), "damaged PDF"),
    ("scan.pdf", lambda p: write_pdf(p, ["", ""]), "no text layer"),
    ("old.docx", lambda p: p.write_bytes(b"\xd0\xcf\x11\xe0 an old .doc"), "Word document"),
    ("gone.txt", lambda p: None, "cannot be read"),
])
def test_bad_input_gets_a_sentence(tmp_path: Path, name: str, make: object, says: str) -> None:
    path = tmp_path / name
    make(path)  # type: ignore[operator]
    with pytest.raises(DocumentError) as err:
        extract(path)
    assert says in str(err.value) and name in str(err.value)


def test_an_encrypted_pdf_says_what_to_do(tmp_path: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    plain = write_pdf(tmp_path / "plain.pdf", ["secret"])
    writer = PdfWriter(clone_from=PdfReader(plain))
    writer.encrypt("pw", algorithm="RC4-128")
    locked = tmp_path / "locked.pdf"
    with locked.open("wb") as f:
        writer.write(f)
    with pytest.raises(DocumentError, match="password-protected PDF"):
        extract(locked)


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    with big.open("wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(DocumentError, match="up to 200 MB"):
        extract(big)


def test_a_long_pdf_stops_when_cancelled(tmp_path: Path) -> None:
    token = CancelToken()
    token.cancel()
    with pytest.raises(CancelledError):
        extract(write_pdf(tmp_path / "long.pdf", ["a page"] * 5), token)


def test_passages_keep_their_page_and_break_between_paragraphs() -> None:
    para = "word " * 100  # 500 characters
    doc = Document("/x/r.pdf", "r.pdf", (Section("page 1", f"{para}\n\n{para}\n\n{para}"),
                                        Section("page 2", "short")))
    cut = passages(doc, size=1200)
    assert [(p.where, p.number) for p in cut] == [("page 1", 0), ("page 1", 1), ("page 2", 2)]
    assert cut[0].text.count("\n\n") == 1 and cut[0].source == "r.pdf, page 1"
    one_line = passages(Document("/x/a.txt", "a.txt", (Section("", "x" * 3000),)), size=1200)
    assert [len(p.text) for p in one_line] == [1200, 1200, 600]


def test_the_index_finds_the_passage_that_answers_and_reads_each_version_once(
        tmp_path: Path) -> None:
    index = PassageIndex(tmp_path / "documents.db")
    pages = [f"Filler page {i} about nothing much." for i in range(30)]
    pages[17] = "The lighthouse keeper feeds the cat at dawn."
    path = write_pdf(tmp_path / "story.pdf", pages)
    assert index.known(str(path)) is None
    doc_id = index.add(extract(path))
    assert index.known(str(path)) == doc_id
    found = index.search("Who feeds the cat?", [doc_id], 3)
    assert found[0].where == "page 18" and "lighthouse" in found[0].text
    assert index.search("Who feeds the cat?", [doc_id + 1], 3) == []  # another document's
    write_pdf(path, ["Changed."])  # a new version: indexed again, the old passages gone
    assert index.known(str(path)) is None
    new_id = index.add(extract(path))
    assert index.search("lighthouse", [new_id, doc_id], 3) == []


def test_the_query_is_words_never_fts_syntax() -> None:
    assert fts_query('What is "NEAR" OR the cat* (dawn)?') == '"near" OR "cat" OR "dawn"'
    assert fts_query("is it?") == ""


def _words(texts: Sequence[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def test_whole_documents_when_they_fit_else_the_best_passages_with_a_note(
        tmp_path: Path) -> None:
    index = PassageIndex(tmp_path / "documents.db")
    pages = [("filler " * 150).strip() for _ in range(12)]
    pages[3] = "The harbour fee is 12 coins. " + ("filler " * 100)
    pages[9] = "Ships leave the harbour at six. " + ("filler " * 100)
    path = write_pdf(tmp_path / "port.pdf", pages)
    doc = extract(path)
    doc_id = index.add(doc)
    whole = fit([(doc_id, doc)], "harbour fee?", budget=10_000, count=_words, index=index)
    assert whole.used[0].whole and "[port.pdf]" in whole.text and whole.tokens <= 10_000
    some = fit([(doc_id, doc)], "harbour fee?", budget=300, count=_words, index=index)
    assert some.tokens <= 300 and some.text.startswith(HEADER)
    (used,) = some.used
    assert not used.whole and used.passages == 2 and used.places == ("page 4", "page 10")
    assert some.text.index("[port.pdf, page 4]") < some.text.index("[port.pdf, page 10]")
    none_shared = fit([(doc_id, doc)], "zebra?", budget=200, count=_words, index=index)
    assert none_shared.used[0].places == ("page 1",)  # the beginning
    nothing = fit([(doc_id, doc)], "harbour", budget=5, count=_words, index=index)
    assert nothing.text == "" and nothing.used == ()
