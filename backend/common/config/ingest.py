"""Ingestion: per-file limits, allowed roots, locks, version names, DOCX images, and OCR."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from backend.common.config.base import _Model, validate_identifier


class DocxSettings(_Model):
    extract_images: bool = Field(False, description="Write referenced images to assets_dir (env DOCX_EXTRACT_IMAGES).")
    inline_figure_placeholders: bool = Field(False, description="Put [FIGURE:<id>] where an image stood (env DOCX_INLINE_FIGURE_PLACEHOLDERS).")
    figure_chunks: bool = Field(False, description="Emit one chunk_type=figure chunk per image (env DOCX_FIGURE_CHUNKS).")
    image_debug: bool = Field(False, description="Log one event per image (env DOCX_IMAGE_DEBUG).")
    assets_dir: str = Field("data/rag-assets", description="Where images are written (env RAG_ASSETS_DIR), relative to the repo root.")
    max_images_per_doc: int = Field(500, ge=0, description="Zip-bomb guard: images written per document.")
    max_image_bytes: int = Field(20 * 1024 * 1024, ge=0, description="Zip-bomb guard: largest image written.")
    max_total_image_bytes: int = Field(200 * 1024 * 1024, ge=0, description="Zip-bomb guard: all images of one document.")
    assets_gc_grace_seconds: int = Field(
        3600, ge=0,
        description="`rag index gc` removes an image no version cites only once it is this old, so a build still "
        "writing its chunks keeps the images it has just written or reused.",
    )


class IngestLimits(_Model):
    """Per-file limits against hostile or broken files (docs/SECURITY.md, "Ingest: hostile files and limits")."""

    worker: bool = Field(
        True, description="Run the loaders in a separate worker process under `timeout_seconds` and "
        "`max_memory_mb`; false loads in-process (no time or memory limit, for debugging).")
    timeout_seconds: float = Field(120.0, gt=0, description="Wall-clock time one file may take to load; "
                                   "the worker is stopped and replaced and the file fails.")
    max_memory_mb: int = Field(1024, ge=256, description="Address-space limit of the loader worker "
                               "(RLIMIT_AS); a file needing more fails.")
    max_unzipped_bytes: int = Field(256 * 1024 * 1024, ge=1, description="DOCX: total declared uncompressed "
                                    "size of the XML parts read; images have the docx.max_*image* limits.")
    max_compression_ratio: float = Field(100.0, ge=1, description="DOCX: largest uncompressed/compressed ratio "
                                         "of a part over 1 MiB (zip-bomb guard).")
    max_pages: int = Field(5000, ge=1, description="PDF: documents with more pages are refused.")
    max_chars: int = Field(5_000_000, ge=1, description="Characters of text one document may yield.")


class OcrSettings(_Model):
    """OCR of scanned pages and pictures (docs/OCR.md): needs the `ocr` extra; nothing downloads at run time."""

    enabled: bool = Field(
        True, description="OCR image files (PNG, JPEG, TIFF) and PDF pages without a usable text layer; false "
        "refuses them as before (an image file is unsupported, a scanned PDF empty or low quality).")
    min_page_quality: float = Field(
        0.5, ge=0, le=1, description="A PDF page whose own text layer scores below this text-quality score (or "
        "holds fewer than min_page_chars characters) is OCRed; a page at or above it never is.")
    min_page_chars: int = Field(
        20, ge=0, description="A PDF page with fewer non-space characters in its text layer has no usable text "
        "layer and is OCRed (a scan with a page number stamped as text still counts as a scan).")
    min_confidence: float = Field(
        0.6, ge=0, le=1, description="OCR blocks whose confidence (mean of their lines') is below this are "
        "low-confidence: dropped or flagged as low_confidence says, and counted in the text-quality score.")
    low_confidence: Literal["drop", "flag"] = Field(
        "flag", description="A low-confidence block: drop (left out of the text) or flag (kept, its chunk's "
        "metadata says ocr_low_confidence).")
    max_pages_per_document: int = Field(
        200, ge=1, description="A document needing more OCR pages than this is refused, naming the file (a 2,000-"
        "page scan costs hours on 2 cores).")
    max_pages_per_ingest: int = Field(
        2000, ge=1, description="OCR pages one ingest run may spend (per prepare worker); documents after the "
        "budget is spent fail with a reason naming this setting and the next run picks them up.")
    max_image_pixels: int = Field(
        60_000_000, ge=1, description="An image (a file, a TIFF frame or a PDF page image) larger than this many "
        "pixels is refused before it is decoded (an A4 page at 600 dpi is 35 million).")
    max_side: int = Field(
        2000, ge=320, description="Longest side an image is scaled down to before detection (A4 at 170 dpi); "
        "larger reads small print better and costs time and memory.")
    page_timeout_seconds: float = Field(
        120.0, gt=0, description="Wall-clock time one OCR page may take in the loader worker (a page takes 2-7 s on 2 idle cores); each finished page "
        "restarts the file's clock, so a long scan is bounded per page, not by ingest.limits.timeout_seconds.")
    max_memory_mb: int = Field(
        3072, ge=512, description="The loader worker's address-space limit once OCR is enabled (the OCR runtime "
        "reserves more address space than it uses; peak RSS is about 1.1 GB), instead of limits.max_memory_mb "
        "when that is lower.")
    threads: int = Field(0, ge=0, description="Threads of the OCR runtime; 0: one per core.")


class IngestSettings(_Model):
    limits: IngestLimits = Field(default_factory=IngestLimits, description="Per-file hostile-input limits.")
    ocr: OcrSettings = Field(default_factory=OcrSettings, description="OCR of scanned pages and image files.")
    allowed_roots: tuple[str, ...] = Field(
        ("data",), description="Manifest paths must resolve inside one of these directories (relative to the repo root)."
    )
    max_file_bytes: int = Field(100 * 1024 * 1024, ge=1, description="Larger files are refused.")
    min_text_quality: float = Field(
        0.5, ge=0, le=1, description="Documents whose text-quality score (share of characters in word-like "
        "tokens: no control/private-use characters, unmapped PDF glyph names or mis-decoded sequences) is below "
        "this are mojibake, e.g. a PDF font without a Unicode map; 0 turns the check off.")
    low_quality: Literal["refuse", "flag"] = Field(
        "refuse", description="What happens to a document below min_text_quality: refuse (a per-file failure, "
        "nothing indexed) or flag (indexed, with a note in the run summary and an ingest.low_text_quality warning).")
    documents_per_transaction: int = Field(16, ge=1, description="Documents written per store transaction.")
    progress: bool = Field(True, description="Progress bars on stderr for rag ingest, eval and calibrate, drawn only "
                           "when stderr is a terminal and --json is not given; --progress/--no-progress override.")
    concurrent_runs: Literal["wait", "refuse"] = Field(
        "wait",
        description="A second run (ingest, promote, rollback) of an index series whose writer lock another run "
        "holds: `wait` queues behind it for up to `lock_wait_s`, `refuse` stops at once. Either way a run that "
        "does not get the lock writes nothing and exits 4, naming the holder (pid, host, since).",
    )
    lock_wait_s: float = Field(
        1800.0, ge=0,
        description="With concurrent_runs: wait, how long a run waits for the series lock before it gives up "
        "(exit 4). On Oracle rounded up to whole seconds (FOR UPDATE WAIT n).",
    )
    version_name_template: str = Field(
        "{stem}_V{n}",
        description="How the next version of a series is named when the newest one is served: `{stem}` is the "
        "configured index_name without its version suffix, `{n}` the next number (KB_HANDBOOK_V1 -> KB_HANDBOOK_V2).",
    )

    @field_validator("version_name_template")
    @classmethod
    def _version_template(cls, v: str) -> str:
        if v.count("{stem}") != 1 or v.count("{n}") != 1 or not v.startswith("{stem}") or not v.endswith("{n}"):
            raise ValueError("must start with {stem}, end with {n} and hold each once, e.g. '{stem}_V{n}'")
        validate_identifier(v.replace("{stem}", "KB").replace("{n}", "2"), "version_name_template")
        return v
