"""Progress bars on stderr for long CLI commands (ingest, eval, calibrate), and the ingest
progress protocol (``Progress``: counts in, rates and ETA out as a ``ProgressSnapshot``).

Why one helper: every command must decide the same way whether to draw (a terminal on
stderr, not ``--json``, ``--progress/--no-progress`` forcing either way), and tqdm alone
draws nothing on a terminal that reports no width (a bare pseudo-terminal, some CI
runners and ``docker exec -t`` report 0 columns): the bar is then drawn 80 columns wide
(and 24 rows tall, or tqdm hides it).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol, TextIO, runtime_checkable

from tqdm import tqdm

FALLBACK_COLUMNS, FALLBACK_ROWS = 80, 24


def progress_enabled(flag: bool | None, *, default: bool = True, as_json: bool = False,
                     stream: TextIO | None = None) -> bool:
    """``--progress``/``--no-progress`` win; otherwise draw only when ``default`` (the
    config), not ``--json`` (scripts read the output), and stderr is a terminal."""
    if flag is not None:
        return flag
    stream = stream or sys.stderr
    return default and not as_json and bool(getattr(stream, "isatty", lambda: False)())


def _shape(stream: TextIO) -> tuple[int, int]:
    """The terminal's columns and rows, each replaced by a fallback when it reports none
    (tqdm would draw an empty bar at 0 columns, and hide every bar at 0 rows)."""
    try:
        columns, rows = os.get_terminal_size(stream.fileno())
    except (OSError, ValueError, AttributeError):
        columns = rows = 0
    return (columns if columns > 0 else FALLBACK_COLUMNS), (rows if rows > 0 else FALLBACK_ROWS)


def bar(enabled: bool, *, desc: str, total: int | None = None, unit: str = "it", position: int | None = None,
        leave: bool = False, stream: TextIO | None = None) -> tqdm:
    """A tqdm bar on stderr, disabled (drawing nothing) unless ``enabled``."""
    stream = stream or sys.stderr
    opts: dict[str, Any] = {"file": stream, "disable": not enabled, "leave": leave, "desc": desc, "total": total,
                            "unit": unit, "position": position, "dynamic_ncols": False}
    if enabled:
        opts["ncols"], opts["nrows"] = _shape(stream)
    return tqdm(**opts)


# --- the ingest progress protocol -------------------------------------------------------------
@dataclass(frozen=True)
class ProgressSnapshot:
    """Where a long run stands: counts, rates since it started, and the ETA of what is left
    (None until a document is done). The admin jobs page and ``--json`` read this."""

    total: int
    documents: int
    chunks: int
    embedded: int
    elapsed_s: float
    documents_per_s: float
    chunks_per_s: float
    eta_s: float | None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "documents": self.documents, "chunks": self.chunks, "embedded": self.embedded,
                "elapsed_s": round(self.elapsed_s, 3), "documents_per_s": round(self.documents_per_s, 3),
                "chunks_per_s": round(self.chunks_per_s, 3),
                "eta_s": None if self.eta_s is None else round(self.eta_s, 1), "note": self.note}


def snapshot_of(*, total: int, documents: int, chunks: int, embedded: int, started: float | None, now: float,
                note: str = "") -> ProgressSnapshot:
    """Rates since ``started`` and the ETA of the documents left at that rate (pure: the clock is
    an argument). No start or nothing done yet: rates 0 and no ETA rather than a guess."""
    elapsed = max(0.0, now - started) if started is not None else 0.0
    docs_rate = documents / elapsed if elapsed > 0 else 0.0
    chunks_rate = chunks / elapsed if elapsed > 0 else 0.0
    left = max(0, total - documents)
    eta = (left / docs_rate if docs_rate > 0 else None) if left else 0.0
    return ProgressSnapshot(total, documents, chunks, embedded, elapsed, docs_rate, chunks_rate, eta, note)


@runtime_checkable
class Progress(Protocol):
    """What a long ingest reports as it goes (both engines call it from the driver process).

    ``start`` gives the documents this run will write (known up front, after planning; called
    once per target series, the totals add up); then ``documents``/``chunks``/``embedded`` add
    what was done, ``note`` says what happens now (a phase, a cancel), ``close`` ends the display."""

    def start(self, documents: int, *, label: str = "") -> None: ...

    def documents(self, n: int) -> None: ...

    def chunks(self, n: int) -> None: ...

    def embedded(self, n: int) -> None: ...

    def note(self, message: str) -> None: ...

    def snapshot(self) -> ProgressSnapshot: ...

    def close(self) -> None: ...


class ProgressTracker:
    """Counts behind a ``Progress``, thread-safe, with an injectable clock; ``snapshot`` reads
    them at any time (the jobs page polls it from another thread). Draws nothing."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._started: float | None = None
        self._total = self._documents = self._chunks = self._embedded = 0
        self._note = ""

    def start(self, documents: int, *, label: str = "") -> None:
        with self._lock:
            if self._started is None:
                self._started = self._clock()
            self._total += documents
            if label:
                self._note = label

    def documents(self, n: int) -> None:
        with self._lock:
            self._documents += n

    def chunks(self, n: int) -> None:
        with self._lock:
            self._chunks += n

    def embedded(self, n: int) -> None:
        with self._lock:
            self._embedded += n

    def note(self, message: str) -> None:
        with self._lock:
            self._note = message

    def snapshot(self) -> ProgressSnapshot:
        with self._lock:
            return snapshot_of(total=self._total, documents=self._documents, chunks=self._chunks,
                               embedded=self._embedded, started=self._started, now=self._clock(), note=self._note)

    def close(self) -> None:
        pass


