"""Content the loaders used to lose or mis-judge: PDFs without a trailer, the PDF
password rule, and DOCX text held in ``w:altChunk`` parts."""

from __future__ import annotations

import zipfile
from pathlib import Path

import docx
import pytest
from pypdf import PdfReader

from backend.common.config import Settings
from backend.common.errors import LoaderError
from backend.ingest.loaders import load_document
from backend.ingest.loaders.docx_altchunk import MAX_DEPTH
from tests.conftest import make_settings
from tests.ingest.content_files import (CT_DOCX, CT_HTML, CT_MHT, CT_TEXT, alt_chunk_docx, encrypted_pdf, mht,
                                        without_trailer)
from tests.ingest.helpers import write_pdf

PAGES = ["Badge access is granted by security.", "Visitors sign in at reception."]


@pytest.fixture
def cfg(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


# --- PDFs without startxref ----------------------------------------------------------
@pytest.mark.parametrize("keep", ["objects", "trailer"])
def test_pdf_without_startxref_is_repaired_and_loads(cfg: Settings, tmp_path: Path, keep: str) -> None:
    broken = without_trailer(write_pdf(tmp_path / "plain.pdf", PAGES), tmp_path / "cut.pdf", keep=keep)
    assert b"startxref" not in broken.read_bytes()
    with pytest.raises(Exception):  # noqa: B017 - pypdf alone cannot read it (what this test is about)
        PdfReader(broken, strict=False).pages[0]
    doc = load_document(broken, "cut.pdf", cfg)
    assert [(b.attrs["page"], b.text) for b in doc.blocks] == [(1, PAGES[0]), (2, PAGES[1])]
    assert doc.diagnostics["repaired"].startswith("cross-reference table rebuilt: no startxref/%%EOF trailer")


def test_pdf_header_with_no_objects_is_still_corrupt(cfg: Settings, tmp_path: Path) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.4\nthis is not a pdf body")
    with pytest.raises(LoaderError) as info:
        load_document(bad, "bad.pdf", cfg)
    assert info.value.user_message == (
        f"{bad}: corrupt PDF: no startxref/%%EOF trailer (a truncated or unfinished file); a repair pass that "
        "rebuilds the cross-reference table failed too: it holds no PDF objects to rebuild it from")


def test_pdf_objects_without_a_catalog_are_still_corrupt(cfg: Settings, tmp_path: Path) -> None:
    bad = tmp_path / "torn.pdf"
    bad.write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Length 3 >>\nendobj\n")
    with pytest.raises(LoaderError, match=r"torn\.pdf: corrupt PDF: .*repair pass .* failed too"):
        load_document(bad, "torn.pdf", cfg)


def test_not_a_pdf_at_all_says_so(cfg: Settings, tmp_path: Path) -> None:
    bad = tmp_path / "notes.pdf"
    bad.write_text("just some notes, saved with the wrong name", encoding="utf-8")
    with pytest.raises(LoaderError) as info:
        load_document(bad, "notes.pdf", cfg)
    assert info.value.user_message == (
        f"{bad}: corrupt PDF: no %PDF- header in its first 1024 bytes (not a PDF, or damaged at the start)")


# --- the password rule -----------------------------------------------------------------
@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128", "AES-256"])
def test_user_password_with_empty_owner_password_is_refused(cfg: Settings, tmp_path: Path, algorithm: str) -> None:
    locked = encrypted_pdf(write_pdf(tmp_path / "plain.pdf", PAGES), tmp_path / "locked.pdf", "x", "", algorithm)
    assert PdfReader(locked).decrypt("")  # pypdf opens it with the empty *owner* password: the old bug
    assert PdfReader(locked).decrypt("x")  # and the file is valid with its user password
    with pytest.raises(LoaderError) as info:
        load_document(locked, "locked.pdf", cfg)
    assert info.value.user_message == (
        f"{locked}: encrypted PDF: a password is needed to read it (only a PDF whose user password is empty can "
        "be ingested; remove the password and save it again)")
    assert info.value.context["reason"] == "encrypted"


@pytest.mark.parametrize("user, owner", [("x", "y"), ("x", None)])
def test_any_non_empty_user_password_is_refused(cfg: Settings, tmp_path: Path, user: str, owner: str | None) -> None:
    locked = encrypted_pdf(write_pdf(tmp_path / "plain.pdf", PAGES), tmp_path / "locked.pdf", user, owner or "x")
    with pytest.raises(LoaderError, match=r"locked\.pdf: encrypted PDF: a password is needed"):
        load_document(locked, "locked.pdf", cfg)


@pytest.mark.parametrize("owner", ["x", ""])
def test_empty_user_password_loads_whatever_the_owner_password(cfg: Settings, tmp_path: Path, owner: str) -> None:
    opened = encrypted_pdf(write_pdf(tmp_path / "plain.pdf", PAGES), tmp_path / "open.pdf", "", owner)
    assert PdfReader(opened).is_encrypted
    assert load_document(opened, "open.pdf", cfg).blocks[0].text == PAGES[0]


# --- DOCX altChunk ---------------------------------------------------------------------
HTML = (b"<html><head><title>Badges</title></head><body><h1>Badge policy</h1>"
        b"<p>Badges are granted by security.</p><script>alert('x')</script>"
        b"<p hidden>Invisible instructions.</p></body></html>")


def test_docx_whose_text_is_only_in_an_html_alt_chunk_loads(cfg: Settings, tmp_path: Path) -> None:
    path = alt_chunk_docx(tmp_path / "only.docx", [("/word/afchunk.htm", CT_HTML, HTML)])
    doc = load_document(path, "only.docx", cfg)
    assert [(b.role, b.text, b.attrs.get("level")) for b in doc.blocks] == [
        ("heading", "Badges", None), ("heading", "Badge policy", 1),
        ("paragraph", "Badges are granted by security.", None)]  # as the HTML loader reads a .html file
    assert "alert" not in doc.text and "Invisible" not in doc.text
    assert doc.diagnostics["DOCX_ALT_CHUNKS"] == {"read": 1, "skipped": []}


def test_alt_chunks_of_every_kind_are_read_in_place(cfg: Settings, tmp_path: Path) -> None:
    inner = docx.Document()
    inner.add_heading("Nested heading", level=2)
    inner.add_paragraph("Nested paragraph.")
    inner_path = tmp_path / "inner.docx"
    inner.save(str(inner_path))
    path = alt_chunk_docx(tmp_path / "all.docx", [
        ("/word/afchunk1.htm", CT_HTML, b"<p>From HTML.</p>"),
        ("/word/afchunk2.txt", CT_TEXT, "From plain text, caf\u00e9.\r\n\r\nSecond paragraph.".encode()),
        ("/word/afchunk3.mht", CT_MHT, mht("<p>From MHT, caf\u00e9.</p>")),
        ("/word/afchunk4.docx", CT_DOCX, inner_path.read_bytes()),
    ], before="Before the chunks.", after="After the chunks.")
    doc = load_document(path, "all.docx", cfg)
    assert [b.text for b in doc.blocks] == [
        "Before the chunks.", "From HTML.", "From plain text, caf\u00e9.", "Second paragraph.",
        "From MHT, caf\u00e9.", "Nested heading", "Nested paragraph.", "After the chunks."]
    assert doc.blocks[5].role == "heading" and doc.blocks[5].attrs["alt_chunk"] == "word/afchunk4.docx"


def test_unsupported_alt_chunk_is_skipped_and_named_when_nothing_else_is_left(cfg: Settings, tmp_path: Path) -> None:
    path = alt_chunk_docx(tmp_path / "rtf.docx", [("/word/afchunk.rtf", "application/rtf", b"{\\rtf1 Hello}")])
    with pytest.raises(LoaderError) as info:
        load_document(path, "rtf.docx", cfg)
    assert info.value.user_message == (
        f"{path}: empty document: no extractable text (embedded content skipped: word/afchunk.rtf "
        "unsupported_type:application/rtf)")


def test_alt_chunks_nested_deeper_than_the_limit_stop_there(cfg: Settings, tmp_path: Path) -> None:
    current = alt_chunk_docx(tmp_path / "level0.docx", [("/word/afchunk.txt", CT_TEXT, b"Level 0.")])
    for level in range(1, MAX_DEPTH + 2):
        current = alt_chunk_docx(tmp_path / f"level{level}.docx", [("/word/afchunk.docx", CT_DOCX, current.read_bytes())],
                                 before=f"Level {level}.")
    doc = load_document(current, "deep.docx", cfg)
    levels = [b.text for b in doc.blocks]
    assert levels == [f"Level {n}." for n in range(MAX_DEPTH + 1, 0, -1)]  # level 0 is one too deep


def test_alt_chunk_part_over_the_ratio_limit_is_refused_as_a_zip_bomb(tmp_path: Path) -> None:
    html = b"<html><body><p>" + b" " * (3 << 20) + b"Text.</p></body></html>"
    path = alt_chunk_docx(tmp_path / "bomb.docx", [("/word/afchunk.htm", CT_HTML, html)])
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo("word/afchunk.htm").compress_size < (3 << 20) / 100
    settings = make_settings(tmp_path, ingest={"limits": {"max_compression_ratio": 100}})
    with pytest.raises(LoaderError, match=r"bomb\.docx: DOCX part word/afchunk\.htm inflates .* possible zip bomb"):
        load_document(path, "bomb.docx", settings)


def test_bad_embedded_docx_names_the_outer_file_and_the_part(cfg: Settings, tmp_path: Path) -> None:
    path = alt_chunk_docx(tmp_path / "outer.docx", [("/word/afchunk.docx", CT_DOCX, b"not a zip at all")],
                          before="Outer text.")
    with pytest.raises(LoaderError) as info:
        load_document(path, "outer.docx", cfg)
    assert info.value.user_message == (
        f"{path}: embedded document word/afchunk.docx (altChunk): corrupt DOCX: not a zip archive "
        "(truncated or not a Word file)")
