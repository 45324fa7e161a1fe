"""Normalisation: invisible characters, line endings, NFC."""

from __future__ import annotations

import unicodedata

import pytest

from backend.ingest.documents import Block, LoadedDocument
from backend.ingest.normalize import normalize_document, normalize_text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("pay\u200broll", "payroll"),
        ("zero\u200c\u200dwidth\u2060joiners", "zerowidthjoiners"),
        ("\ufeffHeading", "Heading"),
        ("hyphen\u00adated", "hyphenated"),
        ("abc\u202edcba\u202c end", "abcdcba end"),
        ("\u2067isolate\u2069 \u200eLRM\u200f", "isolate LRM"),
    ],
)
def test_invisible_and_bidi_characters_are_removed(raw: str, expected: str) -> None:
    assert normalize_text(raw) == expected


def test_crlf_and_cr_line_endings_become_lf() -> None:
    assert normalize_text("one\r\ntwo\rthree\u2028four") == "one\ntwo\nthree\nfour"


def test_text_is_put_in_nfc() -> None:
    decomposed = "Cafe\u0301 r\u00e9sume\u0301"
    out = normalize_text(decomposed)
    assert out == "Caf\u00e9 r\u00e9sum\u00e9"
    assert unicodedata.is_normalized("NFC", out)
    assert len(out) == 11


def test_blank_line_runs_collapse_and_trailing_spaces_go() -> None:
    assert normalize_text("  a  \n\n\n\n b\t\n") == "a\n\n b"


def test_document_drops_blocks_that_become_empty_and_keeps_images() -> None:
    doc = LoadedDocument(doc_id="d", source="d.docx", blocks=[
        Block(kind="text", text="\u200b\ufeff"),
        Block(kind="image", attrs={"figure_id": "img_001"}),
        Block(kind="text", text="Body\r\ntext"),
    ])
    out = normalize_document(doc)
    assert [(b.kind, b.text) for b in out.blocks] == [("image", ""), ("text", "Body\ntext")]
