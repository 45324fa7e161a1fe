"""What runs in the Ray workers: the prepare and embed stages, one callable class each.

Ray Data builds each class once per actor (``ActorPoolStrategy``), so what is slow to build is
built once per actor and reused for every batch: the prepare actor's ``Preparer`` (its loader
worker process, the PII analyzer, the chunker and its tokenizer), the embed actor's model. Each
actor builds only the stage it runs (``prepare.Preparer``, ``embed_write.Vectorizer``), the same
classes the single-process engine runs, so a document is loaded (under the same
``ingest.limits``), sanitized, chunked and embedded by the same code as in one process.

A worker has no store to write to: the driver writes. An embedding worker reads the embedding
cache of the driver's SQLite file when its node sees that file, through the composition root's
``vector_cache`` factory (``runtime.worker_vector_cache``; ingest imports no provider). Rows cross
between stages as pickles of :class:`Row` (a column of bytes), so no Arrow conversion touches a
document's text or vectors.
"""

from __future__ import annotations

import functools
import os
import pickle
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np

from backend.common.config import EmbeddingSettings
from backend.common.pii_findings import PiiFinding, SanitizeOutcome
from backend.core.ports import Embedder
from backend.core.types import DocumentWrite, Vector
from backend.ingest.embed_write import Vectorizer
from backend.ingest.embedding_batches import VectorCache
from backend.ingest.ingest_config import IngestConfig
from backend.ingest.prepare import Preparer
from backend.ingest.report import IngestReport
from backend.ingest.targets import Enriched, Planned, Prepared, Target

#: the one column of every dataset the engine builds: a pickled ``Row`` per document
COLUMN = "payload"

#: ``factory(embeddings)``: an embedder for these settings, built in the worker (module-level, so it pickles)
EmbedderFactory = Callable[[EmbeddingSettings], Embedder]

#: ``factory(path)``: the embedding cache of the driver's store file, read in the worker (module-level, so it pickles)
VectorCacheFactory = Callable[[str], VectorCache]


@dataclass
class Row:
    """One document between stages: its place in the manifest order and what is known so far."""

    seq: int
    #: the document as planned (entry and hash)
    planned: Planned
    #: after prepare: loaded, sanitized and chunked (None: it failed, see ``scratch``; or embedded)
    prepared: Prepared | None = None
    #: its rows with their vectors, after embed (None: it failed, see ``scratch``)
    write: DocumentWrite | None = None
    #: what the stages recorded for the batch this row led (failures, notes, duplicates dropped)
    scratch: IngestReport | None = None
    #: PII findings of the batch this row led, written to the audit log by the driver
    findings: list[PiiFinding] = field(default_factory=list)
    #: texts embedded and provider retries made for the batch this row led
    computed: int = 0
    retries: int = 0


