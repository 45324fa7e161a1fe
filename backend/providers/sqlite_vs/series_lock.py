"""The series writer lock of the SQLite store: an OS file lock beside the database.

``<database>.locks/<SERIES>.lock`` is held with ``flock(LOCK_EX)`` for the whole run. The
kernel releases it when the holding process exits or is killed, so a crashed run never
keeps the series locked and no stale-lock clean-up exists to get wrong. The holder writes
its command, pid, host and start time into the file; a refused run reads them for its
message (``flock`` is advisory: reading is not blocked). A lock held on a file opened twice
by one process still excludes the second opener (the lock belongs to the open file), so
two runs in one process exclude each other too. The file descriptor is not inherited by
subprocesses (Python opens it close-on-exec), so a loader worker cannot outlive the lock's
holder with it.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path

from backend.common.errors import SeriesLocked, StoreUnavailable
from backend.common.identifiers import validate_identifier
from backend.core.types import LockHolder

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock
    fcntl = None  # type: ignore[assignment]

#: how often a waiting run tries again (flock has no timeout of its own)
POLL_S = 0.05


class FileSeriesLease:
    def __init__(self, series: str, holder: LockHolder, fd: int | None, memory: threading.Lock | None = None) -> None:
        self.series, self.holder = series, holder
        self._fd, self._memory = fd, memory

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                os.ftruncate(fd, 0)  # no stale holder record for the next reader
            except OSError:
                pass
            os.close(fd)  # closing the last descriptor of the open file releases the flock
        if self._memory is not None:
            memory, self._memory = self._memory, None
            memory.release()


class FileSeriesLocks:
    """``SeriesLocking`` for the SQLite file at ``db_path`` (``:memory:``: a lock per process)."""

    _memory_locks: dict[str, threading.Lock] = {}
    _memory_holders: dict[str, LockHolder] = {}

    def __init__(self, db_path: str) -> None:
        self.db_path = db_path
        self.memory = db_path == ":memory:"
        self.folder = None if self.memory else Path(f"{db_path}.locks")

    def path(self, series: str) -> Path:
        assert self.folder is not None
        return self.folder / f"{validate_identifier(series, 'index series')}.lock"

    def lock_series(self, series: str, holder: LockHolder, *, wait_s: float = 0.0) -> FileSeriesLease:
        if self.memory or fcntl is None:
            return self._memory_lock(series, holder, wait_s)
        path = self.path(series)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # the store cannot be written either: say so the way its writes do
            raise StoreUnavailable(
                f"SQLite store {self.db_path}: it is read-only (make the file, its folder and its -wal/-shm files "
                f"writable by this user) (cannot open the lock file {path} of series {series}: "
                f"{exc.strerror or exc}); nothing was written, the served version is unchanged and the next run "
                "resumes", series=series) from exc
        deadline = time.monotonic() + max(0.0, wait_s)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise StoreUnavailable(f"cannot lock {path} (series {series}): {exc.strerror}",
                                           series=series) from exc
            if time.monotonic() >= deadline:
                other = self.holder(series)
                os.close(fd)
                raise SeriesLocked(f"series {series} is locked by "
                                   f"{other.describe() if other else 'another run'}", series=series, holder=other)
            time.sleep(POLL_S)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, holder.to_json().encode(), 0)
        except OSError as exc:  # a full disk (issue 49 L2: a traceback before): release and say so
            os.close(fd)
            full = exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
            raise StoreUnavailable(
                f"SQLite store {self.db_path}: "
                + ("the disk is full" if full else "the lock file cannot be written")
                + f" (cannot write the lock file {path} of series {series}: {exc.strerror or exc}); nothing was "
                "written, the served version is unchanged; free space and run again", series=series) from exc
        return FileSeriesLease(series, holder, fd)

    def holder(self, series: str) -> LockHolder | None:
        """Who the lock file says holds ``series`` (None when nobody has written it yet)."""
        if self.memory or fcntl is None:
            return self._memory_holders.get(series)
        try:
            return LockHolder.from_json(self.path(series).read_text(encoding="utf-8"))
        except OSError:
            return None

    def _memory_lock(self, series: str, holder: LockHolder, wait_s: float) -> FileSeriesLease:
        lock = self._memory_locks.setdefault(series, threading.Lock())
        got = lock.acquire(timeout=wait_s) if wait_s > 0 else lock.acquire(blocking=False)
        if not got:
            other = self._memory_holders.get(series)
            raise SeriesLocked(f"series {series} is locked by {other.describe() if other else 'another run'}",
                               series=series, holder=other)
        self._memory_holders[series] = holder
        return FileSeriesLease(series, holder, None, lock)
