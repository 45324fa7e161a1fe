"""A PDF whose page 1 has a real text layer (fpdf2) and page 2 is a scan with none."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image


def mixed_pdf(text_page: str, scanned: Image.Image, path: Path) -> Path:
    """``path``: page 1 ``text_page`` as a text layer, page 2 ``scanned`` as an image only."""
    from fpdf import FPDF
    from pypdf import PdfReader, PdfWriter

    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.multi_cell(0, 6, text_page)
    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(bytes(pdf.output()))))
    buffer = io.BytesIO()
    scanned.convert("RGB").save(buffer, "PDF", resolution=150.0)
    writer.append(PdfReader(buffer))
    with path.open("wb") as fh:
        writer.write(fh)
    return path
