"""Chunkers selected by the profile's ``chunker.kind``: ``char``, ``tokens``, ``conditional``.

All three cut the same way and differ only in how they measure size: a window of
``size`` units starts where the previous one ended minus ``overlap``, and its end
is pulled back to the best boundary in its second half (paragraph, then line,
then sentence, then word), so chunks rarely stop mid-sentence. A ``[FIGURE:...]``
marker is never cut: a window ending inside one ends before it (or after it, if
the marker starts the window). ``conditional`` (seed 003) keeps a document up to
``min_chars_before_split`` characters as one chunk and otherwise splits by
characters.

``chunk_id`` is ``<doc_id>::<index>``: deterministic, so re-ingesting a document
upserts the same rows, and ``char_start`` in the metadata lets figure chunks find
the text chunk that covers a picture. Every chunk also records where it stands:
``heading_path`` (the section > subsection headings in force, a list, empty when the
document has none) and, for PDF, ``page`` (the page number the chunk starts on); citations
and page summaries read them. ``section_breaks`` (``[[offset, heading path], ...]``) and, for
PDF, ``page_breaks`` (``[[offset, page], ...]``) name where a section or page begins inside
the chunk (offsets into its text), so a citation gives the section and page of the sentence
it quotes, not of the chunk's start.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from backend.common.config import ChunkerSettings, ProfileSettings
from backend.core.embedding_text import chunk_header, content_type_of, document_input, document_title
from backend.core.types import Chunk
from backend.ingest.documents import Block, LoadedDocument

FIGURE_MARKER = re.compile(r"\[FIGURE:[^\]]*\]")
#: boundaries in order of preference; each pattern matches the separator after which a chunk may end
_BOUNDARIES = (re.compile(r"\n\s*\n"), re.compile(r"\n"), re.compile(r"(?<=[.!?;:])\s+"), re.compile(r"\s+"))
#: ``text -> [(start, end), ...]`` character spans of each token, in order
TokenSpans = Callable[[str], Sequence[tuple[int, int]]]


@dataclass(frozen=True)
class Span:
    start: int
    end: int


class _Measure:
    """Characters as units; ``_TokenMeasure`` swaps in token spans."""

    def __init__(self, text: str) -> None:
        self.text = text

    def advance(self, start: int, units: int) -> int:
        return min(len(self.text), start + units)

    def retreat(self, end: int, units: int) -> int:
        return max(0, end - units)


class _TokenMeasure(_Measure):
    def __init__(self, text: str, spans: Sequence[tuple[int, int]]) -> None:
        super().__init__(text)
        self.starts = [s for s, _ in spans]
        self.ends = [e for _, e in spans]

    def advance(self, start: int, units: int) -> int:
        first = bisect.bisect_left(self.ends, start + 1)
        last = first + units - 1
        return len(self.text) if last >= len(self.ends) - 1 else self.ends[last]

    def retreat(self, end: int, units: int) -> int:
        last = bisect.bisect_right(self.ends, end) - 1
        first = last - units + 1
        return 0 if first <= 0 else self.starts[first]


def _markers(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in FIGURE_MARKER.finditer(text)]


def _outside_markers(pos: int, start: int, markers: list[tuple[int, int]]) -> int:
    for a, b in markers:
        if a < pos < b:
            return a if a > start else b
    return pos


def _best_break(text: str, start: int, end: int) -> int:
    """The last preferred boundary in the second half of ``text[start:end]``."""
    low = start + (end - start) // 2
    window = text[low:end]
    for pattern in _BOUNDARIES:
        matches = list(pattern.finditer(window))
        if matches:
            return low + matches[-1].end()
    return end


def split_spans(text: str, size: int, overlap: int, measure: _Measure | None = None) -> list[Span]:
    """Overlapping windows of at most ``size`` units (a marker may stretch one)."""
    measure = measure or _Measure(text)
    markers = _markers(text)
    spans: list[Span] = []
    start = len(text) - len(text.lstrip())
    while start < len(text):
        end = measure.advance(start, size)
        if end < len(text):
            end = _outside_markers(_best_break(text, start, end), start, markers)
        piece = text[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append(Span(start + lead, start + len(piece.rstrip())))
        if end >= len(text):
            break
        nxt = measure.retreat(end, overlap) if overlap else end
        nxt = _word_start(text, nxt, end)
        nxt = _outside_markers(nxt, nxt - 1, markers)
        start = nxt if nxt > start else end
    return spans


def _word_start(text: str, pos: int, end: int) -> int:
    """Move an overlap start forward to the next sentence start inside the overlap,
    else to the next word, so a chunk never begins mid-word."""
    if pos == 0 or pos >= end:
        return pos
    for pattern in _BOUNDARIES[:3]:
        m = next((m for m in pattern.finditer(text, pos, end) if m.end() < end), None)
        if m:
            return m.end()
    if text[pos - 1].isspace():
        return pos
    m = _BOUNDARIES[3].search(text, pos, end)
    return m.end() if m else pos


class TextChunker:
    """Turns a document's text into ``Chunk`` objects for one profile."""

    def __init__(self, profile: ProfileSettings, token_spans: TokenSpans | None = None) -> None:
        self.profile = profile
        self.settings: ChunkerSettings = profile.chunker
        if self.settings.kind == "tokens" and token_spans is None:
            raise ValueError("chunker.kind 'tokens' needs the embedding model's tokenizer (token_spans)")
        self._token_spans = token_spans

    def spans(self, text: str) -> list[Span]:
        s = self.settings
        if s.kind == "tokens":
            assert self._token_spans is not None
            return split_spans(text, s.size, s.overlap, _TokenMeasure(text, self._token_spans(text)))
        if s.kind == "conditional" and len(text) <= s.min_chars_before_split:
            stripped = text.strip()
            return [Span(text.find(stripped), text.find(stripped) + len(stripped))] if stripped else []
        return split_spans(text, s.size, s.overlap)

    def chunk(self, document: LoadedDocument, text: str | None = None) -> list[Chunk]:
        text = document.text if text is None else text
        metadata: Mapping[str, Any] = document.metadata
        content_type = content_type_of(metadata)
        headings = heading_offsets(document, text)
        tables = table_runs(document, text)
        pages = page_offsets(document, text)
        ocr_spans = ocr_offsets(document, text)
        title = document_title(metadata, document.source)
        out = []
        for index, span in enumerate(self.spans(text)):
            body = text[span.start:span.end]
            path = heading_path(headings, span.start)
            header = chunk_header(self.profile, title, path)
            where: dict[str, Any] = {"char_start": span.start, "heading_path": path,
                                     "section_breaks": section_breaks(headings, span.start, span.end)}
            columns = next((row for header_end, end, row in tables if header_end <= span.start < end), None)
            if columns is not None:  # starts inside a table: its rows still need their column names
                where["table_header"] = columns
            if pages:
                where["page"] = page_at(pages, span.start)
                where["page_breaks"] = page_breaks(pages, span.start, span.end)
            if ocr_spans:
                where.update(ocr_metadata(ocr_spans, span.start, span.end))
            out.append(Chunk(
                chunk_id=f"{document.doc_id}::{index}", doc_id=document.doc_id, text=body, source=document.source,
                chunk_index=index, chunk_type="text", metadata={**metadata, **where},
                embed_text=document_input(body, self.profile, content_type, header),
            ))
        return out


