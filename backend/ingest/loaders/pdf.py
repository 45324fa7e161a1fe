"""PDF loader (pypdf): one text block per page.

An encrypted PDF is refused unless it opens with an empty user password (an
"owner password only" file); a file pypdf cannot parse is reported as corrupt,
and a PDF without extractable text (a scan) as empty. OCR is out of scope.

Text extraction costs CPU in proportion to the text-showing operators it
interprets, which a few KB of PDF can multiply (many pages drawing one large
content stream): ``ingest.limits.max_pages`` is checked before any page is read,
pages sharing the same content stream and resources are extracted once, and
``max_chars`` stops the loop as soon as the document yields too much text; the
loader worker's timeout bounds the rest.
"""

from __future__ import annotations

from pathlib import Path

from pypdf import PdfReader
from pypdf import PageObject
from pypdf.errors import DependencyError, FileNotDecryptedError, PdfReadError, PdfStreamError
from pypdf.generic import IndirectObject

from backend.common.config import IngestLimits
from backend.common.errors import LoaderError
from backend.ingest.documents import Block, LoadedDocument


def _open(path: Path) -> PdfReader:
    try:
        reader = PdfReader(path)
    except (PdfReadError, PdfStreamError, ValueError, KeyError) as exc:
        raise LoaderError(f"{path}: corrupt PDF: {exc}", path=str(path)) from exc
    except OSError as exc:
        raise LoaderError(f"{path}: unreadable: {exc.strerror}", path=str(path)) from exc
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except (NotImplementedError, PdfReadError, DependencyError) as exc:
            raise LoaderError(f"{path}: encrypted PDF ({exc})", path=str(path), reason="encrypted") from exc
        if not opened:
            raise LoaderError(f"{path}: encrypted PDF: a password is needed to read it", path=str(path),
                              reason="encrypted")
    return reader


def _shared_key(page: PageObject) -> tuple[object, object] | None:
    """Identity of the page's content stream and resources when both are indirect
    objects: two pages with the same key render the same text."""
    contents, resources = page.get("/Contents"), page.get("/Resources")
    if isinstance(contents, IndirectObject) and isinstance(resources, IndirectObject | None):
        return ((contents.idnum, contents.generation),
                (resources.idnum, resources.generation) if resources is not None else None)
    return None


class PdfLoader:
    suffixes = (".pdf",)

    def load(self, path: Path, doc_id: str, limits: IngestLimits | None = None) -> LoadedDocument:
        limits = limits or IngestLimits()
        reader = _open(path)
        blocks = []
        chars = 0
        extracted: dict[tuple[object, object], str] = {}
        try:
            pages = len(reader.pages)
            if pages > limits.max_pages:
                raise LoaderError(f"{path}: {pages} pages is over ingest.limits.max_pages ({limits.max_pages})",
                                  path=str(path), reason="max_pages")
            for number, page in enumerate(reader.pages, start=1):
                key = _shared_key(page)
                text = extracted.get(key) if key is not None else None
                if text is None:
                    text = page.extract_text() or ""
                    if key is not None:
                        extracted[key] = text
                chars += len(text)
                if chars > limits.max_chars:
                    raise LoaderError(f"{path}: over {limits.max_chars} characters of text by page {number}, "
                                      f"over ingest.limits.max_chars ({limits.max_chars})",
                                      path=str(path), reason="max_chars")
                if text.strip():
                    blocks.append(Block(kind="text", text=text, role="page", attrs={"page": number}))
        except FileNotDecryptedError as exc:
            raise LoaderError(f"{path}: encrypted PDF: {exc}", path=str(path), reason="encrypted") from exc
        except (PdfReadError, PdfStreamError, ValueError, KeyError) as exc:
            raise LoaderError(f"{path}: corrupt PDF: {exc}", path=str(path)) from exc
        return LoadedDocument(doc_id=doc_id, source=str(path), blocks=blocks, diagnostics={"pages": pages})
