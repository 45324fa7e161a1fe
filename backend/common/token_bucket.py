"""A token bucket: pacing calls to a rate-limited provider (embeddings, enrichment).

In ``common`` because both the ingest batcher and the provider registry (remote enrichers)
use it, and providers must not import ingest.
"""

from __future__ import annotations

import time
from typing import Callable


class TokenBucket:
    """At most ``rate_per_min`` acquisitions a minute, in bursts of at most ``capacity``.

    ``clock`` and ``sleep`` are injectable so tests drive time by hand instead of waiting.
    A rate of 0 means no limit.
    """

    def __init__(self, rate_per_min: int, capacity: int | None = None, *,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        if rate_per_min < 0:
            raise ValueError(f"rate_per_min must be >= 0, got {rate_per_min}")
        self.rate_per_s = rate_per_min / 60.0
        self.capacity = float(capacity if capacity is not None else max(1, rate_per_min // 60))
        self._clock, self._sleep = clock, sleep
        self._tokens = self.capacity
        self._last = clock()
        self.waited_s = 0.0

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._last) * self.rate_per_s)
        self._last = now

    def acquire(self) -> float:
        """Take one token, sleeping until one is available; returns the seconds waited."""
        if self.rate_per_s == 0:
            return 0.0
        self._refill()
        waited = 0.0
        if self._tokens < 1:
            waited = (1 - self._tokens) / self.rate_per_s
            self._sleep(waited)
            self._refill()
            self.waited_s += waited
        self._tokens = max(0.0, self._tokens - 1)
        return waited
