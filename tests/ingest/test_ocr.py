"""OCR in the loaders (docs/OCR.md) with the real engine (extra ``ocr``) on real and generated
scans: scanned PDF pages, a mixed PDF, PNG, multi-page TIFF, DOCX pictures; the limits (huge
image, 2,000-page scan, corrupt image) and offline use; the pure layout rules."""

from __future__ import annotations

import io
import socket
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from backend.common.config import OcrSettings
from backend.common.errors import LoaderError
from backend.ingest.loaders import load_document
from backend.ingest.ocr.layout import reading_order
from backend.ingest.ocr.pages import OcrRequest
from backend.ingest.ocr.port import OcrLine
from tests.conftest import make_settings
from backend.benchmarks.scan_pages import image_pdf, scanned_page
from tests.ingest.mixed_pdf import mixed_pdf

pytest.importorskip("rapidocr", reason="the `ocr` extra (make setup-test installs it)")

SCANNED = "The emergency generator in building C is tested every second Tuesday at seven in the morning."
TEXT_LAYER = "The visitor policy says that every guest signs in at the front desk and wears a badge."


def _in_process(tmp_path: Path, **ingest: Any) -> Any:
    """Settings that load in this process (no worker), so a test sees the loader's own errors."""
    return make_settings(tmp_path, ingest={"limits": {"worker": False}, **ingest})


# --- layout (pure) ------------------------------------------------------------------------------
def _line(text: str, x0: float, y0: float, width: float = 300, height: float = 30, conf: float = 0.99) -> OcrLine:
    return OcrLine(text, x0, y0, x0 + width, y0 + height, conf)


def test_two_columns_are_read_left_column_first() -> None:
    lines = [_line(f"right {i}", 400, 100 + 32 * i) for i in range(3)] + \
            [_line(f"left {i}", 50, 100 + 32 * i) for i in range(3)]
    blocks = reading_order(lines)
    assert [b.text for b in blocks] == ["left 0\nleft 1\nleft 2", "right 0\nright 1\nright 2"]


def test_a_headline_does_not_join_the_column_under_it_and_a_blank_line_splits_paragraphs() -> None:
    lines = [_line("BIG HEADLINE", 50, 20, width=600, height=80), _line("first para a", 50, 104),
             _line("first para b", 50, 136), _line("second para", 50, 220)]
    assert [b.text for b in reading_order(lines)] == ["BIG HEADLINE", "first para a\nfirst para b", "second para"]


def test_short_cells_in_three_aligned_columns_are_one_table_block() -> None:
    cells = [("Item", "Qty", "Price"), ("Bolt", "12", "0.40"), ("Nut", "30", "0.10")]
    lines = [_line(word, 50 + 250 * col, 100 + 40 * row, width=90) for row, words in enumerate(cells)
             for col, word in enumerate(words)]
    blocks = reading_order(lines)
    assert len(blocks) == 1 and blocks[0].kind == "table"
    assert blocks[0].text == "Item | Qty | Price\nBolt | 12 | 0.40\nNut | 30 | 0.10"


def test_a_line_drawn_across_a_narrow_gutter_is_split_at_the_word_gap_over_it() -> None:
    """The detector joined row 0 of both columns into one box; the other rows show the gutter."""
    left = [_line(f"left {i}", 50, 100 + 32 * i, width=300) for i in range(1, 8)]
    right = [_line(f"right {i}", 360, 100 + 32 * i, width=300) for i in range(1, 8)]
    crossing = OcrLine("left 0 right 0", 50, 100, 660, 130, 0.95,
                       (("left", 50, 120), ("0", 130, 150), ("right", 360, 430), ("0", 440, 460)))
    blocks = reading_order([crossing, *left, *right])
    assert [b.text.splitlines()[0] for b in blocks] == ["left 0", "right 0"]
    assert [len(b.text.splitlines()) for b in blocks] == [8, 8]


def test_block_confidence_is_the_character_weighted_mean_of_its_lines() -> None:
    blocks = reading_order([_line("aaaa", 50, 100, conf=0.9), _line("bb", 50, 132, conf=0.6)])
    assert blocks[0].confidence == pytest.approx((4 * 0.9 + 2 * 0.6) / 6, abs=1e-4)


