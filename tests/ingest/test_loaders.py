"""Loaders on real files: txt, md, html, pdf (plain, encrypted, corrupt), docx, failures."""

from __future__ import annotations

from pathlib import Path

import docx
import pytest
from pypdf import PdfWriter

from backend.common.config import Settings
from backend.common.errors import LoaderError
from backend.ingest.loaders import load_document
from tests.conftest import make_settings
from tests.ingest.helpers import write_pdf

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ingest"


@pytest.fixture
def cfg(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


def make_pdf(path: Path, pages: list[str]) -> Path:
    return write_pdf(path, pages)


def test_txt_is_split_into_normalised_paragraphs(cfg: Settings) -> None:
    doc = load_document(FIXTURES / "vacation.txt", "vacation.txt", cfg)
    assert [b.text for b in doc.blocks] == [
        "Vacation policy",
        "Employees accrue twenty days of paid vacation per year.\nUnused days carry over until March.",
        "Requests go through the HR portal at least two weeks ahead.",
    ]
    assert doc.doc_id == "vacation.txt"


def test_markdown_is_rendered_to_plain_text(cfg: Settings) -> None:
    doc = load_document(FIXTURES / "expenses.md", "expenses.md", cfg)
    assert [(b.role, b.text) for b in doc.blocks] == [
        ("heading", "Expense policy"),
        ("paragraph", "Travel expenses are reimbursed within thirty days of submission."),
        ("paragraph", "Keep every receipt."),
        ("paragraph", "Submit claims in the finance tool."),
        ("table", "Item | Limit"),
        ("table", "Hotel | 180 EUR"),
        ("table", "Meals | 45 EUR"),
        ("code", "claim --id 42"),
    ]


def test_html_drops_script_style_and_nav(cfg: Settings) -> None:
    doc = load_document(FIXTURES / "security.html", "security.html", cfg)
    assert doc.text == (
        "Security guidelines\n\nLaptop security\n\nLock your screen whenever you leave your desk. "
        "Use the company VPN on public networks.\n\nDevice | Encryption\n\nLaptop | BitLocker"
    )
    assert "secret" not in doc.text and "Home" not in doc.text and "color" not in doc.text


def test_pdf_yields_one_block_per_page(cfg: Settings, tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "badges.pdf", ["Badge access is granted by security.", "Visitors sign in at reception."])
    doc = load_document(path, "badges.pdf", cfg)
    assert [(b.role, b.attrs["page"], b.text) for b in doc.blocks] == [
        ("page", 1, "Badge access is granted by security."),
        ("page", 2, "Visitors sign in at reception."),
    ]


def test_encrypted_pdf_is_a_loader_error_saying_encrypted(cfg: Settings, tmp_path: Path) -> None:
    plain = make_pdf(tmp_path / "plain.pdf", ["Salary bands for 2025."])
    writer = PdfWriter(clone_from=str(plain))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    locked = tmp_path / "locked.pdf"
    writer.write(str(locked))
    with pytest.raises(LoaderError, match=r"locked\.pdf: encrypted PDF") as info:
        load_document(locked, "locked.pdf", cfg)
    assert info.value.context["reason"] == "encrypted"


def test_corrupt_pdf_is_a_loader_error(cfg: Settings, tmp_path: Path) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.4\nthis is not a pdf body")
    with pytest.raises(LoaderError, match=r"bad\.pdf: corrupt PDF"):
        load_document(bad, "bad.pdf", cfg)


def test_empty_file_is_a_loader_error(cfg: Settings) -> None:
    with pytest.raises(LoaderError, match=r"empty\.txt: empty file \(0 bytes\)"):
        load_document(FIXTURES / "empty.txt", "empty.txt", cfg)


def test_whitespace_only_file_is_an_empty_document(cfg: Settings, tmp_path: Path) -> None:
    blank = tmp_path / "blank.md"
    blank.write_text("\ufeff \n\u200b\n\n", encoding="utf-8")
    with pytest.raises(LoaderError, match=r"blank\.md: empty document: no extractable text"):
        load_document(blank, "blank.md", cfg)


def test_non_utf8_text_is_a_loader_error(cfg: Settings, tmp_path: Path) -> None:
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Caf\u00e9 menu".encode("latin-1"))
    with pytest.raises(LoaderError, match=r"latin\.txt: not UTF-8 text \(byte 3 is invalid\)"):
        load_document(latin, "latin.txt", cfg)


def test_file_over_max_bytes_is_refused(tmp_path: Path) -> None:
    cfg = make_settings(tmp_path, ingest={"max_file_bytes": 10})
    big = tmp_path / "big.txt"
    big.write_text("x" * 11, encoding="utf-8")
    with pytest.raises(LoaderError, match=r"big\.txt: 11 bytes is over ingest\.max_file_bytes \(10\)"):
        load_document(big, "big.txt", cfg)


def test_unsupported_suffix_names_the_supported_ones(cfg: Settings, tmp_path: Path) -> None:
    odd = tmp_path / "table.xlsx"
    odd.write_bytes(b"PK\x03\x04")
    with pytest.raises(LoaderError, match=r"table\.xlsx: unsupported file type '\.xlsx'; supported: .*\.docx"):
        load_document(odd, "table.xlsx", cfg)


def test_docx_is_loaded_through_the_docx_loader(cfg: Settings, tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Parental leave", level=1)
    document.add_paragraph("Parents get sixteen weeks of paid leave.")
    path = tmp_path / "leave.docx"
    document.save(str(path))
    doc = load_document(path, "leave.docx", cfg)
    assert doc.text == "Parental leave\n\nParents get sixteen weeks of paid leave."


def test_corrupt_docx_is_a_loader_error(cfg: Settings, tmp_path: Path) -> None:
    bad = tmp_path / "broken.docx"
    bad.write_bytes(b"these bytes are not a zip archive")
    with pytest.raises(LoaderError, match=r"broken\.docx: corrupt DOCX"):
        load_document(bad, "broken.docx", cfg)
