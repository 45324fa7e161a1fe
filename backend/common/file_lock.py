"""An exclusive lock beside a small YAML file that several processes rewrite (the knowledge-base
registry, the connectors file): two writers never lose each other's entry."""

from __future__ import annotations

import fcntl
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def locked_beside(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``PATH.lock`` (created with its folder) for the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
