"""A clean cancel of a long ingest: Ctrl-C, or ``rag ingest cancel [--series S]`` from another shell.

Why a marker file and not a signal: the cancelling shell need not know the run's pid (a job
runner, a second terminal), and a file is what both processes see without a new store table.
``rag ingest cancel`` writes ``<cancel dir>/<series>.cancel`` (``_all.cancel`` without
``--series``); the cancel dir is ``ingest-cancel/`` beside the SQLite file (Oracle: under the
repository's ``data/``). A run honours only a marker written after it started (a stale one from
a run that had already ended changes nothing) and removes the marker it honoured.

The engines check the token between groups: the group in flight is written, then
``IngestCancelled`` is raised. ``finish_load`` is not called, so the candidate version stays
unfinished; the next run of the same command plans ``resume`` and skips every document already
written (their hashes match). Aliases are never touched by an ingest, so what is served is
unchanged.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from typing import TYPE_CHECKING

from backend.common.config import REPO_ROOT, Settings
from backend.common.errors import RagError
from backend.common.identifiers import validate_identifier

if TYPE_CHECKING:
    from backend.ingest.report import IngestReport

#: the marker of a cancel for every series
ALL_SERIES = "_all"
#: ``rag ingest`` exits with this code when cancelled (128 + SIGINT, as a shell reports Ctrl-C)
CANCELLED_EXIT_CODE = 130


class IngestCancelled(RagError):
    """The run stopped between groups at the user's request; what it wrote stays, resumable."""

    code = "ingest_cancelled"
    http_status = 409
    exit_code = CANCELLED_EXIT_CODE

    def __init__(self, *, written: int, total: int, version: str, series: str, reason: str) -> None:
        super().__init__(f"cancelled: {written} of {total} documents written; run the same command to resume",
                         written=written, total=total, version=version, series=series, reason=reason)
        self.written, self.total, self.version = written, total, version
        #: what the run did until it stopped (``IngestPipeline.run`` attaches it)
        self.report: IngestReport | None = None


def default_cancel_dir(settings: Settings) -> Path:
    """``ingest-cancel/`` beside the SQLite file, so each store has its own; under ``data/`` for Oracle."""
    if settings.store.backend == "sqlite":
        return settings.resolve_path(settings.store.sqlite.path).parent / "ingest-cancel"
    return REPO_ROOT / "data" / "ingest-cancel"


def marker_path(cancel_dir: Path, series: str | None) -> Path:
    """Where the cancel request for ``series`` (a series key, ``series_lock.series_key``; every
    series when None) is written."""
    name = ALL_SERIES if series is None else validate_identifier(series, "--series")
    return cancel_dir / f"{name}.cancel"


def request_cancel(cancel_dir: Path, series: str | None) -> Path:
    """Ask the runs of ``series`` (every run when None) to stop after their group in flight."""
    path = marker_path(cancel_dir, series)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{time.time()}\n", encoding="utf-8")
    return path


class CancelToken:
    """Checked by the engines between groups. ``set`` is what a Ctrl-C handler calls; a marker
    file (``request_cancel``) written after ``since`` cancels the runs of its series."""

    def __init__(self, cancel_dir: Path | None = None, *, since: float | None = None) -> None:
        self.cancel_dir = cancel_dir
        self.since = time.time() if since is None else since
        self._event = threading.Event()
        self._reason = ""

    def set(self, reason: str = "interrupted") -> None:
        self._reason = reason
        self._event.set()

    @property
    def is_set(self) -> bool:
        return self._event.is_set()

    def requested(self, series: str) -> str | None:
        """Why ``series`` must stop now, or None to go on. A marker found is removed (consumed)."""
        if self._event.is_set():
            return self._reason
        if self.cancel_dir is None:
            return None
        for path in (marker_path(self.cancel_dir, series), marker_path(self.cancel_dir, None)):
            try:
                fresh = path.stat().st_mtime >= self.since
            except OSError:
                continue
            if fresh:
                if path.name != f"{ALL_SERIES}.cancel":  # another run may still have to see "all"
                    path.unlink(missing_ok=True)
                self.set(f"rag ingest cancel ({path.name})")
                return self._reason
        return None


#: a token nobody cancels
NEVER = CancelToken()
