"""The loaders in a worker process, so one hostile file fails alone.

A parser that loops, explodes in memory or crashes on a crafted file must cost
that file, not the run. ``LoaderPool.load`` sends ``(path, doc_id)`` to a
long-lived child process (``python -m backend.ingest.loader_worker``) that runs
``load_document`` under an address-space limit (``RLIMIT_AS`` =
``ingest.limits.max_memory_mb``) and answers with the ``LoadedDocument``. The
parent waits at most ``ingest.limits.timeout_seconds``: on overrun, or when the
child dies, it kills the child, reports the file with a reason naming the limit,
and starts a fresh child for the next file. OCR runs here too (``backend.ingest.ocr``): the
child sends a heartbeat frame after each OCR page, which restarts the file's clock at
``ingest.ocr.page_timeout_seconds`` (a 200-page scan is bounded per page, not by one file
timeout) and moves the caller's OCR page count. The address-space limit is a soft limit under
a hard one of ``ingest.ocr.max_memory_mb`` (when OCR is on and that is higher): the first OCR
page raises the soft limit to it (``ocr.pages.engine_for``), since the OCR runtime reserves
more address space than it touches; files before it keep ``limits.max_memory_mb``. One child serves every file of a run:
its start-up (about 0.5 s of imports) is paid once and overlaps the run's hashing
and planning (``start``), and embedding stays batched in the parent.

A plain subprocess with length-prefixed pickles on its stdin/stdout, like
``sanitize_worker``: ``multiprocessing``'s spawn and forkserver contexts
re-import the parent's ``__main__`` (which may pull in torch), and fork would
copy torch's threads and the open SQLite connection. The child imports only
the loaders.
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import traceback
import weakref
from pathlib import Path
from typing import IO, Any, Callable

import structlog

from backend.common.config import REPO_ROOT, LoggingSettings
from backend.common.errors import LoaderError, PictureWithoutText
from backend.ingest.documents import LoadedDocument
from backend.ingest.ingest_config import ConfigLike
from backend.ingest.ocr.pages import OcrRequest

log = structlog.get_logger(__name__)

_HEADER = struct.Struct("<Q")
#: start-up (imports) is not charged to the first file's timeout, but it has its own limit
_START_SECONDS = 60.0
_SITE = "site-packages" + os.sep


def _frame_name(filename: str) -> str:
    """``docx/styles/style.py`` -> ``docx.styles.style`` (a library or this repo's module)."""
    path = Path(filename)
    if _SITE in filename:
        rel = filename.split(_SITE, 1)[1]
    elif path.is_relative_to(REPO_ROOT):
        rel = path.relative_to(REPO_ROOT).as_posix()
    else:
        return path.name
    return rel.removesuffix(".py").replace("/", ".").replace(os.sep, ".")


def describe_failure(path: Path | str, exc: BaseException, max_memory_mb: int | None = None) -> str:
    """A reason a user can act on for an unexpected loader exception: the file, the
    exception and the code that raised it (never a bare ``KeyError: None``)."""
    if isinstance(exc, MemoryError):
        limit = f"ingest.limits.max_memory_mb ({max_memory_mb})" if max_memory_mb else "the available memory"
        return f"{path}: loading needs more memory than {limit}; the loader was stopped"
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" in {_frame_name(frames[-1].filename)}.{frames[-1].name}" if frames else ""
    detail = (str(exc) or "(no message)")[:300]
    suffix = Path(path).suffix.lower() or "this"
    return (f"{path}: cannot parse: {type(exc).__name__} {detail}{where}; the file is damaged or uses a "
            f"feature the {suffix} loader does not handle (report this file if it opens in its application)")


# --- the child ---------------------------------------------------------------------
def _read_frame(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    return pickle.loads(stream.read(_HEADER.unpack(header)[0]))


def _write_frame(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


_EVENTS: list[dict[str, Any]] = []


def _collect(logger: Any, method: str, event_dict: Any) -> Any:
    _EVENTS.append(dict(event_dict))
    raise structlog.DropEvent


def _configure_logging(settings: LoggingSettings) -> None:
    """Structlog events are collected and sent back with each reply, so the parent logs
    them with its own configuration (``DOCX_IMAGES_SUMMARY`` and friends look the same
    as from an in-process loader); stdlib logging goes to stderr. No
    ``configure_logging``: its transformers import would load the ML stack here."""
    import logging

    level = getattr(logging, settings.level.upper())
    logging.basicConfig(stream=sys.stderr, level=level, format="%(message)s", force=True)
    structlog.configure(processors=[structlog.processors.add_log_level, _collect],
                        wrapper_class=structlog.make_filtering_bound_logger(level), cache_logger_on_first_use=True)


def replay(events: list[dict[str, Any]]) -> None:
    """Log the worker's events in this process."""
    for event in events:
        fields = dict(event)
        method = getattr(log, str(fields.pop("level", "info")), log.info)
        method(fields.pop("event", "ingest.loader_worker_event"), **fields)


def _serve() -> None:
    """The child's loop: settings first, then ``(path, doc_id)`` requests, one reply each.

    stdout is re-pointed at stderr once the protocol has its own copy, so a library
    that prints cannot corrupt the stream. Ctrl-C in the terminal reaches this child too: it is
    ignored here, so the parent can finish its group in flight (a clean cancel); the child ends
    when the parent closes its stdin."""
    import resource
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    settings: ConfigLike = _read_frame(inp)
    soft, hard = settings.ingest.limits.max_memory_mb * 1024 * 1024, memory_limit_mb(settings) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    _configure_logging(settings.logging)
    from backend.ingest.loaders import load_document

    try:  # python-docx up front, outside any file's time limit; pypdf and bs4 load on first use
        import backend.ingest.loaders.docx  # noqa: F401
    except ImportError:
        pass
    _write_frame(out, ("ready",))
    while True:
        try:
            path, doc_id, request = _read_frame(inp)
        except EOFError:
            return
        out_of_memory = ("error", describe_failure(path, MemoryError(), settings.ingest.limits.max_memory_mb),
                         {"reason": "max_memory_mb"})
        reply: tuple[Any, ...]
        try:
            reply = ("ok", load_document(Path(path), doc_id, settings, request,
                                         lambda: _write_frame(out, (_OCR_PAGE,))))
        except LoaderError as exc:
            reply = ("error", exc.user_message, {**{k: v for k, v in exc.context.items() if isinstance(v, str)},
                                                 "code": exc.code})
        except MemoryError:
            reply = out_of_memory
        except Exception as exc:  # noqa: BLE001 - a parser bug on hostile input fails the file
            reply = ("error", describe_failure(path, exc), {"reason": "parser_error"})
        events = list(_EVENTS)
        _EVENTS.clear()
        try:
            _write_frame(out, (*reply, events))
        except MemoryError:
            reply = out_of_memory
            _write_frame(out, (*reply, []))
        if reply is out_of_memory:
            return  # the heap may be fragmented or a library half-initialised: start afresh


def memory_limit_mb(settings: ConfigLike) -> int:
    """The worker's hard address-space limit: ``limits.max_memory_mb``, or ``ocr.max_memory_mb``
    when OCR is on and that is higher (the OCR runtime reserves address space it never touches)."""
    ingest = settings.ingest
    return max(ingest.limits.max_memory_mb, ingest.ocr.max_memory_mb if ingest.ocr.enabled else 0)


# --- the parent --------------------------------------------------------------------
#: the child's heartbeat after each OCR page (a frame of its own between request and reply)
_OCR_PAGE = "ocr_page"


class _Overrun(Exception):
    pass


class LoaderPool:
    """One loader worker, started on first use and replaced when it dies or overruns.

    ``close()`` stops it; the pipeline calls it at the end of every run (also when
    the run raises), and an ``atexit`` hook closes pools left open."""

    def __init__(self, settings: ConfigLike) -> None:
        self.settings = settings
        self.limits = settings.ingest.limits
        self._proc: subprocess.Popen[bytes] | None = None
        self._ready = False
        self._lock = threading.Lock()
        _POOLS.add(self)

    @property
    def worker_pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        """Start the worker now without waiting for it, so its imports overlap the
        caller's own work (hashing, planning); ``load`` waits for it to be ready."""
        with self._lock:
            self._ensure_started()

    def _ensure_started(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        self._stop(kill=True)  # reap a worker that died between files
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)}
        self._proc = subprocess.Popen([sys.executable, "-m", "backend.ingest.loader_worker"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=str(REPO_ROOT), env=env)
        self._ready = False
        assert self._proc.stdin is not None
        try:
            _write_frame(self._proc.stdin, self.settings)
        except BrokenPipeError:
            pass  # it died at once: _await_ready reports it
        log.debug("ingest.loader_worker_started", pid=self._proc.pid)

    def _await_ready(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        try:
            self._receive(proc.stdout.fileno(), time.monotonic() + _START_SECONDS)
        except (_Overrun, EOFError, OSError) as exc:
            code = self._stop(kill=True)
            raise LoaderError(f"the loader worker did not start within {_START_SECONDS} s (exit code {code}); "
                              "see the log above, or set ingest.limits.worker: false") from exc
        self._ready = True

    def load(self, path: Path, doc_id: str, ocr: OcrRequest | None = None,
             on_ocr_page: Callable[[], None] | None = None) -> LoadedDocument:
        """``load_document`` in the worker; every failure is a ``LoaderError`` naming ``path``.
        ``on_ocr_page`` is called here, in the caller's thread, after each OCR page."""
        pages = 0
        with self._lock:
            self._ensure_started()
            proc = self._proc
            assert proc is not None
            if not self._ready:
                self._await_ready(proc)
            assert proc.stdin is not None and proc.stdout is not None
            try:
                _write_frame(proc.stdin, (str(path), doc_id, ocr or OcrRequest()))
                reply = self._receive(proc.stdout.fileno(), time.monotonic() + self.limits.timeout_seconds)
                while reply[0] == _OCR_PAGE:  # a heartbeat: the next page gets its own clock
                    pages += 1
                    if on_ocr_page is not None:
                        on_ocr_page()
                    reply = self._receive(proc.stdout.fileno(),
                                          time.monotonic() + self.settings.ingest.ocr.page_timeout_seconds)
            except _Overrun:
                self._stop(kill=True)
                limit = (f"OCR of page {pages + 1} took longer than ingest.ocr.page_timeout_seconds "
                         f"({self.settings.ingest.ocr.page_timeout_seconds} s)" if pages else
                         f"loading took longer than ingest.limits.timeout_seconds ({self.limits.timeout_seconds} s)")
                raise LoaderError(f"{path}: {limit}; the loader was stopped", path=str(path),
                                  reason="timeout_seconds") from None
            except (BrokenPipeError, EOFError, OSError):
                code = self._stop(kill=True)
                raise LoaderError(f"{path}: {_death(code, self.limits.max_memory_mb)}", path=str(path),
                                  reason="worker_died") from None
            if proc.poll() is not None or reply[0] == "error" and reply[2].get("reason") == "max_memory_mb":
                self._stop(kill=False)
        replay(reply[-1])
        if reply[0] == "ok":
            return reply[1]  # type: ignore[no-any-return]
        context = {**reply[2], "path": str(path)}
        kind = PictureWithoutText if context.pop("code", None) == PictureWithoutText.code else LoaderError
        raise kind(reply[1], **context)

    @staticmethod
    def _receive(fd: int, deadline: float) -> Any:
        def read(n: int) -> bytes:
            buf = bytearray()
            while len(buf) < n:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    raise _Overrun
                chunk = os.read(fd, min(n - len(buf), 1 << 20))
                if not chunk:
                    raise EOFError
                buf += chunk
            return bytes(buf)

        return pickle.loads(read(_HEADER.unpack(read(_HEADER.size))[0]))

    def _stop(self, *, kill: bool) -> int | None:
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        log.debug("ingest.loader_worker_stopped", pid=proc.pid, killed=kill, peak_rss_mb=_peak_rss_mb(proc.pid))
        if kill and proc.poll() is None:
            proc.kill()
        else:
            assert proc.stdin is not None
            try:
                proc.stdin.close()
            except OSError:
                pass
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
        return code

    def close(self) -> None:
        with self._lock:
            self._stop(kill=False)


def _peak_rss_mb(pid: int) -> int | None:
    """The worker's own peak RSS (``VmHWM``; Linux). Its ``ru_maxrss`` is no use: Linux
    carries the parent's peak across the fork and exec that start it."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        return int(status.split("VmHWM:")[1].split()[0]) // 1024
    except (OSError, IndexError, ValueError):
        return None


def _death(code: int | None, max_memory_mb: int) -> str:
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        return (f"the loader process died ({name}); the file is damaged or hostile, or needs more than "
                f"ingest.limits.max_memory_mb ({max_memory_mb})")
    return f"the loader process exited unexpectedly (code {code}); see the log above for its error"


_POOLS: weakref.WeakSet[LoaderPool] = weakref.WeakSet()


@atexit.register
def close_pools() -> None:
    for pool in list(_POOLS):
        pool.close()


if __name__ == "__main__":
    _serve()
