"""PDF loader (pypdf): one text block per page.

An encrypted PDF is refused unless its *user* password is empty (an "owner
password only" file, which every viewer opens without asking). pypdf's
``decrypt("")`` also succeeds when the *owner* password is the empty one, and
the user password is then checked separately so such a file is refused too.

A file whose ``startxref``/``%%EOF`` trailer is missing (a truncated download,
a writer that never finished) gets one repair pass: a fresh ``startxref`` with
no usable offset (plus a ``trailer`` with ``/Size`` when there is none) is
appended, which makes pypdf's non-strict reader rebuild the cross-reference
table by scanning the objects and find the catalog. A file pypdf cannot parse
even then is reported as corrupt, and a PDF without extractable text (a scan)
as empty unless OCR reads it.

OCR, per page (``ocr.pages.OcrRun``, docs/OCR.md): a page whose own text layer scores below
``ingest.ocr.min_page_quality`` or holds fewer than ``min_page_chars`` characters, and that
has pictures, is read by OCR instead (its blocks carry the page number and confidence); a
page with a good text layer never is, unless the profile's ``ocr_pictures`` asks for the text
of its pictures too. The pages to OCR are counted and reserved before any is read, and each
picture's size is checked before it is decoded.

Text extraction costs CPU in proportion to the text-showing operators it
interprets, which a few KB of PDF can multiply (many pages drawing one large
content stream): ``ingest.limits.max_pages`` is checked before any page is read,
pages sharing the same content stream and resources are extracted once, and
``max_chars`` stops the loop as soon as the document yields too much text; the
loader worker's timeout bounds the rest.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from pypdf import PasswordType, PdfReader
from pypdf import PageObject
from pypdf.errors import DependencyError, FileNotDecryptedError, PdfReadError, PdfStreamError
from pypdf.generic import IndirectObject
import structlog

from backend.common.config import IngestLimits
from backend.common.errors import LoaderError
from backend.ingest.documents import Block, LoadedDocument
from backend.ingest.ocr.pages import MIN_PICTURE_SIDE, OCR_DIAGNOSTICS, OcrRun, decoded
from backend.ingest.quality import text_quality

log = structlog.get_logger(__name__)


_OBJECT = re.compile(rb"(\d{1,10})\s+\d{1,5}\s+obj\b")


def _repaired(data: bytes) -> bytes:
    """``data`` with a trailer pypdf's non-strict reader can recover from. Offset 0
    never points at an ``xref`` table, so pypdf rebuilds the table by scanning the
    objects. Raises ``ValueError`` saying why when there is nothing to repair."""
    numbers = [int(m.group(1)) for m in _OBJECT.finditer(data)]
    if not numbers:
        raise ValueError("it holds no PDF objects to rebuild it from")
    body = data.rstrip()
    if body.endswith(b"%%EOF"):
        body = body[: -len(b"%%EOF")]
    last_object = data.rfind(b"endobj")
    tail = b"" if data.find(b"trailer", last_object) >= 0 else b"\ntrailer\n<< /Size %d >>" % (max(numbers) + 1)
    return body + tail + b"\nstartxref\n0\n%%EOF\n"


def _read(path: Path) -> tuple[PdfReader, str | None]:
    """The reader, and the repair applied (None when the file read as it is)."""
    try:
        return PdfReader(path, strict=False), None
    except (PdfReadError, PdfStreamError, ValueError, KeyError) as exc:
        first: Exception = exc
    except OSError as exc:
        raise LoaderError(f"{path}: unreadable: {exc.strerror}", path=str(path)) from exc
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LoaderError(f"{path}: unreadable: {exc.strerror}", path=str(path)) from exc
    if b"%PDF-" not in data[:1024]:
        raise LoaderError(f"{path}: corrupt PDF: no %PDF- header in its first 1024 bytes (not a PDF, or damaged "
                          "at the start)", path=str(path)) from first
    problem = ("no startxref/%%EOF trailer (a truncated or unfinished file)" if b"startxref" not in data[-4096:]
               else str(first))
    try:
        reader = PdfReader(io.BytesIO(_repaired(data)), strict=False)
        reader.pages[0]  # noqa: B018 - the page tree must be reachable, or the repair did not work
    except (PdfReadError, PdfStreamError, ValueError, KeyError, IndexError) as exc:
        raise LoaderError(f"{path}: corrupt PDF: {problem}; a repair pass that rebuilds the cross-reference "
                          f"table failed too: {exc}", path=str(path)) from exc
    log.warning("ingest.pdf_repaired", path=str(path), problem=problem)
    return reader, f"cross-reference table rebuilt: {problem}"


def _user_password_is_empty(reader: PdfReader) -> bool:
    """Whether the empty string is the *user* password. pypdf's ``decrypt`` checks
    the owner password first, so its answer cannot tell "owner password empty"
    from "user password empty"; the user password is checked here on its own."""
    from pypdf._encryption import AlgV4, AlgV5  # noqa: PLC0415 - pypdf has no public API for this

    enc = reader._encryption
    if enc is None:
        return True
    if enc.V <= 4:
        return bool(AlgV4.verify_user_password(b"", enc.R, enc.Length, enc.values.O, enc.values.U, enc.P,
                                               enc.id1_entry, enc.EncryptMetadata))
    return bool(AlgV5.verify_user_password(enc.R, b"", enc.values.U, enc.values.UE))


def _open(path: Path) -> tuple[PdfReader, str | None]:
    reader, repair = _read(path)
    if reader.is_encrypted:
        needs = (f"{path}: encrypted PDF: a password is needed to read it (only a PDF whose user password is "
                 "empty can be ingested; remove the password and save it again)")
        try:
            opened = reader.decrypt("")
            if opened and opened != PasswordType.USER_PASSWORD and not _user_password_is_empty(reader):
                opened = PasswordType.NOT_DECRYPTED
        except (NotImplementedError, PdfReadError, DependencyError) as exc:
            raise LoaderError(f"{path}: encrypted PDF ({exc})", path=str(path), reason="encrypted") from exc
        if not opened:
            raise LoaderError(needs, path=str(path), reason="encrypted")
    return reader, repair


def _shared_key(page: PageObject) -> tuple[object, object] | None:
    """Identity of the page's content stream and resources when both are indirect
    objects: two pages with the same key render the same text."""
    contents, resources = page.get("/Contents"), page.get("/Resources")
    if isinstance(contents, IndirectObject) and isinstance(resources, IndirectObject | None):
        return ((contents.idnum, contents.generation),
                (resources.idnum, resources.generation) if resources is not None else None)
    return None


def _pictures(page: PageObject) -> list[tuple[str, int, int]]:
    """``(name, width, height)`` of the page's image XObjects, read from their dictionaries
    (nothing decoded)."""
    resources = page.get("/Resources")
    xobjects = resources.get_object().get("/XObject") if resources is not None else None
    if xobjects is None:
        return []
    out = []
    for name, ref in xobjects.get_object().items():
        obj = ref.get_object()
        if obj.get("/Subtype") == "/Image":
            out.append((str(name), int(obj.get("/Width", 0)), int(obj.get("/Height", 0))))
    return out


def needs_ocr(text: str, min_quality: float, min_chars: int) -> bool:
    """Pure: whether a page's own text layer is unusable (too little text, or not words)."""
    if sum(1 for ch in text if not ch.isspace()) < min_chars:
        return True
    return text_quality(text).score < min_quality


