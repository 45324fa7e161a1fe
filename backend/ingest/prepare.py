"""The prepare step: load, render, sanitize and chunk a group of planned documents.

``Preparer(config, embedder)`` is called as ``(group, target, report, sanitizer=None) ->
list[Prepared]``; a document that fails to load is reported and left out. Loading runs in the
loader worker process (``ingest.limits``) unless ``ingest.limits.worker`` is off; sanitizing is
one call for the whole group, in the PII worker process when the engine hands one
(``sanitizer``), else here. The embedder is asked for only by a ``tokens`` chunker (its
tokenizer), so a Ray prepare actor never loads a model it does not use.

OCR (docs/OCR.md) happens inside loading, in the loader worker; the preparer owns what spans
documents: the run's OCR page budget (``ingest.ocr.max_pages_per_ingest``, per preparer, so
per Ray prepare actor), the profile's ``ocr_pictures`` handed to each load, and the count of
OCR pages on the progress display and in the report.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

import structlog

from backend.common import telemetry
from backend.common.errors import ConfigError, LoaderError, PictureWithoutText
from backend.common.progress import NO_PROGRESS, Progress
from backend.core.ports import Embedder, TokenizingEmbedder
from backend.core.types import Chunk
from backend.ingest import figures, sanitize_worker
from backend.ingest.chunkers import TextChunker, dedupe, hf_token_spans
from backend.ingest.documents import LoadedDocument
from backend.ingest.ingest_config import IngestConfig
from backend.ingest.loader_worker import LoaderPool, describe_failure
from backend.ingest.loaders import load_document
from backend.ingest.manifest import ManifestEntry
from backend.ingest.ocr.pages import OCR_DIAGNOSTICS, OcrRequest
from backend.ingest.report import IngestReport
from backend.ingest.sanitize_stage import Loaded, apply_sanitized, sanitize_inputs
from backend.ingest.targets import Planned, Prepared, Target, TextSanitizer, entry_source

log = structlog.get_logger("backend.ingest.pipeline")  # the events ingest has always logged


class Preparer:
    """``(group, target, report) -> list[Prepared]``; ``close`` stops its loader worker."""

    def __init__(self, config: IngestConfig, embedder: Callable[[], Embedder], progress: Progress = NO_PROGRESS) -> None:
        self.config = config
        self._embedder = embedder
        self._progress = progress
        self._chunkers: dict[str, TextChunker] = {}
        self._loader_pool: LoaderPool | None = None
        #: OCR pages this preparer has read (the budget of ingest.ocr.max_pages_per_ingest)
        self.ocr_pages = 0

    def _ocr_page(self) -> None:
        self.ocr_pages += 1
        self._progress.note(f"OCR: {self.ocr_pages} page{'s' if self.ocr_pages != 1 else ''} read")

    @property
    def loader_pool(self) -> LoaderPool:
        """The loader worker (``ingest.limits``), started on first use."""
        if self._loader_pool is None:
            self._loader_pool = LoaderPool(self.config)
        return self._loader_pool

    def close(self) -> None:
        if self._loader_pool is not None:
            self._loader_pool.close()

    def sanitizer(self, *, groups: int) -> TextSanitizer | None:
        """The PII worker process to sanitize in while embedding runs beside it, or None (sanitize
        off, ``sanitize.worker: false``, or a single group: nothing to overlap)."""
        settings = self.config.sanitize
        if not (settings.enabled and settings.worker and groups > 1):
            return None
        log.info("ingest.sanitize_worker", groups=groups)
        return sanitize_worker.worker_for(settings)

    def __call__(self, group: Sequence[Planned], target: Target, report: IngestReport, *,
                 sanitizer: TextSanitizer | None = None) -> list[Prepared]:
        """Load, sanitize and chunk a group; the documents that got that far, in order."""
        loaded = []
        for planned in group:
            before = self.ocr_pages
            try:
                doc = self.load(planned.entry, OcrRequest(
                    pictures=target.profile.ocr_pictures,
                    pages_left=max(0, self.config.ingest.ocr.max_pages_per_ingest - self.ocr_pages)))
                if "low_text_quality" in doc.diagnostics:  # ingest.low_quality: flag
                    report.notes.append(f"{planned.entry.path}: {doc.diagnostics['low_text_quality']}")
                report.ocr_low_confidence_blocks += int(doc.diagnostics.get(OCR_DIAGNOSTICS, {}).get(
                    "low_confidence_blocks", 0))
            except PictureWithoutText as exc:  # a logo or a photo in a folder: skipped, said, not failed
                report.skip(planned.entry.path, exc)
                continue
            except LoaderError as exc:
                report.fail(planned.entry.path, exc)
                continue
            finally:
                report.ocr_pages += self.ocr_pages - before
            loaded.append(Loaded(planned, doc, self.render(doc)))
        out = []
        for item in self.sanitize(loaded, sanitizer, report):
            chunks = self.chunk(item.doc, item.text, target)
            if target.profile.chunker.dedupe:
                # per document: a document's chunks must not depend on which other
                # documents this run happened to process (incremental runs, crash re-runs)
                chunks, dropped = dedupe(chunks, set())
                report.duplicates_dropped += dropped
            out.append(Prepared(item.planned, item.doc, tuple(chunks)))
        return out

    # --- its parts (each a span while telemetry is on: backend.common.telemetry) -------------
    @telemetry.traced("rag.load", attributes=lambda self, entry, *_: {"rag.document.type": entry.path.suffix.lower()})
    def load(self, entry: ManifestEntry, ocr: OcrRequest | None = None) -> LoadedDocument:
        """Load and normalise, in the loader worker unless ``ingest.limits.worker`` is off;
        every failure becomes a ``LoaderError`` naming the file. ``ocr``: what this document's
        OCR may do (default: no pictures, the per-document page cap only)."""
        try:
            if self.config.ingest.limits.worker:
                doc = self.loader_pool.load(entry.path, entry.doc_id, ocr, self._ocr_page)
            else:
                doc = load_document(entry.path, entry.doc_id, self.config, ocr, self._ocr_page)
        except LoaderError:
            raise
        except Exception as exc:  # a parser bug on hostile input must fail the file, not the run
            raise LoaderError(describe_failure(entry.path, exc), path=str(entry.path)) from exc
        return replace(doc, source=entry_source(entry), metadata=dict(entry.metadata))

    def render(self, doc: LoadedDocument) -> str:
        """The text to chunk: DOCX documents go through ``figures.render_text``."""
        return figures.render_text(doc, self.config.docx) if figures.applies_to(doc) else doc.text

    @telemetry.traced("rag.sanitize", attributes=lambda self, items, *_: {"rag.documents": len(items)})
    def sanitize(self, items: list[Loaded], sanitizer: TextSanitizer | None = None,
                 report: IngestReport | None = None) -> list[Loaded]:
        """PII redaction/audit of each document's text, figure captions and string
        manifest-metadata values, one call for the whole group, in ``sanitizer`` (the PII
        worker process) or in this process. Imports nothing while sanitize is off."""
        if not self.config.sanitize.enabled or not items:
            return items
        try:
            from backend.common.sanitizer import sanitize_if_enabled, write_findings
        except ModuleNotFoundError as exc:
            raise ConfigError("sanitize.enabled is true but backend.common.sanitizer is not installed") from exc
        texts, doc_ids, slots = sanitize_inputs(items)
        outcome = (sanitizer.sanitize(texts, doc_ids) if sanitizer is not None
                   else sanitize_if_enabled(texts, self.config.sanitize, doc_ids=doc_ids))
        clean = apply_sanitized(items, slots, outcome.texts)
        telemetry.annotate({"rag.pii.findings": len(outcome.findings)})
        if report is not None:
            counts: dict[str, dict[str, int]] = {}
            for finding in outcome.findings:
                kinds = counts.setdefault(finding.doc_id, {})
                kinds[finding.entity_type] = kinds.get(finding.entity_type, 0) + 1
            report.add_pii(counts, self.config.sanitize.mode, str(self.config.resolve_path(self.config.sanitize.audit_path)))
        if outcome.findings:
            write_findings(self.config.resolve_path(self.config.sanitize.audit_path), outcome.findings)
            log.info("ingest.pii_findings", findings=len(outcome.findings), documents=len(items))
        return clean

    def chunker(self, target: Target) -> TextChunker:
        if target.profile_name not in self._chunkers:
            spans = None
            if target.profile.chunker.kind == "tokens":
                embedder = self._embedder()
                if not isinstance(embedder, TokenizingEmbedder):
                    raise ConfigError(f"embeddings.profiles.{target.profile_name}.chunker.kind is 'tokens' but the "
                                      f"embedder {embedder.model_id} has no tokenizer; use kind: chars")
                spans = hf_token_spans(embedder.tokenizer)
            self._chunkers[target.profile_name] = TextChunker(target.profile, spans)
        return self._chunkers[target.profile_name]

    @telemetry.traced("rag.chunk", attributes=lambda self, doc, text, target: {"rag.profile": target.profile_name},
                      result=lambda chunks: {"rag.chunks": len(chunks)})
    def chunk(self, doc: LoadedDocument, text: str, target: Target) -> list[Chunk]:
        chunks = self.chunker(target).chunk(doc, text)
        if figures.applies_to(doc):  # every DOCX gets its DOCX_FIGURE_CHUNKING_SUMMARY
            chunks += figures.figure_chunks(doc, chunks, self.config.docx, target.profile)
        return chunks
