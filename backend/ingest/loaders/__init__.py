"""Loader registry: file suffix -> loader, and the one function the pipeline calls.

:func:`load_document` owns what every format shares: the size limit, the
suffix lookup, normalisation and the "empty file" check, so each loader only
turns bytes into blocks. The DOCX loader (figures, assets dir) takes more
arguments than the others and is adapted here, imported lazily so the other
formats work even where python-docx is broken.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from backend.common.config import Settings
from backend.common.errors import LoaderError
from backend.ingest.documents import LoadedDocument
from backend.ingest.loaders.html import HtmlLoader
from backend.ingest.loaders.pdf import PdfLoader
from backend.ingest.loaders.text import MarkdownLoader, TextLoader
from backend.ingest.normalize import normalize_document

LoadFn = Callable[[Path, str, Settings], LoadedDocument]


def _simple(loader: TextLoader | MarkdownLoader | HtmlLoader | PdfLoader) -> LoadFn:
    return lambda path, doc_id, settings: loader.load(path, doc_id)


def _docx(path: Path, doc_id: str, settings: Settings) -> LoadedDocument:
    from backend.ingest.loaders.docx import DocxLoader

    return DocxLoader().load(path, settings.docx, doc_id, settings.resolve_path(settings.docx.assets_dir))


LOADERS: dict[str, LoadFn] = {
    **{s: _simple(TextLoader()) for s in TextLoader.suffixes},
    **{s: _simple(MarkdownLoader()) for s in MarkdownLoader.suffixes},
    **{s: _simple(HtmlLoader()) for s in HtmlLoader.suffixes},
    **{s: _simple(PdfLoader()) for s in PdfLoader.suffixes},
    ".docx": _docx,
}


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


def load_document(path: Path, doc_id: str, settings: Settings) -> LoadedDocument:
    """Load and normalise one file. Every problem is a ``LoaderError`` naming the file."""
    load = LOADERS.get(path.suffix.lower())
    if load is None:
        raise LoaderError(
            f"{path}: unsupported file type {path.suffix or '(none)'!r}; supported: {', '.join(supported_suffixes())}",
            path=str(path),
        )
    check_size(path, settings.ingest.max_file_bytes)
    doc = normalize_document(load(path, doc_id, settings))
    if not doc.text.strip():
        raise LoaderError(f"{path}: empty document: no extractable text", path=str(path))
    return doc
