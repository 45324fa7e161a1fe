"""Issue 30, L2, L8 and L10: DDL waits for DML locks, crashed-create debris is rebuilt, and the
errors admins and concurrent readers meet say what to do."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import oracledb
import pytest

from backend.common.config import OracleSettings
from backend.common.errors import StoreError
from backend.core.types import QueryVector, VersionSpec
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs import connection
from backend.providers.oracle_vs.connection import OracleConnector, map_error
from tests.providers.oracle_fake import CatalogDb, catalog_store, ora
from tests.providers.test_oracle_vs import V1, RecordingDb, chunk_row, doc, make_store, registry

V2 = ("KB_V2", *V1[1:])
Q = QueryVector(np.ones(3, np.float32), "mini-lm")


# --- L2: DDL meets DML --------------------------------------------------------------------
class _Session:
    def __init__(self) -> None:
        self.executed: list[str] = []

    def cursor(self) -> "_Session":
        return self

    def execute(self, statement: str) -> None:
        self.executed.append(statement)


class _Pool:
    def acquire(self) -> Any:
        return self

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def ping(self) -> None:
        return None


@pytest.mark.parametrize("configured,seconds", [({}, 30), ({"ddl_lock_timeout_s": 5}, 5),
                                                ({"ddl_lock_timeout_s": 0}, 0)])
def test_every_pooled_session_waits_for_ddl_locks(monkeypatch: pytest.MonkeyPatch, configured: dict[str, Any],
                                                  seconds: int) -> None:
    opened: list[dict[str, Any]] = []

    def create_pool(**params: Any) -> _Pool:
        opened.append(params)
        return _Pool()

    monkeypatch.setattr(oracledb, "create_pool", create_pool)
    settings = OracleSettings(dsn="db.example.com:1521/FREEPDB1", user="rag", password="pw", **configured)
    OracleConnector.from_settings(settings)
    session = _Session()
    opened[0]["session_callback"](session, None)
    assert session.executed == [f"ALTER SESSION SET DDL_LOCK_TIMEOUT = {seconds}"]


def test_the_ddl_lock_timeout_is_bounded_like_oracles() -> None:
    with pytest.raises(ValueError):
        connection.ddl_lock_timeout_sql(1_000_001)
    with pytest.raises(ValueError):
        OracleSettings(ddl_lock_timeout_s=-1)


def test_a_current_catalog_is_not_altered_on_a_process_start() -> None:
    db = CatalogDb()
    catalog_store(db).ensure_catalog()
    assert not [s for s in db.statements() if s.startswith("ALTER")]
    assert sql.CATALOG_COLUMNS_SQL in db.statements()


def test_only_the_missing_catalog_column_is_added() -> None:
    db = CatalogDb()
    db.columns.discard("retrieval")
    catalog_store(db).ensure_catalog()
    assert [s for s in db.statements() if s.startswith("ALTER")] == [
        "ALTER TABLE RAG_VERSIONS ADD (retrieval VARCHAR2(4000))"]
    assert "retrieval" in db.columns


def test_a_catalog_upgrade_blocked_by_an_ingest_says_what_to_do() -> None:
    db = CatalogDb()
    db.columns = set()
    db.fail("ALTER TABLE RAG_VERSIONS ADD (generation",
            ora(54, "resource busy and acquire with NOWAIT specified or timeout expired"))
    with pytest.raises(StoreError, match=r"ORA-00054.*another session holds a lock.*store\.oracle\.ddl_lock_timeout_s"):
        catalog_store(db).ensure_catalog()


# --- L8: debris of a crashed create_version ---------------------------------------------------
def test_debris_without_a_registry_row_is_dropped_and_created_anew() -> None:
    """A crashed create_version left KB_V2 (say VECTOR(384)) and its question table; a 1,024-dimension
    spec must not reuse them (CREATE TABLE IF NOT EXISTS would keep the old VECTOR column)."""
    db = CatalogDb()
    db.tables.update({"KB_V2": 7, "KB_V2_QUESTIONS": 3})
    version = catalog_store(db).create_version(VersionSpec("kb_v2", "big-model", 1024, "cosine"))
    executed = db.statements()
    drops = [executed.index(f"DROP TABLE IF EXISTS {t} PURGE") for t in ("KB_V2_QUESTIONS", "KB_V2_SUMMARIES",
                                                                          "KB_V2")]
    created = next(i for i, s in enumerate(executed) if s.startswith("CREATE TABLE IF NOT EXISTS KB_V2 ("))
    assert max(drops) < created
    assert "VECTOR(1024, FLOAT32)" in executed[created]
    assert (version.dimension, version.chunk_count) == (1024, 0)
    assert db.versions["KB_V2"][2] == 1024


def test_a_new_name_without_debris_drops_nothing() -> None:
    db = CatalogDb()
    catalog_store(db).create_version(VersionSpec("kb_v2", "mini-lm", 3, "cosine"))
    assert not [s for s in db.statements() if s.startswith("DROP")]


def test_a_registered_version_is_never_taken_for_debris() -> None:
    db = CatalogDb()
    db.add_version("KB_V1", rows=4)
    catalog_store(db).create_version(VersionSpec("kb_v1", "mini-lm", 3, "cosine"))
    assert not [s for s in db.statements() if s.startswith("DROP")]
    assert db.tables["KB_V1"] == 4


# --- L10: hints ---------------------------------------------------------------------------------
@pytest.mark.parametrize("code,hint", [
    (29861, r"served version .*`rag ingest --in-place` and the same manifest"),
    (1031, r"CREATE SESSION, CREATE TABLE, CREATE VIEW, CREATE SEQUENCE.*CTXAPP.*DB_DEVELOPER_ROLE.*QUOTA"),
    (1950, r"no quota on its tablespace.*ALTER USER <user> QUOTA UNLIMITED ON <tablespace>"),
    (54, r"another session holds a lock.*ddl_lock_timeout_s"),
    (942, r"dropped \(`rag index gc`\) after the alias was resolved: run it again"),
    (8103, r"dropped.*`rag index gc`.*run it again, which resolves the alias anew"),
    (51815, r"HNSW vector index's snapshot is too old.*run it again"),
    (12899, r"chunk_id.*at most 1,000 bytes"),
])
def test_each_error_names_what_to_do(code: int, hint: str) -> None:
    error = map_error(ora(code, "the server's text"), "db.test:1521", "searching KB_ACTIVE")
    assert error.user_message.startswith(f"Oracle store at db.test:1521: searching KB_ACTIVE failed: ORA-{code:05d}")
    assert re.search(hint, error.user_message), error.user_message


def test_a_search_meeting_a_snapshot_too_old_says_retry() -> None:
    def busy(statement: str, binds: dict[str, Any]) -> None:
        if "VECTOR_DISTANCE" in statement:
            raise ora(51815, "HNSW vector index snapshot is too old")

    db = RecordingDb([*registry(V1, aliases={"KB_ACTIVE": "KB_V1"}), busy])
    with pytest.raises(StoreError, match=r"ORA-51815.*snapshot is too old.*run it again"):
        make_store(db).search("KB_ACTIVE", Q, 1)


def test_a_value_too_large_in_a_batch_names_the_chunk_id_limit() -> None:
    db = RecordingDb(registry(V1), batch_errors=[0])
    with pytest.raises(StoreError, match=r"ORA-12899.*chunk_id.*at most 1,000 bytes"):
        make_store(db).write_documents("KB_V1", [doc("d1", 2)])


# --- L10: a reader meets a version gc dropped after resolving the alias -------------------------
def _gc_between_resolve_and_read(fragment: str, rows: list[tuple[Any, ...]]) -> tuple[RecordingDb, list[str]]:
    """KB_ACTIVE served KB_V1 when resolved; the rotation to KB_V2 and gc's drop of KB_V1 happen before
    the read, which meets ORA-00942."""
    aliases = {"KB_ACTIVE": "KB_V1"}
    read: list[str] = []

    def versions(statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]] | None:
        if fragment not in statement:
            return None
        table = "KB_V1" if " KB_V1 " in f"{statement} " else "KB_V2"
        read.append(table)
        if table == "KB_V1":
            aliases["KB_ACTIVE"] = "KB_V2"
            raise ora(942, "table or view does not exist")
        return rows

    return RecordingDb([*registry(V1, V2, aliases=aliases), versions]), read


def test_a_search_retries_once_on_the_version_the_alias_serves_now() -> None:
    db, read = _gc_between_resolve_and_read("VECTOR_DISTANCE", [chunk_row("c1", 0.1)])
    result = make_store(db).search("KB_ACTIVE", Q, 1)
    assert (result.version, [h.chunk.chunk_id for h in result.hits], read) == ("KB_V2", ["c1"], ["KB_V1", "KB_V2"])
    assert db.statements().count(sql.RESOLVE_TARGET_SQL) == 2


def test_a_lexical_search_retries_once_too() -> None:
    db, read = _gc_between_resolve_and_read("CONTAINS(", [("c1", 2.5)])
    result = make_store(db).lexical_candidates("KB_ACTIVE", "vacation days", 1)
    assert (result.version, read) == ("KB_V2", ["KB_V1", "KB_V2"])


def test_a_version_that_stays_gone_fails_with_the_hint_after_one_retry() -> None:
    def gone(statement: str, binds: dict[str, Any]) -> None:
        if "VECTOR_DISTANCE" in statement:
            raise ora(942, "table or view does not exist")

    db = RecordingDb([*registry(V1), gone])
    with pytest.raises(StoreError, match=r"ORA-00942.*resolves the alias anew"):
        make_store(db).search("KB_V1", Q, 1)
    assert db.statements().count(sql.RESOLVE_TARGET_SQL) == 2


def test_other_errors_are_not_retried() -> None:
    def broken(statement: str, binds: dict[str, Any]) -> None:
        if "VECTOR_DISTANCE" in statement:
            raise ora(904, "invalid identifier")

    db = RecordingDb([*registry(V1), broken])
    with pytest.raises(StoreError, match="ORA-00904"):
        make_store(db).search("KB_V1", Q, 1)
    assert db.statements().count(sql.RESOLVE_TARGET_SQL) == 1
