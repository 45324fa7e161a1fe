"""What the loaders call to OCR a page: limits first, then the engine, then blocks.

``OcrRequest`` is what the parent allows one document (pictures on or off, the pages left
of this ingest's budget); ``OcrRun`` spends it inside the loader worker: ``reserve`` refuses
a document needing more pages than it may spend *before* any page is read (a 2,000-page scan
costs nothing), ``open_image`` refuses an image over ``ingest.ocr.max_image_pixels`` before
decoding it, and ``page`` reads one image into ``Block`` records: one per paragraph or table
in reading order (``layout``), each with its page number and confidence, low-confidence
blocks dropped or flagged (``ingest.ocr.low_confidence``) and counted for the text-quality
score. ``on_page`` is called after each page: the loader worker turns it into a heartbeat
that restarts the file's clock and moves the progress count.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from backend.common.config import OcrSettings
from backend.common.errors import LoaderError
from backend.ingest.documents import Block
from backend.ingest.ocr.layout import reading_order
from backend.ingest.ocr.port import Ocr

if TYPE_CHECKING:
    from PIL.Image import Image

#: diagnostics key of a document that went through OCR (pages, blocks, confidences, engine)
OCR_DIAGNOSTICS = "ocr"
#: pictures smaller than this (either side, pixels) are icons and rules, never text worth reading
MIN_PICTURE_SIDE = 32

_ENGINES: dict[OcrSettings, Ocr] = {}


def engine_for(settings: OcrSettings) -> Ocr:
    """The process's OCR engine for ``settings``, built on first use (the loader worker keeps it
    for every file of the run)."""
    if settings not in _ENGINES:
        from backend.ingest.ocr.rapid import RapidOcr

        _raise_memory_limit()
        _ENGINES[settings] = RapidOcr(settings)
    return _ENGINES[settings]


def _raise_memory_limit() -> None:
    """Lift the soft address-space limit to the hard one the loader worker set for OCR
    (``ingest.ocr.max_memory_mb``); a no-op where no hard limit is set (in-process loading)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


@dataclass(frozen=True)
class OcrRequest:
    """What the parent allows one document: OCR of pictures on pages with a text layer and of
    DOCX pictures (the profile's ``ocr_pictures``), and the pages left of the ingest's budget
    (``ingest.ocr.max_pages_per_ingest``; None: no ingest budget, the per-document cap only)."""

    pictures: bool = False
    pages_left: int | None = None


@dataclass
class OcrRun:
    """One document's OCR in the loader worker: its limits, its counts, its engine."""

    settings: OcrSettings
    request: OcrRequest = OcrRequest()
    on_page: Callable[[], None] = lambda: None
    engine: Callable[[OcrSettings], Ocr] = engine_for
    pages: int = 0
    blocks: int = 0
    low_confidence_blocks: int = 0
    chars: int = 0
    low_confidence_chars: int = 0
    confidences: list[float] = field(default_factory=list)

    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    def reserve(self, path: Path, needed: int) -> None:
        """Refuse ``path`` when it needs more OCR pages than the document cap or the ingest's
        budget left allow; checked before any page is read."""
        cap = self.settings.max_pages_per_document
        if needed > cap:
            raise LoaderError(f"{path}: {needed} pages need OCR, over ingest.ocr.max_pages_per_document ({cap}); "
                              "nothing was indexed (split the scan, or raise the limit)", path=str(path),
                              reason="ocr_max_pages")
        left = self.request.pages_left
        if left is not None and needed > left:
            raise LoaderError(f"{path}: {needed} pages need OCR but only {left} of this run's "
                              f"ingest.ocr.max_pages_per_ingest ({self.settings.max_pages_per_ingest}) are left; "
                              "the next run picks it up", path=str(path), reason="ocr_budget")

    def check_pixels(self, path: Path, width: int, height: int, what: str) -> None:
        limit = self.settings.max_image_pixels
        if width * height > limit:
            raise LoaderError(f"{path}: {what} is {width} x {height} pixels ({width * height:,}), over "
                              f"ingest.ocr.max_image_pixels ({limit:,})", path=str(path), reason="ocr_max_pixels")

    def page(self, image: Image, number: int | None, path: Path) -> list[Block]:
        """OCR one image (a page or a picture) into blocks in reading order; ``number`` is the
        page number recorded on each block (None: an image with no pages, e.g. a DOCX picture)."""
        lines = self.engine(self.settings).read(image)
        self.pages += 1
        out = []
        for layout in reading_order(lines):
            low = layout.confidence < self.settings.min_confidence
            self.blocks += 1
            self.chars += len(layout.text)
            self.confidences.append(layout.confidence)
            if low:
                self.low_confidence_blocks += 1
                self.low_confidence_chars += len(layout.text)
                if self.settings.low_confidence == "drop":
                    continue
            attrs: dict[str, Any] = {"ocr_confidence": layout.confidence}
            if number is not None:
                attrs["page"] = number
            if low:
                attrs["ocr_low_confidence"] = True
            out.append(Block(kind="text", text=layout.text, role="table" if layout.kind == "table" else "paragraph",
                             attrs=attrs))
        self.on_page()
        return out

    def diagnostics(self) -> dict[str, Any]:
        """What the run summary and the text-quality score read (``check_quality``)."""
        mean = sum(self.confidences) / len(self.confidences) if self.confidences else None
        return {"pages": self.pages, "blocks": self.blocks, "low_confidence_blocks": self.low_confidence_blocks,
                "chars": self.chars, "low_confidence_chars": self.low_confidence_chars,
                "mean_confidence": round(mean, 4) if mean is not None else None,
                "low_confidence": self.settings.low_confidence, "min_confidence": self.settings.min_confidence}


def open_image(source: Path | bytes, path: Path, run: OcrRun, what: str = "image") -> Image:
    """A lazily opened image after its size was checked (nothing decoded yet); a file Pillow
    cannot identify is a ``LoaderError`` naming ``path``."""
    from PIL import Image as PILImage
    from PIL import UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PILImage.DecompressionBombWarning)  # max_image_pixels decides
            image = PILImage.open(io.BytesIO(source) if isinstance(source, bytes) else source)
    except (UnidentifiedImageError, PILImage.DecompressionBombError) as exc:
        raise LoaderError(f"{path}: corrupt or unsupported {what}: {exc}", path=str(path), reason="corrupt_image") \
            from exc
    except OSError as exc:
        raise LoaderError(f"{path}: corrupt or unreadable {what}: {exc}", path=str(path), reason="corrupt_image") from exc
    run.check_pixels(path, image.width, image.height, what)
    return image


def decoded(image: Image, path: Path, what: str) -> Image:
    """``image`` decoded (Pillow decodes lazily): a truncated or damaged file fails here,
    as a ``LoaderError`` naming ``path``."""
    try:
        image.load()
    except (OSError, SyntaxError, ValueError) as exc:
        raise LoaderError(f"{path}: corrupt {what}: {exc}", path=str(path), reason="corrupt_image") from exc
    return image
