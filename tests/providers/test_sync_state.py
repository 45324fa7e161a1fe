"""``SyncState`` (issue 46): SQLite on a real file (a second connection sees it, so any worker
resumes), Oracle's statements valid 23ai SQL with every value bound."""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from backend.core.ports import SyncState
from backend.core.sync_diff import SyncedItem
from backend.providers.oracle_vs import sync_state as oracle_sync
from backend.providers.oracle_vs.sql_names import CATALOG_TABLES
from backend.providers.oracle_vs.sync_state import OracleSyncState
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.providers.test_oracle_sql_parse import check

A = SyncedItem("docs/a.md", "etag-1", ("group:hr",), "docs/a.md", "a-1.md", "A", "s3://b/docs/a.md")
B = SyncedItem("docs/b.md", "etag-2", ("public",), "docs/b.md", "b-2.md")


def test_sqlite_sync_state_round_trip_in_one_file(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    state = store.stores().sync_state
    assert isinstance(state, SyncState)
    assert state.sync_items("s3") == {} and state.sync_runs() == []
    state.save_sync("s3", [A, B], [], {"status": "ok", "counts": {"new": 2}})
    state.save_sync("s3", [SyncedItem(**{**A.__dict__, "labels": ("group:staff",)})], ["docs/b.md"],
                    {"status": "ok", "counts": {"permission_only": 1, "deleted": 1}})
    state.record_sync_run("web", {"status": "refused"})
    store.close()
    again = SqliteVectorStore(tmp_path / "rag.sqlite").stores().sync_state  # another worker's connection
    assert again is not None
    assert again.sync_items("s3") == {"docs/a.md": SyncedItem(**{**A.__dict__, "labels": ("group:staff",)})}
    assert [r["counts"] for r in again.sync_runs("s3")] == [{"permission_only": 1, "deleted": 1}, {"new": 2}]
    assert [r["connector"] for r in again.sync_runs()] == ["web", "s3", "s3"]
    assert again.sync_runs(limit=1)[0]["status"] == "refused"
    assert again.forget_sync("s3") == 1 and again.sync_items("s3") == {} and again.sync_runs("s3") == []


class Recording:
    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []
        self.result: list[tuple[Any, ...]] = []
        self.rowcount = 0

    @contextmanager
    def connection(self, action: str = "") -> Iterator[Any]:
        yield self

    transaction = connection

    def cursor(self) -> Recording:
        return self

    def execute(self, statement: str, binds: Any = None) -> None:
        self.log.append((statement, binds))

    def executemany(self, statement: str, rows: Any) -> None:
        self.log.append((statement, rows))

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.result


def test_oracle_sync_state_sends_valid_sql_with_values_bound() -> None:
    db = Recording()
    state = OracleSyncState(db)
    state.save_sync("s3", [A], ["docs/b.md"], {"status": "ok"})
    db.result = [("docs/a.md", "etag-1", '["group:hr"]', "docs/a.md", "a-1.md", "A", "s3://b/docs/a.md")]
    assert state.sync_items("s3") == {"docs/a.md": A}
    statements = [s for s, _ in db.log]
    assert statements[:2] == list(oracle_sync.DDL)
    for statement in {*oracle_sync.DDL, oracle_sync.MERGE_ITEM_SQL, oracle_sync.SELECT_ITEMS_SQL,
                      oracle_sync.DELETE_ITEM_SQL, oracle_sync.INSERT_RUN_SQL, oracle_sync.SELECT_RUNS_SQL}:
        check(statement)
        assert "etag-1" not in statement and "docs/a.md" not in statement
    for statement, binds in db.log[2:]:
        rows = binds if isinstance(binds, list) else [binds]
        assert set(rows[0]) == set(re.findall(r":(\w+)", statement)), statement
    assert {"RAG_SYNC_ITEMS", "RAG_SYNC_RUNS"} <= CATALOG_TABLES
