"""The question's embedding, computed beside the lexical search when the strategy allows it.

``lexical`` and ``fusion`` do not need the query vector until their full-text search
is done. Both the embedder (ONNX Runtime, torch) and SQLite release the GIL, so the
embedding runs in a worker thread while the request's thread searches, and the vector
is waited for where it is first used. The pool is bounded: when every slot is taken
(a busy server, where no idle core is left to gain) the embedding runs inline, as it
does for every other strategy. Results never depend on which way it ran.
"""

from __future__ import annotations

import contextvars
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable

from backend.core.types import QueryVector

#: strategies whose first store call is the lexical search, so the embedding can overlap it
LEXICAL_FIRST = frozenset({"lexical", "fusion"})
_WORKERS = max(1, os.cpu_count() or 1)
_SLOTS = threading.BoundedSemaphore(_WORKERS)
_POOL = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="rag-query-embedding")


class PendingQuery:
    """A query vector being computed (``overlap``) or computed already; ``get`` waits for it
    and re-raises whatever the embedder raised."""

    def __init__(self, compute: Callable[[], QueryVector], *, overlap: bool) -> None:
        self._value: QueryVector | None = None
        self._future: Future[QueryVector] | None = None
        if overlap and _SLOTS.acquire(blocking=False):
            try:
                # the caller's context (structlog's request id) goes with the call
                self._future = _POOL.submit(contextvars.copy_context().run, _release_after, compute)
            except BaseException:
                _SLOTS.release()
                raise
        else:
            self._value = compute()

    @property
    def overlapped(self) -> bool:
        return self._future is not None

    def get(self) -> QueryVector:
        if self._value is None:
            assert self._future is not None
            self._value = self._future.result()
        return self._value


def _release_after(compute: Callable[[], QueryVector]) -> QueryVector:
    try:
        return compute()
    finally:
        _SLOTS.release()
