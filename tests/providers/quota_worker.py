"""One "gunicorn worker" of the quota test: counts ``n`` requests on the store file, returns the counts seen."""

from __future__ import annotations

from pathlib import Path


def count(path: str, n: int) -> list[int]:
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    store = SqliteVectorStore(Path(path))
    try:
        return [store.count_request("principal:dave", "minute", "2026-11-28T10:05") for _ in range(n)]
    finally:
        store.close()
