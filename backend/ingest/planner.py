"""The planning step of an ingest: which series, which version, which documents; the only ingest
room that talks to ``IndexAdmin``.

``targets`` groups manifest entries by version; ``start`` hashes a series' entries, plans its
version with the pure ``versions.plan_build``, creates (or resumes) it and returns a
``TargetRun`` of the documents still to write (None: up to date); ``finish`` prunes and finishes
the version's load once an engine has written the run.

Why a served version never changes: when the newest version of the series is served (or kept
for rollback) and the run would change it, the next version is created as a copy of it
(unchanged documents carried with their vectors) and only the changes are written there; a
killed build leaves that unserved candidate, which the next run finds and resumes.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import structlog

from backend.common import telemetry
from backend.common.errors import LoaderError
from backend.core.ports import Embedder, IndexAdmin, VectorStore
from backend.core.retrieval_stamp import retrieval_stamp, stamp_changes
from backend.core.services.series_lock import SeriesLocks, series_key
from backend.core.types import VersionSpec
from backend.core.versions import BuildPlan, VersionNaming, latest_version, plan_build, rolled_back_base
from backend.ingest.embedding_batches import EmbeddingBatcher
from backend.ingest.fingerprint import document_hash
from backend.ingest.ingest_config import IngestConfig
from backend.ingest.manifest import ManifestEntry
from backend.ingest.report import IngestReport
from backend.ingest.targets import Planned, Target, TargetRun, plan_targets

log = structlog.get_logger("backend.ingest.pipeline")  # the events ingest has always logged

#: ``batcher(on_embedded)``: what a ``TargetRun`` embeds with (``embed_write.Vectorizer.batcher``)
BatcherFactory = Callable[[Callable[[int], None] | None], EmbeddingBatcher]


class Planner:
    """``Planner(admin, vectors, embedder, config)``: the embedder is read for its identity
    (``model_id``, ``dimension``) only."""

    def __init__(self, admin: IndexAdmin, vectors: VectorStore, embedder: Embedder, config: IngestConfig) -> None:
        self.admin, self.vectors, self.embedder, self.config = admin, vectors, embedder, config

    def locks(self, command: str = "rag ingest") -> SeriesLocks:
        """The series locks a run takes when its caller holds none."""
        return SeriesLocks(self.admin, self.config, command)

    def targets(self, entries: Iterable[ManifestEntry], profile: str | None,
                domain_key: str | None) -> list[tuple[Target, list[ManifestEntry]]]:
        """Group entries by version: ``--domain-key`` > ``--profile`` > the line's
        ``profiles`` > ``embeddings.default_profile``."""
        return plan_targets(self.config.embeddings, entries, profile, domain_key)

    def document_hash(self, entry: ManifestEntry, target: Target) -> str:
        """sha256 of the source bytes plus a fingerprint of everything that shapes its chunks."""
        return document_hash(entry, target, self.config, self.embedder.model_id)

    def stamp(self, target: Target) -> dict[str, Any]:
        """The retrieval settings recorded on the version this run builds (``retrieval_stamp``)."""
        return retrieval_stamp(self.config.retrieval, target.profile)

    def plan(self, target: Target, hashes: dict[str, str], listed: set[str], *, prune: bool,
             in_place: bool) -> tuple[BuildPlan, dict[str, str]]:
        """The version this run writes for ``target`` and the document hashes it holds now."""
        admin, vectors = self.admin, self.vectors
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

    def start(self, target: Target, entries: list[ManifestEntry], report: IngestReport, *, prune: bool,
              in_place: bool, batcher: BatcherFactory) -> TargetRun | None:
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
        self.admin.create_version(VersionSpec(
            target.version, self.embedder.model_id, self.embedder.dimension, target.profile.distance,
            target.profile_name, parent=parent, retrieval=self.stamp(target)))
        if parent is not None:
            existing = self.vectors.document_hashes(target.version)
        pending = [Planned(entry, doc_hash) for entry, doc_hash in readable if existing.get(entry.doc_id) != doc_hash]
        # one line for the carried documents, not one each (10,000 debug calls cost a sync a second)
        report.skipped_unchanged += len(readable) - len(pending)
        log.debug("ingest.documents_skipped", count=len(readable) - len(pending), reason="unchanged")
        return TargetRun(series=series, target=target, pending=pending, existing=existing, listed=listed,
                         parent=parent, prune=prune, build=build,
                         group_size=self.config.ingest.documents_per_transaction, batcher=batcher,
                         done_before=len(readable) - len(pending), total=len(entries))

    def finish(self, run: TargetRun, report: IngestReport) -> None:
        """Prune and finish the version's load (its ANN index, its stamp): the version becomes
        what a promotion may serve."""
        target = run.target
        gone = sorted(d for d in run.existing if d not in run.listed) if run.prune else []
        if gone:
            self.vectors.delete_documents(target.version, gone, allow_served=target.allow_served)
            report.documents_pruned += len(gone)
            log.info("ingest.documents_pruned", version=target.version, documents=len(gone))
        run.build.update(written=sorted(run.written), pruned=gone)
        if run.parent is not None:
            run.build["carried"] = len(set(run.existing) - run.written - set(gone))
        self.admin.finish_load(target.version)
