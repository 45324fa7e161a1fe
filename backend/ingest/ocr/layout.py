"""OCR lines -> blocks in reading order (pure: boxes in, blocks out).

An OCR engine returns lines as boxes in no useful order: sorting them top to bottom
interleaves the columns of a magazine page, which makes every chunk nonsense. Two steps:

1. Lines join into a block when one sits under the other (their boxes overlap horizontally by
   at least half the narrower one), the vertical gap is under ``PARAGRAPH`` line heights and
   their heights are alike (a headline does not join the column under it). A block is a
   paragraph, or a column's run of paragraphs with no blank line between them.
2. The blocks are ordered by a recursive XY-cut, the classic of page segmentation, on their
   boxes: a set of blocks that a horizontal gap crosses from edge to edge is cut there (top
   part first), one that a vertical gap (a gutter) crosses is cut into columns (left first),
   and what no gap crosses is read top to bottom.

Before step 1, a line the detector drew across a narrow column gutter (a magazine's 1.5 mm
gutter at 300 dpi) is split at the word gap over the gutter (``split_at_gutters``): a gutter
is an x-range that few lines cross between ranges that many lines cover, found from the
page's own lines.

Gaps are measured in the page's median line height ``h``, so the rules hold at any
resolution. A set cut into three or more columns of short cells (a few words) whose rows line
up is a simple table: one block, a row per line, cells joined by `` | ``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median
from typing import Literal, Sequence

from backend.ingest.ocr.port import OcrLine

#: a vertical gap over this many line heights between two lines separates their blocks
PARAGRAPH = 0.5
#: lines whose heights differ by more than this factor never join one block (a headline, its column)
HEIGHT_RATIO = 1.6
#: a table: at least this many columns, rows lined up, cells of at most this many words (median)
TABLE_COLUMNS = 3
TABLE_CELL_WORDS = 3
#: a gutter: x crossed by at most this share of the lines covering the busiest x on each side ...
GUTTER_SHARE = 0.5
#: ... within this many line heights
GUTTER_WINDOW = 4.0
#: too deep a recursion means a degenerate page (thousands of single-character boxes): stop cutting
_MAX_DEPTH = 40


@dataclass(frozen=True)
class LayoutBlock:
    """One paragraph or table: its text (lines joined by newlines), its lines' confidence
    (mean, weighted by characters) and its box."""

    kind: Literal["paragraph", "table"]
    text: str
    confidence: float
    lines: int
    x0: float
    y0: float
    x1: float
    y1: float


def _rows(lines: Sequence[OcrLine]) -> list[list[OcrLine]]:
    """Lines grouped into rows (vertical centres within half a line height), top to bottom,
    each row left to right."""
    rows: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: ((ln.y0 + ln.y1) / 2, ln.x0)):
        centre = (line.y0 + line.y1) / 2
        if rows:
            last = rows[-1]
            last_centre = median((ln.y0 + ln.y1) / 2 for ln in last)
            if abs(centre - last_centre) <= 0.5 * median(ln.height for ln in last):
                last.append(line)
                continue
        rows.append([line])
    return [sorted(row, key=lambda ln: ln.x0) for row in rows]


def _block(kind: Literal["paragraph", "table"], lines: Sequence[OcrLine], text: str) -> LayoutBlock:
    weight = sum(max(1, len(ln.text)) for ln in lines)
    confidence = sum(ln.confidence * max(1, len(ln.text)) for ln in lines) / weight
    return LayoutBlock(kind, text, round(confidence, 4), len(lines), min(ln.x0 for ln in lines),
                       min(ln.y0 for ln in lines), max(ln.x1 for ln in lines), max(ln.y1 for ln in lines))


def _paragraph(lines: Sequence[OcrLine]) -> LayoutBlock:
    return _block("paragraph", lines, "\n".join(" ".join(ln.text for ln in row) for row in _rows(lines)))


def _table(columns: list[list[OcrLine]], h: float) -> LayoutBlock | None:
    """The columns of a band as one table block, or None when they do not look like one
    (too few columns, rows that do not line up, or cells as long as prose lines)."""
    if len(columns) < TABLE_COLUMNS:
        return None
    cells = [line for column in columns for line in column]
    if median(len(ln.text.split()) for ln in cells) > TABLE_CELL_WORDS:
        return None
    rows = _rows(cells)
    if len(rows) < 2 or sum(1 for row in rows if len(row) >= 2) < 0.6 * len(rows):
        return None
    # a cell is the lines of one row in one column (a wide cell's words may have come as two boxes)
    text_rows = []
    for row in rows:
        by_column = [" ".join(ln.text for ln in row if ln in column) for column in columns]
        text_rows.append(" | ".join(by_column).strip())
    return _block("table", cells, "\n".join(text_rows))


def _joined(lines: Sequence[OcrLine], h: float) -> list[list[OcrLine]]:
    """Step 1 of the module docstring: lines grouped into blocks (union-find over neighbours)."""
    order = sorted(range(len(lines)), key=lambda i: lines[i].y0)
    parent = list(range(len(lines)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for pos, i in enumerate(order):
        a = lines[i]
        for j in order[pos + 1:]:
            b = lines[j]
            if b.y0 - a.y1 > PARAGRAPH * h:
                break
            narrower = min(a.x1 - a.x0, b.x1 - b.x0)
            overlap = min(a.x1, b.x1) - max(a.x0, b.x0)
            alike = max(a.height, b.height) <= HEIGHT_RATIO * min(a.height, b.height)
            if overlap >= 0.5 * narrower and alike:
                parent[root(j)] = root(i)
    groups: dict[int, list[OcrLine]] = {}
    for i in order:
        groups.setdefault(root(i), []).append(lines[i])
    return list(groups.values())


def _box(group: Sequence[OcrLine]) -> tuple[float, float, float, float]:
    return (min(ln.x0 for ln in group), min(ln.y0 for ln in group), max(ln.x1 for ln in group),
            max(ln.y1 for ln in group))


def _cut_groups(groups: list[list[OcrLine]], axis: Literal["x", "y"]) -> list[list[list[OcrLine]]]:
    """The groups split at every gap their boxes leave along ``axis``, in order."""
    lo, hi = (0, 2) if axis == "x" else (1, 3)
    ordered = sorted(groups, key=lambda g: _box(g)[lo])
    parts: list[list[list[OcrLine]]] = [[ordered[0]]]
    reach = _box(ordered[0])[hi]
    for group in ordered[1:]:
        box = _box(group)
        if box[lo] > reach:
            parts.append([])
        parts[-1].append(group)
        reach = max(reach, box[hi])
    return parts


def _cut(groups: list[list[OcrLine]], h: float, depth: int) -> list[LayoutBlock]:
    """Step 2 of the module docstring."""
    if len(groups) == 1:
        return [_paragraph(groups[0])]
    if depth < _MAX_DEPTH:
        bands = _cut_groups(groups, "y")
        if len(bands) > 1:
            return [block for band in bands for block in _cut(band, h, depth + 1)]
        columns = _cut_groups(groups, "x")
        if len(columns) > 1:
            table = _table([[ln for g in column for ln in g] for column in columns], h)
            if table is not None:
                return [table]
            return [block for column in columns for block in _cut(column, h, depth + 1)]
    return [_paragraph(g) for g in sorted(groups, key=lambda g: (_box(g)[1], _box(g)[0]))]


def gutters(lines: Sequence[OcrLine], h: float) -> list[tuple[float, float]]:
    """Pure: the column gutters, x-ranges that at most ``GUTTER_SHARE`` as many lines cross as
    cover the busiest x within ``GUTTER_WINDOW`` line heights on *each* side (a local dip in the
    count of lines covering each x; a short column beside a long one still shows its gutter)."""
    if len(lines) < 6:
        return []
    width = max(1.0, h / 8)
    left = min(ln.x0 for ln in lines)
    bins = int((max(ln.x1 for ln in lines) - left) / width) + 1
    cover = [0] * bins
    for ln in lines:  # the bins a line covers whole, so a gutter of two bins shows at least one
        for b in range(math.ceil((ln.x0 - left) / width), math.floor((ln.x1 - left) / width)):
            cover[b] += 1
    k = max(1, int(GUTTER_WINDOW * h / width))
    dip = [bool(cover[max(0, b - k):b]) and bool(cover[b + 1:b + 1 + k]) and
           cover[b] <= GUTTER_SHARE * min(max(cover[max(0, b - k):b]), max(cover[b + 1:b + 1 + k]))
           for b in range(bins)]
    out: list[tuple[float, float]] = []
    b = 0
    while b < bins:
        if dip[b]:
            start = b
            while b < bins and dip[b]:
                b += 1
            out.append((left + start * width, left + b * width))
        else:
            b += 1
    return out


def _split_line(line: OcrLine, gutter: tuple[float, float]) -> list[OcrLine]:
    """``line`` cut at the word gap that overlaps ``gutter``; ``[line]`` when no gap does."""
    words = line.words
    for i in range(len(words) - 1):
        gap = (words[i][2], words[i + 1][1])
        if gap[0] < gutter[1] and gutter[0] < gap[1]:
            before, after = words[:i + 1], words[i + 1:]
            return [OcrLine(" ".join(w[0] for w in part), part[0][1], line.y0, part[-1][2], line.y1, line.confidence,
                            part) for part in (before, after)]
    return [line]


def split_at_gutters(lines: Sequence[OcrLine], h: float) -> list[OcrLine]:
    """Pure: every line of text height that crosses a gutter, split at the word gap over it."""
    found = gutters(lines, h)
    if not found:
        return list(lines)
    out: list[OcrLine] = []
    for line in lines:
        pieces = [line]
        if line.words and line.height <= HEIGHT_RATIO * h:
            for gutter in found:
                pieces = [part for piece in pieces for part in (
                    _split_line(piece, gutter) if piece.x0 < gutter[0] and gutter[1] < piece.x1 else [piece])]
        out.extend(pieces)
    return out


def reading_order(lines: Sequence[OcrLine]) -> list[LayoutBlock]:
    """The blocks of one page in reading order (see the module docstring); ``[]`` for no lines."""
    kept = [ln for ln in lines if ln.text.strip() and ln.x1 > ln.x0 and ln.y1 > ln.y0]
    if not kept:
        return []
    h = median(ln.height for ln in kept)
    kept = split_at_gutters(kept, h)
    return _cut(_joined(kept, h), h, 0)
