"""Oracle binds for long text, driver error messages, and round trips per hot-path call.

Round trips are counted on the recording stand-in: every ``execute``, ``executemany``,
``commit`` and ``rollback`` is one trip to the server in python-oracledb's thin mode
(``setinputsizes`` and ``cursor.var`` are local; a ``fetchall`` of up to ``arraysize``
(100) rows comes back with its ``execute``). The counts are the ones docs/ORACLE.md lists.
"""

from __future__ import annotations

import array
import types
from typing import Any

import numpy as np
import oracledb
import pytest

from backend.common.errors import EmbeddingModelMismatch, StoreError, StoreUnavailable
from backend.core.types import Chunk, DocumentWrite, FieldFilter, QueryVector
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.connection import map_error
from tests.providers.test_oracle_vs import (
    RecordingCursor,
    RecordingDb,
    V1,
    V1_IVF,
    chunk_row,
    doc,
    make_store,
    registry,
    when,
)


# --- C3 / C5: long chunk text is bound as a str, never a CLOB (no temporary LOB per row) -----------
def _write(text: str) -> RecordingDb:
    db = RecordingDb(registry(V1))
    chunk = Chunk("d1#0", "d1", text, "a.txt", 0)
    make_store(db).write_documents("KB_V1", [DocumentWrite("d1", "h", [chunk], np.ones((1, 3), np.float32))])
    return db


def _sizes_before(db: RecordingDb, statement: str) -> dict[str, Any]:
    at = next(i for i, (k, s) in enumerate(db.log) if k == "executemany" and s == statement)
    return [s for k, s in db.log[:at] if k == "inputsizes"][-1]


def _no_lob(db: RecordingDb) -> None:
    """No bind is declared a CLOB (python-oracledb would create and write a temporary LOB for each row
    of the ``executemany``: ``var.pyx``), and no LOB is created by hand either."""
    assert not any(k == "inputsizes" and oracledb.DB_TYPE_CLOB in s.values() for k, s in db.log)
    assert "createlob" not in [k for k, _ in db.log]


@pytest.mark.parametrize("text", [
    "a" * 3_999,
    "é" * 2_000,          # 2,000 characters, 4,000 bytes
    "a" * 4_001,
    "€" * 1_334,          # 1,334 characters but 4,002 bytes
    "漢字" * 6_667,        # 40,002 bytes of 3-byte characters
    "x" * 40_000,
])
def test_text_of_any_length_is_bound_as_a_str_into_the_insert(text: str) -> None:
    db = _write(text)
    sizes = _sizes_before(db, sql.insert_chunk_sql("KB_V1"))
    assert sizes == {"embedding": oracledb.DB_TYPE_VECTOR, "metadata": oracledb.DB_TYPE_JSON}
    rows = db.log[[s for _, s in db.log].index(sql.insert_chunk_sql("KB_V1")) + 1][1]
    assert rows[0]["text"] == text and type(rows[0]["text"]) is str  # the whole text, in the CLOB column slot
    _no_lob(db)


def test_one_5000_byte_chunk_in_a_batch_makes_no_lob_and_splits_insert_from_update() -> None:
    """C5: a batch of new and stored chunks with one 5,000-byte text: an INSERT of the new ids and an
    UPDATE of the stored ones, every text a str, no CLOB bind; the rows written are the same ones."""
    stored = [("d1#0", "old", 0, "text", "a.txt", "x", {}, array.array("f", [0, 0, 0]), "d1")]
    db = RecordingDb([*registry(V1), when("FROM KB_V1 WHERE doc_id IN (:d0,", stored)])
    long = "ü" * 2_500  # 5,000 bytes
    chunks = [Chunk("d1#0", "d1", "short", "a.txt", 0), Chunk("d1#1", "d1", long, "a.txt", 1),
              Chunk("d1#2", "d1", "short too", "a.txt", 2)]
    written = make_store(db).write_documents("KB_V1", [DocumentWrite("d1", "h", chunks, np.ones((3, 3), np.float32))])
    assert written == 3
    many = {s: db.log[i + 1][1] for i, (k, s) in enumerate(db.log) if k == "executemany"}
    assert not any(s.startswith("MERGE INTO KB_V1 ") for s in many)
    inserted, updated = many[sql.insert_chunk_sql("KB_V1")], many[sql.update_chunk_sql("KB_V1")]
    assert [(r["chunk_id"], r["text"]) for r in inserted] == [("d1#1", long), ("d1#2", "short too")]
    assert [(r["chunk_id"], r["text"]) for r in updated] == [("d1#0", "short")]
    assert all(type(r["text"]) is str for r in inserted + updated)
    for statement in (sql.insert_chunk_sql("KB_V1"), sql.update_chunk_sql("KB_V1")):
        assert _sizes_before(db, statement) == {"embedding": oracledb.DB_TYPE_VECTOR,
                                                "metadata": oracledb.DB_TYPE_JSON}
    _no_lob(db)


