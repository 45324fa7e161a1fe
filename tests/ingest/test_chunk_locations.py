"""Every chunk records where it stands: ``heading_path`` (Markdown, HTML, DOCX headings with
their levels) and, for PDF, ``page`` (the page it starts on). Real files from the libraries."""

from __future__ import annotations

from pathlib import Path

from backend.common.config import ProfileSettings
from backend.ingest.chunkers import TextChunker, page_at
from backend.ingest.loaders import load_document
from tests.conftest import make_settings

PROFILE = ProfileSettings(index_name="KB_T_V1", chunker={"kind": "char", "size": 300, "overlap": 0})
PARA = "Employees receive twenty five days of paid leave every year and may carry five over. "


def chunks_of(path: Path, tmp_path: Path) -> list:
    doc = load_document(path, path.stem, make_settings(tmp_path))
    return TextChunker(PROFILE).chunk(doc)


def test_pdf_chunks_record_the_page_they_start_on(tmp_path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for page in range(1, 4):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"Page {page} text. " + PARA * 4)
    path = tmp_path / "handbook.pdf"
    pdf.output(str(path))
    chunks = chunks_of(path, tmp_path)
    pages = [c.metadata["page"] for c in chunks]
    assert pages[0] == 1 and pages[-1] == 3 and sorted(pages) == pages and set(pages) == {1, 2, 3}
    for c in chunks:
        if c.text.startswith("Page "):
            assert c.metadata["page"] == int(c.text.split()[1])
        assert c.metadata["heading_path"] == []
    assert page_at([(0, 4), (100, 5)], 99) == 4 and page_at([(10, 4)], 0) == 4


def test_markdown_and_html_chunks_record_their_heading_path(tmp_path: Path) -> None:
    md = tmp_path / "leave.md"
    md.write_text(f"# Leave\n\n{PARA * 3}\n\n## Carry-over\n\n{PARA * 3}\n\n# Sick leave\n\n{PARA * 3}\n", encoding="utf-8")
    paths = [c.metadata["heading_path"] for c in chunks_of(md, tmp_path)]
    assert paths[0] == ["Leave"] and ["Leave", "Carry-over"] in paths and paths[-1] == ["Sick leave"]
    assert all("page" not in c.metadata for c in chunks_of(md, tmp_path))
    html = tmp_path / "leave.html"
    html.write_text(f"<html><head><title>Handbook</title></head><body><h1>Leave</h1><p>{PARA * 3}</p>"
                    f"<h2>Carry <b>over</b></h2><p>{PARA * 3}</p><h2 hidden>Secret</h2><h1>Sick leave</h1><p>{PARA * 3}</p>"
                    "</body></html>", encoding="utf-8")
    paths = [c.metadata["heading_path"] for c in chunks_of(html, tmp_path)]
    # the <title> is a heading too (level 1), the first chunk starts on it; the hidden <h2> is gone
    assert paths[0] == ["Handbook"] and ["Leave", "Carry over"] in paths and paths[-1] == ["Sick leave"]
    assert not any("Secret" in p for path in paths for p in path)