# --- input kinds --------------------------------------------------------------------------------
def test_a_real_clean_scan_reads_word_for_word(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "ocr" / "clean" / "phototest.tif"
    doc = load_document(fixture, "phototest", _in_process(tmp_path))
    truth = (fixture.with_suffix(".gt.txt")).read_text()
    assert " ".join(doc.text.split()) == " ".join(truth.split())
    assert doc.diagnostics["ocr"]["pages"] == 1 and doc.blocks[0].attrs["page"] == 1
    assert doc.blocks[0].attrs["ocr_confidence"] > 0.9


def test_a_scanned_pdf_page_is_read_with_its_page_number(tmp_path: Path) -> None:
    pdf = image_pdf([scanned_page([SCANNED])], tmp_path / "scan.pdf")
    doc = load_document(pdf, "scan", _in_process(tmp_path))
    assert "second Tuesday at seven in the morning" in " ".join(doc.text.split())
    assert {b.attrs["page"] for b in doc.blocks} == {1}
    assert doc.diagnostics["ocr"]["pages"] == 1


def test_a_mixed_pdf_keeps_its_text_layer_and_ocrs_only_the_scanned_page(tmp_path: Path) -> None:
    pdf = mixed_pdf(TEXT_LAYER, scanned_page([SCANNED]), tmp_path / "mixed.pdf")
    doc = load_document(pdf, "mixed", _in_process(tmp_path))
    first, *rest = doc.blocks
    assert first.role == "page" and first.attrs == {"page": 1} and "front desk" in first.text
    assert rest and {b.attrs["page"] for b in rest} == {2}
    assert all("ocr_confidence" in b.attrs for b in rest)
    assert doc.diagnostics["ocr"]["pages"] == 1


def test_a_png_and_a_multi_page_tiff_are_read_page_by_page(tmp_path: Path) -> None:
    png = tmp_path / "notice.png"
    scanned_page([SCANNED]).save(png)
    assert "building C" in load_document(png, "notice", _in_process(tmp_path)).text
    tiff = tmp_path / "two.tiff"
    first, second = scanned_page(["Page one talks about apples."]), scanned_page(["Page two talks about pears."])
    first.save(tiff, save_all=True, append_images=[second], compression="tiff_deflate")
    doc = load_document(tiff, "two", _in_process(tmp_path))
    pages = {b.attrs["page"]: b.text for b in doc.blocks}
    assert "apples" in pages[1] and "pears" in pages[2] and doc.diagnostics["pages"] == 2


def test_a_docx_picture_of_text_joins_its_figure_description_when_the_profile_asks(tmp_path: Path) -> None:
    from docx import Document
    from docx.shared import Inches

    from backend.ingest import figures

    picture = io.BytesIO()
    scanned_page(["Valve V7 must stay closed during the flush."], size=(1200, 300), angle=0).save(picture, "PNG")
    document = Document()
    document.add_paragraph("The diagram below shows the cooling loop.")
    document.add_picture(io.BytesIO(picture.getvalue()), width=Inches(5))
    path = tmp_path / "loop.docx"
    document.save(path)
    settings = make_settings(tmp_path, ingest={"limits": {"worker": False}},
                             docx={"extract_images": True, "figure_chunks": True, "assets_dir": str(tmp_path / "a")})
    plain = load_document(path, "loop", settings)
    assert not any("ocr_text" in b.attrs for b in plain.blocks)  # the profile did not ask
    doc = load_document(path, "loop", settings, OcrRequest(pictures=True))
    image = next(b for b in doc.blocks if b.kind == "image")
    assert "Valve V7 must stay closed" in image.attrs["ocr_text"]
    assert "Text in the picture (OCR): Valve V7 must stay closed" in figures.describe(image.attrs, str(path))


def test_low_confidence_blocks_are_flagged_or_dropped_and_counted(tmp_path: Path) -> None:
    png = tmp_path / "notice.png"
    scanned_page([SCANNED]).save(png)
    strict = {"min_confidence": 1.0, "low_confidence": "flag"}
    with pytest.raises(LoaderError, match=r"notice\.png: text quality 0\.00 is below ingest\.min_text_quality \(0\.5\): "
                                          r"1 OCR blocks are below ingest\.ocr\.min_confidence \(1\)"):
        load_document(png, "n", _in_process(tmp_path, ocr=strict))
    flagged = load_document(png, "n", _in_process(tmp_path, ocr=strict, low_quality="flag"))
    assert all(b.attrs.get("ocr_low_confidence") for b in flagged.blocks)
    assert flagged.diagnostics["text_quality"] == 0.0  # every character sits in a low-confidence block
    with pytest.raises(LoaderError, match=r"notice\.png: empty document: OCR read only low-confidence text"):
        load_document(png, "n", _in_process(tmp_path, ocr={"min_confidence": 1.0, "low_confidence": "drop"}))


# --- limits ---------------------------------------------------------------------------------------
def test_a_huge_image_is_refused_before_it_is_decoded(tmp_path: Path) -> None:
    huge = tmp_path / "huge.png"
    Image.new("1", (12_000, 9_000), 1).save(huge)
    with pytest.raises(LoaderError, match=r"huge\.png: image is 12000 x 9000 pixels \(108,000,000\), over "
                                          r"ingest\.ocr\.max_image_pixels \(60,000,000\)"):
        load_document(huge, "huge", _in_process(tmp_path))


def test_a_2000_page_scan_is_refused_before_any_page_is_read(tmp_path: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    one = image_pdf([scanned_page(["x"], size=(200, 200))], tmp_path / "one.pdf")
    writer = PdfWriter()
    page = PdfReader(one).pages[0]
    for _ in range(2000):
        writer.add_page(page)
    big = tmp_path / "scan-2000.pdf"
    with big.open("wb") as fh:
        writer.write(fh)
    with pytest.raises(LoaderError, match=r"scan-2000\.pdf: 2000 pages need OCR, over "
                                          r"ingest\.ocr\.max_pages_per_document \(200\)"):
        load_document(big, "big", _in_process(tmp_path))


def test_the_ingest_budget_left_refuses_a_document_that_needs_more(tmp_path: Path) -> None:
    pdf = image_pdf([scanned_page([SCANNED]), scanned_page([TEXT_LAYER])], tmp_path / "two.pdf")
    with pytest.raises(LoaderError, match=r"two\.pdf: 2 pages need OCR but only 1 of this run's "
                                          r"ingest\.ocr\.max_pages_per_ingest \(2000\) are left"):
        load_document(pdf, "two", _in_process(tmp_path), OcrRequest(pages_left=1))


@pytest.mark.parametrize("name, data", [("broken.png", b"\x89PNG\r\n\x1a\n" + b"\x00garbage" * 50),
                                        ("cut.jpg", None)])
def test_a_corrupt_image_is_a_clear_error_naming_the_file(tmp_path: Path, name: str, data: bytes | None) -> None:
    path = tmp_path / name
    if data is None:  # a JPEG cut off half way
        buffer = io.BytesIO()
        scanned_page(["truncated"]).convert("RGB").save(buffer, "JPEG")
        data = buffer.getvalue()[: len(buffer.getvalue()) // 2]
    path.write_bytes(data)
    with pytest.raises(LoaderError, match=rf"{name.replace('.', '[.]')}: corrupt"):
        load_document(path, "bad", _in_process(tmp_path))


def test_ocr_off_skips_an_image_file_saying_why(tmp_path: Path) -> None:
    from backend.common.errors import PictureWithoutText

    png = tmp_path / "notice.png"
    scanned_page([SCANNED]).save(png)
    with pytest.raises(PictureWithoutText, match=r"notice\.png: a picture, skipped: its text is read only with OCR"):
        load_document(png, "n", _in_process(tmp_path, ocr={"enabled": False}))


def test_a_logo_in_a_folder_is_skipped_not_failed(tmp_path: Path, embedder: Any) -> None:
    """A folder of ordinary documents often holds a logo: the run stays ok, the logo is listed as
    skipped with its reason, and the text beside it is written."""
    from PIL import Image

    from backend.ingest.pipeline import IngestPipeline
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    kb = tmp_path / "kb"
    kb.mkdir()
    Image.new("RGB", (200, 120), (30, 90, 200)).save(kb / "logo.png")  # a plain blue logo: no text
    (kb / "policy.md").write_text("# Visitors\n\nVisitors sign in at reception and wear a badge.\n")
    manifest = kb / "manifest.jsonl"
    manifest.write_text('{"path": "logo.png", "doc_id": "logo"}\n{"path": "policy.md", "doc_id": "policy"}\n')
    settings = make_settings(tmp_path)
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    try:
        report = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest)
        assert report.ok and report.failures == []
        assert [(Path(w).name, r) for w, r in report.skipped] == [("logo.png", "a picture with no text (OCR found none), skipped")]
        assert "skipped         " in report.render() and report.to_dict()["skipped"][0]["reason"].startswith("a picture")
        assert set(store.document_hashes(report.versions[0])) == {"policy"}
    finally:
        store.close()


def test_ocr_runs_with_the_network_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The models come from the wheel: with every connection refused, a page still reads."""
    from backend.ingest.ocr import pages

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(pages, "_ENGINES", {})  # build the engine afresh, inside the test
    png = tmp_path / "notice.png"
    scanned_page([SCANNED]).save(png)
    assert "building C" in load_document(png, "n", _in_process(tmp_path)).text
    assert OcrSettings() in pages._ENGINES


def test_the_ingest_budget_is_shared_by_the_documents_of_a_run(tmp_path: Path, embedder: Any) -> None:
    """Through the pipeline and the loader worker: the first scan spends the run's only OCR page,
    the second fails naming the budget, nothing of it is written, and the summary counts the page."""
    from backend.ingest.pipeline import IngestPipeline
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    kb = tmp_path / "kb"
    kb.mkdir()
    scanned_page([SCANNED]).save(kb / "first.png")
    scanned_page([TEXT_LAYER]).save(kb / "second.png")
    manifest = kb / "manifest.jsonl"
    manifest.write_text('{"path": "first.png", "doc_id": "first"}\n{"path": "second.png", "doc_id": "second"}\n')
    settings = make_settings(tmp_path, ingest={"ocr": {"max_pages_per_ingest": 1}})
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    try:
        report = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest)
        assert report.ocr_pages == 1
        assert [Path(w).name for w, _ in report.failures] == ["second.png"]
        assert "1 pages need OCR but only 0 of this run's ingest.ocr.max_pages_per_ingest (1) are left" \
            in report.failures[0][1]
        assert set(store.document_hashes(report.versions[0])) == {"first"}
        assert "ocr pages:            1 (0 low-confidence blocks)" in report.render()
    finally:
        store.close()