class PdfLoader:
    suffixes = (".pdf",)

    def load(self, path: Path, doc_id: str, limits: IngestLimits | None = None,
             ocr: OcrRun | None = None) -> LoadedDocument:
        limits = limits or IngestLimits()
        reader, repair = _open(path)
        pages_text: list[tuple[int, PageObject, str]] = []
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
                pages_text.append((number, page, text))
            blocks = (self._with_ocr(path, pages_text, ocr) if ocr is not None and ocr.enabled else
                      [Block(kind="text", text=text, role="page", attrs={"page": number})
                       for number, _, text in pages_text if text.strip()])
        except FileNotDecryptedError as exc:
            raise LoaderError(f"{path}: encrypted PDF: {exc}", path=str(path), reason="encrypted") from exc
        except (PdfReadError, PdfStreamError, ValueError, KeyError) as exc:
            raise LoaderError(f"{path}: corrupt PDF: {exc}", path=str(path)) from exc
        diagnostics: dict[str, object] = {"pages": pages, **({"repaired": repair} if repair else {})}
        if ocr is not None and ocr.pages:
            diagnostics[OCR_DIAGNOSTICS] = ocr.diagnostics()
        return LoadedDocument(doc_id=doc_id, source=str(path), blocks=blocks, diagnostics=diagnostics)

    @staticmethod
    def _with_ocr(path: Path, pages_text: list[tuple[int, PageObject, str]], ocr: OcrRun) -> list[Block]:
        """Each page's text block, or its OCR blocks when its text layer is unusable; with
        ``ocr.request.pictures`` the text of a good page's pictures follows its text block."""
        s = ocr.settings
        plan: list[tuple[int, PageObject, str, bool, list[tuple[str, int, int]]]] = []
        for number, page, text in pages_text:
            pictures = [p for p in _pictures(page) if min(p[1], p[2]) >= MIN_PICTURE_SIDE]
            scanned = bool(pictures) and needs_ocr(text, s.min_page_quality, s.min_page_chars)
            plan.append((number, page, text, scanned, pictures if scanned or ocr.request.pictures else []))
        ocr.reserve(path, sum(len(pictures) for *_, pictures in plan))
        blocks: list[Block] = []
        for number, page, text, scanned, pictures in plan:
            if text.strip() and not scanned:
                blocks.append(Block(kind="text", text=text, role="page", attrs={"page": number}))
            for name, width, height in pictures:
                what = f"page {number} picture {name}"
                ocr.check_pixels(path, width, height, what)
                try:
                    image = page.images[name].image
                except DependencyError as exc:
                    raise LoaderError(f"{path}: {what} cannot be decoded for OCR: {exc}", path=str(path),
                                      reason="ocr_decode") from exc
                if image is None:
                    continue
                blocks.extend(ocr.page(decoded(image, path, what), number, path))
        return blocks
