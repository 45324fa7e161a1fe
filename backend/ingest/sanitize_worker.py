"""PII analysis in a worker process, overlapped with embedding.

Ingestion is a loop over groups of documents: prepare (load, sanitize, chunk),
embed, write. With sanitizing on, the analyzer (spaCy + Presidio, pure CPU) used to
run while the embedder waited, and the embedder while the analyzer waited. The
``LocalEngine`` overlaps them: while the main thread embeds and writes group *n*, a
helper thread prepares the next groups (``engine.prepared_ahead``, at most
``engine.PREPARE_AHEAD`` ahead), and their sanitize step runs in a separate **process**
(``SanitizeWorker``, the ``TextSanitizer`` stage the pipeline's ``prepare`` is handed),
so the analyzer and the embedding model really run at once instead of taking turns on
the GIL. With sanitizing off, ``sanitize.worker: false``, or a single group (nothing to
overlap), everything runs in the main thread as before.
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import threading
from typing import Any, Sequence, TypeVar

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
    protocol stream has its own copy of the descriptor. Ctrl-C in the terminal is ignored
    here (the parent finishes its group in flight, then closes stdin, which ends this loop).
    """
    import os
    import signal
    import sys

    signal.signal(signal.SIGINT, signal.SIG_IGN)

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


if __name__ == "__main__":
    _serve()
