"""How a planned version's pending documents become written groups: the engine seam.

``IngestPipeline.start_target`` plans a target series (hashes, ``plan_build``, the version
created or resumed) and returns a ``TargetRun``; an ``IngestEngine`` processes its pending
documents; ``IngestPipeline.finish_target`` records the counts, prunes and calls
``finish_load``. ``LocalEngine`` (the default) is one process; the Ray engine
(``backend.ingest.ray_engine``) implements the same protocol with the same per-group steps
(``prepare``, ``enrich``, ``vectors``, ``document_write``, ``commit``), so both write the same rows.

Back-pressure: a group is ``ingest.documents_per_transaction`` documents; the prepare stage
(load, sanitize, chunk) runs at most ``PREPARE_AHEAD`` groups ahead of the group being embedded
(a bounded queue: memory stays flat however long the manifest), and each embedding call carries
at most ``embeddings.batching.batch_size`` texts. Cancellation is checked after each group is
written (``IngestPipeline.check_cancel``).
"""

from __future__ import annotations

import contextvars
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Protocol

from backend.common.progress import Progress
from backend.ingest.embedding_batches import EmbeddingBatcher, EmbeddingStats
from backend.ingest.report import IngestReport
from backend.ingest.targets import Pending, Target, TextSanitizer

if TYPE_CHECKING:
    from backend.ingest.pipeline import IngestPipeline

#: groups prepared (loaded, sanitized, chunked) ahead of the one being embedded, when preparing
#: runs beside embedding (the PII worker is on): two keep both cores busy when one group embeds
#: faster than the next is analysed; the bound keeps memory flat on a long manifest
PREPARE_AHEAD = 2


@dataclass
class TargetRun:
    """One series being written: its version (``target.version``, ``target.allow_served``), the
    documents still to write in manifest order, and how to make an ``EmbeddingBatcher``."""

    series: str
    target: Target
    pending: list[Pending]
    #: ``doc_id -> doc_hash`` the version held before this run (prune and carried counts)
    existing: dict[str, str]
    listed: set[str]
    parent: str | None
    prune: bool
    build: dict[str, Any]
    group_size: int
    #: ``batcher(on_embedded)``: a batcher over the pipeline's embedder and vector cache
    batcher: Callable[[Callable[[int], None] | None], EmbeddingBatcher]
    #: documents of the manifest already in the version before this run (unchanged hashes)
    done_before: int = 0
    #: documents listed for this series, readable or not (the "of M" of a cancel)
    total: int = 0
    #: doc ids written by this run (``IngestPipeline.commit`` adds them)
    written: set[str] = field(default_factory=set)

    def groups(self) -> Iterator[list[Pending]]:
        """The pending documents in groups of ``group_size`` (one store transaction each)."""
        it = iter(self.pending)
        while group := list(islice(it, self.group_size)):
            yield group


#: what an engine returns: its embedding batchers' counts summed, and the groups it committed
EngineStats = EmbeddingStats


class IngestEngine(Protocol):
    def process(self, pipeline: IngestPipeline, run: TargetRun, report: IngestReport,
                progress: Progress) -> EngineStats:
        """Write every pending document of ``run`` (``pipeline.commit`` per group), calling
        ``pipeline.check_cancel(run)`` between groups; failures go to ``report``."""
        ...


def prepared_ahead(pipeline: IngestPipeline, groups: Iterable[list[Pending]], target: Target, report: IngestReport,
                   *, ahead: int, sanitizer: TextSanitizer | None = None) -> Iterator[tuple[list[Pending], list[Pending]]]:
    """``(group, prepared documents)`` in order. With ``ahead`` > 0 a helper thread prepares up to
    ``ahead`` groups beyond the one the caller holds (a bounded queue); each prepares into a
    report of its own, merged here in group order, so no record is edited by two threads. An
    error raised while preparing ahead surfaces when its group is reached."""
    if ahead <= 0:
        for group in groups:
            yield group, pipeline.prepare(group, target, report, sanitizer=sanitizer)
        return

    def prepare(group: list[Pending]) -> tuple[list[Pending], IngestReport]:
        scratch = IngestReport(manifest=report.manifest)
        return pipeline.prepare(group, target, scratch, sanitizer=sanitizer), scratch

    source = iter(groups)
    queue: deque[tuple[list[Pending], Future[tuple[list[Pending], IngestReport]]]] = deque()
    threads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-prepare-ahead")

    def fill(limit: int) -> None:
        while len(queue) < limit and (nxt := next(source, None)) is not None:
            # the caller's context goes along: its spans (telemetry) and log bindings
            queue.append((nxt, threads.submit(contextvars.copy_context().run, prepare, nxt)))

    try:
        fill(ahead)
        while queue:
            group, future = queue.popleft()
            fill(ahead)
            prepared, scratch = future.result()
            report.absorb(scratch)
            yield group, prepared
    finally:
        threads.shutdown(wait=True, cancel_futures=True)


class LocalEngine:
    """The single-process engine: groups in manifest order, prepared ahead in a helper thread
    while the PII worker process is on (``sanitize.worker``), embedded and written here."""

    def __init__(self, *, ahead: int = PREPARE_AHEAD) -> None:
        self.ahead = ahead

    def process(self, pipeline: IngestPipeline, run: TargetRun, report: IngestReport,
                progress: Progress) -> EngineStats:
        batcher = run.batcher(progress.embedded)
        stats = EngineStats()
        sanitizer = pipeline.sanitize_stage(groups=-(-len(run.pending) // run.group_size))
        ahead = self.ahead if sanitizer is not None else 0
        done = False
        try:
            for group, prepared in prepared_ahead(pipeline, run.groups(), run.target, report, ahead=ahead,
                                                  sanitizer=sanitizer):
                ready = pipeline.enrich(prepared, run.target, report)
                embedded = pipeline.vectors(ready, batcher, report, run.target)
                pipeline.commit(run, [pipeline.document_write(item, vectors) for item, vectors in embedded],
                                report, progress, documents=len(group))
                stats.groups += 1
                pipeline.check_cancel(run, report)
            done = True
        finally:
            stats.add(batcher.stats)
            if not done:  # cancelled or failed: finish_target will not run, the report still counts
                report.add_engine_stats(stats)
        return stats
