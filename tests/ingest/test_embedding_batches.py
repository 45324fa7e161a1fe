"""Token bucket, batching, cache reuse and retries of transient provider errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import structlog

from backend.common.config import BatchingSettings, RetrySettings
from backend.common.errors import ProviderError, ProviderRateLimited, ProviderTimeout
from backend.core.types import Chunk, DocumentWrite, VersionSpec
from backend.common.token_bucket import TokenBucket
from backend.ingest.embedding_batches import EmbeddingBatcher
from tests.ingest.helpers import FlakyEmbedder


class FakeClock:
    """Time that only moves when the limiter sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_token_bucket_paces_calls_at_the_configured_rate() -> None:
    clock = FakeClock()
    bucket = TokenBucket(120, clock=clock, sleep=clock.sleep)
    waits = [bucket.acquire() for _ in range(5)]
    assert bucket.capacity == 2
    assert waits == [0.0, 0.0, pytest.approx(0.5), pytest.approx(0.5), pytest.approx(0.5)]
    assert clock.now == pytest.approx(1001.5)


def test_token_bucket_refills_while_idle() -> None:
    clock = FakeClock()
    bucket = TokenBucket(60, clock=clock, sleep=clock.sleep)
    assert bucket.acquire() == 0.0
    clock.now += 1.0
    assert bucket.acquire() == 0.0
    assert bucket.acquire() == pytest.approx(1.0)
    assert clock.sleeps == [pytest.approx(1.0)]


def test_zero_rate_means_no_limit() -> None:
    clock = FakeClock()
    bucket = TokenBucket(0, clock=clock, sleep=clock.sleep)
    assert [bucket.acquire() for _ in range(100)] == [0.0] * 100
    assert clock.sleeps == []


def _batcher(embedder: Any, store: Any, *, batch_size: int = 2, attempts: int = 4) -> tuple[EmbeddingBatcher, list[float]]:
    slept: list[float] = []
    batcher = EmbeddingBatcher(embedder, store, BatchingSettings(batch_size=batch_size),
                               RetrySettings(max_attempts=attempts, initial_wait_s=0.5, max_wait_s=4),
                               sleep=slept.append)
    return batcher, slept


def test_rate_limited_twice_then_success_is_retried(embedder: Any, sqlite_store: Any) -> None:
    flaky = FlakyEmbedder(embedder, errors=[ProviderRateLimited("429 slow down"), ProviderTimeout("503")])
    batcher, slept = _batcher(flaky, sqlite_store)
    with structlog.testing.capture_logs() as logs:
        vectors = batcher.vectors_for(["alpha text", "beta text"])
    assert vectors.shape == (2, 384)
    assert np.allclose(vectors, embedder.embed_documents(["alpha text", "beta text"]), atol=1e-5)
    assert flaky.attempts == 3 and batcher.stats.retries == 2 and batcher.stats.computed == 2
    assert len(slept) == 2 and 0.5 <= slept[0] <= 1.5
    retries = [e for e in logs if e["event"] == "ingest.embedding_retry"]
    assert [(e["attempt"], e["error"]) for e in retries] == [(1, "ProviderRateLimited"), (2, "ProviderTimeout")]


def test_transient_errors_stop_after_max_attempts(embedder: Any, sqlite_store: Any) -> None:
    flaky = FlakyEmbedder(embedder, errors=[ProviderRateLimited("429")] * 5)
    batcher, _ = _batcher(flaky, sqlite_store, attempts=3)
    with pytest.raises(ProviderRateLimited, match="429"):
        batcher.vectors_for(["gamma text"])
    assert flaky.attempts == 3


def test_permanent_provider_error_is_not_retried(embedder: Any, sqlite_store: Any) -> None:
    flaky = FlakyEmbedder(embedder, errors=[ProviderError("400 bad input")])
    batcher, slept = _batcher(flaky, sqlite_store)
    with pytest.raises(ProviderError, match="400 bad input"):
        batcher.vectors_for(["delta text"])
    assert flaky.attempts == 1 and slept == []


def test_cached_and_repeated_texts_are_not_embedded_again(embedder: Any, sqlite_store: Any) -> None:
    vec = embedder.embed_documents(["stored text"])
    sqlite_store.create_version(VersionSpec("KB_CACHE_V1", embedder.model_id, embedder.dimension, "cosine"))
    chunk = Chunk(chunk_id="d::0", doc_id="d", text="stored text", source="d.txt", chunk_index=0)
    sqlite_store.write_documents("KB_CACHE_V1", [DocumentWrite("d", "h", [chunk], vec)])
    flaky = FlakyEmbedder(embedder)
    batcher, _ = _batcher(flaky, sqlite_store, batch_size=2)
    out = batcher.vectors_for(["stored text", "new one", "new two", "new one", "new three"])
    assert flaky.texts_embedded == 3 and flaky.attempts == 2
    assert (batcher.stats.computed, batcher.stats.reused) == (3, 1)
    assert np.array_equal(out[0], vec[0]) and np.array_equal(out[1], out[3])