class _NoProgress:
    """The progress of a run nobody watches: counts nothing, so one instance serves every run."""

    def start(self, documents: int, *, label: str = "") -> None:
        pass

    def documents(self, n: int) -> None:
        pass

    def chunks(self, n: int) -> None:
        pass

    def embedded(self, n: int) -> None:
        pass

    def note(self, message: str) -> None:
        pass

    def snapshot(self) -> ProgressSnapshot:
        return snapshot_of(total=0, documents=0, chunks=0, embedded=0, started=None, now=0.0)

    def close(self) -> None:
        pass


NO_PROGRESS: Progress = _NoProgress()


class TqdmProgress(ProgressTracker):
    """The CLI's progress: three tqdm bars on stderr (files: documents/s and the ETA; chunks:
    chunks/s; embeddings: texts/s); ``enabled=False`` draws nothing but still counts."""

    def __init__(self, enabled: bool, *, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(clock=clock)
        self._enabled = enabled
        self._files = bar(enabled, total=0, desc="files", unit="file", position=0, stream=stream)
        self._chunk_bar = bar(enabled, desc="chunks", unit="chunk", position=1, stream=stream)
        self._embed_bar = bar(enabled, desc="embeddings", unit="text", position=2, stream=stream)

    def start(self, documents: int, *, label: str = "") -> None:
        super().start(documents, label=label)
        self._files.total = (self._files.total or 0) + documents
        self._files.refresh()

    def documents(self, n: int) -> None:
        super().documents(n)
        self._files.update(n)

    def chunks(self, n: int) -> None:
        super().chunks(n)
        self._chunk_bar.update(n)

    def embedded(self, n: int) -> None:
        super().embedded(n)
        self._embed_bar.update(n)

    def note(self, message: str) -> None:
        super().note(message)
        if self._enabled:
            self._files.write(message, file=self._files.fp)

    def close(self) -> None:
        for b in (self._files, self._chunk_bar, self._embed_bar):
            b.close()


class ReportingProgress(ProgressTracker):
    """Counts, and hands a snapshot to ``on_change`` after each group (the admin jobs page
    writes it into the job's JSON: documents/s, chunks/s, ETA)."""

    def __init__(self, on_change: Callable[[ProgressSnapshot], None], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(clock=clock)
        self._on_change = on_change

    def documents(self, n: int) -> None:
        super().documents(n)
        self._on_change(self.snapshot())