def test_a_chunk_held_by_another_document_is_updated_after_its_insert_fails() -> None:
    """A chunk id that moved in from a document outside the write is not in the read that splits the
    batch: its INSERT fails with ORA-00001 (batcherrors) and the row is updated instead."""
    db = RecordingDb(registry(V1), batch_errors=[1])
    original = RecordingCursor.getbatcherrors

    def errors(self: RecordingCursor) -> list[Any]:
        if self.db.log[-2] != ("executemany", sql.insert_chunk_sql("KB_V1")):
            return []
        return [types.SimpleNamespace(offset=1, code=1, message="ORA-00001: unique constraint violated")]

    RecordingCursor.getbatcherrors = errors  # type: ignore[method-assign]
    try:
        assert make_store(db).write_documents("KB_V1", [doc("d1", 3)]) == 3
    finally:
        RecordingCursor.getbatcherrors = original  # type: ignore[method-assign]
    updated = db.log[[s for _, s in db.log].index(sql.update_chunk_sql("KB_V1")) + 1][1]
    assert [r["chunk_id"] for r in updated] == ["d1#1"] and ("commit", "") in db.log


def test_long_question_and_summary_text_is_bound_as_a_str() -> None:
    from tests.providers.test_oracle_enrichment import enriched_doc

    d = enriched_doc()
    questions = [type(q)(q.question_id, q.chunk_id, "¿" * 2_600) for q in d.questions]
    db = RecordingDb(registry(V1))
    make_store(db).write_documents("KB_V1", [DocumentWrite(d.doc_id, d.doc_hash, d.chunks, d.vectors, questions,
                                                           d.question_vectors, d.summaries, d.summary_vectors)])
    rows = db.log[[s for _, s in db.log].index(sql.insert_question_sql("KB_V1")) + 1][1]
    assert rows[0]["text"] == "¿" * 2_600
    _no_lob(db)


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
    # the check (registry row with the vector format, protection), stored chunks, stored questions +
    # summaries (one UNION ALL), MERGE, cache MERGE, the guard (UPDATE ... RETURNING, protection), commit
    assert trips(db) == 9
    db = RecordingDb(registry(V1))
    make_store(db).write_documents("KB_V1", [doc(f"d{i}", 2) for i in range(1_200)], allow_served=True)
    # no protection check; stored chunks and stored enrichment of 1,200 documents in 3 statements each
    # (500 per IN list)
    assert trips(db) == 1 + 1 + 3 + 3 + 1 + 1 + 1
    # 200 documents are bound into the 500 bucket (padded with None: one statement text, sql.IN_BUCKETS)
    assert [sum(v is not None for v in b.values()) for k, b in db.log if k == "binds" and "d0" in b] == [500, 500, 200]
    assert [len(b) for k, b in db.log if k == "binds" and "d0" in b] == [500, 500, 500]


def test_search_round_trips() -> None:
    q = QueryVector(np.ones(3, np.float32), "mini-lm")
    db = RecordingDb([*registry(V1, aliases={"KB_ACTIVE": "KB_V1"}), when("VECTOR_DISTANCE", [chunk_row("c1", 0.1)])])
    make_store(db).search("KB_ACTIVE", q, 1)
    assert trips(db) == 2  # alias + version in one statement, then the search
    db = RecordingDb([*registry(V1_IVF), when("SELECT COUNT(*)", [(3,)]),
                      when("VECTOR_DISTANCE", [chunk_row("c1", 0.1), chunk_row("c2", 0.2)])])
    make_store(db, exact_filter_threshold=10).search("KB_V1", q, 2, [FieldFilter("tags", any_of=("hr",))])
    assert trips(db) == 3  # IVF: resolve, count matching, exact search
    db = RecordingDb([*registry(V1), when("SELECT COUNT(*)", [(3,)]),
                      when("VECTOR_DISTANCE", [chunk_row("c1", 0.1), chunk_row("c2", 0.2)])])
    make_store(db, exact_filter_threshold=10).search("KB_V1", q, 2, [FieldFilter("tags", any_of=("hr",))])
    assert trips(db) == 2  # HNSW: resolve, one filtered FETCH APPROX (review §2.8)


def test_widening_approximate_search_round_trips() -> None:
    def candidates(binds: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [chunk_row(f"c{i}", 0.1 * i) for i in range({8: 1, 32: 2}.get(binds.get("depth", 0), 0))]

    db = RecordingDb([*registry(V1_IVF), when("COUNT(*) FROM KB_V1 t WHERE JSON_EXISTS", [(500,)]),
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
