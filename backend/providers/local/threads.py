"""How many cores this process may use (its CPU affinity, not the machine's count)."""

from __future__ import annotations

import os


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)
