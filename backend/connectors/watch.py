"""Change notification for a folder connector: ``rag connector sync NAME --watch``.

``watchdog`` delivers the file system's own events (inotify, FSEvents, ReadDirectoryChangesW);
``polling`` uses its ``PollingObserver`` instead, for network mounts (NFS, SMB) whose changes
made on another machine raise no local event. Events only say *that* something changed: what
changed is still decided by the sync's listing (size and sha256 of each file), so a missed or
spurious event costs at most one sync that finds the folder up to date.

Why a quiet period: saving a file or copying a hundred is a burst of events; the sync runs once the
folder has had no event for ``quiet_s`` seconds. A sync in flight is never interrupted: events that
arrive during it wait, and one more sync follows once the folder is quiet again. The files
``walk_folder`` skips (hidden files and folders such as ``.git``, editors' and office temporary
files) raise nothing, except the readers and ignore files, whose change is a permission or
listing change.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from backend.common.errors import SourceUnavailable
from backend.connectors.readers_file import READERS_FILE
from backend.ingest.folder import IGNORE_FILE, temp_reason

_WATCHED_HIDDEN = {READERS_FILE, IGNORE_FILE}


def raises_sync(root: Path, path: str) -> bool:
    """Pure: whether an event on ``path`` (under ``root``) may change the listing."""
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        return False
    if not parts:
        return False
    if any(p.startswith(".") for p in parts[:-1]):
        return False
    return parts[-1] in _WATCHED_HIDDEN or temp_reason(parts[-1]) is None


class FolderWatch:
    """Watches ``root`` (recursively) while open; ``wait_for_change`` blocks until an event was
    followed by ``quiet_s`` seconds without one."""

    def __init__(self, root: Path, *, quiet_s: float = 2.0, polling: bool = False) -> None:
        self.root = root.expanduser().resolve()
        self.quiet_s = quiet_s
        self.polling = polling
        self._cond = threading.Condition()
        self._last_event: float | None = None
        self._observer: Any = None

    def _on_event(self, event: Any) -> None:
        paths = [event.src_path, getattr(event, "dest_path", "") or ""]
        if any(raises_sync(self.root, str(p)) for p in paths if p):
            with self._cond:
                self._last_event = time.monotonic()
                self._cond.notify_all()

    def __enter__(self) -> FolderWatch:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        if not self.root.is_dir():
            raise SourceUnavailable(f"folder {self.root}: no such folder to watch (unmounted?)")
        watch = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.event_type not in ("opened", "closed_no_write"):  # reads change nothing
                    watch._on_event(event)

        self._observer = PollingObserver(timeout=1) if self.polling else Observer()
        self._observer.schedule(Handler(), str(self.root), recursive=True)
        self._observer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=10)

    def wait_for_change(self, stop: threading.Event | None = None, timeout: float | None = None) -> bool:
        """True once the folder changed and then stayed quiet for ``quiet_s``; False when ``stop`` is
        set or ``timeout`` seconds passed first. The change is consumed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                if stop is not None and stop.is_set():
                    return False
                now = time.monotonic()
                if self._last_event is not None and now - self._last_event >= self.quiet_s:
                    self._last_event = None
                    return True
                if deadline is not None and now >= deadline:
                    return False
                wait = 0.5 if self._last_event is None else self.quiet_s - (now - self._last_event)
                if deadline is not None:
                    wait = min(wait, deadline - now)
                self._cond.wait(max(0.01, min(wait, 0.5)))
