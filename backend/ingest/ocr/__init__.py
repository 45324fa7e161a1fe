"""OCR for pages and pictures without a text layer (docs/OCR.md).

``port.Ocr`` is the one seam to the OCR library (``rapid.RapidOcr``, extra ``ocr``);
``layout`` turns its lines into blocks in reading order (pure); ``pages`` is what the
loaders call: decode an image under the pixel limit, OCR it within the page budget, and
return ``Block`` records with page numbers and confidences.
"""
