"""Scanned-looking pages made on demand (`rag bench --section ocr`, the OCR tests): text rendered with Pillow's bundled font onto a
white page at 150 dpi, speckled, turned a little and saved as an image file or as an
image-only PDF page (no text layer), so a test knows every word on the page."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Sequence

from PIL import Image, ImageDraw, ImageFont

#: A4 at 150 dpi
PAGE = (1240, 1754)


def scanned_page(paragraphs: Sequence[str], *, size: tuple[int, int] = PAGE, noise: float = 0.002,
                 seed: int = 7, font_px: int = 30, angle: float = 0.4) -> Image.Image:
    """A grey page holding ``paragraphs`` (each wrapped at about 60 characters), with salt and
    pepper noise on ``noise`` of its pixels and turned by ``angle`` degrees, like a scan."""
    page = Image.new("L", size, 250)
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=font_px)
    y = 140
    for paragraph in paragraphs:
        line = ""
        for word in paragraph.split():
            if len(line) + len(word) > 60:
                draw.text((120, y), line.strip(), fill=20, font=font)
                y += int(font_px * 1.5)
                line = ""
            line += word + " "
        draw.text((120, y), line.strip(), fill=20, font=font)
        y += int(font_px * 2.6)
    rng = random.Random(seed)
    pixels = page.load()
    assert pixels is not None
    for _ in range(int(size[0] * size[1] * noise)):
        pixels[rng.randrange(size[0]), rng.randrange(size[1])] = rng.choice((0, 255))
    return page.rotate(angle, fillcolor=250, resample=Image.Resampling.BICUBIC)


def image_pdf(pages: Sequence[Image.Image], path: Path) -> Path:
    """An image-only PDF: one scanned page per image, no text layer."""
    first, *rest = [p.convert("RGB") for p in pages]
    first.save(path, "PDF", resolution=150.0, save_all=True, append_images=rest)
    return path
