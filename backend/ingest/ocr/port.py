"""The OCR port: one image in, text lines with boxes and confidences out.

Why the cut sits here: detection, recognition and their models are the library's; which
lines make a paragraph, a column or a table, what a low confidence does and how many pages
a document may spend are the product's (``layout``, ``pages``), and are tested without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from PIL.Image import Image


@dataclass(frozen=True)
class OcrLine:
    """One recognised line: its text, its box in the image's pixels and the recogniser's
    confidence (0..1); ``words`` (when the engine gives them) are ``(text, x0, x1)`` in order,
    which lets the layout split a line the detector drew across a column gutter."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    confidence: float
    words: tuple[tuple[str, float, float], ...] = ()

    @property
    def height(self) -> float:
        return self.y1 - self.y0


class Ocr(Protocol):
    """Reads the text lines of one image.

    ``read`` returns every line the engine found, in no particular order (``layout`` orders
    them), with boxes in the pixels of the image it was given; an image with no text gives
    ``[]``. It never downloads anything; an engine that cannot start raises ``LoaderError``
    naming what is missing (the ``ocr`` extra)."""

    name: str

    def read(self, image: Image) -> list[OcrLine]: ...
