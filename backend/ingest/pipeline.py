"""Incremental, crash-safe, batched ingestion of a manifest into index versions.

Stages, each a method so the benchmark can time them: ``load`` (file -> normalised
``LoadedDocument``), ``sanitize`` (PII, several documents per call), ``chunk``,
``enrich`` (the profile's ``enrichment``: summaries, metadata, hypothetical questions,
page/document summaries, cached; ``enrichment_stage``), ``embed`` (chunks, questions
and summaries in one batched call, cache first) and ``write`` (one store transaction
per ``ingest.documents_per_transaction`` documents).

Why a killed run is harmless: each document's chunks land in one transaction
together with its ``doc_hash``; the hash covers the source bytes and everything
that shapes the chunks, and chunk ids are deterministic. A re-run skips every
document whose stored hash matches (without loading it), redoes the rest and
upserts the same rows an uninterrupted run would have written. Aliases are never
touched here; promotion is the evaluation gate's job.

Why a served version never changes: before writing, each target is planned by
``versions.plan_build``. When the newest version of the series is served (or kept
for rollback) and the run would change it, the next version is created as a copy
of it (unchanged documents carried with their vectors) and only the changes are
written there. A killed build leaves that unserved candidate, which the next run
finds and resumes.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import structlog
from tqdm import tqdm

from backend.common import telemetry
from backend.common.config import REPO_ROOT, ProfileSettings, Settings
from backend.common.errors import ConfigError, LoaderError, ProviderError
from backend.common.progress import bar, progress_enabled
from backend.core.embedding_text import profile_fingerprint_exclude
from backend.core.enrichment import enrichment_fingerprint
from backend.core.services.retrieval_stamp import retrieval_stamp, stamp_changes
from backend.core.services.series_lock import SeriesLocks, held_or_own
from backend.core.services.versions import BuildPlan, VersionNaming, latest_version, plan_build
from backend.core.types import Chunk, DocumentWrite, Vector, VersionSpec
from backend.ingest import figures, sanitize_worker
from backend.ingest.chunkers import TextChunker, dedupe, hf_token_spans
from backend.ingest.documents import Block, LoadedDocument
from backend.ingest.embedding_batches import EmbeddingBatcher
from backend.ingest.enrichment_stage import Enriched, EnrichmentStage
from backend.ingest.loader_worker import LoaderPool, describe_failure
from backend.ingest.loaders import WORD_SUFFIXES, load_document
from backend.ingest.manifest import ManifestEntry, read_manifest
from backend.ingest.report import IngestReport

log = structlog.get_logger(__name__)

#: bump when the pipeline changes chunks for unchanged inputs, so every document is redone
#: (2: every chunk records ``heading_path`` and, for PDF, ``page``; 3: ``section_breaks`` and, for
#: PDF, ``page_breaks`` (where a section or page begins inside the chunk), and ``source`` is relative
#: to the manifest or allowed root for files outside the repository)
PIPELINE_FORMAT = 3
_FIGURE_ATTRS = ("caption", "title", "alt", "near_text")


@dataclass(frozen=True)
class Target:
    """Where a group of manifest entries goes: a profile and its version table."""

    profile_name: str
    profile: ProfileSettings
    version: str
    #: ``--in-place``: the version may be one an alias serves
    allow_served: bool = False


@dataclass
class Pending:
    entry: ManifestEntry
    doc_hash: str
    doc: LoadedDocument | None = None
    text: str = ""
    chunks: list[Chunk] = field(default_factory=list)
    enriched: Enriched | None = None
    written: bool = False


def _batched(items: Sequence[Pending], size: int) -> Iterator[list[Pending]]:
    it = iter(items)
    while group := list(islice(it, size)):
        yield group


def display_source(path: Path) -> str:
    """Repo-relative when possible, so stored sources do not depend on the checkout location;
    else the file name: a stored source is never an absolute server path. Entries read from a
    manifest carry their own (``ManifestEntry.source``: relative to the manifest's folder or
    allowed root), which :func:`entry_source` prefers."""
    return path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else path.name


def entry_source(entry: ManifestEntry) -> str:
    """What the entry's chunks store as ``source``."""
    return entry.source or display_source(entry.path)


