"""Incremental, crash-safe, batched ingestion of a manifest into index versions.

Stages, each a method so the benchmark can time them and an engine can call them:
``load``, ``sanitize`` (PII, one call per group, in the PII worker process when the
engine hands it one), ``chunk``, ``enrich`` (``enrichment_stage``: metadata, questions,
summaries, cached), ``embed`` (chunks, questions and summaries in one batched call,
cache first) and ``write`` (one store transaction per ``ingest.documents_per_transaction``
documents). Per series: ``start_target`` plans the version, the engine
(``engine.LocalEngine`` by default, or the Ray one) writes the pending groups,
``finish_target`` prunes and finishes the load. Progress goes to a ``Progress``; a
``CancelToken`` is checked between groups (``cancel``).

Why a killed or cancelled run is harmless: each document's chunks land in one transaction
together with its ``doc_hash``; the hash covers the source bytes and everything that
shapes the chunks, and chunk ids are deterministic. A re-run skips every document whose
stored hash matches (without loading it), redoes the rest and upserts the same rows an
uninterrupted run would have written. Aliases are never touched here; promotion is the
evaluation gate's job.

Why a served version never changes: each target is planned by ``versions.plan_build``.
When the newest version of the series is served (or kept for rollback) and the run
would change it, the next version is created as a copy of it (unchanged documents
carried with their vectors) and only the changes are written there; a killed build
leaves that unserved candidate, which the next run finds and resumes.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import structlog

from backend.common import telemetry
from backend.common.config import Settings
from backend.common.errors import ConfigError, LoaderError, ProviderError
from backend.common.progress import NO_PROGRESS, Progress, TqdmProgress, progress_enabled
from backend.core.ports import CombinedStore, Embedder, Enricher, EnrichmentCache, Stores
from backend.core.retrieval_stamp import retrieval_stamp, stamp_changes
from backend.core.services.series_lock import SeriesLocks, series_key
from backend.core.versions import BuildPlan, VersionNaming, latest_version, plan_build, rolled_back_base
from backend.core.types import Chunk, DocumentWrite, Vector, VersionSpec
from backend.ingest import figures, sanitize_worker
from backend.ingest.cancel import CancelToken, IngestCancelled
from backend.ingest.chunkers import TextChunker, dedupe, hf_token_spans
from backend.ingest.documents import LoadedDocument
from backend.ingest.embedding_batches import EmbeddingBatcher
from backend.ingest.engine import EngineStats, IngestEngine, LocalEngine, TargetRun
from backend.ingest.enrichment_stage import EnricherFactory, EnrichmentStage, no_enricher
from backend.ingest.ingest_config import IngestConfig
from backend.ingest.loader_worker import LoaderPool, describe_failure
from backend.ingest.loaders import load_document
from backend.ingest.manifest import ManifestEntry, read_manifest
from backend.ingest.report import IngestReport
from backend.ingest.fingerprint import PIPELINE_FORMAT, document_hash
from backend.ingest.sanitize_stage import apply_sanitized, sanitize_inputs
from backend.ingest.targets import Pending, Target, TextSanitizer, display_source, entry_source, plan_targets

log = structlog.get_logger(__name__)

#: what other modules import from here (the engine seam's names included, so an engine imports one module)
__all__ = ["IngestPipeline", "IngestConfig", "Target", "Pending", "TargetRun", "EngineStats", "IngestEngine",
           "LocalEngine", "EnricherFactory", "no_enricher", "display_source", "entry_source", "PIPELINE_FORMAT"]


class IngestPipeline:
    """``IngestPipeline(stores, embedder, config).run(manifest)`` -> ``IngestReport``.

    What it is given is all it uses: the store ports (``stores.vectors`` for chunks and the
    vector cache, ``stores.admin`` for versions and series locks, ``stores.enrichment_cache``),
    the embedder, the settings slice (``IngestConfig``), the enricher factory, the progress it
    reports to, the cancel token it checks between groups and the engine that processes groups.
    """

    def __init__(self, stores: Stores, embedder: Embedder, config: IngestConfig, *,
                 enricher_for: EnricherFactory = no_enricher, progress: Progress = NO_PROGRESS,
                 engine: IngestEngine | None = None, cancel: CancelToken | None = None,
                 sleep: Callable[[float], None] = time.sleep, enrichers: Mapping[str, Enricher] | None = None) -> None:
        """``enrichers`` (profile name -> ``Enricher``) replace what ``enricher_for`` would build
        for those profiles and are not closed by ``close`` (their owner closes them)."""
        self.stores, self.embedder, self.config = stores, embedder, config
        self.enricher_for = enricher_for
        self.progress = progress
        self.engine: IngestEngine = engine or LocalEngine()
        self.cancel = cancel or CancelToken()
        self._enrichers: dict[str, Enricher | None] = dict(enrichers or {})
        self._injected = set(self._enrichers)
        self._stages: dict[str, EnrichmentStage] = {}
        self._sleep = sleep
        self._chunkers: dict[str, TextChunker] = {}
        self._loader_pool: LoaderPool | None = None

    @classmethod
    def from_settings(cls, settings: Settings, store_or_stores: CombinedStore | Stores, embedder: Embedder, *,
                      progress: bool | Progress | None = None, enrichment_cache: EnrichmentCache | None = None,
                      **kw: Any) -> IngestPipeline:
        """Tests' and scripts' door: the whole settings and one store object (wrapped with
        ``Stores.of``) or a ``Stores``; ``progress`` a flag (tqdm bars on stderr, drawn as
        ``progress_enabled`` decides) or a ``Progress``. Other keywords go to the constructor."""
        stores = store_or_stores if isinstance(store_or_stores, Stores) else Stores.of(store_or_stores)
        if enrichment_cache is not None:
            stores = Stores(stores.vectors, stores.admin, stores.interactions, stores.conversations,
                            enrichment_cache, stores.owner)
        if not isinstance(progress, Progress) or isinstance(progress, bool):
            progress = TqdmProgress(progress_enabled(progress, default=settings.ingest.progress))
        return cls(stores, embedder, IngestConfig.of(settings), progress=progress, **kw)

    @property
    def loader_pool(self) -> LoaderPool:
        """The loader worker (``ingest.limits``), started on first use."""
        if self._loader_pool is None:
            self._loader_pool = LoaderPool(self.config)
        return self._loader_pool

    def close(self) -> None:
        """Stop the loader worker and close the enrichers built here; ``run`` does this at its end,
        also when it raises."""
        if self._loader_pool is not None:
            self._loader_pool.close()
        for name in [n for n in self._enrichers if n not in self._injected]:  # built here: rebuilt on the next run
            closer = getattr(self._enrichers.pop(name), "close", None)
            if callable(closer):
                closer()
        self._stages.clear()  # the enrichment cache is the stores' (their owner closes it)

    # --- planning ------------------------------------------------------------------
    def targets(self, entries: Iterable[ManifestEntry], profile: str | None,
                domain_key: str | None) -> list[tuple[Target, list[ManifestEntry]]]:
        """Group entries by version: ``--domain-key`` > ``--profile`` > the line's
        ``profiles`` > ``embeddings.default_profile``."""
        return plan_targets(self.config.embeddings, entries, profile, domain_key)

    def document_hash(self, entry: ManifestEntry, target: Target) -> str:
        """sha256 of the source bytes plus a fingerprint of everything that shapes its chunks."""
        return document_hash(entry, target, self.config, self.embedder.model_id)

    # --- stages (each a span while telemetry is on: backend.common.telemetry) ----------------
    @telemetry.traced("rag.load", attributes=lambda self, entry: {"rag.document.type": entry.path.suffix.lower()})
    def load(self, entry: ManifestEntry) -> LoadedDocument:
        """Load and normalise, in the loader worker unless ``ingest.limits.worker`` is off;
        every failure becomes a ``LoaderError`` naming the file."""
        try:
            if self.config.ingest.limits.worker:
                doc = self.loader_pool.load(entry.path, entry.doc_id)
            else:
                doc = load_document(entry.path, entry.doc_id, self.config)
        except LoaderError:
            raise
        except Exception as exc:  # a parser bug on hostile input must fail the file, not the run
            raise LoaderError(describe_failure(entry.path, exc), path=str(entry.path)) from exc
        doc.source = entry_source(entry)
        doc.metadata = dict(entry.metadata)
        return doc

    def render(self, doc: LoadedDocument) -> str:
        """The text to chunk: DOCX documents go through ``figures.render_text``."""
        return figures.render_text(doc, self.config.docx) if figures.applies_to(doc) else doc.text

    @telemetry.traced("rag.sanitize", attributes=lambda self, items, *_: {"rag.documents": len(items)})
    def sanitize(self, items: list[Pending], sanitizer: TextSanitizer | None = None) -> None:
        """PII redaction/audit of each document's text, figure captions and string
        manifest-metadata values, one call for the whole group, in ``sanitizer`` (the PII
        worker process) or in this process. Does nothing (imports nothing) when sanitize is off."""
        if not self.config.sanitize.enabled or not items:
            return
        try:
            from backend.common.sanitizer import sanitize_if_enabled, write_findings
        except ModuleNotFoundError as exc:
            raise ConfigError("sanitize.enabled is true but backend.common.sanitizer is not installed") from exc
        texts, doc_ids, slots = sanitize_inputs(items)
        outcome = (sanitizer.sanitize(texts, doc_ids) if sanitizer is not None
                   else sanitize_if_enabled(texts, self.config.sanitize, doc_ids=doc_ids))
        apply_sanitized(slots, outcome.texts)
        telemetry.annotate({"rag.pii.findings": len(outcome.findings)})
        if outcome.findings:
            write_findings(self.config.resolve_path(self.config.sanitize.audit_path), outcome.findings)
            log.info("ingest.pii_findings", findings=len(outcome.findings), documents=len(items))

    def chunker(self, target: Target) -> TextChunker:
        if target.profile_name not in self._chunkers:
            spans = None
            if target.profile.chunker.kind == "tokens":
                tokenizer = getattr(self.embedder, "tokenizer", None)
                if tokenizer is None:
                    raise ConfigError(f"embeddings.profiles.{target.profile_name}.chunker.kind is 'tokens' but the "
                                      f"embedder {self.embedder.model_id} has no tokenizer; use kind: chars")
                spans = hf_token_spans(tokenizer)
            self._chunkers[target.profile_name] = TextChunker(target.profile, spans)
        return self._chunkers[target.profile_name]

    @telemetry.traced("rag.chunk", attributes=lambda self, doc, text, target: {"rag.profile": target.profile_name},
                      result=lambda chunks: {"rag.chunks": len(chunks)})
    def chunk(self, doc: LoadedDocument, text: str, target: Target) -> list[Chunk]:
        chunks = self.chunker(target).chunk(doc, text)
        if figures.applies_to(doc):  # every DOCX gets its DOCX_FIGURE_CHUNKING_SUMMARY
            chunks += figures.figure_chunks(doc, chunks, self.config.docx, target.profile)
        return chunks

    @telemetry.traced("rag.embed", attributes=lambda self, batcher, texts: {
        **telemetry.model_attributes("embeddings", self.embedder), "rag.texts": len(texts)})
    def embed(self, batcher: EmbeddingBatcher, texts: Sequence[str]) -> Vector:
        """Vectors of what a group embeds: chunks (``text_to_embed``), questions and summaries."""
        return batcher.vectors_for(list(texts))

    def sanitize_stage(self, *, groups: int) -> TextSanitizer | None:
        """The PII worker process to sanitize in while embedding runs here, or None (sanitize off,
        ``sanitize.worker: false``, or a single group: nothing to overlap)."""
        settings = self.config.sanitize
        if not (settings.enabled and settings.worker and groups > 1):
            return None
        log.info("ingest.sanitize_worker", groups=groups)
        return sanitize_worker.worker_for(settings)

    def enrichment_stage(self, target: Target) -> EnrichmentStage | None:
        """The profile's enrichment stage (enricher built once per run by ``enricher_for``, the
        cache from ``stores.enrichment_cache``), or None when off."""
        name = target.profile_name
        if target.profile.enrichment.provider == "none" and self._enrichers.get(name) is None:
            return None
        stages = self._stages
        if name not in stages:
            if name not in self._enrichers:
                self._enrichers[name] = self.enricher_for(target.profile)
            enricher, cache = self._enrichers[name], self.stores.enrichment_cache
            if enricher is None:
                return None
            if cache is None:
                raise ConfigError(f"embeddings.profiles.{name}.enrichment is on but the store gives no enrichment "
                                  "cache (Stores.enrichment_cache)")
            stages[name] = EnrichmentStage(self.config, target.profile, enricher, cache)
        return stages[name]

    def enrich(self, items: list[Pending], target: Target, report: IngestReport) -> list[Pending]:
        """Enrich each document's chunks; a document whose enricher fails for good is reported
        and left out of the write, like a document whose embedding fails."""
        stage = self.enrichment_stage(target)
        if stage is None:
            return items
        kept = []
        for item in items:
            assert item.doc is not None
            try:
                item.enriched = stage.enrich(item.entry.doc_id, item.doc.source, item.doc.metadata, item.chunks)
            except ProviderError as exc:
                report.fail(item.entry.path, exc)
                continue
            item.chunks = item.enriched.chunks
            kept.append(item)
        return kept

    def _texts(self, item: Pending, target: Target) -> list[str]:
        """Everything one document embeds: its chunks, then its questions and summaries."""
        texts = [c.text_to_embed for c in item.chunks]
        stage = self.enrichment_stage(target) if item.enriched is not None else None
        return texts + (stage.embed_texts(item.enriched) if stage is not None and item.enriched is not None else [])

    @telemetry.traced("rag.write", attributes=lambda self, version, documents, **_: {
        "rag.version": version, "rag.documents": len(documents)}, result=lambda written: {"rag.chunks": written})
    def write(self, version: str, documents: Sequence[DocumentWrite], *, allow_served: bool = False) -> int:
        if not documents:
            return 0
        return int(self.stores.vectors.write_documents(version, documents, allow_served=allow_served))

    # --- per group (what an engine calls) ------------------------------------------------
    def prepare(self, group: list[Pending], target: Target, report: IngestReport, *,
                sanitizer: TextSanitizer | None = None) -> list[Pending]:
        """Load, sanitize and chunk a group; returns the documents that got that far."""
        loaded = []
        for item in group:
            try:
                item.doc = self.load(item.entry)
                item.text = self.render(item.doc)
                if "low_text_quality" in item.doc.diagnostics:  # ingest.low_quality: flag
                    report.notes.append(f"{item.entry.path}: {item.doc.diagnostics['low_text_quality']}")
            except LoaderError as exc:
                report.fail(item.entry.path, exc)
                continue
            loaded.append(item)
        self.sanitize(loaded, sanitizer)
        for item in loaded:
            assert item.doc is not None
            item.chunks = self.chunk(item.doc, item.text, target)
            if target.profile.chunker.dedupe:
                # per document: a document's chunks must not depend on which other
                # documents this run happened to process (incremental runs, crash re-runs)
                item.chunks, dropped = dedupe(item.chunks, set())
                report.duplicates_dropped += dropped
        return loaded

    def vectors(self, items: list[Pending], batcher: EmbeddingBatcher, report: IngestReport,
                target: Target) -> list[tuple[Pending, Vector]]:
        """Embed the whole group at once (chunks, questions and summaries in one batched call:
        a text met twice is embedded once); on a permanent error, document by document so
        only the documents that really fail are reported."""
        texts = [self._texts(item, target) for item in items]
        try:
            vectors = self.embed(batcher, [t for group in texts for t in group])
        except ProviderError as exc:
            if len(items) == 1:
                report.fail(items[0].entry.path, exc)
                return []
            return [pair for item in items for pair in self.vectors([item], batcher, report, target)]
        out, offset = [], 0
        for item, group in zip(items, texts):
            out.append((item, vectors[offset:offset + len(group)]))
            offset += len(group)
        return out

    @staticmethod
    def document_write(item: Pending, vectors: Vector) -> DocumentWrite:
        """One document's rows: chunks with their vectors, then its questions and summaries."""
        n = len(item.chunks)
        extra = item.enriched
        if extra is None or not (extra.questions or extra.summaries):
            return DocumentWrite(item.entry.doc_id, item.doc_hash, item.chunks, vectors[:n])
        q = len(extra.questions)
        return DocumentWrite(item.entry.doc_id, item.doc_hash, item.chunks, vectors[:n],
                             questions=tuple(extra.questions), question_vectors=vectors[n:n + q],
                             summaries=tuple(extra.summaries), summary_vectors=vectors[n + q:])

    def commit(self, run: TargetRun, writes: Sequence[DocumentWrite], report: IngestReport, progress: Progress, *,
               documents: int) -> int:
        """Write one group in one transaction and count it: ``documents`` is the group's size
        (failed documents included, so progress reaches the total). Returns chunks written."""
        target = run.target
        chunks = self.write(target.version, writes, allow_served=target.allow_served)
        self.record(run, writes, chunks, report, progress, documents=documents)
        return chunks

    def record(self, run: TargetRun, writes: Sequence[DocumentWrite], chunks: int, report: IngestReport,
               progress: Progress, *, documents: int) -> None:
        """Count a committed group (``GroupWriter`` writes on other threads and counts here)."""
        run.written.update(w.doc_id for w in writes)
        report.documents_written += len(writes)
        report.chunks_written += chunks
        progress.documents(documents)
        progress.chunks(chunks)
        for w in writes:
            log.debug("ingest.document_written", doc_id=w.doc_id, version=run.target.version, chunks=len(w.chunks))
            report.flag_instructions(w.doc_id, run.target.version, w.chunks)

    def check_cancel(self, run: TargetRun, report: IngestReport) -> None:
        """Between groups: ``IngestCancelled`` when Ctrl-C or ``rag ingest cancel`` asked for it.
        What is written stays; ``finish_load`` is not called, so the version resumes next run."""
        reason = self.cancel.requested(run.series)
        if reason is None:
            return
        written = run.done_before + len(run.written)
        self.progress.note(f"cancelling ({reason}): {written} of {run.total} documents written")
        log.warning("ingest.cancelled", series=run.series, version=run.target.version, written=written,
                    total=run.total, reason=reason)
        raise IngestCancelled(written=written, total=run.total, version=run.target.version, series=run.series,
                              reason=reason)

    # --- orchestration -----------------------------------------------------------------
    @telemetry.traced("rag.ingest", attributes=lambda self, manifest, **kw: {"rag.profile": kw.get("profile")},
                      result=lambda report: {"rag.documents.seen": report.documents_seen,
                                             "rag.documents.written": report.documents_written,
                                             "rag.chunks.written": report.chunks_written,
                                             "rag.documents.failed": len(report.failures)})
    def run(self, manifest: Path, *, profile: str | None = None, domain_key: str | None = None,
            prune: bool = False, strict: bool = False, in_place: bool = False,
            locks: SeriesLocks | None = None) -> IngestReport:
        """Ingest every listed document that changed. Bad lines and files are reported in
        the result and the run goes on; ``strict`` raises ``ManifestError`` at the first bad line.
        ``in_place`` writes the newest version of each series even when it is served.

        Every series the run writes is locked (``series_lock``) before any file is hashed or any
        version is planned, so what the run plans from is what it writes over. ``locks`` lets the
        caller keep them past the run (``--update-alias`` promotes under the same lock); without it
        the run takes and releases its own. ``SeriesLocked`` (nothing written) when another run
        holds one. ``IngestCancelled`` after the group in flight when the run is cancelled."""
        started = time.perf_counter()
        parsed = read_manifest(Path(manifest), self.config, strict=strict)
        report = IngestReport(manifest=str(manifest), manifest_errors=list(parsed.errors))
        for where, reason in parsed.errors:  # debug: the summary prints each one (once)
            log.debug("ingest.manifest_line_failed", where=where, reason=reason)
        if prune and parsed.errors:
            report.notes.append("--prune skipped: the manifest has bad lines, so the listed set is unknown")
        own = nullcontext(locks) if locks is not None else SeriesLocks(self.stores.admin, self.config, "rag ingest")
        with own as held:
            try:
                targets = self.targets(parsed.entries, profile, domain_key)
                held.hold_all(target.version for target, _ in targets)
                if self.config.ingest.limits.worker and parsed.entries:
                    self.loader_pool.start()  # its imports overlap hashing and planning
                for target, entries in targets:
                    failed_before = len(report.failures)
                    self._ingest_target(target, entries, report, prune=prune and not parsed.errors,
                                        in_place=in_place)
                    # per series, so the closing "served:" line never claims a version holds what failed
                    # a bad manifest line may have been meant for any series: it counts against each
                    report.builds[-1].update(listed=len(entries) + len(parsed.errors),
                                             failed=len(report.failures) - failed_before + len(parsed.errors))
            except IngestCancelled as exc:
                report.seconds = time.perf_counter() - started
                exc.report = report
                raise
            finally:
                self.progress.close()
                self.close()
        report.seconds = time.perf_counter() - started
        log.info("ingest.finished", versions=report.versions, **report.counts(), seconds=round(report.seconds, 2))
        return report

    def plan(self, target: Target, hashes: dict[str, str], listed: set[str], *, prune: bool,
             in_place: bool) -> tuple[BuildPlan, dict[str, str]]:
        """The version this run writes for ``target`` and the document hashes it holds now."""
        admin, vectors = self.stores.admin, self.stores.vectors
        naming = VersionNaming(self.config.ingest.version_name_template)
        versions = admin.list_versions()
        latest = latest_version(naming, target.version, versions)
        protected = admin.protected_versions()
        base = None if in_place else rolled_back_base(naming, target.version, versions,
                                                       set(admin.list_aliases().values()), protected)
        compared = base or latest  # after a rollback, the served version is what a change is measured against
        existing = vectors.document_hashes(compared.name) if compared else {}
        changed = any(existing.get(d) != h for d, h in hashes.items()) or (
            prune and any(d not in listed for d in existing))
        plan = plan_build(naming, target.version, latest, protected,
                          model=self.embedder.model_id, dimension=self.embedder.dimension,
                          distance=target.profile.distance, changed=changed, in_place=in_place,
                          retrieval_changes=stamp_changes(compared.retrieval if compared else None, self.stamp(target)),
                          vector_format=target.profile.vector_format, base=base)
        if plan.target != (latest.name if latest else None):
            existing = {}
        return plan, existing

    def stamp(self, target: Target) -> dict[str, Any]:
        """The retrieval settings recorded on the version this run builds (``retrieval_stamp``)."""
        return retrieval_stamp(self.config.retrieval, target.profile)

    @telemetry.traced("rag.ingest.version", attributes=lambda self, target, entries, *_, **__: {
        "rag.profile": target.profile_name, "rag.documents": len(entries)})
    def _ingest_target(self, target: Target, entries: list[ManifestEntry], report: IngestReport, *, prune: bool,
                       in_place: bool) -> None:
        """Plan, process (the engine) and finish one series: one span, its stages under it."""
        run = self.start_target(target, entries, report, prune=prune, in_place=in_place)
        if run is not None:
            self.progress.start(len(run.pending), label=run.target.version)
            self.finish_target(run, report, self.engine.process(self, run, report, self.progress))

    def start_target(self, target: Target, entries: list[ManifestEntry], report: IngestReport, *, prune: bool,
                     in_place: bool = False) -> TargetRun | None:
        """Hash the entries, plan the series' version, create (or resume) it; the documents still
        to write, or None when the version is up to date (nothing to write, nothing to finish)."""
        hashes: dict[str, str] = {}
        readable: list[tuple[ManifestEntry, str]] = []
        for entry in entries:
            report.documents_seen += 1
            try:
                hashes[entry.doc_id] = doc_hash = self.document_hash(entry, target)
            except LoaderError as exc:
                report.fail(entry.path, exc)
                continue
            readable.append((entry, doc_hash))
        listed = {e.doc_id for e in entries}
        plan, existing = self.plan(target, hashes, listed, prune=prune, in_place=in_place)
        log.info("ingest.version_planned", series=target.version, action=plan.action, version=plan.target,
                 parent=plan.parent, reason=plan.reason)
        report.versions.append(plan.target)
        telemetry.annotate({"rag.version": plan.target, "rag.ingest.action": plan.action})
        build = report.add_build(target.version, plan.action, plan.target, plan.parent, plan.reason)
        if not plan.writes:
            report.skipped_unchanged += len(readable)
            return None
        series = series_key(VersionNaming(self.config.ingest.version_name_template), target.version)
        target = Target(target.profile_name, target.profile, plan.target, plan.allow_served)
        parent = plan.parent if plan.action == "new_version" else None
        self.stores.admin.create_version(VersionSpec(
            target.version, self.embedder.model_id, self.embedder.dimension, target.profile.distance,
            target.profile_name, parent=parent, retrieval=self.stamp(target)))
        if parent is not None:
            existing = self.stores.vectors.document_hashes(target.version)
        pending: list[Pending] = []
        for entry, doc_hash in readable:
            if existing.get(entry.doc_id) == doc_hash:
                report.skipped_unchanged += 1
                log.debug("ingest.document_skipped", doc_id=entry.doc_id, reason="unchanged")
                continue
            pending.append(Pending(entry, doc_hash))
        return TargetRun(series=series, target=target, pending=pending, existing=existing, listed=listed,
                         parent=parent, prune=prune, build=build,
                         group_size=self.config.ingest.documents_per_transaction, batcher=self.batcher,
                         done_before=len(readable) - len(pending), total=len(entries))

    def batcher(self, on_embedded: Callable[[int], None] | None = None) -> EmbeddingBatcher:
        """An embedding batcher over this pipeline's embedder and the store's vector cache."""
        return EmbeddingBatcher(self.embedder, self.stores.vectors, self.config.embeddings.batching,
                                self.config.embeddings.retry, sleep=self._sleep, on_embedded=on_embedded)

    def finish_target(self, run: TargetRun, report: IngestReport, stats: EngineStats) -> None:
        """Count what the engine did, prune, and finish the version's load (its ANN index, its
        stamp): the version becomes what a promotion may serve."""
        target = run.target
        report.add_engine_stats(stats)
        stage = self.enrichment_stage(target)
        if stage is not None:
            report.add_enrichment(stage.stats)
            stage.stats = type(stage.stats)()
        gone = sorted(d for d in run.existing if d not in run.listed) if run.prune else []
        if gone:
            self.stores.vectors.delete_documents(target.version, gone, allow_served=target.allow_served)
            report.documents_pruned += len(gone)
            log.info("ingest.documents_pruned", version=target.version, documents=len(gone))
        run.build.update(written=sorted(run.written), pruned=gone)
        if run.parent is not None:
            run.build["carried"] = len(set(run.existing) - run.written - set(gone))
        self.stores.admin.finish_load(target.version)
