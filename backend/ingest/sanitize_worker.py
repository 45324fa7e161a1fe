"""PII analysis in a worker process, overlapped with embedding.

Ingestion is a loop over groups of documents: prepare (load, sanitize, chunk),
embed, write. With sanitizing on, the analyzer (spaCy + Presidio, pure CPU) used to
run while the embedder waited, and the embedder while the analyzer waited.
``prefetch`` overlaps them: while the main thread embeds and writes group *n*, a
helper thread prepares groups *n+1* and *n+2*, and their sanitize step runs in a separate
**process** (``SanitizeWorker``), so the analyzer and the embedding model really run at once
instead of taking turns on the GIL.

The hook in ``IngestPipeline._run_target`` is one call::

    for group in sanitize_worker.prefetch(self, _batched(pending, n), target, report):
        self._process_group(group, target, batcher, report, bars)

``prefetch`` yields the groups unchanged. While it runs, the pipeline instance's
``_prepare`` returns the result prepared ahead for that group, and its
``sanitize`` sends texts to the worker (``pipeline._sanitize_worker``). With
sanitizing off, ``sanitize.worker: false``, or a single group (nothing to overlap),
it yields the groups and changes nothing. Errors raised while preparing ahead
(a ``SanitizerError``, say) surface in the main thread when that group is reached.
"""

from __future__ import annotations

import atexit
import contextvars
import os
import pickle
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Iterable, Iterator, Sequence, TypeVar

import structlog

from backend.common.config import REPO_ROOT, SanitizeSettings
from backend.common.errors import SanitizerError
from backend.common.pii_findings import SanitizeOutcome

log = structlog.get_logger(__name__)

G = TypeVar("G", bound=list[Any])

#: the worker is one core's worth of work beside the embedder: no BLAS/OpenMP thread pools of its own
_ONE_CORE = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _serve() -> None:
    """The worker's loop (``python -m backend.ingest.sanitize_worker``): pickled requests in, outcomes out.

    Anything a library prints goes to stderr: stdout is re-pointed there once the
    protocol stream has its own copy of the descriptor.
    """
    import os
    import sys

    from backend.common.logging import configure_logging
    from backend.common.sanitizer import sanitize_if_enabled

    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    configure_logging(level="WARNING")
    inp = sys.stdin.buffer
    while True:
        try:
            texts, settings, doc_ids = pickle.load(inp)
        except EOFError:
            return
        try:
            reply: Any = sanitize_if_enabled(texts, settings, doc_ids=doc_ids)
        except Exception as exc:  # noqa: BLE001 - re-raised in the parent as a SanitizerError
            reply = ("error", getattr(exc, "user_message", f"{type(exc).__name__}: {exc}"))
        pickle.dump(reply, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()


class SanitizeWorker:
    """A child Python process holding a built analyzer; ``sanitize`` is ``sanitize_if_enabled`` run there.

    A plain subprocess running this module, not ``multiprocessing``: spawn re-imports
    the parent's ``__main__`` (which breaks unguarded scripts), and fork would copy
    torch's threads and the open SQLite connection.
    """

    def __init__(self, settings: SanitizeSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "backend.ingest.sanitize_worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            cwd=str(REPO_ROOT), env={**os.environ, **_ONE_CORE, "PYTHONPATH": os.pathsep.join(
                p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)},
        )
        # build the analyzer there now, without waiting: the first real call reads this reply first
        self._warming = True
        self._send(["warm-up"], ["warm-up"])

    def _send(self, texts: Sequence[str], doc_ids: Sequence[str]) -> None:
        assert self._proc.stdin is not None
        pickle.dump((list(texts), self.settings, list(doc_ids)), self._proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self._proc.stdin.flush()

    def sanitize(self, texts: Sequence[str], doc_ids: Sequence[str]) -> SanitizeOutcome:
        with self._lock:
            assert self._proc.stdout is not None
            try:
                if self._warming:
                    self._warming = False
                    warm = pickle.load(self._proc.stdout)
                    if isinstance(warm, tuple):
                        raise SanitizerError(warm[1])
                self._send(texts, doc_ids)
                reply = pickle.load(self._proc.stdout)
            except (BrokenPipeError, EOFError) as exc:
                raise SanitizerError(f"the PII worker process exited (code {self._proc.poll()}); see the log above "
                                     "for its error, or set sanitize.worker: false") from exc
        if isinstance(reply, tuple):
            raise SanitizerError(reply[1])
        return reply  # type: ignore[no-any-return]

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()


_WORKERS: dict[str, SanitizeWorker] = {}
_LOCK = threading.Lock()


def worker_for(settings: SanitizeSettings) -> SanitizeWorker:
    """A worker per distinct sanitize configuration, kept for the life of the process."""
    key = settings.model_dump_json()
    with _LOCK:
        if key not in _WORKERS:
            _WORKERS[key] = SanitizeWorker(settings)
        return _WORKERS[key]


@atexit.register
def close_workers() -> None:
    with _LOCK:
        for worker in _WORKERS.values():
            worker.close()
        _WORKERS.clear()


#: groups prepared ahead of the one being embedded: with two, the analyzer does not idle when one
#: group embeds faster than the next is analysed, so both cores stay busy
AHEAD = 2


def prefetch(pipeline: Any, groups: Iterable[G], target: Any, report: Any) -> Iterator[G]:
    """Yield ``groups``; while doing so, prepare the next ``AHEAD`` groups (see the module docstring)."""
    settings: SanitizeSettings = pipeline.settings.sanitize
    groups = list(groups)
    if not (settings.enabled and settings.worker and len(groups) > 1):
        yield from groups
        return
    original = pipeline._prepare
    ahead: dict[int, Future[Any]] = {}
    threads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-prepare-ahead")

    def prepare(group: list[Any], target_: Any, report_: Any) -> Any:
        future = ahead.pop(id(group), None)
        return future.result() if future is not None else original(group, target_, report_)

    pipeline._sanitize_worker = worker_for(settings)
    pipeline._prepare = prepare
    log.info("ingest.sanitize_worker", groups=len(groups))
    try:
        for i, group in enumerate(groups):
            for nxt in groups[0 if i == 0 else i + AHEAD:i + AHEAD + 1]:
                # the caller's context goes along: its spans (telemetry) and log bindings
                ahead[id(nxt)] = threads.submit(contextvars.copy_context().run, original, nxt, target, report)
            yield group
    finally:
        threads.shutdown(wait=True, cancel_futures=True)
        del pipeline._prepare
        pipeline._sanitize_worker = None


if __name__ == "__main__":
    _serve()
