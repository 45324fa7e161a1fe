"""Loader registry: file suffix -> loader, and the one function the pipeline calls.

:func:`load_document` owns what every format shares: the size limit, the
suffix lookup, normalisation, the "empty file" check and the text-quality
(mojibake) check, so each loader only turns bytes into blocks. The DOCX loader (figures, assets dir) takes more
arguments than the others and is adapted here. The DOCX, PDF and HTML loaders
are imported on first use: the other formats work even where one of their
libraries is broken, and the loader worker only grows by the parsers it needs
(pypdf alone is about 17 MB of RSS). ``load_document`` runs in the
caller's process; the pipeline calls it through ``backend.ingest.loader_worker``
so each file is loaded under a time and memory limit. OCR (``backend.ingest.ocr``) happens
inside the loaders that need it, PDF pages without a usable text layer, image files and,
when the profile asks, DOCX pictures, through the ``OcrRun`` built here for each document.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Callable

import structlog

from backend.ingest.ingest_config import ConfigLike
from backend.common.errors import LoaderError, PictureWithoutText
from backend.ingest.documents import LoadedDocument
from backend.ingest.loaders.text import MarkdownLoader, TextLoader
from backend.ingest.normalize import normalize_document
from backend.ingest.ocr.pages import OCR_DIAGNOSTICS, OcrRequest, OcrRun
from backend.ingest.quality import TextQuality, text_quality

log = structlog.get_logger(__name__)

LoadFn = Callable[[Path, str, ConfigLike, OcrRun], LoadedDocument]


def _simple(loader: TextLoader | MarkdownLoader) -> LoadFn:
    return lambda path, doc_id, settings, ocr: loader.load(path, doc_id)


def _html(path: Path, doc_id: str, settings: ConfigLike, ocr: OcrRun) -> LoadedDocument:
    from backend.ingest.loaders.html import HtmlLoader

    return HtmlLoader().load(path, doc_id)


def _pdf(path: Path, doc_id: str, settings: ConfigLike, ocr: OcrRun) -> LoadedDocument:
    from backend.ingest.loaders.pdf import PdfLoader

    return PdfLoader().load(path, doc_id, settings.ingest.limits, ocr)


def _image(path: Path, doc_id: str, settings: ConfigLike, ocr: OcrRun) -> LoadedDocument:
    from backend.ingest.loaders.image import ImageLoader

    return ImageLoader().load(path, doc_id, ocr)


def _docx(path: Path, doc_id: str, settings: ConfigLike, ocr: OcrRun) -> LoadedDocument:
    from backend.ingest.loaders.docx import DocxLoader

    assets = settings.resolve_path(settings.docx.assets_dir)
    doc = DocxLoader().load(path, settings.docx, doc_id, assets, settings.ingest.limits)
    if ocr.enabled and ocr.request.pictures:
        from backend.ingest.loaders.docx_ocr import read_pictures

        doc = read_pictures(doc, path, assets, ocr)
    return doc


def _legacy_word(path: Path, doc_id: str, settings: ConfigLike, ocr: OcrRun) -> LoadedDocument:
    """``.doc``/``.dot``: a Word 97-2003 file gets a clear "unsupported" reason; an OOXML
    file that only carries the old suffix is loaded as what it is."""
    if zipfile.is_zipfile(path):
        return _docx(path, doc_id, settings, ocr)
    from backend.ingest.loaders.docx_package import not_a_zip_reason

    raise LoaderError(f"{path}: {not_a_zip_reason(path)}", path=str(path), reason="unsupported")


IMAGE_SUFFIXES = frozenset((".png", ".jpg", ".jpeg", ".tif", ".tiff"))

LOADERS: dict[str, LoadFn] = {
    **{s: _simple(TextLoader()) for s in TextLoader.suffixes},
    **{s: _simple(MarkdownLoader()) for s in MarkdownLoader.suffixes},
    ".html": _html,
    ".htm": _html,
    ".pdf": _pdf,
    **{s: _image for s in IMAGE_SUFFIXES},
    **{s: _docx for s in (".docx", ".docm", ".dotx", ".dotm")},
    ".doc": _legacy_word,
    ".dot": _legacy_word,
}
#: suffixes whose documents go through the DOCX loader (and its figure flags)
WORD_SUFFIXES = frozenset((".docx", ".docm", ".dotx", ".dotm", ".doc", ".dot"))


def supported_suffixes() -> tuple[str, ...]:
    return tuple(sorted(LOADERS))


def check_size(path: Path, max_bytes: int) -> int:
    """File size, or ``LoaderError`` if the file is missing, too large or empty."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise LoaderError(f"{path}: unreadable: {exc.strerror}", path=str(path)) from exc
    if size > max_bytes:
        raise LoaderError(f"{path}: {size} bytes is over ingest.max_file_bytes ({max_bytes})", path=str(path))
    if size == 0:
        raise LoaderError(f"{path}: empty file (0 bytes)", path=str(path))
    return size


