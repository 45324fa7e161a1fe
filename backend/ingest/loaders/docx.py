"""DOCX loader: text in reading order, plus image blocks when figures are on.

Reading order is headers (de-duplicated across sections), then the body in
document order (paragraphs, tables as `` | ``-joined rows, text-box paragraphs
after the paragraph that anchors them, the text of ``w:altChunk`` parts where
they stand, see ``docx_altchunk``), then footers. Text blocks are the same
whatever the DOCX flags say; image blocks are inserted *between* them, right
after the paragraph or table that holds the picture. That is what keeps the
flags-off rendering byte-identical to the text-only one.

python-docx opens the package and provides the element tree; lxml queries on it
cover what python-docx does not model (drawings, VML, text boxes, mc:AlternateContent).
"""

from __future__ import annotations

import bisect
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import docx
import structlog
from docx.opc.exceptions import PackageNotFoundError
from docx.styles import BabelFish
from lxml import etree

from backend.common.config import DocxSettings, IngestLimits
from backend.common.errors import LoaderError
from backend.ingest.documents import Block, LoadedDocument
from backend.ingest.loaders.docx_altchunk import AltChunkReader
from backend.ingest.loaders.docx_images import Figure, ImageCatalog, RawRef, find_refs, superseded
from backend.ingest.loaders.docx_package import DocxPackage, python_docx_copy, read_package, withhold_binaries