def page_offsets(document: LoadedDocument, text: str) -> list[tuple[int, int]]:
    """``(offset, page number)`` where each page begins in ``text``, in order: a PDF page block,
    or the first OCR block of a page (a page sanitization changed is found by its first line,
    else skipped)."""
    out: list[tuple[int, int]] = []
    for found, _, block in _located(document, text, lambda b: b.role == "page" or "ocr_confidence" in b.attrs):
        number = block.attrs.get("page")
        if isinstance(number, int) and (not out or out[-1][1] != number):
            out.append((found, number))
    return out


def _located(document: LoadedDocument, text: str,
             wanted: Callable[[Block], bool]) -> list[tuple[int, int, Block]]:
    """``(start, end, block)`` of each wanted text block found in ``text``, in order."""
    out: list[tuple[int, int, Block]] = []
    pos = 0
    for block in document.blocks:
        if block.kind != "text" or not wanted(block) or not block.text.strip():
            continue
        found = text.find(block.text, pos)
        end = found + len(block.text)
        if found < 0:
            first = block.text.strip().splitlines()[0]
            found = text.find(first, pos)
            end = found + len(first)
        if found < 0:
            continue
        out.append((found, end, block))
        pos = found + 1
    return out


def ocr_offsets(document: LoadedDocument, text: str) -> list[tuple[int, int, float, bool]]:
    """``(start, end, confidence, low)`` of each OCR block in ``text``; ``[]`` for a document
    OCR never touched (its chunks get no OCR metadata)."""
    return [(start, end, float(block.attrs["ocr_confidence"]), bool(block.attrs.get("ocr_low_confidence")))
            for start, end, block in _located(document, text, lambda b: "ocr_confidence" in b.attrs)]


def ocr_metadata(spans: Sequence[tuple[int, int, float, bool]], start: int, end: int) -> dict[str, Any]:
    """Pure: the OCR metadata of the chunk ``text[start:end]``: the lowest confidence of the OCR
    blocks it overlaps and whether one of them was flagged low-confidence; ``{}`` when it
    overlaps none (text from a page's own text layer)."""
    hits = [(confidence, low) for a, b, confidence, low in spans if a < end and start < b]
    if not hits:
        return {}
    out: dict[str, Any] = {"ocr_confidence": min(c for c, _ in hits)}
    if any(low for _, low in hits):
        out["ocr_low_confidence"] = True
    return out