def test_docx_heading_styles_give_the_levels(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading("Leave", level=1)
    document.add_paragraph(PARA * 3)
    document.add_heading("Carry-over", level=2)
    document.add_paragraph(PARA * 3)
    document.add_heading("Sick leave", level=1)
    document.add_paragraph(PARA * 3)
    path = tmp_path / "leave.docx"
    document.save(str(path))
    paths = [c.metadata["heading_path"] for c in chunks_of(path, tmp_path)]
    assert paths[0] == ["Leave"] and ["Leave", "Carry-over"] in paths and paths[-1] == ["Sick leave"]


def test_a_chunk_records_where_pages_and_sections_begin_inside_it(tmp_path: Path) -> None:
    """So a citation gives the page and section of the sentence it quotes, not of the chunk's start."""
    from fpdf import FPDF

    whole = PROFILE.model_copy(update={"chunker": PROFILE.chunker.model_copy(update={"size": 5000})})
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for page in range(1, 4):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"Page {page} text. " + PARA)
    path = tmp_path / "handbook.pdf"
    pdf.output(str(path))
    (chunk,) = TextChunker(whole).chunk(load_document(path, "handbook", make_settings(tmp_path)))
    assert chunk.metadata["page"] == 1 and chunk.metadata["section_breaks"] == []
    breaks = chunk.metadata["page_breaks"]
    assert [page for _, page in breaks] == [2, 3]
    assert all(chunk.text[offset:].startswith(f"Page {page} text.") for offset, page in breaks)

    md = tmp_path / "leave.md"
    md.write_text(f"# Leave\n\n{PARA}\n\n## Carry-over\n\n{PARA}\n\n# Sick leave\n\n{PARA}\n", encoding="utf-8")
    (chunk,) = TextChunker(whole).chunk(load_document(md, "leave", make_settings(tmp_path)))
    assert chunk.metadata["heading_path"] == ["Leave"] and "page_breaks" not in chunk.metadata
    sections = chunk.metadata["section_breaks"]
    assert [path for _, path in sections] == [["Leave", "Carry-over"], ["Sick leave"]]
    assert [chunk.text[offset:].split("\n")[0] for offset, _ in sections] == ["Carry-over", "Sick leave"]


def test_a_heading_is_found_where_it_stands_not_as_an_earlier_word(tmp_path: Path) -> None:
    """The "Firmware" heading comes after a table row saying "Firmware update in progress": the rows
    above it belong to "Front panel", and a citation of one must say so (it said "Firmware")."""
    whole = PROFILE.model_copy(update={"chunker": PROFILE.chunker.model_copy(update={"size": 5000})})
    md = tmp_path / "appliance.md"
    md.write_text("# Appliance\n\n## Front panel\n\n| Status LED | Meaning |\n|---|---|\n"
                  "| Blinking green | Firmware update in progress |\n| Steady amber | Disk or fan fault |\n\n"
                  "## Firmware\n\nUpdates take about 20 minutes.\n", encoding="utf-8")
    (chunk,) = TextChunker(whole).chunk(load_document(md, "appliance", make_settings(tmp_path)))
    sections = {chunk.text[offset:].split("\n")[0]: path for offset, path in chunk.metadata["section_breaks"]}
    assert sections == {"Front panel": ["Appliance", "Front panel"], "Firmware": ["Appliance", "Firmware"]}


def test_a_chunk_starting_inside_a_table_keeps_its_column_names(tmp_path: Path) -> None:
    """The chunk holding the later rows of a table records the header row, so its rows are read with
    their column names ("Status LED: Steady amber; Meaning: ...") even when the chunk before is not
    in context, and "LED" counts as said by the passage."""
    from backend.core.services.answerability import passage_text
    from backend.core.services.evidence import SentenceScorer

    rows = "".join(f"| Code {i} amber | Disk or fan fault number {i} |\n" for i in range(12))
    md = tmp_path / "leds.md"
    md.write_text(f"# LEDs\n\n| Status LED | Meaning |\n|---|---|\n{rows}\n## Firmware\n\nUpdates take 20 minutes.\n",
                  encoding="utf-8")
    small = PROFILE.model_copy(update={"chunker": PROFILE.chunker.model_copy(update={"size": 250})})
    chunks = TextChunker(small).chunk(load_document(md, "leds", make_settings(tmp_path)))
    inside = [c for c in chunks if c.chunk_index > 0 and c.text.startswith("Code")]
    assert inside and all(c.metadata["table_header"] == "Status LED | Meaning" for c in inside)
    assert "table_header" not in chunks[0].metadata  # it holds the header row itself
    alone = inside[-1]
    sentences = SentenceScorer.sentences([alone])
    assert sentences[0].text.startswith("Status LED: Code") and "; Meaning: Disk or fan fault" in sentences[0].text
    assert "Status LED" in passage_text(alone) and "Status LED" not in alone.text
