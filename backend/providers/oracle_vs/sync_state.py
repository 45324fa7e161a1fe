"""``SyncState`` on Oracle: the catalog tables ``RAG_SYNC_ITEMS`` and ``RAG_SYNC_RUNS``.

The same shape as the SQLite adapter (``sqlite_vs/sync_state.py``), created on first use like
``RAG_ENRICHMENT_CACHE``: fixed table names (in ``sql_names.CATALOG_TABLES``, so no version or
alias may take them), every value a named bind; an item upsert is one ``MERGE`` a row sent with
``executemany`` in the run's one transaction.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from backend.core.sync_diff import SyncedItem
from backend.providers.oracle_vs.binds import column_text
from backend.providers.oracle_vs.versions import now_iso
from backend.providers.schema_once import SchemaOnce

DDL = ("""CREATE TABLE IF NOT EXISTS RAG_SYNC_ITEMS (
    connector VARCHAR2(64) NOT NULL,
    item_id   VARCHAR2(2000) NOT NULL,
    token     VARCHAR2(512) NOT NULL,
    labels    VARCHAR2(4000) NOT NULL,
    doc_id    VARCHAR2(512) NOT NULL,
    file_name VARCHAR2(512) NOT NULL,
    title     VARCHAR2(1000),
    url       VARCHAR2(2000),
    synced_at VARCHAR2(40) NOT NULL,
    CONSTRAINT RAG_SYNC_ITEMS_PK PRIMARY KEY (connector, item_id)
)""", """CREATE TABLE IF NOT EXISTS RAG_SYNC_RUNS (
    id         NUMBER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    connector  VARCHAR2(64) NOT NULL,
    created_at VARCHAR2(40) NOT NULL,
    report     CLOB NOT NULL
)""")
MERGE_ITEM_SQL = (
    "MERGE INTO RAG_SYNC_ITEMS t USING (SELECT :connector AS connector, :item_id AS item_id FROM SYS.DUAL) s "
    "ON (t.connector = s.connector AND t.item_id = s.item_id) "
    "WHEN MATCHED THEN UPDATE SET t.token = :token, t.labels = :labels, t.doc_id = :doc_id, t.file_name = :file_name, "
    "t.title = :title, t.url = :url, t.synced_at = :synced_at "
    "WHEN NOT MATCHED THEN INSERT (connector, item_id, token, labels, doc_id, file_name, title, url, synced_at) "
    "VALUES (s.connector, s.item_id, :token, :labels, :doc_id, :file_name, :title, :url, :synced_at)")
SELECT_ITEMS_SQL = ("SELECT item_id, token, labels, doc_id, file_name, title, url FROM RAG_SYNC_ITEMS "
                    "WHERE connector = :connector")
DELETE_ITEM_SQL = "DELETE FROM RAG_SYNC_ITEMS WHERE connector = :connector AND item_id = :item_id"
INSERT_RUN_SQL = "INSERT INTO RAG_SYNC_RUNS (connector, created_at, report) VALUES (:connector, :created_at, :report)"
SELECT_RUNS_SQL = ("SELECT connector, created_at, report FROM RAG_SYNC_RUNS WHERE (:connector IS NULL OR "
                   "connector = :connector) ORDER BY id DESC FETCH FIRST :limit ROWS ONLY")


class OracleSyncState:
    """``db`` is the store's ``OracleConnector`` (its pool)."""

    def __init__(self, db: Any) -> None:
        self._db = db
        self._schema = SchemaOnce(self._create_tables)

    def _create_tables(self) -> None:
        with self._db.connection("creating the sync state tables") as con:
            cursor = con.cursor()
            for ddl in DDL:
                cursor.execute(ddl)

    def sync_items(self, connector: str) -> dict[str, SyncedItem]:
        self._schema.ensure()
        with self._db.connection("reading a connector's sync state") as con:
            cur = con.cursor()
            cur.execute(SELECT_ITEMS_SQL, {"connector": connector})
            rows = cur.fetchall()
        return {str(r[0]): SyncedItem(str(r[0]), str(r[1]), tuple(json.loads(r[2])), str(r[3]), str(r[4]),
                                      str(r[5] or ""), str(r[6] or "")) for r in rows}

    def save_sync(self, connector: str, upsert: Sequence[SyncedItem], delete: Sequence[str],
                  run: Mapping[str, Any]) -> None:
        self._schema.ensure()
        stamp = now_iso()
        with self._db.transaction("writing a connector's sync state") as con:
            cur = con.cursor()
            if upsert:
                cur.executemany(MERGE_ITEM_SQL, [
                    {"connector": connector, "item_id": i.item_id, "token": i.token, "labels": json.dumps(list(i.labels)),
                     "doc_id": i.doc_id, "file_name": i.file, "title": i.title, "url": i.url, "synced_at": stamp}
                    for i in sorted(upsert, key=lambda i: i.item_id)])
            if delete:
                cur.executemany(DELETE_ITEM_SQL, [{"connector": connector, "item_id": d} for d in delete])
            cur.execute(INSERT_RUN_SQL, {"connector": connector, "created_at": stamp,
                                         "report": json.dumps(dict(run), default=str)})

    def record_sync_run(self, connector: str, run: Mapping[str, Any]) -> None:
        self.save_sync(connector, (), (), run)

    def sync_runs(self, connector: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        self._schema.ensure()
        with self._db.connection("reading sync runs") as con:
            cur = con.cursor()
            cur.execute(SELECT_RUNS_SQL, {"connector": connector, "limit": limit})
            rows = cur.fetchall()
        return [{**json.loads(column_text(r[2])), "connector": str(r[0]), "recorded_at": str(r[1])} for r in rows]

    def forget_sync(self, connector: str) -> int:
        self._schema.ensure()
        with self._db.transaction("forgetting a connector's sync state") as con:
            cur = con.cursor()
            cur.execute("DELETE FROM RAG_SYNC_ITEMS WHERE connector = :connector", {"connector": connector})
            dropped = int(cur.rowcount or 0)
            cur.execute("DELETE FROM RAG_SYNC_RUNS WHERE connector = :connector", {"connector": connector})
        return dropped
