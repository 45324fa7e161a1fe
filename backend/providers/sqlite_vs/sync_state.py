"""``SyncState`` on the SQLite store: two small tables beside the catalog.

``rag_sync_items`` holds each connector's items as its last sync left them (token, ACL labels,
document id, staged file); ``rag_sync_runs`` one row per sync run (its report as JSON). Created
on first use, on the store's ``SqliteDatabase`` (same file, same connections), every value bound.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from backend.core.sync_diff import SyncedItem
from backend.providers.schema_once import SchemaOnce
from backend.providers.sqlite_vs.connection import SqliteDatabase, now

DDL = ("""CREATE TABLE IF NOT EXISTS rag_sync_items (
    connector TEXT NOT NULL,
    item_id TEXT NOT NULL,
    token TEXT NOT NULL,
    labels TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    file TEXT NOT NULL,
    title TEXT NOT NULL,
    url TEXT NOT NULL,
    synced_at TEXT NOT NULL,
    PRIMARY KEY (connector, item_id)
) WITHOUT ROWID""", """CREATE TABLE IF NOT EXISTS rag_sync_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    connector TEXT NOT NULL,
    created_at TEXT NOT NULL,
    report TEXT NOT NULL
)""", "CREATE INDEX IF NOT EXISTS rag_sync_runs_connector ON rag_sync_runs(connector, id)")
_UPSERT = ("INSERT INTO rag_sync_items (connector, item_id, token, labels, doc_id, file, title, url, synced_at) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (connector, item_id) DO UPDATE SET token = excluded.token, "
           "labels = excluded.labels, doc_id = excluded.doc_id, file = excluded.file, title = excluded.title, "
           "url = excluded.url, synced_at = excluded.synced_at")


class SqliteSyncState:
    """``SyncState`` on a store's database."""

    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        self._schema = SchemaOnce(self._create_tables)

    def _create_tables(self) -> None:
        with self.db.write() as con:
            for ddl in DDL:
                con.execute(ddl)

    def sync_items(self, connector: str) -> dict[str, SyncedItem]:
        self._schema.ensure()
        with self.db.read() as con:
            rows = con.execute("SELECT item_id, token, labels, doc_id, file, title, url FROM rag_sync_items "
                               "WHERE connector = ?", (connector,)).fetchall()
        return {r[0]: SyncedItem(r[0], r[1], tuple(json.loads(r[2])), r[3], r[4], r[5], r[6]) for r in rows}

    def save_sync(self, connector: str, upsert: Sequence[SyncedItem], delete: Sequence[str],
                  run: Mapping[str, Any]) -> None:
        self._schema.ensure()
        stamp = now()
        with self.db.write() as con:
            con.executemany(_UPSERT, [(connector, i.item_id, i.token, json.dumps(list(i.labels)), i.doc_id, i.file,
                                       i.title, i.url, stamp) for i in upsert])
            con.executemany("DELETE FROM rag_sync_items WHERE connector = ? AND item_id = ?",
                            [(connector, item_id) for item_id in delete])
            con.execute("INSERT INTO rag_sync_runs (connector, created_at, report) VALUES (?, ?, ?)",
                        (connector, stamp, json.dumps(dict(run), default=str)))

    def record_sync_run(self, connector: str, run: Mapping[str, Any]) -> None:
        self.save_sync(connector, (), (), run)

    def sync_runs(self, connector: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        self._schema.ensure()
        with self.db.read() as con:
            rows = con.execute("SELECT connector, created_at, report FROM rag_sync_runs WHERE (? IS NULL OR "
                               "connector = ?) ORDER BY id DESC LIMIT ?", (connector, connector, limit)).fetchall()
        return [{**json.loads(r[2]), "connector": r[0], "recorded_at": r[1]} for r in rows]

    def forget_sync(self, connector: str) -> int:
        self._schema.ensure()
        with self.db.write() as con:
            dropped = con.execute("DELETE FROM rag_sync_items WHERE connector = ?", (connector,)).rowcount
            con.execute("DELETE FROM rag_sync_runs WHERE connector = ?", (connector,))
        return int(dropped)
