"""DOCX figures in the text stream: ``[FIGURE:<id>]`` placeholders and figure chunks.

The pipeline calls :func:`render_text` to turn a loaded document into the text it
chunks, then :func:`figure_chunks` to add one ``chunk_type="figure"`` chunk per
distinct image. A figure chunk stores and embeds only a text description built
from what the document says about the picture (caption, title, alt text, the
sentence around it); the image itself stays a file under the assets dir, named by
``image_ref``. ``parent_chunk_id`` names the text chunk that holds the figure's
placeholder, or, with placeholders off, the text chunk covering the position
where the picture stood.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import structlog

from backend.common.config import DocxSettings, ProfileSettings
from backend.core.embedding_text import content_type_of, document_input
from backend.core.types import Chunk
from backend.ingest.documents import LoadedDocument

log = structlog.get_logger(__name__)

IMAGES_SUMMARY = "DOCX_IMAGES_SUMMARY"
CHUNKING_SUMMARY = "DOCX_FIGURE_CHUNKING_SUMMARY"
_DESCRIBED = ("caption", "title", "alt", "near_text", "ocr_text")


def placeholder(figure_id: str) -> str:
    return f"[FIGURE:{figure_id}]"


def _render(doc: LoadedDocument, settings: DocxSettings) -> tuple[str, dict[str, int]]:
    """The text and, per figure, the offset of its first reference in that text
    (its placeholder, or the end of the text before it when placeholders are off)."""
    pieces: list[str] = []
    offsets: dict[str, int] = {}
    length = 0
    for block in doc.blocks:
        figure_id = block.attrs.get("figure_id") if block.kind == "image" else None
        if block.kind == "text" and block.text:
            piece = block.text
        elif figure_id and settings.inline_figure_placeholders:
            piece = placeholder(figure_id)
        else:
            if figure_id:
                offsets.setdefault(figure_id, length)
            continue
        start = length + 2 if pieces else 0
        if figure_id:
            offsets.setdefault(figure_id, start)
        pieces.append(piece)
        length = start + len(piece)
    return "\n\n".join(pieces), offsets


def render_text(doc: LoadedDocument, settings: DocxSettings) -> str:
    """Text blocks joined by blank lines, with ``[FIGURE:<id>]`` as its own paragraph
    wherever a picture stood when ``inline_figure_placeholders`` is on. With
    placeholders off this is exactly ``doc.text``, whatever the other flags say."""
    return _render(doc, settings)[0]


def _merged_figures(doc: LoadedDocument) -> dict[str, dict[str, Any]]:
    """One entry per figure id in order of first reference; empty descriptive fields
    are filled from later references of the same picture."""
    figures: dict[str, dict[str, Any]] = {}
    for block in doc.blocks:
        if block.kind != "image" or not block.attrs.get("figure_id"):
            continue
        merged = figures.setdefault(block.attrs["figure_id"], dict(block.attrs))
        for key in _DESCRIBED:
            if not merged.get(key) and block.attrs.get(key):
                merged[key] = block.attrs[key]
    return figures


def describe(attrs: dict[str, Any], source: str) -> str:
    """Deterministic description of a figure from the document's own words."""
    lines = [f"Figure in {Path(source).name}"]
    seen: set[str] = set()
    for label, key in (("Caption", "caption"), ("Title", "title"), ("Alt text", "alt"), ("Context", "near_text"),
                       ("Text in the picture (OCR)", "ocr_text")):
        value = " ".join(str(attrs.get(key) or "").split())
        if value and value.lower() not in seen:
            seen.add(value.lower())
            lines.append(f"{label}: {value}")
    if len(lines) == 1:
        lines.append("No caption, title or alt text in the document.")
    return "\n".join(lines)


def _spans(text: str, chunks: Sequence[Chunk]) -> list[tuple[int, int] | None]:
    """Where each text chunk sits in the rendered text: ``char_start`` metadata when the
    chunker recorded it, else the first verbatim match after the previous chunk."""
    spans: list[tuple[int, int] | None] = []
    cursor = 0
    for chunk in chunks:
        start = chunk.metadata.get("char_start")
        if not isinstance(start, int):
            start = text.find(chunk.text, cursor)
            if start < 0:
                start = text.find(chunk.text)
        if start is None or start < 0:
            spans.append(None)
            continue
        spans.append((start, start + len(chunk.text)))
        cursor = start + 1
    return spans


