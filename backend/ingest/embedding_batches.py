"""Embedding in batches: cache lookup, rate limit, retries.

Nothing is embedded twice: texts whose hash the store already holds a vector for
(``VectorStore.cached_vectors``, any version of the same model) are reused, and
the rest are deduplicated before they are sent. Calls are paced by a token
bucket (``embeddings.batching.rate_limit_per_min``) and transient provider errors
(``ProviderRateLimited``, ``ProviderTimeout``) are retried with tenacity;
``ProviderError`` is permanent and propagates to the caller, which reports it per
document.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from typing import Callable, Protocol, Sequence

import numpy as np
import structlog
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential_jitter

from backend.common.config import BatchingSettings, RetrySettings
from backend.common.counts import add_counts
from backend.common.token_bucket import TokenBucket
from backend.common.errors import ProviderRateLimited, ProviderTimeout
from backend.core.ports import Embedder
from backend.core.types import Vector, content_hash

log = structlog.get_logger(__name__)



class VectorCache(Protocol):
    """The one thing a batcher reads of a store: vectors some version already holds
    (``VectorStore.cached_vectors``; a Ray worker gets the driver's, or none)."""

    def cached_vectors(self, model: str, text_hashes: Sequence[str]) -> dict[str, Vector]: ...


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    log.warning("ingest.embedding_retry", attempt=state.attempt_number, error=type(exc).__name__,
                reason=getattr(exc, "user_message", str(exc)),
                wait_s=round(state.next_action.sleep, 3) if state.next_action else None)


@dataclass
class EmbeddingStats:
    """What embedding cost: texts computed, reused from a version, model calls, retries. A batcher
    keeps one; an engine sums its batchers' (and a Ray engine its actors') into one for the report."""

    computed: int = 0
    reused: int = 0
    calls: int = 0
    retries: int = 0
    #: store transactions committed (engines count them; a batcher leaves it at 0)
    groups: int = 0

    def add(self, other: EmbeddingStats) -> None:
        add_counts(self, other, (f.name for f in fields(self)))


class EmbeddingBatcher:
    """Vectors for texts, in order, computing only what no version already holds."""

    def __init__(self, embedder: Embedder, store: VectorCache, batching: BatchingSettings, retry: RetrySettings,
                 *, limiter: TokenBucket | None = None, sleep: Callable[[float], None] = time.sleep,
                 on_embedded: Callable[[int], None] | None = None) -> None:
        self.embedder, self.store = embedder, store
        self.batch_size = batching.batch_size
        self.retry = retry
        self.limiter = limiter or TokenBucket(batching.rate_limit_per_min)
        self._sleep = sleep
        self._on_embedded = on_embedded
        self.stats = EmbeddingStats()

    def _call(self, texts: Sequence[str]) -> Vector:
        def attempt() -> Vector:
            self.limiter.acquire()
            self.stats.calls += 1
            return self.embedder.embed_documents(texts)

        retrying = Retrying(
            stop=stop_after_attempt(self.retry.max_attempts),
            wait=wait_exponential_jitter(initial=self.retry.initial_wait_s, max=self.retry.max_wait_s),
            retry=retry_if_exception_type((ProviderRateLimited, ProviderTimeout)),
            before_sleep=self._before_sleep,
            sleep=self._sleep,
            reraise=True,
        )
        vectors = np.asarray(retrying(attempt), dtype=np.float32)
        if vectors.shape[0] != len(texts):
            from backend.common.errors import ProviderError

            raise ProviderError(f"embedder {self.embedder.model_id} returned {vectors.shape[0]} vectors for {len(texts)} texts")
        return vectors

    def _before_sleep(self, state: RetryCallState) -> None:
        self.stats.retries += 1
        _log_retry(state)

    def vectors_for(self, texts: Sequence[str]) -> Vector:
        """One row per text (in order): cached vectors reused, the rest embedded once each."""
        hashes = [content_hash(t) for t in texts]
        known = self.store.cached_vectors(self.embedder.model_id, hashes) if hashes else {}
        missing = list(dict.fromkeys(h for h in hashes if h not in known))
        self.stats.reused += sum(1 for h in dict.fromkeys(hashes) if h in known)
        by_hash = dict(known)
        text_of = dict(zip(hashes, texts))
        for start in range(0, len(missing), self.batch_size):
            part = missing[start:start + self.batch_size]
            vectors = self._call([text_of[h] for h in part])
            by_hash.update(zip(part, vectors))
            self.stats.computed += len(part)
            if self._on_embedded:
                self._on_embedded(len(part))
        if not texts:
            return np.zeros((0, self.embedder.dimension), dtype=np.float32)
        return np.vstack([np.asarray(by_hash[h], dtype=np.float32) for h in hashes])
