"""Fusion's cheap path on Oracle: candidates as ``(chunk_id, score)`` and reads by id.

No Oracle server runs here (the live contract in ``tests/contracts/vector_store.py::CandidateTest``
runs these methods against Oracle when a DSN is set), so this records what the adapter sends
through the recording stand-in: that the candidate statements select ``chunk_id`` and the score
only, that every value travels as a bind (each ``:name`` in the statement has a bind and every bind
is used, as python-oracledb demands), that access control sits in the same WHERE, and that rows
map to the port's scores. Each statement also goes through the Oracle SQL parse check.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from backend.core.types import FieldFilter, QueryVector, Visibility
from backend.providers.oracle_vs import sql
from tests.providers.test_oracle_sql_parse import check
from tests.providers.test_oracle_vs import V1, V1_IVF, RecordingDb, chunk_row, make_store, registry, when

Q = QueryVector(np.ones(3, np.float32), "mini-lm")
ALICE = Visibility.of("alice", ("hr",))
_BIND = re.compile(r"(?<![\w:$]):([A-Za-z]\w*)")


def executed(db: RecordingDb, fragment: str) -> list[tuple[str, dict[str, Any]]]:
    """``(statement, binds)`` of every execute whose statement contains ``fragment``."""
    out = []
    for i, (kind, statement) in enumerate(db.log):
        if kind == "execute" and fragment in statement:
            out.append((statement, db.log[i + 1][1]))
    return out


def assert_bound(statement: str, binds: dict[str, Any], *values: str) -> None:
    """Every placeholder bound, every bind used, no value spelled into the SQL text."""
    assert set(_BIND.findall(statement)) == set(binds), statement
    for value in values:
        assert value not in statement, f"{value!r} written into the SQL instead of bound"
    check(statement)


@pytest.mark.parametrize("filters", [(), (FieldFilter("tags", any_of=("hr",)),)])
@pytest.mark.parametrize("index", ["hnsw", "ivf", "none"])
def test_dense_candidates_select_ids_and_distances_only(filters: tuple[FieldFilter, ...], index: str) -> None:
    version = (*V1[:4], index, *V1[5:])
    db = RecordingDb([*registry(version), when("SELECT COUNT(*)", [(3,)]),
                      when("t.chunk_id, VECTOR_DISTANCE", [("c1", 0.25), ("c2", 0.5)])])
    found = make_store(db, exact_filter_threshold=10).dense_candidates(
        "KB_V1", Q, 2, filters, visibility=ALICE)
    assert found.version == "KB_V1" and found.distance == "cosine"
    assert found.hits == (("c1", 0.75), ("c2", 0.5))  # cosine similarity = 1 - distance
    [(statement, binds)] = executed(db, "VECTOR_DISTANCE")
    # HNSW: the native filtered search, one hinted FETCH APPROX; IVF: counted, then exact (selective);
    # none: exact, no count
    hint = "/*+ VECTOR_INDEX_TRANSFORM(t KB_V1_VIDX) */ " if index == "hnsw" else ""
    assert statement.startswith(f"SELECT {hint}t.chunk_id, VECTOR_DISTANCE(t.embedding, :q, COSINE) AS dist FROM KB_V1 t")
    assert ("FETCH APPROX" in statement) == (index == "hnsw")
    assert (executed(db, "SELECT COUNT(*)") != []) == (index == "ivf")
    assert "JSON_SERIALIZE" not in statement and "t.text" not in statement
    assert "JSON_EXISTS(t.metadata, '$.rag_acl" in statement  # access control inside the same query
    assert binds["k"] == 2 and "user:alice" in binds.values()
    assert_bound(statement, binds, "user:alice", "group:hr")


def test_dense_candidates_keep_the_widening_plan_of_search_on_ivf() -> None:
    def candidates(binds: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(f"c{i}", 0.1 * i) for i in range({8: 1, 32: 2}.get(binds.get("depth", 0), 0))]

    db = RecordingDb([*registry(V1_IVF), when("COUNT(*) FROM KB_V1 t WHERE JSON_EXISTS", [(500,)]),
                      when("COUNT(*) FROM KB_V1 t WHERE 1=1", [(10_000,)]), when(":depth", candidates)])
    found = make_store(db, exact_filter_threshold=100, candidate_factor=4).dense_candidates(
        "KB_V1", Q, 2, [FieldFilter("tags", any_of=("hr",))])
    assert [c for c, _ in found.hits] == ["c0", "c1"]
    statements = executed(db, ":depth")
    assert [b["depth"] for _, b in statements] == [8, 32]
    for statement, binds in statements:
        assert statement.startswith("SELECT t.chunk_id, t.dist FROM (")
        assert_bound(statement, binds, "hr")


def test_lexical_candidates_select_ids_and_scores_only() -> None:
    db = RecordingDb([*registry(V1), when("SCORE(1)", [("c2", 7.0), ("c1", 3.5)])])
    found = make_store(db).lexical_candidates("KB_V1", "vacation days", 10, [FieldFilter("dept", any_of=("hr",))],
                                              visibility=ALICE)
    assert found.hits == (("c2", 7.0), ("c1", 3.5))
    [(statement, binds)] = executed(db, "SCORE(1)")
    assert statement.startswith("SELECT /*+ FIRST_ROWS(32) */ t.chunk_id, SCORE(1) AS score FROM KB_V1 t "
                                "WHERE CONTAINS(t.text, :query, 1)")
    assert binds["query"] == "{vacation} ACCUM {days}" and binds["n"] == 32
    assert_bound(statement, binds, "vacation", "user:alice")


@pytest.mark.parametrize("visibility", [None, ALICE])
def test_reads_by_id_bind_every_id_and_apply_access_control(visibility: Visibility | None) -> None:
    ids = [f"doc#{i}" for i in range(sql.IDS_PER_READ + 3)]
    db = RecordingDb([*registry(V1), when("SELECT t.chunk_id, VECTOR_DISTANCE", [("doc#0", 0.2)]),
                      when("SELECT t.chunk_id, t.text", [("doc#0", "body")]),
                      when("WHERE t.chunk_id IN", [chunk_row("doc#0", 0.0)[:8]])])
    store = make_store(db)
    assert store.similarities("KB_V1", Q, ids, visibility=visibility) == {"doc#0": pytest.approx(0.8)}
    assert store.chunk_texts("KB_V1", ids, visibility=visibility) == {"doc#0": "body"}
    assert store.fetch_chunks("KB_V1", ids, visibility=visibility)["doc#0"].metadata == {"tags": ["hr"]}
    statements = executed(db, "WHERE t.chunk_id IN")
    assert len(statements) == 6  # three reads, 500 ids a statement
    for statement, binds in statements:
        ids_bound = [v for name, v in binds.items() if re.fullmatch(r"c\d+", name) and v is not None]
        assert len(ids_bound) in (sql.IDS_PER_READ, 3)
        assert ("JSON_EXISTS(t.metadata, '$.rag_acl" in statement) == (visibility is not None)
        assert_bound(statement, binds, "doc#1", "user:alice")
    assert {s.split(" FROM ")[0] for s, _ in statements} == {
        "SELECT t.chunk_id, VECTOR_DISTANCE(t.embedding, :q, COSINE) AS dist", "SELECT t.chunk_id, t.text",
        f"SELECT {sql.chunk_select('t')}"}


def test_a_by_id_read_refuses_a_count_or_column_set_it_cannot_build() -> None:
    with pytest.raises(ValueError, match="1..500"):
        sql.chunks_by_id_sql("KB_V1", sql.IDS_PER_READ + 1, "1=1")
    with pytest.raises(ValueError, match="columns must be one of"):
        sql.chunks_by_id_sql("KB_V1", 1, "1=1", "embedding")


def test_round_trips_of_the_candidate_path() -> None:
    from tests.providers.test_oracle_binds_and_errors import trips

    db = RecordingDb([*registry(V1, aliases={"KB_ACTIVE": "KB_V1"}),
                      when("SELECT t.chunk_id, VECTOR_DISTANCE", [("c1", 0.1)]), when("SCORE(1)", [("c1", 2.0)])])
    store = make_store(db)
    store.dense_candidates("KB_ACTIVE", Q, 1)
    assert trips(db) == 2  # alias + version in one statement, then the search: as `search`
    store.lexical_candidates("KB_V1", "vacation", 200)
    assert trips(db) == 4
    for read in (store.fetch_chunks, store.chunk_texts):
        read("KB_V1", ["c1", "c2", "c3"])  # type: ignore[operator]
    store.similarities("KB_V1", Q, ["c1", "c2", "c3"])
    assert trips(db) == 4 + 3 * 2  # resolve + one statement for up to 500 ids, each