log = structlog.get_logger(__name__)

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
W_P, W_R, W_TBL, W_TR, W_TC = (f"{{{_W}}}{t}" for t in ("p", "r", "tbl", "tr", "tc"))
W_ALT_CHUNK = f"{{{_W}}}altChunk"
_CONTAINERS = {f"{{{_W}}}{t}" for t in ("sdt", "sdtContent", "customXml", "ins", "smartTag")}
_CAPTION_TEXT = re.compile(r"^(?:figure|fig\.)\s*\d", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
NEAR_TEXT_CHARS = 300


@dataclass
class _TextItem:
    text: str
    role: str
    region: str
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def is_caption(self) -> bool:
        return self.attrs.get("style", "").lower() == "caption" or bool(_CAPTION_TEXT.match(self.text))


@dataclass
class _ImageItem:
    figure: Figure
    ref: RawRef
    role: str
    region: str
    #: index of the text item of the paragraph/table that holds the picture
    anchor: int | None
    #: the table row around a picture in a table, a better context than the whole table
    context: str = ""


_Item = _TextItem | _ImageItem


def _nearest(element: etree._Element, tag: str) -> etree._Element | None:
    return next(element.iterancestors(tag), None)


def paragraph_text(p: etree._Element) -> str:
    """Text of the paragraph's own runs (not of text boxes nested in its drawings)."""
    runs = (r for r in p.iter(W_R) if _nearest(r, W_P) is p and not superseded(r))
    return "".join(getattr(r, "text", "") or "" for r in runs).strip()


def row_text(tr: etree._Element) -> str:
    """Cells joined by `` | `` (a merged cell appears once); empty if every cell is."""
    cells = [" ".join(t for t in (paragraph_text(p) for p in tc.iter(W_P) if not superseded(p)) if t)
             for tc in tr.iter(W_TC) if _nearest(tc, W_TR) is tr]
    return " | ".join(cells) if any(cells) else ""


def table_text(tbl: etree._Element) -> str:
    """One line per row of this table (nested tables' rows live inside their cell)."""
    rows = (row_text(tr) for tr in tbl.iter(W_TR) if _nearest(tr, W_TBL) is tbl)
    return "\n".join(r for r in rows if r)


class _Walker:
    """Turns one story (body, header or footer part) into items in reading order."""

    def __init__(self, styles: dict[str, str], catalog: ImageCatalog, alt_chunks: AltChunkReader | None = None) -> None:
        self.styles = styles
        self.catalog = catalog
        self.alt_chunks = alt_chunks
        self.items: list[_Item] = []

    def story(self, root: etree._Element, part: str, region: str) -> list[_Item]:
        start = len(self.items)
        for element in _block_elements(root):
            self._element(element, part, region)
        return self.items[start:]

    def _element(self, element: etree._Element, part: str, region: str) -> None:
        if element.tag == W_ALT_CHUNK:
            if self.alt_chunks is not None:
                for block in self.alt_chunks.blocks(part, element.get(f"{{{_R}}}id", "")):
                    self._text(block.text, block.role if region == "body" else region, region, dict(block.attrs))
            return
        if element.tag == W_TBL:
            anchor = self._text(table_text(element), _role(region, element), region, {})
        else:
            style = self._style(element)
            anchor = self._text(paragraph_text(element), _role(region, element, style), region,
                                {"style": style} if style else {})
            for inner in element.iter(W_P):
                if inner is not element and not superseded(inner):
                    self._text(paragraph_text(inner), _role(region, inner), region, {"textbox": True})
        for ref in find_refs(element):
            figure = self.catalog.resolve(part, ref)
            if figure is not None:
                row = _nearest(ref.element, W_TR) if element.tag == W_TBL else None
                context = row_text(row) if row is not None else ""
                self.items.append(_ImageItem(figure, ref, _role(region, element), region, anchor, context))

    def _text(self, text: str, role: str, region: str, attrs: dict[str, Any]) -> int | None:
        if not text:
            return None
        self.items.append(_TextItem(text, role, region, attrs))
        return len(self.items) - 1

    def _style(self, p: etree._Element) -> str:
        style = p.find(f"{{{_W}}}pPr/{{{_W}}}pStyle")
        return self.styles.get(style.get(f"{{{_W}}}val", ""), "") if style is not None else ""


def _role(region: str, element: etree._Element, style: str = "") -> str:
    """Block role: ``header``/``footer`` outside the body, else table, heading or paragraph."""
    if region != "body":
        return region
    if element.tag == W_TBL:
        return "table"
    low = style.lower()
    return "heading" if low.startswith("heading") or low == "title" else "paragraph"


def _block_elements(root: etree._Element) -> Iterator[etree._Element]:
    """Top-level paragraphs, tables and altChunks in document order, looking through
    content controls and tracked insertions that wrap them."""
    for child in root:
        if child.tag in (W_P, W_TBL, W_ALT_CHUNK):
            yield child
        elif child.tag in _CONTAINERS:
            yield from _block_elements(child)


def _open(package: DocxPackage, limits: IngestLimits) -> Any:
    try:
        return docx.Document(python_docx_copy(package, limits))
    except (PackageNotFoundError, ValueError, KeyError, etree.XMLSyntaxError, zipfile.BadZipFile,
            NotImplementedError) as exc:
        raise LoaderError(f"{package.path}: corrupt DOCX: {exc}", path=str(package.path)) from exc


def _story_parts(document: Any, kind: str) -> Iterator[Any]:
    """Header or footer parts of every section, each part once, in section order."""
    seen: set[str] = set()
    for section in document.sections:
        for reference in section._sectPr.findall(f"{{{_W}}}{kind}Reference"):
            part = document.part.related_parts.get(reference.get(f"{{{_R}}}id", ""))
            if part is not None and str(part.partname) not in seen:
                seen.add(str(part.partname))
                yield part


def style_names(document: Any) -> dict[str, str]:
    """Style id -> UI name, read from the XML: python-docx's own style objects fail
    (``KeyError: None``) on a ``w:style`` without ``w:type``, which Word accepts."""
    names = {}
    for style in document.styles.element.iterchildren(f"{{{_W}}}style"):
        style_id = style.get(f"{{{_W}}}styleId")
        name = style.find(f"{{{_W}}}name")
        if style_id:
            raw = name.get(f"{{{_W}}}val", "") if name is not None else ""
            names[style_id] = BabelFish.internal2ui(raw) if raw else ""
    return names


def _walk(document: Any, catalog: ImageCatalog, main_part: str,
          alt_chunks: AltChunkReader | None = None) -> list[_Item]:
    styles = style_names(document)
    walker = _Walker(styles, catalog, alt_chunks)
    for kind, region in (("header", "header"), ("body", "body"), ("footer", "footer")):
        if kind == "body":
            walker.story(document.element.body, main_part, "body")
            continue
        contents: set[tuple[Any, ...]] = set()
        for part in _story_parts(document, kind):
            start = len(walker.items)
            items = walker.story(part.element, str(part.partname).lstrip("/"), region)
            key = tuple(i.text if isinstance(i, _TextItem) else i.figure.member for i in items)
            if key in contents:
                del walker.items[start:]
            contents.add(key)
    return walker.items


def _sentence(text: str, last: bool = False) -> str:
    parts = [s for s in _SENTENCE_END.split(text) if s.strip()]
    sentence = (parts[-1] if last else parts[0]) if parts else ""
    if len(sentence) <= NEAR_TEXT_CHARS:
        return sentence
    return sentence[:NEAR_TEXT_CHARS].rsplit(" ", 1)[0]


def _neighbours(items: list[_Item], texts: list[int], image: _ImageItem, index: int) -> tuple[str, str]:
    """``(caption, near_text)`` for a picture, from the text around it in its region.
    ``texts`` holds the indexes of the region's text items, ascending."""
    own = items[image.anchor] if image.anchor is not None else None
    pivot = image.anchor if image.anchor is not None else index
    later, earlier = bisect.bisect_right(texts, index), bisect.bisect_left(texts, pivot)
    after = items[texts[later]] if later < len(texts) else None
    before = items[texts[earlier - 1]] if earlier > 0 else None
    candidates = [it for it in (own, after, before) if isinstance(it, _TextItem)]
    caption = next((it.text for it in candidates if it.is_caption), "")
    if image.context:
        near = _sentence(image.context)
    elif isinstance(own, _TextItem) and not own.is_caption:
        near = _sentence(own.text)
    elif isinstance(before, _TextItem) and not before.is_caption:
        near = _sentence(before.text, last=True)
    elif isinstance(after, _TextItem) and not after.is_caption:
        near = _sentence(after.text)
    else:
        near = ""
    return caption[:NEAR_TEXT_CHARS], " ".join(near.split())


def _blocks(items: list[_Item], emit_images: bool) -> list[Block]:
    regions: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        if isinstance(item, _TextItem):
            regions.setdefault(item.region, []).append(index)
    blocks = []
    for index, item in enumerate(items):
        if isinstance(item, _TextItem):
            blocks.append(Block("text", item.text, item.role, dict(item.attrs)))
        elif emit_images and item.figure.image_ref is not None:
            caption, near = _neighbours(items, regions.get(item.region, []), item, index)
            figure = item.figure
            blocks.append(Block("image", "", item.role, {
                "figure_id": figure.figure_id, "image_ref": figure.image_ref, "alt": item.ref.alt,
                "title": item.ref.title, "caption": caption, "near_text": near,
                "content_type": figure.content_type, "bytes": figure.size, "part": figure.member,
                "rid": item.ref.rid, "figure_number": figure.number,
            }))
    return blocks


def emit_skip_reason(settings: DocxSettings) -> str | None:
    """Why pictures do not reach the text or the chunks, or None when they do."""
    if not (settings.inline_figure_placeholders or settings.figure_chunks):
        return "flags_disabled"
    if not settings.extract_images:
        return "extract_images_disabled"
    return None


def nested_blocks(path: Path, limits: IngestLimits, depth: int) -> list[Block]:
    """Text blocks of a DOCX embedded as an altChunk (``docx_altchunk``): the same
    package checks and reading order, no pictures."""
    package = read_package(path, limits)
    withhold_binaries(package)
    document = _open(package, limits)
    catalog = ImageCatalog(package, DocxSettings(extract_images=False), "altchunk", path.parent)
    items = _walk(document, catalog, package.main_part, AltChunkReader(package, limits, nested_blocks, depth))
    return _blocks(items, emit_images=False)


class DocxLoader:
    """``Loader`` for Word documents and their template and macro-enabled variants
    (macros are never run: their parts are not even read); see the module docstring
    for the order."""

    suffixes = (".docx", ".docm", ".dotx", ".dotm")

    def load(self, path: Path, settings: DocxSettings, doc_id: str, assets_root: Path,
             limits: IngestLimits | None = None) -> LoadedDocument:
        """Raises ``LoaderError`` for a file that is not a readable DOCX or breaks
        ``limits``. Image problems (missing members, limits, bytes that are not an
        image) are counted in ``diagnostics["DOCX_IMAGES_SUMMARY"]`` and never fatal."""
        limits = limits or IngestLimits()
        package = read_package(Path(path), limits)
        withhold_binaries(package)
        document = _open(package, limits)
        catalog = ImageCatalog(package, settings, doc_id, Path(assets_root))
        alt_chunks = AltChunkReader(package, limits, nested_blocks)
        items = _walk(document, catalog, package.main_part, alt_chunks)
        chars = sum(len(i.text) for i in items if isinstance(i, _TextItem))
        if chars > limits.max_chars:
            raise LoaderError(f"{path}: {chars} characters of text is over ingest.limits.max_chars "
                              f"({limits.max_chars})", path=str(path), reason="max_chars")
        if settings.extract_images:
            catalog.extract()
        blocks = _blocks(items, emit_images=settings.extract_images)
        summary = catalog.summary(emit_skip_reason(settings))
        summary["image_blocks"] = sum(b.kind == "image" for b in blocks)
        log.info("DOCX_IMAGES_SUMMARY", doc_id=doc_id, source=str(path),
                 **{k: v for k, v in summary.items() if k != "skipped"},
                 skipped_reasons=sorted({s["reason"] for s in summary["skipped"]}))
        diagnostics: dict[str, Any] = {"DOCX_IMAGES_SUMMARY": summary}
        if alt_chunks.read or alt_chunks.skipped:
            diagnostics["DOCX_ALT_CHUNKS"] = alt_chunks.summary()
        return LoadedDocument(doc_id=doc_id, source=str(path), blocks=blocks, diagnostics=diagnostics)
