"""Groups of documents written into the candidate version by one writer or several at once.

Embedding is the slow step and runs elsewhere (Ray actors); on Oracle the driver's writes can
become the next bottleneck, so up to ``writers`` groups are written at once, each by its own
thread on its own pooled connection, each one transaction of array DML
(``OracleVectorWriter``: the registry row is locked only for the commit's bump). The store says
how many it takes (``VectorStore.max_writers``): SQLite one. Accounting (report, progress, the
run's written set) stays on the calling thread, in submission order; at most ``writers`` groups
are in flight, so a slow database holds the pipeline back instead of letting groups pile up.
A failed write stops the run after the writes in flight have finished: what committed stays,
and the same command resumes the rest.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol, Sequence

import structlog

from backend.common.progress import Progress
from backend.core.types import DocumentWrite
from backend.ingest.report import IngestReport
from backend.ingest.targets import TargetRun

if TYPE_CHECKING:
    from types import TracebackType

log = structlog.get_logger(__name__)


class Writes(Protocol):
    """What the writer needs of the write stage (``embed_write.Writer``)."""

    def write(self, version: str, documents: Sequence[DocumentWrite], *, allow_served: bool = False) -> int: ...

    def record(self, run: TargetRun, writes: Sequence[DocumentWrite], chunks: int, report: IngestReport,
               progress: Progress, *, documents: int) -> None: ...

    def commit(self, run: TargetRun, writes: Sequence[DocumentWrite], report: IngestReport, progress: Progress, *,
               documents: int) -> int: ...


class GroupWriter:
    """``submit`` each group; leaving the ``with`` block waits for the writes in flight."""

    def __init__(self, stage: Writes, run: TargetRun, report: IngestReport, progress: Progress, *,
                 writers: int, store_writers: int) -> None:
        self.stage, self.run, self.report, self.progress = stage, run, report, progress
        self.writers = max(1, min(writers, store_writers))
        if writers > self.writers:
            note = f"{writers} writers asked for; this store writes with {self.writers}"
            progress.note(note)
            report.notes.append(note)
        self._pool = ThreadPoolExecutor(self.writers, thread_name_prefix="rag-writer") if self.writers > 1 else None
        self._in_flight: deque[tuple[Future[int], list[DocumentWrite], int]] = deque()

    def submit(self, writes: list[DocumentWrite], documents: int) -> None:
        """Write one group (``documents``: its size, failed documents included)."""
        target = self.run.target
        if self._pool is None:
            self.stage.commit(self.run, writes, self.report, self.progress, documents=documents)
            return
        while len(self._in_flight) >= self.writers:
            self._settle()
        future = self._pool.submit(self.stage.write, target.version, writes, allow_served=target.allow_served)
        self._in_flight.append((future, writes, documents))
        while self._in_flight and self._in_flight[0][0].done():
            self._settle()

    @property
    def in_flight(self) -> int:
        """Groups submitted and not yet counted."""
        return len(self._in_flight)

    def _settle(self) -> None:
        future, writes, documents = self._in_flight.popleft()
        chunks = future.result()
        self.stage.record(self.run, writes, chunks, self.report, self.progress, documents=documents)

    def drain(self) -> None:
        """Wait for every write in flight and count it; the first failure is raised after all are done."""
        first: BaseException | None = None
        while self._in_flight:
            try:
                self._settle()
            except BaseException as exc:  # noqa: BLE001 - raised below, once the others are settled
                if first is None:
                    first = exc
                else:
                    log.error("ingest.write_failed", version=self.run.target.version, error=str(exc))
        if first is not None:
            raise first

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def __enter__(self) -> GroupWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if exc is None:
                self.drain()
            else:  # the run stops anyway: finish what is in flight, keep the first error
                try:
                    self.drain()
                except BaseException as other:  # noqa: BLE001
                    log.error("ingest.write_failed", version=self.run.target.version, error=str(other))
        finally:
            self.close()
