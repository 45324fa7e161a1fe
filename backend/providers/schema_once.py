"""Tables a port creates the first time it is used, once per process.

The sync-state and enrichment-cache tables live beside the versions under fixed names; a bundle
that never syncs or enriches never sends their DDL. Every statement is idempotent
(``CREATE ... IF NOT EXISTS``), so two processes racing to create them both succeed; the lock only
keeps two threads of one process from sending it twice.
"""

from __future__ import annotations

import threading
from typing import Callable


class SchemaOnce:
    """``ensure()`` runs ``create`` on its first call and never again once it succeeded."""

    def __init__(self, create: Callable[[], None]) -> None:
        self._create = create
        self._done = False
        self._lock = threading.Lock()

    def ensure(self) -> None:
        if self._done:
            return
        with self._lock:
            if not self._done:
                self._create()
                self._done = True
