"""Incremental, crash-safe, batched ingestion of a manifest into index versions.

``IngestPipeline.run`` reads the manifest and, per target series: ``Planner.start`` (hashes, the
pure ``versions.plan_build``, the version created or resumed) -> ``engine.process(stages, run)``
-> ``Planner.finish`` (prune, ``finish_load``). The engine (``engine.LocalEngine`` by default,
or the Ray one) is handed the frozen ``Stages`` bundle (``stages.py``: prepare, enrich, vectors,
write, cancel), never the pipeline. Progress goes to a ``Progress``; a ``CancelToken`` is
checked between groups.

Why a killed or cancelled run is harmless: each document's chunks land in one transaction
together with its ``doc_hash``; the hash covers the source bytes and everything that
shapes the chunks, and chunk ids are deterministic. A re-run skips every document whose
stored hash matches (without loading it), redoes the rest and upserts the same rows an
uninterrupted run would have written. Aliases are never touched here; promotion is the
evaluation gate's job. Why a served version never changes: see ``planner``.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable, Mapping

import structlog

from backend.common import telemetry
from backend.common.config import Settings
from backend.common.progress import NO_PROGRESS, Progress, TqdmProgress, progress_enabled
from backend.core.ports import CombinedStore, Embedder, Enricher, EnrichmentCache, Stores
from backend.core.services.series_lock import SeriesLocks
from backend.ingest.cancel import CancelToken, IngestCancelled
from backend.ingest.documents import LoadedDocument
from backend.ingest.embed_write import Vectorizer, Writer
from backend.ingest.engine import IngestEngine, LocalEngine
from backend.ingest.enrichment_stage import EnricherFactory, EnrichStep, no_enricher
from backend.ingest.ingest_config import IngestConfig
from backend.ingest.loader_worker import LoaderPool
from backend.ingest.manifest import ManifestEntry, read_manifest
from backend.ingest.planner import Planner
from backend.ingest.prepare import Preparer
from backend.ingest.report import IngestReport
from backend.ingest.stages import CancelCheck, Stages
from backend.ingest.targets import Target

log = structlog.get_logger(__name__)

__all__ = ["IngestPipeline", "EnricherFactory", "no_enricher"]


class IngestPipeline:
    """``IngestPipeline(stores, embedder, config).run(manifest)`` -> ``IngestReport``.

    What it is given is all it uses: the store ports (``stores.vectors`` for chunks and the
    vector cache, ``stores.admin`` for versions and series locks, ``stores.enrichment_cache``),
    the embedder, the settings slice (``IngestConfig``), the enricher factory, the progress it
    reports to, the cancel token it checks between groups and the engine that processes groups.
    It builds the ``Planner`` and the ``Stages`` from them once.
    """

    def __init__(self, stores: Stores, embedder: Embedder, config: IngestConfig, *,
                 enricher_for: EnricherFactory = no_enricher, progress: Progress = NO_PROGRESS,
                 engine: IngestEngine | None = None, cancel: CancelToken | None = None,
                 sleep: Callable[[float], None] = time.sleep, enrichers: Mapping[str, Enricher] | None = None,
                 worker_cache: str | None = None) -> None:
        """``enrichers`` (profile name -> ``Enricher``) replace what ``enricher_for`` would build
        for those profiles and are not closed by ``close`` (their owner closes them);
        ``worker_cache``: see ``Stages.worker_cache``."""
        self.stores, self.embedder, self.config = stores, embedder, config
        self.progress = progress
        self.engine: IngestEngine = engine or LocalEngine()
        self.cancel = cancel or CancelToken()
        self.planner = Planner(stores.admin, stores.vectors, embedder, config)
        self.stages = Stages(
            prepare=Preparer(config, lambda: embedder, progress),
            enrich=EnrichStep(config, enricher_for, stores.enrichment_cache, enrichers),
            vectors=Vectorizer(embedder, stores.vectors, config.embeddings.batching, config.embeddings.retry,
                               sleep=sleep),
            write=Writer(stores.vectors),
            cancel=CancelCheck(self.cancel, progress),
            worker_cache=worker_cache)

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
        """The prepare stage's loader worker (``ingest.limits``), started on first use."""
        return self.stages.prepare.loader_pool

    def load(self, entry: ManifestEntry) -> LoadedDocument:
        """One file through the prepare stage's loader (its worker and limits)."""
        return self.stages.prepare.load(entry)

    def close(self) -> None:
        """Stop the loader worker and close the enrichers built here; ``run`` does this at its end,
        also when it raises."""
        self.stages.prepare.close()
        self.stages.enrich.close()

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
        own = nullcontext(locks) if locks is not None else self.planner.locks()
        with own as held:
            try:
                targets = self.planner.targets(parsed.entries, profile, domain_key)
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

    @telemetry.traced("rag.ingest.version", attributes=lambda self, target, entries, *_, **__: {
        "rag.profile": target.profile_name, "rag.documents": len(entries)})
    def _ingest_target(self, target: Target, entries: list[ManifestEntry], report: IngestReport, *, prune: bool,
                       in_place: bool) -> None:
        """Plan, process (the engine, given the stages) and finish one series: one span, its stages under it."""
        run = self.planner.start(target, entries, report, prune=prune, in_place=in_place,
                                 batcher=self.stages.vectors.batcher)
        if run is None:
            return
        self.progress.start(len(run.pending), label=run.target.version)
        report.add_engine_stats(self.engine.process(self.stages, run, report, self.progress))
        enrichment = self.stages.enrich.take_stats(run.target)
        if enrichment is not None:
            report.add_enrichment(enrichment)
        self.planner.finish(run, report)
