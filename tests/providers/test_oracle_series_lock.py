"""The series writer lock on Oracle, against the stateful stand-in (``oracle_fake.CatalogDb``).

The shared ``SeriesLockTest`` runs unchanged (refuse, wait, timeout, independent series);
below it, what only Oracle does: the lock is a row lock of a session the run keeps, the
holder is committed beside it, a killed session frees the series, and every value is bound.
"""

from __future__ import annotations

from typing import Any

import pytest

from backend.common.errors import ConfigError, InvalidIdentifier, SeriesLocked
from backend.core.types import LockHolder
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.series_lock import lock_sql
from tests.contracts.vector_store import SeriesLockTest
from tests.providers.oracle_fake import CatalogDb, catalog_store

HOLDER = LockHolder("rag ingest", 4242, "host-a", "2025-06-01T10:00:00+00:00")


class TestOracleSeriesLock(SeriesLockTest):
    @pytest.fixture
    def store(self) -> Any:
        return catalog_store(CatalogDb())


def test_lock_statement_is_nowait_or_a_whole_number_of_seconds() -> None:
    assert lock_sql(0) == "SELECT series FROM RAG_SERIES_LOCKS WHERE series = :series FOR UPDATE NOWAIT"
    assert lock_sql(0.5).endswith("FOR UPDATE WAIT 1")
    assert lock_sql(1800).endswith("FOR UPDATE WAIT 1800")
    assert lock_sql(10**9).endswith("FOR UPDATE WAIT 86400")


def test_the_row_is_locked_by_a_session_kept_for_the_run_and_the_holder_is_committed_beside_it() -> None:
    db = CatalogDb()
    store = catalog_store(db)
    lease = store.lock_series("kb_handbook", HOLDER)
    assert lease.series == "KB_HANDBOOK"
    session = db.row_locks["KB_HANDBOOK"]
    assert LockHolder.from_json(db.holders["KB_HANDBOOK"]) == HOLDER
    binds = [b for kind, b in db.log if kind == "binds"]
    assert all(b.get("series") in (None, "KB_HANDBOOK") for b in binds)  # bound, never spliced
    assert not any("KB_HANDBOOK" in s for s in db.statements())
    lease.release()
    assert "KB_HANDBOOK" not in db.row_locks and "KB_HANDBOOK" not in db.holders
    assert session not in db.row_locks.values()


def test_a_killed_holder_session_frees_the_series_for_the_next_run() -> None:
    db = CatalogDb()
    store = catalog_store(db)
    crashed = store.lock_series("KB_HANDBOOK", HOLDER)
    with pytest.raises(SeriesLocked, match=r"rag ingest \(pid 4242 on host-a"):
        store.lock_series("KB_HANDBOOK", HOLDER)
    db.kill(db.row_locks["KB_HANDBOOK"])  # the client died: the server releases its row locks
    nxt = store.lock_series("KB_HANDBOOK", LockHolder("rag ingest", 7, "host-b", "2025-06-01T11:00:00+00:00"))
    assert LockHolder.from_json(db.holders["KB_HANDBOOK"]).pid == 7  # type: ignore[union-attr]
    nxt.release()
    crashed.release()  # the dead run's late release changes nothing for anyone


def test_series_names_are_validated_before_any_statement() -> None:
    db = CatalogDb()
    with pytest.raises(InvalidIdentifier):
        catalog_store(db).lock_series("KB; DROP TABLE X", HOLDER)
    assert db.statements() == []


def test_the_lock_tables_are_catalog_tables() -> None:
    assert {"RAG_SERIES_LOCKS", "RAG_SERIES_LOCK_HOLDERS"} <= sql.CATALOG_TABLES
    with pytest.raises(InvalidIdentifier):
        sql.oracle_name("rag_series_locks")


def test_a_pool_of_one_connection_is_refused_before_anything_is_locked() -> None:
    db = CatalogDb()
    with pytest.raises(ConfigError, match="store.oracle.pool_max must be at least 3"):
        catalog_store(db, pool_max=1).lock_series("KB", HOLDER)
    with pytest.raises(ConfigError, match="store.oracle.pool_max must be at least 3"):
        catalog_store(db, pool_max=2).lock_series("KB", HOLDER)  # lock + admin lock + work (L3)
    assert db.statements() == []
