"""The stages an engine runs, handed over as one frozen bundle: an engine never sees the pipeline.

Each stage is a small object with one call, records in and new records out
(``targets``: ``Planned`` -> ``Prepared`` -> ``Enriched`` -> ``DocumentWrite``):

- ``prepare`` (``prepare.Preparer``): load, render, sanitize, chunk;
- ``enrich`` (``enrichment_stage.EnrichStep``): metadata, questions, summaries, cached;
- ``vectors`` (``embed_write.Vectorizer``): one batched embedding call per group, cache first;
- ``write`` (``embed_write.Writer``): one store transaction per group, counted;
- ``cancel`` (``CancelCheck``): between groups, stop when asked.

A new stage is one class and one field here; ``engine.LocalEngine`` and the Ray engine call it.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from backend.common.progress import Progress
from backend.ingest.cancel import CancelToken, IngestCancelled
from backend.ingest.embed_write import Vectorizer, Writer
from backend.ingest.enrichment_stage import EnrichStep
from backend.ingest.prepare import Preparer
from backend.ingest.report import IngestReport
from backend.ingest.targets import TargetRun

log = structlog.get_logger("backend.ingest.pipeline")  # the events ingest has always logged


@dataclass(frozen=True)
class CancelCheck:
    """``(run, report)``: ``IngestCancelled`` when Ctrl-C or ``rag ingest cancel`` asked for it.
    What is written stays; ``finish_load`` is not called, so the version resumes next run."""

    token: CancelToken
    progress: Progress

    def requested(self, series: str) -> str | None:
        return self.token.requested(series)

    def __call__(self, run: TargetRun, report: IngestReport) -> None:
        reason = self.token.requested(run.series)
        if reason is None:
            return
        written = run.done_before + len(run.written)
        self.progress.note(f"cancelling ({reason}): {written} of {run.total} documents written")
        log.warning("ingest.cancelled", series=run.series, version=run.target.version, written=written,
                    total=run.total, reason=reason)
        raise IngestCancelled(written=written, total=run.total, version=run.target.version, series=run.series,
                              reason=reason)


@dataclass(frozen=True)
class Stages:
    """What an ``IngestEngine`` is given to process a ``TargetRun``."""

    prepare: Preparer
    enrich: EnrichStep
    vectors: Vectorizer
    write: Writer
    cancel: CancelCheck
    #: the store file a Ray worker on this machine may read the embedding cache from (the composition
    #: root says which: ``runtime.worker_cache_db``); None: workers embed every pending text
    worker_cache: str | None = None
