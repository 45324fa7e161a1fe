"""A chunk cut into sentences (pure), for sentence-level evidence and the extractive answerer.

A short line without closing punctuation standing alone is a *heading* (context, never text),
list markers are dropped, a table row is one unit rendered with its column names, a document's
fact line (owner, date) is ``meta``, and a chunk cut mid-sentence drops its last fragment (the
next chunk of the document repeats it whole). What a chunk leaves open (its heading, a table's
column names) carries over to the next chunk of the same document (``ReadingState``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional, Tuple

from backend.core.sentence_words import WORD


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_FIGURE_MARK = re.compile(r"\[FIGURE:[^\]]*\]")
_LIST_MARKER = re.compile(r"^\s*(?:[-*\u2022\u2013]|\d{1,2}[.)]|[a-z][.)])\s+")
_MD_HEADING = re.compile(r"^\s*#{1,6}\s+")
_CLOSING = re.compile(r"[.!?:;,]\s*$")
#: a line ending like this continues on the next line; it is never a heading
_OPEN_END = re.compile(r"(,|\b(or|and|to|of|the|a|an|with|for|by|in|on|at))\s*$")
_ENDED = re.compile(r"[.!?:;)\"'\]]\s*$")
#: the end of a list item the chunk boundary cut: a bare number (its unit is on the next chunk) or a word that goes on
_CUT_ITEM = re.compile(r"(\d|,|\b(or|and|to|of|the|a|an|with|for|by|in|on|at|than|per))\s*$", re.IGNORECASE)


def _is_table_row(line: str) -> bool:
    return line.count("|") >= 1 and len([c for c in line.split("|") if c.strip()]) >= 2


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def table_cells(line: str) -> tuple[str, ...]:
    """The cells of a table row line ("Status LED | Meaning | What to do")."""
    return tuple(_cells(line))


def _is_heading(line: str, prev_blank: bool, next_line: str | None) -> bool:
    """A title or section heading: marked with ``#``, or a short line with no closing
    punctuation that starts with a capital and is followed by a new block."""
    if _MD_HEADING.match(line):
        return True
    words = WORD.findall(line)
    if not words or len(words) > 12 or len(line) > 90 or _CLOSING.search(line) or _LIST_MARKER.match(line):
        return False
    if line.count(": ") > 1 or "\u00b7" in line:  # "Owner: People Team · Policy number: HR-101" is a fact line
        return False
    if _OPEN_END.search(line):  # "Call the hotline +31 20 555 0111 (24/7), or" goes on below
        return False
    if not (line[0].isupper() or line[0].isdigit()):
        return False
    if next_line is None or not next_line.strip():
        return True
    nxt = next_line.strip()
    return prev_blank or nxt[0].isupper() or bool(_LIST_MARKER.match(nxt)) or _is_table_row(nxt)


def _looks_like_header(cells: list[str]) -> bool:
    """A table's first row names its columns: short cells, no figures, no sentences. A
    chunk that starts in the middle of a table starts with a data row instead."""
    filled = [c for c in cells if c]
    return bool(filled) and all(len(WORD.findall(c)) <= 6 and not any(ch.isdigit() for ch in c)
                                and not _CLOSING.search(c) for c in filled)


def _is_meta(line: str) -> bool:
    """A document's fact line of several ``Label: value`` fields ("Section FE-02 - Owner:
    Field Engineering - Last reviewed: 2026-01-27"): it names the document, it answers
    nothing but questions about the document itself."""
    return line.count(": ") >= 2 and ("\u00b7" in line or line.count(" - ") >= 2)


#: what a chunk's reading left open for the next chunk of the same document: the heading
#: and the column names of a table that goes on
ReadingState = Tuple[Optional[str], Optional[Tuple[str, ...]]]


def _units(text: str, state: ReadingState = (None, None)) -> tuple[list[tuple[str | None, str, str]], ReadingState]:
    """``(heading, kind, text)`` per block of a chunk (kind ``para``, ``item``, ``row`` or
    ``meta``), and the state the next chunk of the document starts from."""
    lines = [ln.rstrip() for ln in _FIGURE_MARK.sub(" ", text).splitlines()]
    units: list[tuple[str | None, str, str]] = []
    heading, header_cells = state
    buffer: list[str] = []
    kind = "para"

    def flush() -> None:
        nonlocal buffer
        if buffer:
            units.append((heading, kind, " ".join(" ".join(buffer).split())))
        buffer = []

    prev_blank = True
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            flush()
            prev_blank = True
            continue
        nxt = next((ln for ln in lines[i + 1:]), None)
        if _is_table_row(line):
            flush()
            cells = _cells(line)
            if (header_cells is None or len(cells) != len(header_cells)) and _looks_like_header(cells):
                header_cells = tuple(cells)  # the first row of a table names its columns
            else:
                names = header_cells if header_cells is not None and len(cells) == len(header_cells) else ("",) * len(cells)
                pairs = [f"{h}: {c.rstrip('.')}" if h else c.rstrip(".") for h, c in zip(names, cells) if c]
                units.append((heading, "row", "; ".join(pairs) + "."))
            prev_blank = False
            continue
        header_cells = None
        if _is_meta(line):
            flush()
            units.append((heading, "meta", " ".join(line.split())))
        elif _is_heading(line, prev_blank, nxt):
            flush()
            heading = " ".join(_MD_HEADING.sub("", line).split())
        elif _LIST_MARKER.match(line):
            flush()
            kind = "item"
            buffer = [_LIST_MARKER.sub("", line)]
        else:
            starts_lower = line[0].islower()
            # a PDF wraps lines: a line continues the paragraph above unless that one ended a
            # sentence; a list item is continued only by a line starting in lower case
            continues = bool(buffer) and (starts_lower or (kind == "para" and not _CLOSING.search(buffer[-1])))
            if not continues:
                flush()
                kind = "para"
            buffer.append(line)
        prev_blank = False
    flush()
    return units, (heading, header_cells)


def segment(text: str) -> list[tuple[str | None, str]]:
    """``(heading, sentence)`` pairs of a passage: headings are context, list markers
    dropped, table rows kept whole, tiny fragments (< 3 words; < 2 for a list item) skipped."""
    return [(heading, sentence) for heading, _, sentence in segment_kinds(text)]


def segment_kinds(text: str) -> list[tuple[str | None, str, str]]:
    """``(heading, kind, sentence)``: :func:`segment` with the kind of block each
    sentence came from (``para``, ``item`` of a list, ``row`` of a table)."""
    return [(heading, kind, sentence) for heading, kind, sentence, _ in segment_chunk(text)[0]]


@lru_cache(maxsize=4096)
def segment_chunk(text: str, state: ReadingState = (None, None)) -> tuple[list[tuple[str | None, str, str, int]], ReadingState]:
    """``(heading, kind, sentence, block number)`` of a chunk read from ``state``, and the
    state the next chunk of the same document starts from. Cached: every question reads
    the same few hundred chunks again (callers must not change the list)."""
    out: list[tuple[str | None, str, str, int]] = []
    units, end = _units(text, state)
    flat = " ".join(_FIGURE_MARK.sub(" ", text).split())
    for n, (heading, kind, body) in enumerate(units):
        parts = [body] if kind in ("row", "meta") else _SENTENCE_END.split(body)
        if n == len(units) - 1 and kind != "row" and kind != "meta" and not _ENDED.search(body) \
                and flat.endswith(body[-40:]) and (kind == "para" or _CUT_ITEM.search(body)):
            # the chunk was cut mid-sentence; the next chunk repeats it whole (overlap). A list item needs no
            # full stop ("- S3 safety boots"): it counts as cut only when it ends on a number or a word that
            # goes on ("RPO 15", "boots and")
            parts = parts[:-1]
        # a list item is a sentence with or without a full stop ("- S3 safety boots"), and may be short
        least = 2 if kind == "item" else 3
        out.extend((heading, kind, s.strip(), n) for s in parts if len(WORD.findall(s)) >= least)
    return out, end


def split_sentences(text: str) -> list[str]:
    """Sentences of a passage (see :func:`segment`), without their headings."""
    return [s for _, s in segment(text)]
