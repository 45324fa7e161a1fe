"""PDF loader (pypdf): one text block per page.

An encrypted PDF is refused unless it opens with an empty user password (an
"owner password only" file); a file pypdf cannot parse is reported as corrupt,
and a PDF without extractable text (a scan) as empty. OCR is out of scope.
"""

from __future__ import annotations

from pathlib import Path

from pypdf import PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, PdfReadError, PdfStreamError

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


class PdfLoader:
    suffixes = (".pdf",)

    def load(self, path: Path, doc_id: str) -> LoadedDocument:
        reader = _open(path)
        blocks = []
        try:
            for number, page in enumerate(reader.pages, start=1):
                text = page.extract_text() or ""
                if text.strip():
                    blocks.append(Block(kind="text", text=text, role="page", attrs={"page": number}))
        except FileNotDecryptedError as exc:
            raise LoaderError(f"{path}: encrypted PDF: {exc}", path=str(path), reason="encrypted") from exc
        except (PdfReadError, PdfStreamError, ValueError, KeyError) as exc:
            raise LoaderError(f"{path}: corrupt PDF: {exc}", path=str(path)) from exc
        return LoadedDocument(doc_id=doc_id, source=str(path), blocks=blocks,
                              diagnostics={"pages": len(reader.pages)})
