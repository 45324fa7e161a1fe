"""``EnrichmentCache`` on Oracle: the catalog table ``RAG_ENRICHMENT_CACHE``.

Shared by every version of the schema, keyed by ``(content_hash, prompt_version,
model_id)``. Fixed table name, every value a named bind; an upsert is one ``MERGE`` per
row sent with ``executemany`` in one transaction, lookups go in batches of bound hashes.

Two enrichers (two ingests) that enrich the same content both take the MERGE's NOT MATCHED
branch; the second gets ORA-00001 on the primary key. Rows are therefore sent with
``batcherrors`` and ORA-00001 is ignored (the other enricher's row is there: the cache is
advisory, as ``OracleVectorStore._cache`` does for the embedding cache), and sorted by key so
two writers take the key locks in the same order (no ORA-00060).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from backend.common.errors import StoreError
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.binds import column_text
from backend.providers.oracle_vs.versions import now_iso
from backend.providers.schema_once import SchemaOnce

DDL = """CREATE TABLE IF NOT EXISTS RAG_ENRICHMENT_CACHE (
    content_hash   VARCHAR2(64) NOT NULL,
    prompt_version VARCHAR2(40) NOT NULL,
    model_id       VARCHAR2(512) NOT NULL,
    payload        CLOB NOT NULL,
    created_at     VARCHAR2(40) NOT NULL,
    CONSTRAINT RAG_ENRICHMENT_CACHE_PK PRIMARY KEY (content_hash, prompt_version, model_id)
)"""
MERGE_SQL = (
    "MERGE INTO RAG_ENRICHMENT_CACHE c USING (SELECT :content_hash AS content_hash, :prompt_version AS prompt_version, "
    ":model_id AS model_id FROM SYS.DUAL) s ON (c.content_hash = s.content_hash AND c.prompt_version = s.prompt_version "
    "AND c.model_id = s.model_id) "
    "WHEN MATCHED THEN UPDATE SET c.payload = :payload, c.created_at = :created_at "
    "WHEN NOT MATCHED THEN INSERT (content_hash, prompt_version, model_id, payload, created_at) "
    "VALUES (s.content_hash, s.prompt_version, s.model_id, :payload, :created_at)")
_BATCH = 100  # hashes per lookup (one bind each)


def select_sql(count: int) -> str:
    """The lookup of ``count`` hashes: ``:h0 ..`` padded to their IN-list bucket (``sql.in_binds``: one
    statement text per bucket, not per count) plus the version and model binds."""
    marks = sql.in_marks("h", count)
    return ("SELECT content_hash, payload FROM RAG_ENRICHMENT_CACHE WHERE prompt_version = :prompt_version "
            f"AND model_id = :model_id AND content_hash IN ({marks})")


class OracleEnrichmentCache:
    """``db`` is the store's ``OracleConnector`` (its pool; no second pool is opened)."""

    def __init__(self, db: Any) -> None:
        self._db = db
        self._schema = SchemaOnce(self._create_table)  # a bundle that never enriches never sends the DDL

    def _create_table(self) -> None:
        with self._db.connection("creating RAG_ENRICHMENT_CACHE") as con:
            con.cursor().execute(DDL)

    def get_many(self, prompt_version: str, model_id: str, content_hashes: Sequence[str]) -> dict[str, str]:
        self._schema.ensure()
        hashes = list(dict.fromkeys(content_hashes))
        out: dict[str, str] = {}
        with self._db.connection("reading the enrichment cache") as con:
            cur = con.cursor()
            for start in range(0, len(hashes), _BATCH):
                part = hashes[start:start + _BATCH]
                binds = {"prompt_version": prompt_version, "model_id": model_id,
                         **sql.in_binds("h", part)}
                cur.execute(select_sql(len(part)), binds)
                out.update((str(h), column_text(p)) for h, p in cur.fetchall())
        return out

    def put_many(self, prompt_version: str, model_id: str, payloads: Mapping[str, str]) -> None:
        if not payloads:
            return
        self._schema.ensure()
        now = now_iso()
        rows = [{"content_hash": h, "prompt_version": prompt_version, "model_id": model_id, "payload": p,
                 "created_at": now} for h, p in sorted(payloads.items())]
        with self._db.transaction("writing the enrichment cache") as con:
            cur = con.cursor()
            cur.executemany(MERGE_SQL, rows, batcherrors=True)
            errors = [e for e in cur.getbatcherrors() if getattr(e, "code", None) != 1]
            if errors:
                raise StoreError(f"{len(errors)} of {len(rows)} rows could not be written to the enrichment cache "
                                 "(nothing was committed): " + "; ".join(
                                     f"{rows[e.offset]['content_hash'][:12]}: {str(e.message).strip()}"
                                     for e in errors[:5]))
