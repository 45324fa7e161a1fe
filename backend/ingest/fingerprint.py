"""A document's hash: its source bytes plus everything that shapes its chunks.

Why it decides resumption: a re-run skips a document whose stored hash matches without
loading it, so the hash must change whenever its chunks, vectors or enrichment would.
"""

from __future__ import annotations

import hashlib
import json

from backend.common.errors import LoaderError
from backend.core.embedding_text import profile_fingerprint_exclude
from backend.core.enrichment import enrichment_fingerprint
from backend.ingest.ingest_config import IngestConfig
from backend.common.config import OcrSettings
from backend.ingest.loaders import IMAGE_SUFFIXES, WORD_SUFFIXES
from backend.ingest.manifest import ManifestEntry
from backend.ingest.targets import Target, entry_source

#: bump when the pipeline changes chunks for unchanged inputs, so every document is redone
#: (2: every chunk records ``heading_path`` and, for PDF, ``page``; 3: ``section_breaks`` and, for
#: PDF, ``page_breaks`` (where a section or page begins inside the chunk), and ``source`` is relative
#: to the manifest or allowed root for files outside the repository; 4: a heading is found as a line
#: of its own, not as the same word earlier in a table row, so ``heading_path`` and ``section_breaks`` move;
#: 5: a chunk that starts inside a table records the table's header row, ``table_header``)
PIPELINE_FORMAT = 5


def document_hash(entry: ManifestEntry, target: Target, config: IngestConfig, model_id: str) -> str:
    """sha256 of the source bytes plus a fingerprint of everything that shapes its chunks."""
    digest = hashlib.sha256()
    try:
        with entry.path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise LoaderError(f"{entry.path}: unreadable: {exc.strerror}", path=str(entry.path)) from exc
    s = config
    fingerprint = {
        "format": PIPELINE_FORMAT, "model": model_id, "doc_id": entry.doc_id,
        "source": entry_source(entry), "metadata": entry.metadata,
        "profile": target.profile.model_dump(mode="json", exclude=profile_fingerprint_exclude(target.profile)),
        "sanitize": s.sanitize.model_dump(mode="json", exclude={"audit_path", "batch_size", "sanitize_questions", "worker"})
        if s.sanitize.enabled else None,
        "docx": s.docx.model_dump(mode="json", include={"extract_images", "inline_figure_placeholders",
                                                        "figure_chunks"}) if entry.path.suffix.lower() in WORD_SUFFIXES else None,
    }
    ocr = ocr_fingerprint(config.ingest.ocr, entry.path.suffix.lower() in IMAGE_SUFFIXES)
    if ocr is not None:  # absent at the defaults, so a PDF ingested before OCR existed keeps its hash
        fingerprint["ocr"] = ocr
    enrichment = target.profile.enrichment
    enriched = enrichment_fingerprint(
        enrichment, enrichment.model or (s.embeddings.oci.chat_model_id if enrichment.provider == "oci" else None))
    if enriched is not None:  # absent while off, so documents ingested before enrichment keep their hash
        fingerprint["enrichment"] = enriched
    digest.update(json.dumps(fingerprint, sort_keys=True, default=str).encode())
    return digest.hexdigest()


#: OCR settings that never shape a document's text (limits: a document over one fails instead)
_OCR_LIMITS = frozenset({"max_pages_per_document", "max_pages_per_ingest", "max_image_pixels", "page_timeout_seconds",
                         "max_memory_mb", "threads"})


def ocr_fingerprint(settings: OcrSettings, image_file: bool) -> dict[str, object] | None:
    """Pure: the OCR settings that shape a document's text, for its hash: always for an image
    file (all its text is OCR's), otherwise only when they differ from the defaults (which PDFs
    and DOCX files ingested before OCR existed were hashed under)."""
    shaping = settings.model_dump(mode="json", exclude=set(_OCR_LIMITS))
    if not image_file and shaping == OcrSettings().model_dump(mode="json", exclude=set(_OCR_LIMITS)):
        return None
    return shaping
