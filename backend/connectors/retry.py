"""The retry policy of every source call: 429, 5xx and connection errors, with backoff (tenacity).

A connector raises ``Transient`` for an answer worth another try (with the server's
``Retry-After`` when it sent one); after ``connectors.max_attempts`` the call fails with
``SourceUnavailable`` naming the source and the last reason, and the sync changes nothing.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from backend.common.errors import SourceUnavailable

T = TypeVar("T")


class Transient(Exception):
    """A source answer worth retrying: 429, 5xx, a dropped connection."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


def retry_after_seconds(value: str | None) -> float | None:
    """Pure: a ``Retry-After`` header in seconds (the HTTP-date form is treated as absent)."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def call(what: str, fn: Callable[[], T], *, attempts: int = 4, max_wait_s: float = 30.0,
         initial_wait_s: float = 0.2) -> T:
    """``fn()`` retried on ``Transient``; ``SourceUnavailable`` naming ``what`` once attempts run out."""
    backoff = wait_exponential(multiplier=initial_wait_s, max=max_wait_s)

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hinted = exc.retry_after if isinstance(exc, Transient) else None
        return min(max_wait_s, hinted) if hinted is not None else float(backoff(state))

    try:
        for attempt in Retrying(stop=stop_after_attempt(attempts), wait=wait, reraise=True,
                                retry=retry_if_exception_type(Transient)):
            with attempt:
                return fn()
    except Transient as exc:
        raise SourceUnavailable(f"{what}: {exc} (after {attempts} attempts)") from exc
    raise AssertionError("unreachable")  # pragma: no cover
