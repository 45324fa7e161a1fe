"""Placeholders, figure chunks and the flags-off guarantee, on real DOCX files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import docx
import numpy as np
import pytest
from structlog.testing import capture_logs

from backend.common.config import ChunkerSettings, ProfileSettings, Settings
from backend.core.embedding_text import document_input
from backend.core.types import Chunk
from backend.ingest import figures
from backend.ingest.chunkers import TextChunker
from backend.ingest.documents import LoadedDocument
from backend.ingest.loaders import load_document
from backend.ingest.loaders.docx_images import asset_folder
from tests.conftest import make_settings
from tests.fixtures.docx import make_fixtures as mk

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "docx"
FLAGS = ("extract_images", "inline_figure_placeholders", "figure_chunks")
LONG = ("New employees receive a laptop, a badge and a desk on the first day. The facilities team "
        "prepares the workplace and the manager books an introduction with the team. ")


def settings_with(tmp_path: Path, *on: str) -> Settings:
    return make_settings(tmp_path, docx={flag: flag in on for flag in FLAGS})


def guide(with_images: bool) -> docx.Document:
    """An onboarding guide; without images it has exactly the same text."""
    d = docx.Document()
    header = d.sections[0].header.paragraphs[0]
    header.text = "Onboarding guide"
    if with_images:
        mk.picture(header, mk.image_bytes(mk.GREY), alt="Company logo")
    d.add_heading("First day", level=1)
    d.add_paragraph(LONG * 3)
    plan = d.add_paragraph()
    if with_images:
        mk.picture(plan, mk.image_bytes(mk.GREEN), alt="Office floor plan", title="Floor plan")
    d.add_paragraph("Figure 1: The third floor", style="Caption")
    d.add_paragraph("Desks are assigned by the facilities team. " + LONG * 2)
    table = d.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Room", "Photo"
    table.cell(1, 0).text = "Kitchen"
    if with_images:
        mk.picture(table.cell(1, 1).paragraphs[0], mk.image_bytes(mk.BLUE, "JPEG"), alt="Kitchen photo")
    d.add_paragraph("The floor plan is repeated here for convenience. " + LONG)
    again = d.add_paragraph()
    if with_images:
        mk.picture(again, mk.image_bytes(mk.GREEN))
    d.add_paragraph("Questions go to the people team.")
    return d


def load(tmp_path: Path, document: Any, settings: Settings, doc_id: str = "hr/guide") -> LoadedDocument:
    path = tmp_path / f"{doc_id.replace('/', '_')}-{id(document)}.docx"
    if isinstance(document, Path):
        path = document
    else:
        document.save(str(path))
    return load_document(path, doc_id, settings)


#: Small overlapping windows, so every figure has several candidate parents.
CHUNKING = ProfileSettings(index_name="KB_FIGURES", chunker=ChunkerSettings(kind="char", size=300, overlap=60))


def profile(settings: Settings) -> ProfileSettings:
    return settings.embeddings.profile_for()


def pipeline(tmp_path: Path, document: Any, settings: Settings) -> tuple[LoadedDocument, str, list[Chunk], list[Chunk]]:
    doc = load(tmp_path, document, settings)
    text = figures.render_text(doc, settings.docx)
    text_chunks = TextChunker(CHUNKING).chunk(doc, text)
    return doc, text, text_chunks, figures.figure_chunks(doc, text_chunks, settings.docx, profile(settings))


def test_flags_off_matches_the_text_only_document_in_text_chunks_and_embeddings(tmp_path: Path, embedder: Any) -> None:
    off = settings_with(tmp_path)
    with_images = pipeline(tmp_path, guide(True), off)
    text_only = pipeline(tmp_path, guide(False), off)
    assert with_images[1] == text_only[1] == with_images[0].text
    assert [c.text for c in with_images[2]] == [c.text for c in text_only[2]]
    assert with_images[3] == text_only[3] == []
    inputs = [[document_input(c.text, profile(off)) for c in run[2]] for run in (with_images, text_only)]
    assert np.array_equal(embedder.embed_documents(inputs[0]), embedder.embed_documents(inputs[1]))
    assert "[FIGURE:" not in with_images[1]


def test_extraction_without_placeholders_leaves_the_text_unchanged(tmp_path: Path) -> None:
    off_text = pipeline(tmp_path, guide(True), settings_with(tmp_path))[1]
    doc, text, _, chunks = pipeline(tmp_path, guide(True), settings_with(tmp_path, "extract_images", "figure_chunks"))
    assert text == off_text
    assert len(chunks) == 3


def test_placeholders_stand_where_the_pictures_stood(tmp_path: Path) -> None:
    doc, text, _, _ = pipeline(tmp_path, guide(True), settings_with(tmp_path, *FLAGS))
    folder = doc.diagnostics["DOCX_IMAGES_SUMMARY"]["assets_folder"]
    paragraphs = text.split("\n\n")
    assert paragraphs[:2] == ["Onboarding guide", f"[FIGURE:{folder}-fig-001]"]
    assert paragraphs[4:6] == [f"[FIGURE:{folder}-fig-002]", "Figure 1: The third floor"]
    assert paragraphs[7:9] == ["Room | Photo\nKitchen |", f"[FIGURE:{folder}-fig-003]"]
    assert paragraphs[10] == f"[FIGURE:{folder}-fig-002]"
    assert text.count("[FIGURE:") == 4


def test_every_figure_chunk_names_a_text_chunk_holding_its_placeholder(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, *FLAGS)
    doc, _, text_chunks, chunks = pipeline(tmp_path, guide(True), settings)
    by_id = {c.chunk_id: c for c in text_chunks}
    assert len(text_chunks) >= 4
    assert [c.metadata["figure_id"] for c in chunks] == [f"{doc.diagnostics['DOCX_IMAGES_SUMMARY']['assets_folder']}-fig-00{n}"
                                                         for n in (1, 2, 3)]
    for chunk in chunks:
        parent = by_id[chunk.metadata["parent_chunk_id"]]
        assert parent.doc_id == chunk.doc_id == "hr/guide"
        assert f"[FIGURE:{chunk.metadata['figure_id']}]" in parent.text
        assert chunk.metadata["parent_chunk_local_index"] == parent.chunk_index
        assert chunk.chunk_id == f"hr/guide::fig::{chunk.metadata['figure_id']}"
        assert chunk.chunk_type == "figure"
        assert chunk.embed_text == document_input(chunk.text, profile(settings))
        assert (Path(settings.docx.assets_dir) / chunk.metadata["image_ref"]).is_file()
    assert [c.chunk_index for c in chunks] == [len(text_chunks), len(text_chunks) + 1, len(text_chunks) + 2]
    summary = doc.diagnostics["DOCX_FIGURE_CHUNKING_SUMMARY"]
    assert {k: summary[k] for k in ("image_blocks", "figures", "placeholders", "figure_chunks", "parent_links")} == {
        "image_blocks": 4, "figures": 3, "placeholders": 4, "figure_chunks": 3, "parent_links": 3}
    assert (doc.diagnostics["DOCX_IMAGES_SUMMARY"]["blips"], doc.diagnostics["DOCX_IMAGES_SUMMARY"]["writes"]) == (4, 3)


def test_without_placeholders_the_parent_is_the_chunk_covering_the_picture_position(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, "extract_images", "figure_chunks")
    doc, text, text_chunks, chunks = pipeline(tmp_path, guide(True), settings)
    parents = {c.metadata["alt"]: c.metadata["parent_chunk_id"] for c in chunks}
    spans = {c.chunk_id: (c.metadata["char_start"], c.metadata["char_start"] + len(c.text)) for c in text_chunks}
    picture_positions = {
        "Company logo": len("Onboarding guide"),
        "Office floor plan": text.index("Figure 1: The third floor") - 2,
        "Kitchen photo": text.index("Room | Photo\nKitchen |") + len("Room | Photo\nKitchen |"),
    }
    for alt, position in picture_positions.items():
        start, end = spans[parents[alt]]
        assert start <= position <= end, alt
    assert len(text_chunks) >= 5
    summary = doc.diagnostics["DOCX_FIGURE_CHUNKING_SUMMARY"]
    assert (summary["parent_links"], summary["parent_by_position"], summary["placeholders"]) == (3, 3, 0)
    assert "[FIGURE:" not in text


def test_figure_description_uses_the_documents_own_words(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, *FLAGS)
    doc, _, _, [chunk] = pipeline(tmp_path, FIXTURES / "emf_image.docx", settings)
    assert chunk.text == ("Figure in emf_image.docx\nCaption: Figure 2: Process flow\n"
                          "Alt text: Process flow diagram\nContext: The process flow is drawn as a vector diagram.")
    assert re.fullmatch(rf"{asset_folder('hr/guide')}/img_001_[0-9a-f]{{16}}\.emf", chunk.metadata["image_ref"])
    assert chunk.metadata["image_content_type"] == "image/x-emf"
    assert "\x00" not in chunk.text and "EMF" not in chunk.text


def test_figure_without_any_words_gets_a_fixed_description() -> None:
    assert figures.describe({"figure_id": "x-fig-001"}, "data/a/report.docx") == (
        "Figure in report.docx\nNo caption, title or alt text in the document.")


def test_chunking_summary_counts_match_the_document(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, *FLAGS)
    with capture_logs() as logs:
        doc, _, _, chunks = pipeline(tmp_path, FIXTURES / "same_image_twice.docx", settings)
    expected = {"image_blocks": 2, "figures": 1, "placeholders": 2, "figure_chunks": 1, "parent_links": 1,
                "parent_by_placeholder": 1, "parent_by_position": 0, "figure_chunks_enabled": True}
    assert doc.diagnostics["DOCX_FIGURE_CHUNKING_SUMMARY"] == expected
    [event] = [e for e in logs if e["event"] == "DOCX_FIGURE_CHUNKING_SUMMARY"]
    assert {k: event[k] for k in expected} == expected
    assert chunks[0].metadata["caption"] == "Figure 1: Warning icon"
    assert chunks[0].metadata["alt"] == "Warning icon"


def test_figure_chunks_flag_off_emits_none_but_records_the_summary(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, "extract_images", "inline_figure_placeholders")
    doc, text, _, chunks = pipeline(tmp_path, FIXTURES / "same_image_twice.docx", settings)
    assert chunks == []
    assert text.count("[FIGURE:") == 2
    summary = doc.diagnostics["DOCX_FIGURE_CHUNKING_SUMMARY"]
    assert (summary["placeholders"], summary["figure_chunks"], summary["figure_chunks_enabled"]) == (2, 0, False)


def test_a_figure_template_in_the_profile_shapes_only_what_is_embedded(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, *FLAGS)
    doc, _, text_chunks, _ = pipeline(tmp_path, FIXTURES / "table_image.docx", settings)
    templated = ProfileSettings(index_name="KB_T", document_prefix="passage: ", templates={"figure": "Image:"})
    [chunk] = figures.figure_chunks(doc, text_chunks, settings.docx, templated)
    assert chunk.embed_text == f"passage: Image:\n{chunk.text}"
    assert chunk.text.startswith("Figure in ")


@pytest.mark.parametrize("on", [(), ("extract_images",), ("inline_figure_placeholders",), ("figure_chunks",)])
def test_render_without_placeholders_is_the_plain_text(tmp_path: Path, on: tuple[str, ...]) -> None:
    settings = settings_with(tmp_path, *on)
    doc = load(tmp_path, FIXTURES / "header_image.docx", settings)
    assert figures.render_text(doc, settings.docx) == doc.text
    assert doc.text.startswith("ACME Corp internal\n\nThe travel policy")