def _parent(figure_id: str, offset: int | None, chunks: Sequence[Chunk],
            spans: list[tuple[int, int] | None], use_marker: bool) -> tuple[Chunk | None, str]:
    if use_marker:
        mark = placeholder(figure_id)
        hit = next((c for c in chunks if mark in c.text), None)
        if hit is not None:
            return hit, "placeholder"
    located = [(c, s) for c, s in zip(chunks, spans) if s is not None]
    if offset is None or not located:
        return None, "none"
    covering = next((c for c, (a, b) in located if a <= offset <= b), None)
    if covering is None:
        before = [c for c, (a, _) in located if a <= offset]
        covering = before[-1] if before else located[0][0]
    return covering, "position"


def _figure_chunk(doc: LoadedDocument, attrs: dict[str, Any], index: int, parent: Chunk | None,
                  profile: ProfileSettings) -> Chunk:
    text = describe(attrs, doc.source)
    content_type = "figure" if "figure" in profile.templates else content_type_of(doc.metadata)
    metadata = {
        **doc.metadata,
        "figure_id": attrs["figure_id"],
        "image_ref": attrs.get("image_ref"),
        "image_content_type": attrs.get("content_type"),
        "caption": attrs.get("caption") or "",
        "alt": attrs.get("alt") or "",
        **({"ocr_confidence": attrs["ocr_confidence"]} if attrs.get("ocr_text") else {}),
        "parent_chunk_id": parent.chunk_id if parent else None,
        "parent_chunk_local_index": parent.chunk_index if parent else None,
    }
    return Chunk(chunk_id=f"{doc.doc_id}::fig::{attrs['figure_id']}", doc_id=doc.doc_id, text=text,
                 source=doc.source, chunk_index=index, chunk_type="figure", metadata=metadata,
                 embed_text=document_input(text, profile, content_type))


def applies_to(doc: LoadedDocument) -> bool:
    """Whether a document goes through figure rendering and chunking: every DOCX
    (the loader always records ``DOCX_IMAGES_SUMMARY``) and anything with image blocks."""
    return IMAGES_SUMMARY in doc.diagnostics or any(b.kind == "image" for b in doc.blocks)


def figure_chunks(doc: LoadedDocument, text_chunks: list[Chunk], settings: DocxSettings,
                  profile: ProfileSettings) -> list[Chunk]:
    """One figure chunk per distinct picture when ``figure_chunks`` is on, numbered after
    the text chunks. Records ``DOCX_FIGURE_CHUNKING_SUMMARY`` for DOCX documents."""
    figures = _merged_figures(doc)
    out: list[Chunk] = []
    how: dict[str, int] = {"placeholder": 0, "position": 0, "none": 0}
    text, offsets = _render(doc, settings)
    if settings.figure_chunks and figures:
        spans = _spans(text, text_chunks)
        index = max((c.chunk_index for c in text_chunks), default=-1) + 1
        for figure_id, attrs in figures.items():
            parent, by = _parent(figure_id, offsets.get(figure_id), text_chunks, spans,
                                 settings.inline_figure_placeholders)
            how[by] += 1
            out.append(_figure_chunk(doc, attrs, index, parent, profile))
            index += 1
    if IMAGES_SUMMARY in doc.diagnostics:
        _summarize(doc, settings, figures, out, how)
    return out


def _summarize(doc: LoadedDocument, settings: DocxSettings, figures: dict[str, Any],
               chunks: list[Chunk], how: dict[str, int]) -> None:
    image_blocks = sum(1 for b in doc.blocks if b.kind == "image" and b.attrs.get("figure_id"))
    summary = {
        "image_blocks": image_blocks,
        "figures": len(figures),
        "placeholders": image_blocks if settings.inline_figure_placeholders else 0,
        "figure_chunks": len(chunks),
        "parent_links": sum(1 for c in chunks if c.metadata.get("parent_chunk_id")),
        "parent_by_placeholder": how["placeholder"],
        "parent_by_position": how["position"],
        "figure_chunks_enabled": settings.figure_chunks,
    }
    doc.diagnostics[CHUNKING_SUMMARY] = summary
    log.info(CHUNKING_SUMMARY, doc_id=doc.doc_id, **summary)