def page_at(pages: Sequence[tuple[int, int]], offset: int) -> int:
    """Pure: the page a chunk starting at ``offset`` begins on (the first page before any offset)."""
    number = pages[0][1]
    for start, page in pages:
        if start > offset:
            break
        number = page
    return number


def page_breaks(pages: Sequence[tuple[int, int]], start: int, end: int) -> list[list[int]]:
    """Pure: ``[offset in the chunk, page]`` of each page that begins inside ``text[start:end]``
    (after its first character), so a cited sentence's page can be found."""
    return [[offset - start, page] for offset, page in pages if start < offset < end]


def section_breaks(headings: Sequence[tuple[int, int, str]], start: int, end: int) -> list[list[Any]]:
    """Pure: ``[offset in the chunk, heading path]`` of each heading that begins inside
    ``text[start:end]`` (after its first character): the section in force from there on."""
    return [[offset - start, heading_path(headings, offset)] for offset, _, _ in headings if start < offset < end]


def table_runs(document: LoadedDocument, text: str) -> list[tuple[int, int, str]]:
    """``(end of the header row, end of the table, header row)`` of each run of table-row blocks
    found in ``text`` (a Markdown or HTML row is a block; a DOCX table is one block whose first
    line is its header), so a chunk that starts inside a table knows its column names."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    current: list[Any] | None = None
    for block in document.blocks:
        if block.kind != "text" or not block.text:
            continue
        found = text.find(block.text, pos)
        if found < 0:
            continue
        pos = found + len(block.text)
        if block.role != "table":
            if current is not None:
                out.append((current[0], current[1], current[2]))
            current = None
        elif current is None:
            first = block.text.split("\n", 1)[0]
            current = [found + len(first), pos, first]
        else:
            current[1] = pos
    if current is not None:
        out.append((current[0], current[1], current[2]))
    return out


def heading_offsets(document: LoadedDocument, text: str) -> list[tuple[int, int, str]]:
    """``(offset, level, heading)`` of each heading block found in ``text`` in reading order
    (a heading sanitization changed beyond recognition is skipped). Markdown and HTML headings
    carry their level, DOCX ones their "Heading <n>" style; others count as level 1."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    for block in document.blocks:
        if block.kind != "text" or block.role != "heading" or not block.text.strip():
            continue
        found = _heading_at(text, block.text, pos)
        if found < 0:
            continue
        out.append((found, _heading_level(block.attrs), block.text))
        pos = found + len(block.text)
    return out


def _heading_at(text: str, heading: str, pos: int) -> int:
    """Where ``heading`` starts as a line of its own at or after ``pos``: the heading "Firmware" is
    not the word in an earlier table row "Firmware update in progress". Anywhere, when no line holds
    it alone (a sanitized or re-wrapped heading)."""
    line = re.compile(r"^[ \t]*" + re.escape(heading.strip()) + r"[ \t]*$", re.MULTILINE).search(text, pos)
    if line:
        return line.start() + len(line.group()) - len(line.group().lstrip())
    return text.find(heading, pos)


_STYLE_LEVEL = re.compile(r"heading\s*(\d)", re.IGNORECASE)


def _heading_level(attrs: Mapping[str, Any]) -> int:
    """Markdown/HTML ``level``; DOCX "Heading <n>" styles; anything else (a title) is level 1."""
    level = attrs.get("level")
    if isinstance(level, int) and level > 0:
        return level
    m = _STYLE_LEVEL.search(str(attrs.get("style") or ""))
    return int(m.group(1)) if m and int(m.group(1)) > 0 else 1


def heading_path(headings: Sequence[tuple[int, int, str]], offset: int) -> list[str]:
    """Pure: the section > subsection path in force at ``offset`` (headings starting at or before it)."""
    path: list[tuple[int, str]] = []
    for start, level, heading in headings:
        if start > offset:
            break
        path = [(lv, h) for lv, h in path if lv < level] + [(level, heading)]
    return [h for _, h in path]


def hf_token_spans(tokenizer: Any) -> TokenSpans:
    """Adapter for a Hugging Face fast tokenizer (``LocalEmbedder.tokenizer``)."""

    def spans(text: str) -> Sequence[tuple[int, int]]:
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False)
        return [tuple(o) for o in enc["offset_mapping"]]

    return spans


def dedupe(chunks: list[Chunk], seen: set[str]) -> tuple[list[Chunk], int]:
    """Drop chunks whose ``content_hash`` is in ``seen`` (updated in place)."""
    kept = []
    for chunk in chunks:
        if chunk.content_hash in seen:
            continue
        seen.add(chunk.content_hash)
        kept.append(chunk)
    return kept, len(chunks) - len(kept)
