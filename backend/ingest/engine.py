"""How a planned version's pending documents become written groups: the engine seam.

``planner.Planner.start`` plans a target series (hashes, ``plan_build``, the version created or
resumed) and returns a ``TargetRun``; an ``IngestEngine`` processes its pending documents with
the ``Stages`` it is given (never the pipeline); ``Planner.finish`` prunes and calls
``finish_load``. ``LocalEngine`` (the default) is one process; the Ray engine
(``backend.ingest.ray_engine``) implements the same protocol with the same stages, so both write
the same rows.

Back-pressure: a group is ``ingest.documents_per_transaction`` documents; the prepare stage
(load, sanitize, chunk) runs at most ``PREPARE_AHEAD`` groups ahead of the group being embedded
(a bounded queue: memory stays flat however long the manifest), and each embedding call carries
at most ``embeddings.batching.batch_size`` texts. Cancellation is checked after each group is
written (``stages.cancel``).
"""

from __future__ import annotations

import contextvars
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Iterable, Iterator, Protocol

from backend.common.progress import Progress
from backend.ingest.report import IngestReport
from backend.ingest.stages import Stages
from backend.ingest.targets import EngineStats, Planned, Prepared, Target, TargetRun, TextSanitizer

#: groups prepared (loaded, sanitized, chunked) ahead of the one being embedded, when preparing
#: runs beside embedding (the PII worker is on): two keep both cores busy when one group embeds
#: faster than the next is analysed; the bound keeps memory flat on a long manifest
PREPARE_AHEAD = 2


class IngestEngine(Protocol):
    def process(self, stages: Stages, run: TargetRun, report: IngestReport, progress: Progress) -> EngineStats:
        """Write every pending document of ``run`` (``stages.write`` per group), calling
        ``stages.cancel(run, report)`` between groups; failures go to ``report``."""
        ...


def prepared_ahead(stages: Stages, groups: Iterable[list[Planned]], target: Target, report: IngestReport,
                   *, ahead: int, sanitizer: TextSanitizer | None = None) -> Iterator[tuple[list[Planned], list[Prepared]]]:
    """``(group, prepared documents)`` in order. With ``ahead`` > 0 a helper thread prepares up to
    ``ahead`` groups beyond the one the caller holds (a bounded queue); each prepares into a
    report of its own, merged here in group order, so no record is edited by two threads. An
    error raised while preparing ahead surfaces when its group is reached."""
    if ahead <= 0:
        for group in groups:
            yield group, stages.prepare(group, target, report, sanitizer=sanitizer)
        return

    def prepare(group: list[Planned]) -> tuple[list[Prepared], IngestReport]:
        scratch = IngestReport(manifest=report.manifest)
        return stages.prepare(group, target, scratch, sanitizer=sanitizer), scratch

    source = iter(groups)
    queue: deque[tuple[list[Planned], Future[tuple[list[Prepared], IngestReport]]]] = deque()
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

    def process(self, stages: Stages, run: TargetRun, report: IngestReport, progress: Progress) -> EngineStats:
        batcher = run.batcher(progress.embedded)
        stats = EngineStats()
        sanitizer = stages.prepare.sanitizer(groups=-(-len(run.pending) // run.group_size))
        ahead = self.ahead if sanitizer is not None else 0
        done = False
        try:
            for group, prepared in prepared_ahead(stages, run.groups(), run.target, report, ahead=ahead,
                                                  sanitizer=sanitizer):
                enriched = stages.enrich(prepared, run.target, report)
                writes = stages.vectors(enriched, batcher, report, run.target)
                stages.write.commit(run, writes, report, progress, documents=len(group))
                stats.groups += 1
                stages.cancel(run, report)
            done = True
        finally:
            stats.add(batcher.stats)
            if not done:  # cancelled or failed: finish_target will not run, the report still counts
                report.add_engine_stats(stats)
        return stats
