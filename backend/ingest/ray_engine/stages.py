"""What runs in the Ray workers: the prepare and embed stages, one callable class each.

Ray Data builds each class once per actor (``ActorPoolStrategy``), so what is slow to build is
built once per actor and reused for every batch: the prepare stage's pipeline (its loader worker
process, the PII analyzer, the chunker and its tokenizer), the embed stage's model. Each stage
runs the pipeline's own per-group steps (``IngestPipeline.prepare``, ``vectors``,
``document_write``) on a pipeline built in the worker, so a document is loaded (under the same
``ingest.limits``), sanitized, chunked and embedded by the same code as in one process.

A worker has no store to write to: the driver writes. An embedding worker reads the embedding
cache of the driver's SQLite file when its node sees that file (``_CacheOnly``). Rows cross between stages as pickles of
:class:`Row` (a column of bytes), so no Arrow conversion touches a document's text or vectors.
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np

from backend.common.config import EmbeddingSettings
from backend.common.pii_findings import PiiFinding, SanitizeOutcome
from backend.core.ports import Embedder, Stores
from backend.core.types import DocumentWrite, Vector
from backend.ingest.embedding_batches import EmbeddingBatcher
from backend.ingest.ingest_config import IngestConfig
from backend.ingest.report import IngestReport
from backend.ingest.targets import Pending, Target

#: the one column of every dataset the engine builds: a pickled ``Row`` per document
COLUMN = "payload"

#: ``factory(embeddings)``: an embedder for these settings, built in the worker (module-level, so it pickles)
EmbedderFactory = Callable[[EmbeddingSettings], Embedder]


@dataclass
class Row:
    """One document between stages: its place in the manifest order and what is known so far."""

    seq: int
    #: the document (entry and hash in; loaded, sanitized and chunked after prepare); None once it failed
    item: Pending | None
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


class _NoStore:
    """A worker's store: no vector cache (every text is embedded), nothing else to call."""

    def cached_vectors(self, model_id: str, hashes: Sequence[str]) -> dict[str, Vector]:
        return {}

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"a Ray ingest worker has no store ({name}): the driver writes")


class _CacheOnly(_NoStore):
    """A worker on the driver's machine with the embedded store: the embedding cache of the driver's
    SQLite file (``cached_vectors``, read beside the driver's writes, WAL), so a text embedded for any
    version before is not embedded again; nothing else."""

    def __init__(self, path: str) -> None:
        from backend.providers.sqlite_vs.store import SqliteVectorStore

        self._store = SqliteVectorStore(path)

    def cached_vectors(self, model_id: str, hashes: Sequence[str]) -> dict[str, Vector]:
        return self._store.cached_vectors(model_id, hashes)


def _worker_stores(cache_db: str | None = None) -> Stores:
    """``cache_db``: the driver's SQLite file; read for the embedding cache when this worker's node
    sees it at the same path (a one-machine cluster); otherwise, and on Oracle (a worker gets no
    credentials), no cache."""
    store: Any = _CacheOnly(cache_db) if cache_db and os.path.isfile(cache_db) else _NoStore()
    return Stores(vectors=store, admin=store, interactions=store)


def worker_cache_db(stores: Stores) -> str | None:
    """The SQLite file behind ``stores`` (what ``_worker_stores`` reads), or None for another store."""
    from backend.providers.sqlite_vs.connection import SqliteDatabase
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    owner = stores.owner
    return owner.path if isinstance(owner, (SqliteDatabase, SqliteVectorStore)) else None


class _LazyEmbedder:
    """The prepare stage's embedder: built only if something asks for it (the ``tokens`` chunker's
    tokenizer), so preparing does not load a model it does not use."""

    def __init__(self, factory: EmbedderFactory, embeddings: EmbeddingSettings) -> None:
        self._factory, self._embeddings = factory, embeddings
        self._built: Embedder | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if self._built is None:
            self._built = self._factory(self._embeddings)
        return getattr(self._built, name)


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


def _pipeline(config: IngestConfig, embedder: Any) -> Any:
    from backend.ingest.pipeline import IngestPipeline

    return IngestPipeline(_worker_stores(), embedder, config)


class PrepareStage:
    """Load (in the pipeline's loader worker process, under ``ingest.limits``), sanitize and chunk
    a batch of documents with ``IngestPipeline.prepare``."""

    def __init__(self, config: IngestConfig, target: Target, embedder_factory: EmbedderFactory) -> None:
        self.config, self.target = config, target
        self.pipeline = _pipeline(config, _LazyEmbedder(embedder_factory, config.embeddings))

    def __call__(self, batch: dict[str, Any]) -> dict[str, np.ndarray]:
        rows = decode(batch)
        scratch = IngestReport(manifest="")
        sanitizer = _CollectingSanitizer(self.config) if self.config.sanitize.enabled else None
        items = [row.item for row in rows if row.item is not None]
        prepared = {id(item) for item in self.pipeline.prepare(items, self.target, scratch, sanitizer=sanitizer)}
        out = [replace(row, item=row.item if id(row.item) in prepared else None) for row in rows]
        if out:
            out[0] = replace(out[0], scratch=scratch, findings=sanitizer.findings if sanitizer else [])
        return encode(out)

    def __del__(self) -> None:
        pipeline = getattr(self, "pipeline", None)
        if pipeline is not None:
            pipeline.close()


def worker_embeddings(embeddings: EmbeddingSettings, threads: int) -> EmbeddingSettings:
    """The embedding settings of one embed actor: its model runs ``threads`` intra-op threads (the
    CPUs the actor reserved), not one per core of the node, which its neighbours share."""
    return embeddings.model_copy(update={"local": embeddings.local.model_copy(update={"threads": threads})})


class EmbedStage:
    """Embed a batch of prepared documents with ``IngestPipeline.vectors`` (batched, deduplicated,
    transient provider errors retried, a permanent one failing only its document) and turn each
    into its ``DocumentWrite``."""

    def __init__(self, config: IngestConfig, target: Target, embedder_factory: EmbedderFactory, threads: int,
                 cache_db: str | None = None) -> None:
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[name] = str(threads)
        embeddings = worker_embeddings(config.embeddings, threads)
        self.target = target
        self.embedder = embedder_factory(embeddings)
        self.pipeline = _pipeline(config, self.embedder)
        self.batcher = EmbeddingBatcher(self.embedder, _worker_stores(cache_db).vectors, embeddings.batching,
                                        embeddings.retry)

    def __call__(self, batch: dict[str, Any]) -> dict[str, np.ndarray]:
        rows = decode(batch)
        scratch = IngestReport(manifest="")
        computed, retries = self.batcher.stats.computed, self.batcher.stats.retries
        items = [row.item for row in rows if row.item is not None]
        writes = {id(item): self.pipeline.document_write(item, vectors)
                  for item, vectors in self.pipeline.vectors(items, self.batcher, scratch, self.target)}
        out = [replace(row, item=None, write=writes.get(id(row.item))) for row in rows]
        if out:
            lead = out[0].scratch or IngestReport(manifest="")
            lead.absorb(scratch)
            out[0] = replace(out[0], scratch=lead, computed=self.batcher.stats.computed - computed,
                             retries=self.batcher.stats.retries - retries)
        return encode(out)
