"""``EnrichmentCache`` in the SQLite store's file: one table shared by every version.

On the store's ``SqliteDatabase`` (its connections and transactions), in its own
small table ``rag_enrichment_cache`` keyed by ``(content_hash, prompt_version, model_id)``,
values bound, never formatted into the SQL.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Sequence

from backend.providers.schema_once import SchemaOnce
from backend.providers.sqlite_vs.connection import SqliteDatabase

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
    """``EnrichmentCache`` on a store's database, or on a file of its own when given a path."""

    def __init__(self, db: SqliteDatabase | str | Path, busy_timeout_ms: int = 10_000) -> None:
        self.db = db if isinstance(db, SqliteDatabase) else SqliteDatabase(db, busy_timeout_ms)
        self._schema = SchemaOnce(self._create_table)  # a bundle that never enriches never writes the schema

    def _create_table(self) -> None:
        self.db.connection().execute(DDL)

    @property
    def path(self) -> str:
        return self.db.path

    def close(self) -> None:
        self.db.close()

    def get_many(self, prompt_version: str, model_id: str, content_hashes: Sequence[str]) -> dict[str, str]:
        self._schema.ensure()
        hashes = list(dict.fromkeys(content_hashes))
        out: dict[str, str] = {}
        with self.db.read() as con:
            for start in range(0, len(hashes), _CHUNK):
                part = hashes[start:start + _CHUNK]
                marks = ",".join("?" * len(part))
                rows = con.execute(
                    f"SELECT content_hash, payload FROM rag_enrichment_cache WHERE prompt_version = ? "
                    f"AND model_id = ? AND content_hash IN ({marks})", (prompt_version, model_id, *part)).fetchall()
                out.update((h, p) for h, p in rows)
        return out

    def put_many(self, prompt_version: str, model_id: str, payloads: Mapping[str, str]) -> None:
        if not payloads:
            return
        self._schema.ensure()
        now = datetime.now(timezone.utc).isoformat()
        with self.db.write() as con:
            con.executemany(
                "INSERT INTO rag_enrichment_cache (content_hash, prompt_version, model_id, payload, created_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (content_hash, prompt_version, model_id) "
                "DO UPDATE SET payload = excluded.payload, created_at = excluded.created_at",
                [(h, prompt_version, model_id, p, now) for h, p in payloads.items()])
