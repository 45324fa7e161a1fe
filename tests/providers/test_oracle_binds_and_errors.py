"""Oracle binds for long text, driver error messages, and round trips per hot-path call.

Round trips are counted on the recording stand-in: every ``execute``, ``executemany``,
``commit`` and ``rollback`` is one trip to the server in python-oracledb's thin mode
(``setinputsizes`` and ``cursor.var`` are local; a ``fetchall`` of up to ``arraysize``
(100) rows comes back with its ``execute``). The counts are the ones docs/ORACLE.md lists.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import oracledb
import pytest

from backend.common.errors import EmbeddingModelMismatch, StoreError, StoreUnavailable
from backend.core.types import Chunk, DocumentWrite, FieldFilter, QueryVector
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.connection import map_error
from tests.providers.test_oracle_vs import RecordingDb, V1, chunk_row, doc, make_store, registry, when


# --- C3: long chunk text is bound as a CLOB -------------------------------------------------
def _write(text: str) -> RecordingDb:
    db = RecordingDb(registry(V1))
    chunk = Chunk("d1#0", "d1", text, "a.txt", 0)
    make_store(db).write_documents("KB_V1", [DocumentWrite("d1", "h", [chunk], np.ones((1, 3), np.float32))])
    return db


def _merge_sizes(db: RecordingDb) -> dict[str, Any]:
    at = next(i for i, (k, s) in enumerate(db.log) if k == "executemany" and s == sql.merge_chunk_sql("KB_V1"))
    return [s for k, s in db.log[:at] if k == "inputsizes"][-1]


@pytest.mark.parametrize("text,clob", [
    ("a" * 3_999, False),
    ("é" * 2_000, False),          # 2,000 characters, 4,000 bytes: still a VARCHAR2 bind
    ("a" * 4_001, True),
    ("€" * 1_334, True),            # 1,334 characters but 4,002 bytes: what counts is bytes
    ("漢字" * 6_667, True),          # 40,002 bytes of 3-byte characters
    ("x" * 40_000, True),
])
def test_text_over_4000_bytes_is_declared_a_clob_in_the_merge(text: str, clob: bool) -> None:
    db = _write(text)
    sizes = _merge_sizes(db)
    assert (sizes.get("u_text"), sizes.get("i_text")) == ((oracledb.DB_TYPE_CLOB,) * 2 if clob else (None, None))
    assert sizes["u_embedding"] is oracledb.DB_TYPE_VECTOR and sizes["i_metadata"] is oracledb.DB_TYPE_JSON
    rows = db.log[[s for _, s in db.log].index(sql.merge_chunk_sql("KB_V1")) + 1][1]
    assert rows[0]["u_text"] == rows[0]["i_text"] == text  # the whole text, in the CLOB column slots


def test_one_long_row_declares_clob_for_the_whole_batch() -> None:
    db = RecordingDb(registry(V1))
    chunks = [Chunk("d1#0", "d1", "short", "a.txt", 0), Chunk("d1#1", "d1", "ü" * 2_001, "a.txt", 1)]
    make_store(db).write_documents("KB_V1", [DocumentWrite("d1", "h", chunks, np.ones((2, 3), np.float32))])
    assert _merge_sizes(db)["u_text"] is oracledb.DB_TYPE_CLOB


# --- C4: every expected driver error says what to do ------------------------------------------
def _driver_error(cls: type, full_code: str, message: str) -> BaseException:
    code = int(full_code.split("-")[1]) if full_code.startswith("ORA") else 0
    return cls(types.SimpleNamespace(full_code=full_code, code=code, message=f"{full_code}: {message}"))


@pytest.mark.parametrize("full_code,message,kind,advice", [
    ("ORA-00942", "table or view does not exist", StoreError, "`rag index list` shows the versions"),
    ("ORA-00955", "name is already used by an existing object", StoreError, "choose another index_name"),
    ("ORA-01017", "invalid credential or not authorized; logon denied", StoreUnavailable,
     "check RAG_STORE__ORACLE__USER and RAG_STORE__ORACLE__PASSWORD"),
    ("ORA-12514", "Cannot connect to database. Service FREEPDB9 is not registered with the listener",
     StoreUnavailable, "check the service name after the '/'"),
    ("ORA-12541", "Cannot connect. No listener at host 10.0.0.9 port 1521", StoreUnavailable,
     "check store.oracle.dsn and that the database listener is running"),
    ("ORA-28000", "The account is locked", StoreUnavailable, "ALTER USER <user> ACCOUNT UNLOCK"),
    ("ORA-51803", "Vector dimension count must match the dimension count specified in the column definition "
                  "(expected 384 dimensions, specified 1024 dimensions)", EmbeddingModelMismatch,
     "embed with the version's model"),
    ("ORA-51928", "DML on RAG.KB_V1 with INMEMORY NEIGHBOR GRAPH vector index RAG.KB_V1_VIDX is not currently "
                  "allowed", StoreError, "ingest into a new version (its vector index is built after the load)"),
    ("DPY-4011", "the database or network closed the connection", StoreUnavailable,
     "Native Network Encryption, which thin mode does not support"),
    ("DPY-6005", "cannot connect to database (CONNECTION_ID=x).\n[Errno 111] Connection refused", StoreUnavailable,
     "check the host and port in store.oracle.dsn"),
])
def test_expected_driver_errors_map_to_a_rag_error_saying_what_to_do(full_code: str, message: str, kind: type,
                                                                     advice: str) -> None:
    cls = oracledb.OperationalError if full_code.startswith("DPY") else oracledb.DatabaseError
    mapped = map_error(_driver_error(cls, full_code, message), "db.test:1521", "writing to KB_V1")
    assert type(mapped) is kind
    assert mapped.user_message.startswith("Oracle store at db.test:1521")
    assert full_code in mapped.user_message and advice in mapped.user_message
    assert "\n" not in mapped.user_message and "Traceback" not in mapped.user_message
    assert mapped.context["code"] == full_code


def test_a_driver_error_inside_a_write_reaches_the_caller_as_a_rag_error() -> None:
    class Refusing(RecordingDb):
        def answer(self, statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]]:
            if statement.startswith("SELECT chunk_id"):
                raise _driver_error(oracledb.DatabaseError, "ORA-51928", "DML on RAG.KB_V1 ... not allowed")
            return super().answer(statement, binds)

    db = Refusing(registry(V1))
    with pytest.raises(StoreError, match="ORA-51928.*ingest into a new version") as info:
        make_store(db).write_documents("KB_V1", [doc("d1", 1)])
    assert info.value.__cause__ is not None and ("rollback", "") in db.log


# --- C5: round trips per call --------------------------------------------------------------
def trips(db: RecordingDb) -> int:
    return sum(k in ("execute", "executemany", "commit", "rollback") for k, _ in db.log)


def test_write_documents_round_trips() -> None:
    db = RecordingDb(registry(V1))
    make_store(db).write_documents("KB_V1", [doc("d1", 2)])
    # guard UPDATE ... RETURNING, protection check, stored chunks, stored questions + summaries (one
    # UNION ALL), MERGE, cache MERGE, commit
    assert trips(db) == 7
    db = RecordingDb(registry(V1))
    make_store(db).write_documents("KB_V1", [doc(f"d{i}", 2) for i in range(1_200)], allow_served=True)
    # no protection check; stored chunks and stored enrichment of 1,200 documents in 3 statements each
    # (500 per IN list)
    assert trips(db) == 1 + 3 + 3 + 1 + 1 + 1
    # 200 documents are bound into the 500 bucket (padded with None: one statement text, sql.IN_BUCKETS)
    assert [sum(v is not None for v in b.values()) for k, b in db.log if k == "binds" and "d0" in b] == [500, 500, 200]
    assert [len(b) for k, b in db.log if k == "binds" and "d0" in b] == [500, 500, 500]


def test_search_round_trips() -> None:
    q = QueryVector(np.ones(3, np.float32), "mini-lm")
    db = RecordingDb([*registry(V1, aliases={"KB_ACTIVE": "KB_V1"}), when("VECTOR_DISTANCE", [chunk_row("c1", 0.1)])])
    make_store(db).search("KB_ACTIVE", q, 1)
    assert trips(db) == 2  # alias + version in one statement, then the search
    db = RecordingDb([*registry(V1), when("SELECT COUNT(*)", [(3,)]),
                      when("VECTOR_DISTANCE", [chunk_row("c1", 0.1), chunk_row("c2", 0.2)])])
    make_store(db, exact_filter_threshold=10).search("KB_V1", q, 2, [FieldFilter("tags", any_of=("hr",))])
    assert trips(db) == 3  # resolve, count matching, exact search


def test_widening_approximate_search_round_trips() -> None:
    def candidates(binds: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [chunk_row(f"c{i}", 0.1 * i) for i in range({8: 1, 32: 2}.get(binds.get("depth", 0), 0))]

    db = RecordingDb([*registry(V1), when("COUNT(*) FROM KB_V1 t WHERE JSON_EXISTS", [(500,)]),
                      when("COUNT(*) FROM KB_V1 t WHERE 1=1", [(10_000,)]), when(":depth", candidates)])
    store = make_store(db, exact_filter_threshold=100, candidate_factor=4)
    store.search("KB_V1", QueryVector(np.ones(3, np.float32), "mini-lm"), 2, [FieldFilter("tags", any_of=("hr",))])
    assert trips(db) == 5  # resolve, count matching, depth 8, count total (only once short), depth 32


def test_alias_resolve_is_one_round_trip() -> None:
    db = RecordingDb(registry(V1, aliases={"KB_ACTIVE": "KB_V1"}))
    assert make_store(db).resolve_alias("kb_active") == "KB_V1"
    assert trips(db) == 1


def test_a_row_refused_in_a_batch_gets_the_same_advice(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.providers.test_oracle_vs import RecordingCursor

    def errors(self: RecordingCursor) -> list[Any]:
        return [types.SimpleNamespace(offset=0, code=51928, message="ORA-51928: DML on RAG.KB_V1 with INMEMORY "
                                      "NEIGHBOR GRAPH vector index RAG.KB_V1_VIDX is not currently allowed.")]

    monkeypatch.setattr(RecordingCursor, "getbatcherrors", errors)
    with pytest.raises(StoreError, match=r"d1#0: ORA-51928: .* \(this Oracle Database release refuses DML on a "
                                         r"table with an HNSW index: ingest into a new version"):
        make_store(RecordingDb(registry(V1))).write_documents("KB_V1", [doc("d1", 1)])