def load_document(path: Path, doc_id: str, settings: ConfigLike, ocr: OcrRequest | None = None,
                  on_ocr_page: Callable[[], None] | None = None) -> LoadedDocument:
    """Load and normalise one file. Every problem is a ``LoaderError`` naming the file.
    ``ocr`` is what the caller allows this document's OCR (pictures, the ingest's pages
    left); ``on_ocr_page`` is called after each OCR page (the loader worker's heartbeat)."""
    load = LOADERS.get(path.suffix.lower())
    if load is None:
        raise LoaderError(
            f"{path}: unsupported file type {path.suffix or '(none)'!r}; supported: {', '.join(supported_suffixes())}",
            path=str(path),
        )
    check_size(path, settings.ingest.max_file_bytes)
    run = OcrRun(settings.ingest.ocr, ocr or OcrRequest(), on_ocr_page or (lambda: None))
    doc = normalize_document(load(path, doc_id, settings, run))
    text = doc.text
    if not text.strip() and run.low_confidence_blocks:
        raise LoaderError(f"{path}: empty document: OCR read only low-confidence text ({run.low_confidence_blocks} "
                          f"blocks below ingest.ocr.min_confidence {run.settings.min_confidence:g}, dropped)",
                          path=str(path), reason="low_text_quality")
    if not text.strip() and path.suffix.lower() in IMAGE_SUFFIXES:
        raise PictureWithoutText(f"{path}: a picture with no text (OCR found none), skipped", path=str(path))
    if not text.strip():
        skipped = doc.diagnostics.get("DOCX_ALT_CHUNKS", {}).get("skipped", [])
        parts = ", ".join(f"{s['member']} {s['reason']}" for s in skipped)
        hint = f" (embedded content skipped: {parts})" if skipped else ""
        raise LoaderError(f"{path}: empty document: no extractable text{hint}", path=str(path))
    limit = settings.ingest.limits.max_chars
    if len(text) > limit:
        raise LoaderError(f"{path}: {len(text)} characters of text is over ingest.limits.max_chars ({limit})",
                          path=str(path), reason="max_chars")
    check_quality(doc, path, settings)
    return doc


def check_quality(doc: LoadedDocument, path: Path, settings: ConfigLike) -> None:
    """Refuse or flag text that is mojibake (``backend.ingest.quality``): it raises no
    error anywhere else and would be chunked, embedded and cited as it is."""
    quality = counted_with_ocr(text_quality(doc.text), doc.diagnostics.get(OCR_DIAGNOSTICS))
    doc.diagnostics["text_quality"] = round(quality.score, 3)
    minimum = settings.ingest.min_text_quality
    if quality.score >= minimum:
        return
    ocr = doc.diagnostics.get(OCR_DIAGNOSTICS) or {}
    why = (f"{ocr['low_confidence_blocks']} OCR blocks are below ingest.ocr.min_confidence ({ocr['min_confidence']:g})"
           if ocr.get("low_confidence_blocks") else
           "the text is not words (a PDF font without a Unicode map, or text decoded with the wrong character set)")
    problem = f"{quality.describe()} is below ingest.min_text_quality ({minimum:g}): {why}"
    if settings.ingest.low_quality == "refuse":
        raise LoaderError(f"{path}: {problem}; nothing was indexed (fix the source, or set ingest.low_quality: "
                          "flag to index it anyway)", path=str(path), reason="low_text_quality")
    doc.diagnostics["low_text_quality"] = f"{problem}; indexed anyway (ingest.low_quality: flag)"
    log.warning("ingest.low_text_quality", file=str(path), score=round(quality.score, 3), minimum=minimum)


def counted_with_ocr(quality: TextQuality, ocr: dict[str, object] | None) -> TextQuality:
    """Pure: the text-quality score with OCR's low-confidence blocks counted as not text: their
    characters (dropped or flagged) are taken off the plausible share."""
    if not ocr or not ocr.get("low_confidence_chars"):
        return quality
    low = int(ocr["low_confidence_chars"])  # type: ignore[call-overload]
    total = quality.chars + (low if ocr.get("low_confidence") == "drop" else 0)
    good = max(0.0, quality.score * quality.chars - (0 if ocr.get("low_confidence") == "drop" else low))
    return TextQuality(good / total if total else 0.0, total, quality.bad_chars, quality.glyph_names,
                       quality.mis_decoded)
