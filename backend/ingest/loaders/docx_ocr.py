"""The text inside a DOCX document's pictures, for its figure descriptions (profile ``ocr_pictures``).

A diagram or a photographed notice pasted into a Word file holds words no loader sees: a
question about them cannot find the figure. With the profile's ``ocr_pictures`` on, each
picture the DOCX loader wrote to ``docx.assets_dir`` (``docx.extract_images``) is read once
by OCR, inside the loader worker like every other OCR page, and its text goes into the image
blocks' ``ocr_text``, which ``figures.describe`` adds to the figure chunk's description.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from backend.ingest.documents import Block, LoadedDocument
from backend.ingest.ocr.pages import MIN_PICTURE_SIDE, OCR_DIAGNOSTICS, OcrRun, decoded, open_image


def read_pictures(doc: LoadedDocument, path: Path, assets: Path, ocr: OcrRun) -> LoadedDocument:
    """``doc`` with ``ocr_text`` and ``ocr_confidence`` on the image blocks of every picture
    written to ``assets`` (each distinct picture read once); unchanged when it has none."""
    refs = list(dict.fromkeys(b.attrs["image_ref"] for b in doc.blocks
                              if b.kind == "image" and b.attrs.get("image_ref")))
    if not refs:
        return doc
    ocr.reserve(path, len(refs))
    read: dict[str, tuple[str, float | None]] = {}
    for ref in refs:
        what = f"picture {ref}"
        image = open_image(assets / ref, path, ocr, what)
        if min(image.width, image.height) < MIN_PICTURE_SIDE:
            read[ref] = ("", None)
            continue
        blocks = ocr.page(decoded(image, path, what), None, path)
        text = "\n".join(b.text for b in blocks)
        confidences = [float(b.attrs["ocr_confidence"]) for b in blocks]
        read[ref] = (text, round(min(confidences), 4) if confidences else None)
    out: list[Block] = []
    for block in doc.blocks:
        ref = block.attrs.get("image_ref") if block.kind == "image" else None
        if ref in read and read[ref][0]:
            text, confidence = read[ref]
            block = replace(block, attrs={**block.attrs, "ocr_text": text, "ocr_confidence": confidence})
        out.append(block)
    return replace(doc, blocks=out, diagnostics={**doc.diagnostics, OCR_DIAGNOSTICS: ocr.diagnostics()})