def pack(row: Row) -> bytes:
    return pickle.dumps(row, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(value: Any) -> Row:
    row = pickle.loads(bytes(value))
    assert isinstance(row, Row)
    return row


def encode(rows: Sequence[Row]) -> dict[str, np.ndarray]:
    column = np.empty(len(rows), dtype=object)
    column[:] = [pack(row) for row in rows]
    return {COLUMN: column}


def decode(batch: dict[str, Any]) -> list[Row]:
    return [unpack(value) for value in batch[COLUMN]]


class _NoCache:
    """A worker that does not see the driver's store file: no vector cache (every text is embedded)."""

    def cached_vectors(self, model: str, text_hashes: Sequence[str]) -> dict[str, Vector]:
        return {}


def _cache(cache_db: str | None, factory: VectorCacheFactory | None) -> VectorCache:
    """``cache_db``: the driver's store file; read for the embedding cache when this worker's node
    sees it at the same path (a one-machine cluster); otherwise, and on Oracle (a worker gets no
    credentials), no cache."""
    if cache_db and factory is not None and os.path.isfile(cache_db):
        return factory(cache_db)
    return _NoCache()


class _CollectingSanitizer:
    """Sanitizes in this worker and keeps the findings, so the driver writes the audit log (one
    file on the driver's machine, whichever node sanitized)."""

    def __init__(self, config: IngestConfig) -> None:
        from backend.common.sanitizer import sanitize_if_enabled

        self._sanitize, self._settings = sanitize_if_enabled, config.sanitize
        self.findings: list[PiiFinding] = []

    def sanitize(self, texts: Sequence[str], doc_ids: Sequence[str]) -> SanitizeOutcome:
        outcome = self._sanitize(list(texts), self._settings, doc_ids=list(doc_ids))
        self.findings += outcome.findings
        return SanitizeOutcome(outcome.texts, [])


class PrepareStage:
    """Load (in the preparer's loader worker process, under ``ingest.limits``), sanitize and chunk
    a batch of documents with a ``Preparer``, built once per actor."""

    def __init__(self, config: IngestConfig, target: Target, embedder_factory: EmbedderFactory) -> None:
        self.config, self.target = config, target
        # the embedder is built only if the ``tokens`` chunker asks for its tokenizer
        self.preparer = Preparer(config, functools.partial(embedder_factory, config.embeddings))

    def __call__(self, batch: dict[str, Any]) -> dict[str, np.ndarray]:
        rows = decode(batch)
        scratch = IngestReport(manifest="")
        sanitizer = _CollectingSanitizer(self.config) if self.config.sanitize.enabled else None
        prepared = {id(p.planned): p for p in self.preparer([row.planned for row in rows], self.target, scratch,
                                                             sanitizer=sanitizer)}
        out = [replace(row, prepared=prepared.get(id(row.planned))) for row in rows]
        if out:
            out[0] = replace(out[0], scratch=scratch, findings=sanitizer.findings if sanitizer else [])
        return encode(out)

    def __del__(self) -> None:
        preparer = getattr(self, "preparer", None)
        if preparer is not None:
            preparer.close()


def worker_embeddings(embeddings: EmbeddingSettings, threads: int) -> EmbeddingSettings:
    """The embedding settings of one embed actor: its model runs ``threads`` intra-op threads (the
    CPUs the actor reserved), not one per core of the node, which its neighbours share."""
    return embeddings.model_copy(update={"local": embeddings.local.model_copy(update={"threads": threads})})


class EmbedStage:
    """Embed a batch of prepared documents with a ``Vectorizer`` (batched, deduplicated, transient
    provider errors retried, a permanent one failing only its document), each into its
    ``DocumentWrite``. The Ray engine does not enrich: each document goes as prepared."""

    def __init__(self, config: IngestConfig, target: Target, embedder_factory: EmbedderFactory, threads: int,
                 cache_db: str | None = None, vector_cache: VectorCacheFactory | None = None) -> None:
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[name] = str(threads)
        embeddings = worker_embeddings(config.embeddings, threads)
        self.target = target
        self.embedder = embedder_factory(embeddings)
        self.vectorizer = Vectorizer(self.embedder, _cache(cache_db, vector_cache), embeddings.batching,
                                     embeddings.retry)
        self.batcher = self.vectorizer.batcher()

    def __call__(self, batch: dict[str, Any]) -> dict[str, np.ndarray]:
        rows = decode(batch)
        scratch = IngestReport(manifest="")
        computed, retries = self.batcher.stats.computed, self.batcher.stats.retries
        items = [Enriched.plain(row.prepared) for row in rows if row.prepared is not None]
        writes = {id(item.prepared): write
                  for item, write in self.vectorizer.pairs(items, self.batcher, scratch, self.target)}
        out = [replace(row, prepared=None, write=writes.get(id(row.prepared))) for row in rows]
        if out:
            lead = out[0].scratch or IngestReport(manifest="")
            lead.absorb(scratch)
            out[0] = replace(out[0], scratch=lead, computed=self.batcher.stats.computed - computed,
                             retries=self.batcher.stats.retries - retries)
        return encode(out)
