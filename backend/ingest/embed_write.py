"""The last two steps of a group: its vectors (``Vectorizer``) and its store transaction (``Writer``).

``Vectorizer`` turns enriched documents into ``DocumentWrite`` rows: every text of the group
(chunks, questions, summaries) goes in one batched call through an ``EmbeddingBatcher`` (cache
first, a text met twice embedded once); on a permanent provider error it retries document by
document, so only the documents that really fail are reported. ``Writer`` writes one group in
one transaction and counts it: the only ingest step that writes chunks.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

import structlog

from backend.common import telemetry
from backend.common.config import BatchingSettings, RetrySettings
from backend.common.errors import ProviderError
from backend.common.progress import Progress
from backend.core.ports import Embedder, VectorStore
from backend.core.types import DocumentWrite, Vector
from backend.ingest.embedding_batches import EmbeddingBatcher, VectorCache
from backend.ingest.report import IngestReport
from backend.ingest.targets import Enriched, Target, TargetRun

log = structlog.get_logger("backend.ingest.pipeline")  # the events ingest has always logged


class Vectorizer:
    """``(items, batcher, report, target) -> list[DocumentWrite]``; ``batcher(on_embedded)`` makes
    the batcher a run embeds with (its counts are the run's)."""

    def __init__(self, embedder: Embedder, cache: VectorCache, batching: BatchingSettings, retry: RetrySettings, *,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.embedder, self.cache, self.batching, self.retry = embedder, cache, batching, retry
        self._sleep = sleep

    def batcher(self, on_embedded: Callable[[int], None] | None = None) -> EmbeddingBatcher:
        """An embedding batcher over this embedder and vector cache."""
        return EmbeddingBatcher(self.embedder, self.cache, self.batching, self.retry, sleep=self._sleep,
                                on_embedded=on_embedded)

    def __call__(self, items: Sequence[Enriched], batcher: EmbeddingBatcher, report: IngestReport,
                 target: Target) -> list[DocumentWrite]:
        return [write for _, write in self.pairs(items, batcher, report, target)]

    def pairs(self, items: Sequence[Enriched], batcher: EmbeddingBatcher, report: IngestReport,
              target: Target) -> list[tuple[Enriched, DocumentWrite]]:
        """Each document that got its vectors, with its rows."""
        texts = [_texts(item, target) for item in items]
        try:
            vectors = embed(batcher, [t for group in texts for t in group])
        except ProviderError as exc:
            if len(items) == 1:
                report.fail(items[0].entry.path, exc)
                return []
            return [pair for item in items for pair in self.pairs([item], batcher, report, target)]
        out, offset = [], 0
        for item, group in zip(items, texts):
            out.append((item, document_write(item, vectors[offset:offset + len(group)])))
            offset += len(group)
        return out


@telemetry.traced("rag.embed", attributes=lambda batcher, texts: {
    **telemetry.model_attributes("embeddings", batcher.embedder), "rag.texts": len(texts)})
def embed(batcher: EmbeddingBatcher, texts: Sequence[str]) -> Vector:
    """Vectors of what a group embeds: chunks (``text_to_embed``), questions and summaries."""
    return batcher.vectors_for(list(texts))


def _texts(item: Enriched, target: Target) -> list[str]:
    """Everything one document embeds: its chunks, then its questions and summaries (with the
    profile's document prefix, like chunks)."""
    prefix = target.profile.document_prefix
    return ([c.text_to_embed for c in item.chunks] + [f"{prefix}{q.text}" for q in item.questions]
            + [f"{prefix}{s.text}" for s in item.summaries])


def document_write(item: Enriched, vectors: Vector) -> DocumentWrite:
    """Pure: one document's rows: chunks with their vectors, then its questions and summaries."""
    planned, chunks, n = item.prepared.planned, list(item.chunks), len(item.chunks)
    if not (item.questions or item.summaries):
        return DocumentWrite(planned.entry.doc_id, planned.doc_hash, chunks, vectors[:n])
    q = len(item.questions)
    return DocumentWrite(planned.entry.doc_id, planned.doc_hash, chunks, vectors[:n],
                         questions=item.questions, question_vectors=vectors[n:n + q],
                         summaries=item.summaries, summary_vectors=vectors[n + q:])


class Writer:
    """``commit(run, writes, report, progress, documents=)``: one group, one transaction, counted.
    ``GroupWriter`` (several writers at once) calls ``write`` on its threads and ``record`` here."""

    def __init__(self, vectors: VectorStore) -> None:
        self.vectors = vectors

    def max_writers(self) -> int:
        """How many writers the store takes at once (``VectorStore.max_writers``)."""
        return int(self.vectors.max_writers())

    @telemetry.traced("rag.write", attributes=lambda self, version, documents, **_: {
        "rag.version": version, "rag.documents": len(documents)}, result=lambda written: {"rag.chunks": written})
    def write(self, version: str, documents: Sequence[DocumentWrite], *, allow_served: bool = False) -> int:
        if not documents:
            return 0
        return int(self.vectors.write_documents(version, documents, allow_served=allow_served))

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
        """Count a committed group."""
        run.written.update(w.doc_id for w in writes)
        report.documents_written += len(writes)
        report.chunks_written += chunks
        progress.documents(documents)
        progress.chunks(chunks)
        for w in writes:
            log.debug("ingest.document_written", doc_id=w.doc_id, version=run.target.version, chunks=len(w.chunks))
            report.flag_instructions(w.doc_id, run.target.version, w.chunks)
