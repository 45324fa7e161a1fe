"""Images referenced by a DOCX: find, resolve, sniff, guard and write them.

One figure per distinct image *part*: a picture pasted twice is one file and one
figure, with a placeholder at each place it appears. Figures are numbered in
reading order of first reference (headers, body, footers), so ``img_003`` and
``<folder>-fig-003`` are stable across runs and do not depend on the limits.

Image files are content-addressed (``img_003_<sha256 prefix>.png``): a name
always holds the same bytes, so a build never overwrites or removes a picture that
a served version cites. Files no version cites any more are removed by
``rag index gc`` (``backend.ingest.assets``), never by an ingest.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from lxml import etree

from backend.common.config import DocxSettings
from backend.common.errors import LoaderError
from backend.ingest.loaders.docx_package import DocxPackage, MemberError, read_member

log = structlog.get_logger(__name__)

_NS = {
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "v": "urn:schemas-microsoft-com:vml",
    "wp": "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
    "pic": "http://schemas.openxmlformats.org/drawingml/2006/picture",
}
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_O = "urn:schemas-microsoft-com:office:office"
_REFS = etree.XPath(".//a:blip | .//v:imagedata", namespaces=_NS)
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")

#: Sniffable types: a part declaring one of these whose bytes match no signature is corrupt.
_KNOWN = {
    "image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/bmp": "bmp",
    "image/tiff": "tiff", "image/x-emf": "emf", "image/emf": "emf", "image/x-wmf": "wmf",
    "image/wmf": "wmf", "image/svg+xml": "svg",
}
_EXT = {"png": "png", "jpeg": "jpg", "gif": "gif", "bmp": "bmp", "tiff": "tiff", "emf": "emf", "wmf": "wmf",
        "svg": "svg", "webp": "webp"}
_CTYPE = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "bmp": "image/bmp", "tiff": "image/tiff",
          "emf": "image/x-emf", "wmf": "image/x-wmf", "svg": "image/svg+xml", "webp": "image/webp"}
#: Other declared image types kept as declared (no signature check).
_OTHER_EXT = {"image/x-pict": "pict", "image/pict": "pict", "image/x-icon": "ico", "image/vnd.ms-photo": "jxr",
              "image/heic": "heic", "image/avif": "avif"}


def asset_folder(doc_id: str) -> str:
    """A folder name for ``doc_id`` that is safe on every filesystem.

    An id made only of ``[A-Za-z0-9._-]`` (not starting with a dot) is used as is;
    anything else (``/``, spaces, non-ASCII) is slugged and suffixed with a hash of
    the original so two ids never share a folder.
    """
    if doc_id and not _SAFE.search(doc_id) and not doc_id.startswith(".") and len(doc_id) <= 96:
        return doc_id
    slug = _SAFE.sub("_", doc_id).strip("._")[:80] or "doc"
    return f"{slug}-{hashlib.sha256(doc_id.encode('utf-8')).hexdigest()[:10]}"


def sniff_kind(data: bytes) -> str | None:
    """The image format from its magic bytes, or None."""
    head = data[:16]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return "tiff"
    if head[:4] == b"\x01\x00\x00\x00" and data[40:44] == b" EMF":
        return "emf"
    if head[:4] == b"\xd7\xcd\xc6\x9a" or (head[:4] in (b"\x01\x00\x09\x00", b"\x02\x00\x09\x00")
                                           and head[4:6] in (b"\x00\x01", b"\x00\x03")):
        return "wmf"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if head[:2] == b"BM" and len(data) >= 26:
        return "bmp"
    text = data[:2048].lstrip(b"\xef\xbb\xbf").lstrip()
    if text.startswith(b"<svg") or (text[:1] == b"<" and b"<svg" in text):
        return "svg"
    return None


def image_type(data: bytes, declared: str) -> tuple[str, str] | None:
    """``(content_type, extension)`` from the bytes, else from the declared type when it
    is one we cannot sniff; None when the bytes are not an image."""
    kind = sniff_kind(data)
    if kind is not None:
        return _CTYPE[kind], _EXT[kind]
    declared = declared.lower()
    if declared in _OTHER_EXT and data:
        return declared, _OTHER_EXT[declared]
    return None


@dataclass(frozen=True)
class RawRef:
    """One picture reference as written in the XML."""

    rid: str
    link_only: bool
    alt: str
    title: str
    element: Any = field(default=None, compare=False, repr=False)


def superseded(ref: etree._Element) -> bool:
    """Inside an ``mc:Fallback`` whose ``mc:AlternateContent`` also has a Choice: the
    Choice already holds this picture, so it must not count twice."""
    for fallback in ref.iterancestors(f"{{{_NS['mc']}}}Fallback"):
        parent = fallback.getparent()
        if parent is not None and parent.find(f"{{{_NS['mc']}}}Choice") is not None:
            return True
    return False


def _drawing_names(ref: etree._Element) -> tuple[str, str]:
    if ref.tag == f"{{{_NS['v']}}}imagedata":
        shape = ref.getparent()
        alt = shape.get("alt", "") if shape is not None else ""
        return alt, ref.get(f"{{{_O}}}title", "")
    for anc in ref.iterancestors(f"{{{_NS['wp']}}}inline", f"{{{_NS['wp']}}}anchor"):
        props = anc.find("wp:docPr", _NS)
        if props is not None:
            return props.get("descr", ""), props.get("title", "")
    return "", ""


def find_refs(element: etree._Element) -> list[RawRef]:
    """Picture references under ``element`` in document order (a:blip, v:imagedata)."""
    refs = []
    for ref in _REFS(element):
        if superseded(ref):
            continue
        if ref.tag == f"{{{_NS['a']}}}blip":
            rid, link_only = ref.get(f"{{{_R}}}embed") or ref.get(f"{{{_R}}}link", ""), not ref.get(f"{{{_R}}}embed")
        else:
            rid, link_only = ref.get(f"{{{_R}}}id") or ref.get(f"{{{_O}}}relid", ""), False
        alt, title = _drawing_names(ref)
        refs.append(RawRef(rid, link_only, alt.strip(), title.strip(), ref))
    return refs


def _write_atomically(target: Path, data: bytes) -> None:
    """Temp file in the same folder, then rename: readers never see half an image."""
    tmp = ""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=target.suffix)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except OSError as exc:
        if tmp:
            Path(tmp).unlink(missing_ok=True)
        raise LoaderError(f"{target}: cannot write figure image (docx.assets_dir): {exc.strerror}",
                          path=str(target)) from exc


@dataclass
class Figure:
    """One distinct image part of the document."""

    number: int
    figure_id: str
    member: str
    source_part: str
    rid: str
    declared_type: str
    size: int
    image_ref: str | None = None
    content_type: str = ""
    skip_reason: str | None = None


@dataclass
class ImageCatalog:
    """Resolves references to figures, writes them, and keeps the summary counters."""

    package: DocxPackage
    settings: DocxSettings
    doc_id: str
    assets_root: Path
    folder: str = ""
    figures: dict[str, Figure] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("blips", "relationships", "rels_mapped", "zip_member_miss", "linked", "figures", "writes",
         "unchanged", "skipped_limits", "skipped_invalid"), 0))
    skipped: list[dict[str, str]] = field(default_factory=list)
    _parts_seen: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.folder = asset_folder(self.doc_id)

    def resolve(self, source_part: str, ref: RawRef) -> Figure | None:
        """Count one reference; return its figure when it names an image inside the zip."""
        if source_part not in self._parts_seen:
            self._parts_seen.add(source_part)
            self.counts["relationships"] += sum(r.is_image for r in self.package.part_rels(source_part).values())
        self.counts["blips"] += 1
        rel = self.package.part_rels(source_part).get(ref.rid)
        if rel is None or not rel.is_image:
            return None
        self.counts["rels_mapped"] += 1
        if rel.external or ref.link_only:
            self.counts["linked"] += 1
            return None
        if rel.target not in self.package.sizes:
            self.counts["zip_member_miss"] += 1
            return None
        figure = self.figures.get(rel.target)
        if figure is None:
            number = len(self.figures) + 1
            figure = Figure(number, f"{self.folder}-fig-{number:03d}", rel.target, source_part, ref.rid,
                            self.package.content_type(rel.target), self.package.sizes[rel.target])
            self.figures[rel.target] = figure
            self.counts["figures"] += 1
        return figure

    def extract(self) -> None:
        """Write every figure within the limits; idempotent (same bytes, same names)."""
        folder = self.assets_root / self.folder
        total = 0
        with zipfile.ZipFile(self.package.path) as zf:
            for figure in self.figures.values():
                reason = self._limit_reason(figure, total)
                if reason is None:
                    reason = self._store(zf, figure, folder)
                if reason is not None:
                    figure.skip_reason = reason
                    key = "skipped_limits" if reason.startswith("max_") else "skipped_invalid"
                    self.counts[key] += 1
                    self.skipped.append({"member": figure.member, "reason": reason})
                else:
                    total += figure.size
                self._debug(figure)

    def _limit_reason(self, figure: Figure, total: int) -> str | None:
        if self.counts["writes"] >= self.settings.max_images_per_doc:
            return "max_images_per_doc"
        if figure.size > self.settings.max_image_bytes:
            return "max_image_bytes"
        if total + figure.size > self.settings.max_total_image_bytes:
            return "max_total_image_bytes"
        return None

    def _store(self, zf: zipfile.ZipFile, figure: Figure, folder: Path) -> str | None:
        try:  # declared size already checked; read_member stops a member that inflates past it
            data = read_member(zf, figure.member, self.settings.max_image_bytes)
        except MemberError as exc:
            log.warning("ingest.docx_image_unreadable", doc_id=self.doc_id, part=figure.member, error=str(exc))
            return "unreadable_member"
        kind = image_type(data, figure.declared_type)
        if kind is None:
            return "not_an_image"
        figure.content_type, ext = kind
        name = f"img_{figure.number:03d}_{hashlib.sha256(data).hexdigest()[:16]}.{ext}"
        target = folder / name
        if target.is_file() and target.stat().st_size == len(data):
            try:
                os.utime(target)  # reused by this build: fresh for the garbage collector's grace period
            except OSError:
                pass
            self.counts["unchanged"] += 1
        else:
            _write_atomically(target, data)
        self.counts["writes"] += 1
        figure.image_ref = f"{self.folder}/{name}"
        return None

    def _debug(self, figure: Figure) -> None:
        if self.settings.image_debug:
            log.info("DOCX_IMAGE", doc_id=self.doc_id, rid=figure.rid, source_part=figure.source_part,
                     part=figure.member, content_type=figure.content_type or figure.declared_type,
                     bytes=figure.size, written=figure.image_ref, skip_reason=figure.skip_reason)

    def summary(self, emit_skip_reason: str | None) -> dict[str, Any]:
        return {**self.counts, "image_emit_skip_reason": emit_skip_reason, "skipped": list(self.skipped),
                "assets_folder": self.folder}
