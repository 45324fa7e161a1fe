"""Image loader: PNG, JPEG and TIFF (every frame of a multi-page TIFF) through OCR.

An image file has no text but what OCR reads, so it needs ``ingest.ocr.enabled`` (and the
``ocr`` extra). Each frame is a page: the frames are counted and the document's OCR pages
reserved before any is read (``OcrRun.reserve``), each frame's size is checked before it is
decoded, and its blocks carry the page number that citations show.
"""

from __future__ import annotations

from pathlib import Path

from backend.common.errors import LoaderError, PictureWithoutText
from backend.ingest.documents import Block, LoadedDocument
from backend.ingest.ocr.pages import OCR_DIAGNOSTICS, OcrRun, decoded, open_image


class ImageLoader:
    """``loaders.IMAGE_SUFFIXES``: every frame a page, read by OCR."""

    def load(self, path: Path, doc_id: str, run: OcrRun) -> LoadedDocument:
        if not run.enabled:
            raise PictureWithoutText(f"{path}: a picture, skipped: its text is read only with OCR, and "
                                     "ingest.ocr.enabled is false", path=str(path), reason="unsupported")
        image = open_image(path, path, run)
        frames = getattr(image, "n_frames", 1)
        run.reserve(path, frames)
        blocks: list[Block] = []
        for number in range(1, frames + 1):
            what = f"page {number} of {frames}" if frames > 1 else "image"
            if number > 1:
                try:
                    image.seek(number - 1)
                except (EOFError, OSError) as exc:
                    raise LoaderError(f"{path}: corrupt image: {what} cannot be read: {exc}", path=str(path),
                                      reason="corrupt_image") from exc
                run.check_pixels(path, image.width, image.height, what)
            blocks.extend(run.page(decoded(image, path, what), number, path))
        return LoadedDocument(doc_id=doc_id, source=str(path), blocks=blocks,
                              diagnostics={"pages": frames, OCR_DIAGNOSTICS: run.diagnostics()})