class IngestPipeline:
    """``IngestPipeline(settings, store, embedder).run(manifest)`` -> ``IngestReport``."""

    def __init__(self, settings: Settings, store: Any, embedder: Any, *, progress: bool | None = None,
                 sleep: Callable[[float], None] = time.sleep, enrichers: dict[str, Any] | None = None,
                 enrichment_cache: Any = None) -> None:
        """``enrichers`` (profile name -> ``Enricher``) and ``enrichment_cache`` replace the
        configured ones (built on first use from ``profile.enrichment`` and the store)."""
        self.settings, self.store, self.embedder = settings, store, embedder
        self._enrichers: dict[str, Any] = dict(enrichers or {})
        self._injected = set(self._enrichers)
        self._enrichment_cache = enrichment_cache
        self._stages: dict[str, EnrichmentStage] = {}
        self._progress = progress_enabled(progress, default=settings.ingest.progress)
        self._sleep = sleep
        self._chunkers: dict[str, TextChunker] = {}
        self._loader_pool: LoaderPool | None = None

    @property
    def loader_pool(self) -> LoaderPool:
        """The loader worker of this pipeline (``ingest.limits``), started on first use."""
        if self._loader_pool is None:
            self._loader_pool = LoaderPool(self.settings)
        return self._loader_pool

    def close(self) -> None:
        """Stop the loader worker and close what enrichment opened (its cache connection, its
        HTTP clients); ``run`` does this at its end, also when it raises."""
        if self._loader_pool is not None:
            self._loader_pool.close()
        for name in [n for n in self._enrichers if n not in self._injected]:  # built here: rebuilt on the next run
            closer = getattr(self._enrichers.pop(name), "close", None)
            if callable(closer):
                closer()
        closer = getattr(self._enrichment_cache, "close", None)
        if self._stages and callable(closer):
            closer()  # reconnects on next use
        self._stages.clear()

    # --- planning ------------------------------------------------------------------
    def targets(self, entries: Iterable[ManifestEntry], profile: str | None,
                domain_key: str | None) -> list[tuple[Target, list[ManifestEntry]]]:
        """Group entries by version: ``--domain-key`` > ``--profile`` > the line's
        ``profiles`` > ``embeddings.default_profile``."""
        emb = self.settings.embeddings
        if domain_key is not None:
            domain = emb.domains.get(domain_key)
            if domain is None:
                raise ConfigError(f"--domain-key {domain_key!r} is not configured; known: {sorted(emb.domains)}")
            name = domain.profile or emb.default_profile
            return [(Target(name, emb.profiles[name], domain.index_name), list(entries))]
        if profile is not None and profile not in emb.profiles:
            raise ConfigError(f"--profile {profile!r} is not configured; known: {sorted(emb.profiles)}")
        groups: dict[str, list[ManifestEntry]] = {}
        for entry in entries:
            for name in [profile] if profile else (entry.profiles or (emb.default_profile,)):
                groups.setdefault(name, []).append(entry)
        if not groups:
            groups[profile or emb.default_profile] = []
        return [(Target(n, emb.profiles[n], emb.profiles[n].index_name), e) for n, e in groups.items()]

    def document_hash(self, entry: ManifestEntry, target: Target) -> str:
        """sha256 of the source bytes plus a fingerprint of everything that shapes its chunks."""
        digest = hashlib.sha256()
        try:
            with entry.path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        except OSError as exc:
            raise LoaderError(f"{entry.path}: unreadable: {exc.strerror}", path=str(entry.path)) from exc
        s = self.settings
        fingerprint = {
            "format": PIPELINE_FORMAT, "model": self.embedder.model_id, "doc_id": entry.doc_id,
            "source": entry_source(entry), "metadata": entry.metadata,
            "profile": target.profile.model_dump(mode="json", exclude=profile_fingerprint_exclude(target.profile)),
            "sanitize": s.sanitize.model_dump(mode="json", exclude={"audit_path", "batch_size", "sanitize_questions", "worker"})
            if s.sanitize.enabled else None,
            "docx": s.docx.model_dump(mode="json", include={"extract_images", "inline_figure_placeholders",
                                                            "figure_chunks"}) if entry.path.suffix.lower() in WORD_SUFFIXES else None,
        }
        enrichment = target.profile.enrichment
        enriched = enrichment_fingerprint(
            enrichment, enrichment.model or (s.embeddings.oci.chat_model_id if enrichment.provider == "oci" else None))
        if enriched is not None:  # absent while off, so documents ingested before enrichment keep their hash
            fingerprint["enrichment"] = enriched
        digest.update(json.dumps(fingerprint, sort_keys=True, default=str).encode())
        return digest.hexdigest()

    # --- stages (each a span while telemetry is on: backend.common.telemetry) ----------------
    @telemetry.traced("rag.load", attributes=lambda self, entry: {"rag.document.type": entry.path.suffix.lower()})
    def load(self, entry: ManifestEntry) -> LoadedDocument:
        """Load and normalise, in the loader worker unless ``ingest.limits.worker`` is off;
        every failure becomes a ``LoaderError`` naming the file."""
        try:
            if self.settings.ingest.limits.worker:
                doc = self.loader_pool.load(entry.path, entry.doc_id)
            else:
                doc = load_document(entry.path, entry.doc_id, self.settings)
        except LoaderError:
            raise
        except Exception as exc:  # a parser bug on hostile input must fail the file, not the run
            raise LoaderError(describe_failure(entry.path, exc), path=str(entry.path)) from exc
        doc.source = entry_source(entry)
        doc.metadata = dict(entry.metadata)
        return doc

    def render(self, doc: LoadedDocument) -> str:
        """The text to chunk: DOCX documents go through ``figures.render_text``."""
        return figures.render_text(doc, self.settings.docx) if figures.applies_to(doc) else doc.text

    @telemetry.traced("rag.sanitize", attributes=lambda self, items: {"rag.documents": len(items)})
    def sanitize(self, items: list[Pending]) -> None:
        """PII redaction/audit of each document's text, figure captions and string
        manifest-metadata values, one call for the whole group. Does nothing (imports
        nothing) when sanitize is off."""
        if not self.settings.sanitize.enabled or not items:
            return
        try:
            from backend.common.sanitizer import sanitize_if_enabled, write_findings
        except ModuleNotFoundError as exc:
            raise ConfigError("sanitize.enabled is true but backend.common.sanitizer is not installed") from exc
        texts: list[str] = []
        doc_ids: list[str] = []
        slots: list[tuple[Pending, int | None, str | None]] = []
        for item in items:
            texts.append(item.text)
            doc_ids.append(item.entry.doc_id)
            slots.append((item, None, None))
            for i, block in enumerate(item.doc.blocks if item.doc else []):
                for key in _FIGURE_ATTRS:
                    if block.kind == "image" and block.attrs.get(key):
                        texts.append(str(block.attrs[key]))
                        doc_ids.append(item.entry.doc_id)
                        slots.append((item, i, key))
            for key, value in (item.doc.metadata.items() if item.doc else ()):
                if isinstance(value, str) and value:  # manifest metadata lands in every chunk row
                    texts.append(value)
                    doc_ids.append(item.entry.doc_id)
                    slots.append((item, -1, key))
        worker = getattr(self, "_sanitize_worker", None)  # set by sanitize_worker.prefetch
        outcome = (worker.sanitize(texts, doc_ids) if worker is not None
                   else sanitize_if_enabled(texts, self.settings.sanitize, doc_ids=doc_ids))
        for (item, index, attr), clean in zip(slots, outcome.texts):
            if index is None:
                item.text = clean
            elif index == -1:
                assert item.doc is not None and attr is not None
                item.doc.metadata[attr] = clean
            else:
                assert item.doc is not None and attr is not None
                old = item.doc.blocks[index]
                item.doc.blocks[index] = Block(kind=old.kind, text=old.text, role=old.role,
                                               attrs={**old.attrs, attr: clean})
        telemetry.annotate({"rag.pii.findings": len(outcome.findings)})
        if outcome.findings:
            write_findings(self.settings.resolve_path(self.settings.sanitize.audit_path), outcome.findings)
            log.info("ingest.pii_findings", findings=len(outcome.findings), documents=len(items))

    def chunker(self, target: Target) -> TextChunker:
        if target.profile_name not in self._chunkers:
            spans = hf_token_spans(self.embedder.tokenizer) if target.profile.chunker.kind == "tokens" else None
            self._chunkers[target.profile_name] = TextChunker(target.profile, spans)
        return self._chunkers[target.profile_name]

    @telemetry.traced("rag.chunk", attributes=lambda self, doc, text, target: {"rag.profile": target.profile_name},
                      result=lambda chunks: {"rag.chunks": len(chunks)})
    def chunk(self, doc: LoadedDocument, text: str, target: Target) -> list[Chunk]:
        chunks = self.chunker(target).chunk(doc, text)
        if figures.applies_to(doc):  # every DOCX gets its DOCX_FIGURE_CHUNKING_SUMMARY
            chunks += figures.figure_chunks(doc, chunks, self.settings.docx, target.profile)
        return chunks

    @telemetry.traced("rag.embed", attributes=lambda self, batcher, texts: {
        **telemetry.model_attributes("embeddings", self.embedder), "rag.texts": len(texts)})
    def embed(self, batcher: EmbeddingBatcher, texts: Sequence[str]) -> Vector:
        """Vectors of what a group embeds: chunks (``text_to_embed``), questions and summaries."""
        return batcher.vectors_for(list(texts))

    def enrichment_stage(self, target: Target) -> EnrichmentStage | None:
        """The profile's enrichment stage (enricher and cache built once per run), or None when off."""
        name = target.profile_name
        if target.profile.enrichment.provider == "none" and name not in self._enrichers:
            return None
        stages = self._stages
        if name not in stages:
            from backend.providers.registry import build_enricher, build_enrichment_cache

            if name not in self._enrichers:
                self._enrichers[name] = build_enricher(self.settings, target.profile)
            if self._enrichment_cache is None:
                self._enrichment_cache = build_enrichment_cache(self.store)
            stages[name] = EnrichmentStage(self.settings, target.profile, self._enrichers[name], self._enrichment_cache)
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
                self._fail(report, item.entry.path, exc)
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
        return int(self.store.write_documents(version, documents, allow_served=allow_served))

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
        holds one."""
        started = time.perf_counter()
        parsed = read_manifest(Path(manifest), self.settings, strict=strict)
        report = IngestReport(manifest=str(manifest), manifest_errors=list(parsed.errors))
        for where, reason in parsed.errors:  # debug: the summary prints each one (once)
            log.debug("ingest.manifest_line_failed", where=where, reason=reason)
        if prune and parsed.errors:
            report.notes.append("--prune skipped: the manifest has bad lines, so the listed set is unknown")
        with held_or_own(locks, self.store, self.settings, "rag ingest") as held:
            try:
                targets = self.targets(parsed.entries, profile, domain_key)
                held.hold_all(target.version for target, _ in targets)
                if self.settings.ingest.limits.worker and parsed.entries:
                    self.loader_pool.start()  # its imports overlap hashing and planning
                for target, entries in targets:
                    failed_before = len(report.failures)
                    self._run_target(target, entries, report, prune=prune and not parsed.errors, in_place=in_place)
                    # per series, so the closing "served:" line never claims a version holds what failed
                    # a bad manifest line may have been meant for any series: it counts against each
                    report.builds[-1].update(listed=len(entries) + len(parsed.errors),
                                             failed=len(report.failures) - failed_before + len(parsed.errors))
            finally:
                self.close()
        report.seconds = time.perf_counter() - started
        log.info("ingest.finished", versions=report.versions, **report.counts(), seconds=round(report.seconds, 2))
        return report

    def _fail(self, report: IngestReport, path: Path | str, exc: Exception) -> None:
        message = getattr(exc, "user_message", str(exc))
        reason = message.removeprefix(f"{path}: ")
        report.failures.append((str(path), reason))
        log.warning("ingest.file_failed", file=str(path), reason=reason)

    def plan(self, target: Target, hashes: dict[str, str], listed: set[str], *, prune: bool,
             in_place: bool) -> tuple[BuildPlan, dict[str, str]]:
        """The version this run writes for ``target`` and the document hashes it holds now."""
        naming = VersionNaming(self.settings.ingest.version_name_template)
        latest = latest_version(naming, target.version, self.store.list_versions())
        existing = self.store.document_hashes(latest.name) if latest else {}
        changed = any(existing.get(d) != h for d, h in hashes.items()) or (
            prune and any(d not in listed for d in existing))
        plan = plan_build(naming, target.version, latest, self.store.protected_versions(),
                          model=self.embedder.model_id, dimension=self.embedder.dimension,
                          distance=target.profile.distance, changed=changed, in_place=in_place,
                          retrieval_changes=stamp_changes(latest.retrieval if latest else None, self.stamp(target)),
                          vector_format=target.profile.vector_format)
        if plan.target != (latest.name if latest else None):
            existing = {}
        return plan, existing

    def stamp(self, target: Target) -> dict[str, Any]:
        """The retrieval settings recorded on the version this run builds (``retrieval_stamp``)."""
        return retrieval_stamp(self.settings.retrieval, target.profile)

    @telemetry.traced("rag.ingest.version", attributes=lambda self, target, entries, *_, **__: {
        "rag.profile": target.profile_name, "rag.documents": len(entries)})
    def _run_target(self, target: Target, entries: list[ManifestEntry], report: IngestReport, *, prune: bool,
                    in_place: bool = False) -> None:
        hashes: dict[str, str] = {}
        readable: list[tuple[ManifestEntry, str]] = []
        for entry in entries:
            report.documents_seen += 1
            try:
                hashes[entry.doc_id] = doc_hash = self.document_hash(entry, target)
            except LoaderError as exc:
                self._fail(report, entry.path, exc)
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
            return
        target = Target(target.profile_name, target.profile, plan.target, plan.allow_served)
        parent = plan.parent if plan.action == "new_version" else None
        self.store.create_version(VersionSpec(target.version, self.embedder.model_id, self.embedder.dimension,
                                              target.profile.distance, target.profile_name, parent=parent,
                                              retrieval=self.stamp(target)))
        if parent is not None:
            existing = self.store.document_hashes(target.version)
        pending: list[Pending] = []
        for entry, doc_hash in readable:
            if existing.get(entry.doc_id) == doc_hash:
                report.skipped_unchanged += 1
                log.debug("ingest.document_skipped", doc_id=entry.doc_id, reason="unchanged")
                continue
            pending.append(Pending(entry, doc_hash))
        bars = self._bars(len(pending))
        batcher = EmbeddingBatcher(self.embedder, self.store, self.settings.embeddings.batching,
                                   self.settings.embeddings.retry, sleep=self._sleep, on_embedded=bars[2].update)
        try:
            groups = _batched(pending, self.settings.ingest.documents_per_transaction)
            for group in sanitize_worker.prefetch(self, groups, target, report):  # overlaps PII analysis with embedding
                self._process_group(group, target, batcher, report, bars)
        finally:
            for bar in bars:
                bar.close()
        report.embeddings_computed += batcher.stats.computed
        report.embeddings_reused += batcher.stats.reused
        report.embedding_retries += batcher.stats.retries
        stage = self.enrichment_stage(target)
        if stage is not None:
            report.add_enrichment(stage.stats)
            stage.stats = type(stage.stats)()
        gone = sorted(d for d in existing if d not in listed) if prune else []
        if gone:
            self.store.delete_documents(target.version, gone, allow_served=target.allow_served)
            report.documents_pruned += len(gone)
            log.info("ingest.documents_pruned", version=target.version, documents=len(gone))
        rewritten = {item.entry.doc_id for item in pending if item.written}
        build.update(written=sorted(rewritten), pruned=gone)
        if parent is not None:
            build["carried"] = len(set(existing) - rewritten - set(gone))
        self.store.finish_load(target.version)

    def _bars(self, documents: int) -> tuple[tqdm, tqdm, tqdm]:
        on = self._progress
        return (bar(on, total=documents, desc="files", unit="file", position=0),
                bar(on, desc="chunks", unit="chunk", position=1),
                bar(on, desc="embeddings", unit="text", position=2))

    def _prepare(self, group: list[Pending], target: Target, report: IngestReport) -> list[Pending]:
        """Load, sanitize and chunk a group; returns the documents that got that far."""
        loaded = []
        for item in group:
            try:
                item.doc = self.load(item.entry)
                item.text = self.render(item.doc)
                if "low_text_quality" in item.doc.diagnostics:  # ingest.low_quality: flag
                    report.notes.append(f"{item.entry.path}: {item.doc.diagnostics['low_text_quality']}")
            except LoaderError as exc:
                self._fail(report, item.entry.path, exc)
                continue
            loaded.append(item)
        self.sanitize(loaded)
        for item in loaded:
            assert item.doc is not None
            item.chunks = self.chunk(item.doc, item.text, target)
            if target.profile.chunker.dedupe:
                # per document: a document's chunks must not depend on which other
                # documents this run happened to process (incremental runs, crash re-runs)
                item.chunks, dropped = dedupe(item.chunks, set())
                report.duplicates_dropped += dropped
        return loaded

    def _vectors(self, items: list[Pending], batcher: EmbeddingBatcher, report: IngestReport,
                 target: Target) -> list[tuple[Pending, Vector]]:
        """Embed the whole group at once (chunks, questions and summaries in one batched call:
        a text met twice is embedded once); on a permanent error, document by document so
        only the documents that really fail are reported."""
        texts = [self._texts(item, target) for item in items]
        try:
            vectors = self.embed(batcher, [t for group in texts for t in group])
        except ProviderError as exc:
            if len(items) == 1:
                self._fail(report, items[0].entry.path, exc)
                return []
            return [pair for item in items for pair in self._vectors([item], batcher, report, target)]
        out, offset = [], 0
        for item, group in zip(items, texts):
            out.append((item, vectors[offset:offset + len(group)]))
            offset += len(group)
        return out

    @staticmethod
    def _document_write(item: Pending, vectors: Vector) -> DocumentWrite:
        n = len(item.chunks)
        extra = item.enriched
        if extra is None or not (extra.questions or extra.summaries):
            return DocumentWrite(item.entry.doc_id, item.doc_hash, item.chunks, vectors[:n])
        q = len(extra.questions)
        return DocumentWrite(item.entry.doc_id, item.doc_hash, item.chunks, vectors[:n],
                             questions=tuple(extra.questions), question_vectors=vectors[n:n + q],
                             summaries=tuple(extra.summaries), summary_vectors=vectors[n + q:])

    def _process_group(self, group: list[Pending], target: Target, batcher: EmbeddingBatcher,
                       report: IngestReport, bars: tuple[tqdm, tqdm, tqdm]) -> None:
        ready = self.enrich(self._prepare(group, target, report), target, report)
        embedded = self._vectors(ready, batcher, report, target)
        writes = [self._document_write(item, vectors) for item, vectors in embedded]
        chunks = self.write(target.version, writes, allow_served=target.allow_served)
        for item, _ in embedded:
            item.written = True
        report.documents_written += len(writes)
        report.chunks_written += chunks
        bars[0].update(len(group))
        bars[1].update(chunks)
        for w in writes:
            log.debug("ingest.document_written", doc_id=w.doc_id, version=target.version, chunks=len(w.chunks))
