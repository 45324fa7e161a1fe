"""``EnrichmentCache`` in the SQLite store's file: one table shared by every version.

Its own connection to the store's database (WAL lets it sit next to the store's), its own
small table ``rag_enrichment_cache`` keyed by ``(content_hash, prompt_version, model_id)``,
values bound, never formatted into the SQL.
"""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime, timezone
from typing import Mapping, Sequence

from backend.common.errors import StoreError

DDL = """CREATE TABLE IF NOT EXISTS rag_enrichment_cache (
    content_hash TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    model_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (content_hash, prompt_version, model_id)
) WITHOUT ROWID"""
_CHUNK = 500  # hashes per SELECT (SQLite's bound-variable limit is far above)


class SqliteEnrichmentCache:
    def __init__(self, path: str, busy_timeout_ms: int = 10_000) -> None:
        self.path = path
        self._timeout = busy_timeout_ms / 1000
        self._local = threading.local()
        with self._conn() as con:
            con.execute(DDL)

    def _conn(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            try:
                con = sqlite3.connect(self.path, timeout=self._timeout)
            except sqlite3.Error as exc:
                raise StoreError(f"enrichment cache {self.path}: {exc}") from exc
            self._local.con = con
        return con

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None

    def get_many(self, prompt_version: str, model_id: str, content_hashes: Sequence[str]) -> dict[str, str]:
        hashes = list(dict.fromkeys(content_hashes))
        out: dict[str, str] = {}
        con = self._conn()
        for start in range(0, len(hashes), _CHUNK):
            part = hashes[start:start + _CHUNK]
            marks = ",".join("?" * len(part))
            rows = con.execute(
                f"SELECT content_hash, payload FROM rag_enrichment_cache WHERE prompt_version = ? AND model_id = ? "
                f"AND content_hash IN ({marks})", (prompt_version, model_id, *part)).fetchall()
            out.update((h, p) for h, p in rows)
        return out

    def put_many(self, prompt_version: str, model_id: str, payloads: Mapping[str, str]) -> None:
        if not payloads:
            return
        now = datetime.now(timezone.utc).isoformat()
        with self._conn() as con:
            con.executemany(
                "INSERT INTO rag_enrichment_cache (content_hash, prompt_version, model_id, payload, created_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (content_hash, prompt_version, model_id) "
                "DO UPDATE SET payload = excluded.payload, created_at = excluded.created_at",
                [(h, prompt_version, model_id, p, now) for h, p in payloads.items()])
