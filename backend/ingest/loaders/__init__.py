"""Loader registry: file suffix -> loader, and the one function the pipeline calls.

:func:`load_document` owns what every format shares: the size limit, the
suffix lookup, normalisation, the "empty file" check and the text-quality
(mojibake) check, so each loader only turns bytes into blocks. The DOCX loader (figures, assets dir) takes more
arguments than the others and is adapted here. The DOCX, PDF and HTML loaders
are imported on first use: the other formats work even where one of their
libraries is broken, and the loader worker only grows by the parsers it needs
(pypdf alone is about 17 MB of RSS). ``load_document`` runs in the
caller's process; the pipeline calls it through ``backend.ingest.loader_worker``
so each file is loaded under a time and memory limit.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Callable

import structlog

from backend.ingest.ingest_config import ConfigLike
from backend.common.errors import LoaderError
from backend.ingest.documents import LoadedDocument
from backend.ingest.loaders.text import MarkdownLoader, TextLoader
from backend.ingest.normalize import normalize_document
from backend.ingest.quality import text_quality

log = structlog.get_logger(__name__)

LoadFn = Callable[[Path, str, ConfigLike], LoadedDocument]


def _simple(loader: TextLoader | MarkdownLoader) -> LoadFn:
    return lambda path, doc_id, settings: loader.load(path, doc_id)


def _html(path: Path, doc_id: str, settings: ConfigLike) -> LoadedDocument:
    from backend.ingest.loaders.html import HtmlLoader

    return HtmlLoader().load(path, doc_id)


def _pdf(path: Path, doc_id: str, settings: ConfigLike) -> LoadedDocument:
    from backend.ingest.loaders.pdf import PdfLoader

    return PdfLoader().load(path, doc_id, settings.ingest.limits)


def _docx(path: Path, doc_id: str, settings: ConfigLike) -> LoadedDocument:
    from backend.ingest.loaders.docx import DocxLoader

    return DocxLoader().load(path, settings.docx, doc_id, settings.resolve_path(settings.docx.assets_dir),
                             settings.ingest.limits)


def _legacy_word(path: Path, doc_id: str, settings: ConfigLike) -> LoadedDocument:
    """``.doc``/``.dot``: a Word 97-2003 file gets a clear "unsupported" reason; an OOXML
    file that only carries the old suffix is loaded as what it is."""
    if zipfile.is_zipfile(path):
        return _docx(path, doc_id, settings)
    from backend.ingest.loaders.docx_package import not_a_zip_reason

    raise LoaderError(f"{path}: {not_a_zip_reason(path)}", path=str(path), reason="unsupported")


LOADERS: dict[str, LoadFn] = {
    **{s: _simple(TextLoader()) for s in TextLoader.suffixes},
    **{s: _simple(MarkdownLoader()) for s in MarkdownLoader.suffixes},
    ".html": _html,
    ".htm": _html,
    ".pdf": _pdf,
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


def load_document(path: Path, doc_id: str, settings: ConfigLike) -> LoadedDocument:
    """Load and normalise one file. Every problem is a ``LoaderError`` naming the file."""
    load = LOADERS.get(path.suffix.lower())
    if load is None:
        raise LoaderError(
            f"{path}: unsupported file type {path.suffix or '(none)'!r}; supported: {', '.join(supported_suffixes())}",
            path=str(path),
        )
    check_size(path, settings.ingest.max_file_bytes)
    doc = normalize_document(load(path, doc_id, settings))
    text = doc.text
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
    quality = text_quality(doc.text)
    doc.diagnostics["text_quality"] = round(quality.score, 3)
    minimum = settings.ingest.min_text_quality
    if quality.score >= minimum:
        return
    problem = (f"{quality.describe()} is below ingest.min_text_quality ({minimum:g}): the text is not words "
               "(a PDF font without a Unicode map, or text decoded with the wrong character set)")
    if settings.ingest.low_quality == "refuse":
        raise LoaderError(f"{path}: {problem}; nothing was indexed (fix the source, or set ingest.low_quality: "
                          "flag to index it anyway)", path=str(path), reason="low_text_quality")
    doc.diagnostics["low_text_quality"] = f"{problem}; indexed anyway (ingest.low_quality: flag)"
    log.warning("ingest.low_text_quality", file=str(path), score=round(quality.score, 3), minimum=minimum)
