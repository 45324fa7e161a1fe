"""One writer per index series: what an ingest, a promotion and a rollback hold while they run.

Why: two ingests of one series at once both wrote the same candidate version (the last
writer won per document) and a promotion could evaluate a candidate another run was still
writing. Each such run now takes the series' writer lock (``SeriesLocking``, implemented
by each store: an OS file lock beside the SQLite file, a row lock held by a database
session on Oracle; both die with their holder) before it reads what it plans from, and
keeps it to its end: the ingest, ``finish_load``, the gate and the rotation of
``rag ingest --update-alias`` are one critical section.

A second run waits (``ingest.concurrent_runs: wait``, at most ``ingest.lock_wait_s``) or
is refused at once (``refuse``); then it writes nothing and raises ``SeriesLocked``
(exit code 4) with one line naming the series, the holder and what to do.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime, timezone
from contextlib import AbstractContextManager, nullcontext
from typing import Callable, Iterable, Protocol

import structlog

from backend.common.config import IngestSettings
from backend.common.errors import SeriesLocked
from backend.common.identifiers import validate_identifier
from backend.core.ports import IndexAdmin, SeriesLease, SeriesLocking
from backend.core.versions import VersionNaming
from backend.core.types import LockHolder

log = structlog.get_logger(__name__)


class HasIngestSettings(Protocol):
    """What the locks read: ``ingest.concurrent_runs``, ``lock_wait_s``, ``version_name_template``
    (``Settings``, or the ingest pipeline's ``IngestConfig``)."""

    @property
    def ingest(self) -> IngestSettings: ...


def series_key(naming: VersionNaming, name: str) -> str:
    """Pure: the lock name of the series ``name`` belongs to: its stem, upper case
    (``kb_handbook_v3`` -> ``KB_HANDBOOK``), as ``VersionNaming.same_series`` compares."""
    return validate_identifier(naming.split(name)[0].upper(), "index series")


def this_process(command: str) -> LockHolder:
    return LockHolder(command, os.getpid(), socket.gethostname(),
                      datetime.now(timezone.utc).isoformat(timespec="seconds"))


def locked_message(series: str, holder: LockHolder | None, *, mode: str, waited_s: float) -> str:
    """Pure: the one line a run that did not get the lock prints (exit code 4)."""
    who = holder.describe() if holder is not None else "another run (it has not recorded who it is yet)"
    if mode == "wait":
        return (f"series {series} is still locked by {who} after waiting {waited_s:g} s (ingest.lock_wait_s); "
                "nothing was written: run again when that run has ended, or raise ingest.lock_wait_s")
    return (f"series {series} is locked by {who}; this run was refused (ingest.concurrent_runs: refuse) and wrote "
            "nothing: run again when that run has ended, or set ingest.concurrent_runs: wait to queue behind it")


def waiting_message(series: str, holder: LockHolder | None, wait_s: float) -> str:
    """Pure: what a waiting run says once on stderr, so a queued run is not mistaken for a hung one."""
    who = holder.describe() if holder is not None else "another run"
    return f"waiting up to {wait_s:g} s for series {series}: locked by {who}"


class SeriesLocks:
    """The series locks one command holds. ``hold`` is idempotent (an ingest that goes on to
    promote keeps the lock it already has); ``hold_all`` takes several in name order, so two
    runs over overlapping series cannot deadlock (a bounded wait would end one anyway)."""

    def __init__(self, store: IndexAdmin, settings: HasIngestSettings, command: str,
                 on_wait: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.naming = VersionNaming(settings.ingest.version_name_template)
        self.mode = settings.ingest.concurrent_runs
        self.wait_s = settings.ingest.lock_wait_s if self.mode == "wait" else 0.0
        self.command = command
        self.on_wait = on_wait
        self._held: dict[str, SeriesLease] = {}

    @property
    def held(self) -> list[str]:
        return sorted(self._held)

    def hold(self, name: str) -> str:
        """Hold the lock of the series of ``name`` (a version or a configured index_name)."""
        series = series_key(self.naming, name)
        if series in self._held:
            return series
        if not isinstance(self.store, SeriesLocking):
            log.warning("series_lock.unsupported", series=series, store=type(self.store).__name__)
            return series
        holder = this_process(self.command)
        try:
            lease = self.store.lock_series(series, holder, wait_s=0.0)
        except SeriesLocked as exc:
            if self.wait_s <= 0:
                raise self._refused(series, exc, 0.0) from None
            if self.on_wait is not None:
                self.on_wait(waiting_message(series, exc.context.get("holder"), self.wait_s))
            log.info("series_lock.waiting", series=series, holder=str(exc.context.get("holder")), wait_s=self.wait_s)
            try:
                lease = self.store.lock_series(series, holder, wait_s=self.wait_s)
            except SeriesLocked as again:
                raise self._refused(series, again, self.wait_s) from None
        self._held[series] = lease
        log.info("series_lock.held", series=series, command=self.command)
        return series

    def hold_all(self, names: Iterable[str]) -> list[str]:
        return [self.hold(n) for n in sorted({series_key(self.naming, n): n for n in names}.values(),
                                                key=lambda n: series_key(self.naming, n))]

    def _refused(self, series: str, exc: SeriesLocked, waited_s: float) -> SeriesLocked:
        holder = exc.context.get("holder")
        return SeriesLocked(locked_message(series, holder, mode=self.mode, waited_s=waited_s),
                            series=series, holder=holder)

    def release_all(self) -> None:
        while self._held:
            series, lease = self._held.popitem()
            lease.release()
            log.info("series_lock.released", series=series)

    def __enter__(self) -> "SeriesLocks":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release_all()


def held_or_own(locks: SeriesLocks | None, store: IndexAdmin, settings: HasIngestSettings,
                command: str) -> AbstractContextManager[SeriesLocks]:
    """The caller's locks, kept past this block (``rag ingest --update-alias`` promotes under the
    lock its ingest took), or locks of this block's own, released at its end."""
    return nullcontext(locks) if locks is not None else SeriesLocks(store, settings, command)
