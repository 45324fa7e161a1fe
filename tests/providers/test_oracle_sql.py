"""Statements the Oracle store generates, one distance and index type at a time.

No Oracle server can run here, so the text of each statement is checked
against the 23ai syntax it must follow (see docs/ORACLE.md for the sources).
"""

from __future__ import annotations

import re

import pytest

from backend.common.config import OracleVectorIndexSettings
from backend.common.errors import InvalidIdentifier
from backend.core.types import FieldFilter
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.connection import dsn_endpoint

DISTANCES = [("cosine", "COSINE"), ("dot", "DOT"), ("euclidean", "EUCLIDEAN")]


@pytest.mark.parametrize("distance,metric", DISTANCES)
def test_hnsw_index_names_graph_metric_accuracy_and_parameters(distance: str, metric: str) -> None:
    settings = OracleVectorIndexSettings(type="hnsw", target_accuracy=90, neighbors=40, efconstruction=500)
    assert sql.vector_index_ddl("KB_V1", distance, settings) == (
        "CREATE VECTOR INDEX KB_V1_VIDX ON KB_V1 (embedding) ORGANIZATION INMEMORY NEIGHBOR GRAPH "
        f"DISTANCE {metric} WITH TARGET ACCURACY 90 PARAMETERS (TYPE HNSW, NEIGHBORS 40, EFCONSTRUCTION 500)"
    )


@pytest.mark.parametrize("distance,metric", DISTANCES)
def test_ivf_index_uses_neighbor_partitions(distance: str, metric: str) -> None:
    settings = OracleVectorIndexSettings(type="ivf", target_accuracy=95, neighbor_partitions=64)
    assert sql.vector_index_ddl("KB_V1", distance, settings) == (
        "CREATE VECTOR INDEX KB_V1_VIDX ON KB_V1 (embedding) ORGANIZATION NEIGHBOR PARTITIONS "
        f"DISTANCE {metric} WITH TARGET ACCURACY 95 PARAMETERS (TYPE IVF, NEIGHBOR PARTITIONS 64)"
    )


def test_index_type_none_creates_no_vector_index() -> None:
    assert sql.vector_index_ddl("KB_V1", "cosine", OracleVectorIndexSettings(type="none")) is None


def test_version_table_has_float32_vector_json_metadata_and_chunk_id_key() -> None:
    ddl = sql.version_table_ddl("KB_V1", 384)
    assert ddl.startswith("CREATE TABLE IF NOT EXISTS KB_V1 (")
    assert "chunk_id      VARCHAR2(1000) PRIMARY KEY" in ddl
    assert "embedding     VECTOR(384, FLOAT32) NOT NULL" in ddl
    assert "metadata      JSON NOT NULL" in ddl
    assert "text          CLOB NOT NULL" in ddl
    for column in ("doc_id", "doc_hash", "chunk_index", "chunk_type", "source", "content_hash"):
        assert f"\n    {column} " in ddl


def test_version_table_rejects_a_dimension_outside_oracle_limits() -> None:
    with pytest.raises(ValueError, match="1..65535, got 0"):
        sql.version_table_ddl("KB_V1", 0)


def test_text_index_is_oracle_text_synced_on_commit() -> None:
    assert sql.text_index_ddl("KB_V1") == (
        "CREATE INDEX KB_V1_TIDX ON KB_V1 (text) INDEXTYPE IS CTXSYS.CONTEXT "
        "PARAMETERS ('SYNC (ON COMMIT) STOPLIST CTXSYS.EMPTY_STOPLIST')"
    )


def test_catalog_creates_registry_alias_history_interactions_and_cache_idempotently() -> None:
    names = [ddl.split("(")[0].split()[-1] for ddl in sql.CATALOG_DDL]
    assert names == ["RAG_VERSIONS", "RAG_ALIASES", "RAG_ALIAS_HISTORY", "CHAT_INTERACTIONS", "RAG_EMBEDDING_CACHE"]
    assert all(ddl.startswith("CREATE TABLE IF NOT EXISTS ") for ddl in sql.CATALOG_DDL)
    assert "resp_mode         VARCHAR2(16) NOT NULL" in sql.CATALOG_DDL[3]
    assert "vector     VECTOR(*, FLOAT32) NOT NULL" in sql.CATALOG_DDL[4]


def test_alias_view_is_one_create_or_replace_statement() -> None:
    assert sql.alias_view_ddl("KB_ACTIVE", "KB_V2") == (
        "CREATE OR REPLACE VIEW KB_ACTIVE AS SELECT chunk_id, doc_id, chunk_index, chunk_type, source, text, "
        "content_hash, metadata, doc_hash, embedding FROM KB_V2"
    )


def test_merge_binds_each_value_once_and_upserts_by_chunk_id() -> None:
    merge = sql.merge_chunk_sql("KB_V1")
    assert merge.startswith("MERGE INTO KB_V1 t USING (SELECT :chunk_id AS chunk_id, :doc_id AS doc_id, ")
    assert "JSON(:metadata) AS metadata" in merge
    assert "ON (t.chunk_id = s.chunk_id)" in merge
    assert "WHEN MATCHED THEN UPDATE SET t.doc_id = s.doc_id," in merge
    assert "t.chunk_id = s.chunk_id," not in merge.split("UPDATE SET")[1]
    assert merge.endswith(
        "VALUES (s.chunk_id, s.doc_id, s.doc_hash, s.chunk_index, s.chunk_type, s.source, s.text, s.content_hash, "
        "s.metadata, s.embedding)")
    for name in sql.MERGE_BINDS:
        assert len(re.findall(rf":{name}\b", merge)) == 1


@pytest.mark.parametrize("distance,metric", DISTANCES)
def test_approximate_search_names_the_metric_and_target_accuracy(distance: str, metric: str) -> None:
    statement = sql.dense_search_sql("KB_V1", distance, "1=1", approx=True, target_accuracy=95)
    assert f"VECTOR_DISTANCE(t.embedding, :q, {metric}) AS dist" in statement
    assert statement.endswith("WHERE 1=1 ORDER BY dist FETCH APPROX FIRST :k ROWS ONLY WITH TARGET ACCURACY 95")


@pytest.mark.parametrize("distance,metric", DISTANCES)
def test_exact_search_has_no_approx_and_breaks_ties_by_chunk_id(distance: str, metric: str) -> None:
    statement = sql.dense_search_sql("KB_V1", distance, "t.doc_id IN (:f0)", approx=False)
    assert "APPROX" not in statement
    assert f"VECTOR_DISTANCE(t.embedding, :q, {metric})" in statement
    assert statement.endswith("WHERE t.doc_id IN (:f0) ORDER BY dist, t.chunk_id FETCH FIRST :k ROWS ONLY")


def test_candidate_search_filters_after_an_approximate_inner_top_depth() -> None:
    statement = sql.candidate_search_sql("KB_V1", "dot", "t.chunk_type IN (:f0)", 90)
    inner = "ORDER BY dist FETCH APPROX FIRST :depth ROWS ONLY WITH TARGET ACCURACY 90) t"
    assert "VECTOR_DISTANCE(embedding, :q, DOT) AS dist FROM KB_V1 " in statement
    assert inner in statement
    assert statement.endswith("WHERE t.chunk_type IN (:f0) ORDER BY t.dist, t.chunk_id FETCH FIRST :k ROWS ONLY")


def test_unknown_distance_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported distance 'manhattan'"):
        sql.dense_search_sql("KB_V1", "manhattan", "1=1", approx=True)  # type: ignore[arg-type]


def test_metadata_any_of_becomes_json_exists_with_passing_binds() -> None:
    where, binds = sql.filter_clause([FieldFilter("tags", any_of=("hr", "it"))])
    assert where == ("JSON_EXISTS(t.metadata, '$.tags?(@ == $f0 || @ == $f1)' "
                     "PASSING :f0 AS \"f0\", :f1 AS \"f1\")")
    assert binds == {"f0": "hr", "f1": "it"}


def test_all_of_needs_one_json_exists_per_value_and_dates_compare_json_value() -> None:
    where, binds = sql.filter_clause([
        FieldFilter("tags", all_of=("hr", "policy")),
        FieldFilter("updated_at", gte="2024-01-01", lte="2024-12-31"),
    ])
    assert where == (
        "JSON_EXISTS(t.metadata, '$.tags?(@ == $f0)' PASSING :f0 AS \"f0\") AND "
        "JSON_EXISTS(t.metadata, '$.tags?(@ == $f1)' PASSING :f1 AS \"f1\") AND "
        "JSON_VALUE(t.metadata, '$.updated_at' RETURNING VARCHAR2(4000)) >= :f2 AND "
        "JSON_VALUE(t.metadata, '$.updated_at' RETURNING VARCHAR2(4000)) <= :f3"
    )
    assert binds == {"f0": "hr", "f1": "policy", "f2": "2024-01-01", "f3": "2024-12-31"}


def test_column_fields_filter_the_column_not_the_json() -> None:
    where, binds = sql.filter_clause([FieldFilter("chunk_type", any_of=("text",)), FieldFilter("doc_id", all_of=("d1",))])
    assert where == "t.chunk_type IN (:f0) AND t.doc_id IN (:f1)"
    assert binds == {"f0": "text", "f1": "d1"}


def test_no_filters_is_always_true() -> None:
    assert sql.filter_clause([]) == ("1=1", {})


@pytest.mark.parametrize("build", [
    lambda bad: sql.version_table_ddl(bad, 3),
    lambda bad: sql.vector_index_ddl(bad, "cosine", OracleVectorIndexSettings()),
    lambda bad: sql.text_index_ddl(bad),
    lambda bad: sql.alias_view_ddl(bad, "KB_V1"),
    lambda bad: sql.alias_view_ddl("KB_ACTIVE", bad),
    lambda bad: sql.merge_chunk_sql(bad),
    lambda bad: sql.dense_search_sql(bad, "cosine", "1=1", approx=True),
    lambda bad: sql.lexical_search_sql(bad, "1=1"),
    lambda bad: sql.drop_version_ddl(bad),
    lambda bad: sql.filter_clause([FieldFilter(bad, any_of=("x",))]),
])
def test_injected_identifier_raises_before_any_sql_is_built(build) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidIdentifier, match=r"invalid .*'KB; DROP TABLE RAG_VERSIONS--'"):
        build("KB; DROP TABLE RAG_VERSIONS--")


def test_lexical_search_uses_contains_and_score() -> None:
    statement = sql.lexical_search_sql("KB_V1", "1=1")
    assert "SCORE(1) AS score FROM KB_V1 t WHERE CONTAINS(t.text, :query, 1) > 0 AND 1=1" in statement
    assert statement.endswith("ORDER BY score DESC, t.chunk_id FETCH FIRST :k ROWS ONLY")


def test_text_query_braces_every_word_so_user_text_has_no_operators() -> None:
    assert sql.text_query("Vacation AND policy {near} vacation!") == "{vacation} ACCUM {and} ACCUM {policy} ACCUM {near}"
    assert sql.text_query("?!") == ""


@pytest.mark.parametrize("distance,raw,expected", [
    ("cosine", 0.25, 0.75), ("dot", -0.8, 0.8), ("euclidean", 1.5, -1.5),
])
def test_similarity_follows_the_port_docstring(distance: str, raw: float, expected: float) -> None:
    assert sql.similarity(distance, raw) == pytest.approx(expected)  # type: ignore[arg-type]


@pytest.mark.parametrize("dsn,expected", [
    ("127.0.0.1:1521/FREEPDB1", "127.0.0.1:1521"),
    ("tcps://adb.eu-frankfurt-1.oraclecloud.com:1522/abc_high.adb.oraclecloud.com?wallet_location=/w",
     "adb.eu-frankfurt-1.oraclecloud.com:1522"),
    ("(DESCRIPTION=(ADDRESS=(PROTOCOL=TCPS)(HOST=db.example.com)(PORT=1522))(CONNECT_DATA=(SERVICE_NAME=x)))",
     "db.example.com:1522"),
    ("mydb_high", "TNS alias mydb_high"),
])
def test_dsn_endpoint_names_host_and_port_only(dsn: str, expected: str) -> None:
    assert dsn_endpoint(dsn) == expected


# --- the store's statements and binds, recorded by a fake connection -------------------------
# A stand-in for the Oracle server (which cannot run here): it records every statement,
# bind and transaction event, and answers from rules the test gives it.
import array  # noqa: E402
import types  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402
import oracledb  # noqa: E402

from backend.common.config import OracleSettings  # noqa: E402
from backend.common.errors import EmbeddingModelMismatch, StoreError, VersionConflict  # noqa: E402
from backend.core.types import Chunk, DocumentWrite, QueryVector  # noqa: E402
from backend.providers.oracle_vs.connection import OracleConnector  # noqa: E402
from backend.providers.oracle_vs.store import OracleVectorStore  # noqa: E402

Rule = Callable[[str, dict[str, Any]], "list[tuple[Any, ...]] | None"]
V1 = ("KB_V1", "mini-lm", 3, "cosine", "hnsw", "default", "2025-01-01T00:00:00", None)


class RecordingDb:
    def __init__(self, rules: list[Rule], batch_errors: list[int] | None = None) -> None:
        self.rules = rules
        self.batch_errors = batch_errors or []
        self.log: list[tuple[str, Any]] = []

    def answer(self, statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]]:
        for rule in self.rules:
            rows = rule(statement, binds)
            if rows is not None:
                return rows
        return []

    def statements(self, kind: str = "execute") -> list[str]:
        return [s for k, s in self.log if k == kind]

    def events(self) -> list[str]:
        return [k if k in ("commit", "rollback") else k + ":" + str(s)[:40] for k, s in self.log]


class RecordingCursor:
    def __init__(self, db: RecordingDb) -> None:
        self.db = db
        self.rows: list[tuple[Any, ...]] = []
        self.rowcount = 0
        self.many: list[dict[str, Any]] = []

    def execute(self, statement: str, binds: dict[str, Any] | None = None) -> None:
        self.db.log.append(("execute", statement))
        self.db.log.append(("binds", dict(binds or {})))
        self.rows = list(self.db.answer(statement, dict(binds or {})))

    def executemany(self, statement: str, rows: list[dict[str, Any]], batcherrors: bool = False,
                    arraydmlrowcounts: bool = False) -> None:
        self.db.log.append(("executemany", statement))
        self.db.log.append(("rows", rows))
        self.many = rows

    def getbatcherrors(self) -> list[Any]:
        return [types.SimpleNamespace(offset=i, message=f"ORA-12899: value too large (row {i})")
                for i in self.db.batch_errors if i < len(self.many)]

    def getarraydmlrowcounts(self) -> list[int]:
        return [2 for _ in self.many]

    def setinputsizes(self, **sizes: Any) -> None:
        self.db.log.append(("inputsizes", sizes))

    def fetchone(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows


class RecordingConnection:
    def __init__(self, db: RecordingDb) -> None:
        self.db = db

    def __enter__(self) -> "RecordingConnection":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def cursor(self) -> RecordingCursor:
        return RecordingCursor(self.db)

    def commit(self) -> None:
        self.db.log.append(("commit", ""))

    def rollback(self) -> None:
        self.db.log.append(("rollback", ""))

    def ping(self) -> None:
        self.db.log.append(("ping", ""))


class RecordingPool:
    def __init__(self, db: RecordingDb) -> None:
        self.db = db

    def acquire(self) -> RecordingConnection:
        return RecordingConnection(self.db)


def when(fragment: str, rows: list[tuple[Any, ...]] | Callable[[dict[str, Any]], list[tuple[Any, ...]]]) -> Rule:
    def rule(statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]] | None:
        if fragment not in statement:
            return None
        return rows(binds) if callable(rows) else rows
    return rule


def registry(*versions: tuple[Any, ...], aliases: dict[str, str] | None = None) -> list[Rule]:
    by_name = {v[0]: v for v in versions}
    aliases = aliases or {}
    return [
        when("FROM RAG_VERSIONS WHERE name = :name", lambda b: [by_name[b["name"]]] if b["name"] in by_name else []),
        when("FROM RAG_ALIASES WHERE alias_name = :alias",
             lambda b: [(aliases[b["alias"]],)] if b["alias"] in aliases else []),
    ]


def make_store(db: RecordingDb, **index: Any) -> OracleVectorStore:
    settings = OracleSettings(vector_index=OracleVectorIndexSettings(**index))
    return OracleVectorStore(OracleConnector(RecordingPool(db), where="db.test:1521"), settings)


def doc(doc_id: str, n: int, dim: int = 3) -> DocumentWrite:
    chunks = [Chunk(f"{doc_id}#{i}", doc_id, f"text {i}", "a.txt", i) for i in range(n)]
    vectors = np.arange(n * dim, dtype=np.float32).reshape(n, dim) / 10
    return DocumentWrite(doc_id, "h1", chunks, vectors)


def chunk_row(chunk_id: str, dist: float) -> tuple[Any, ...]:
    return (chunk_id, "d1", 0, "text", "a.txt", "body", "ch", {"tags": ["hr"]}, dist)


def test_write_merges_float32_vectors_with_batcherrors_and_commits_once() -> None:
    db = RecordingDb(registry(V1))
    written = make_store(db).write_documents("KB_V1", [doc("d1", 2)])
    assert written == 2
    merges = [i for i, (k, s) in enumerate(db.log) if k == "executemany" and s.startswith("MERGE INTO KB_V1 t")]
    assert len(merges) == 1
    rows = db.log[merges[0] + 1][1]
    assert [r["chunk_id"] for r in rows] == ["d1#0", "d1#1"]
    assert isinstance(rows[1]["embedding"], array.array) and rows[1]["embedding"].typecode == "f"
    assert list(rows[1]["embedding"]) == pytest.approx([0.3, 0.4, 0.5])
    assert rows[0]["metadata"] == "{}"
    assert ("inputsizes", {"embedding": oracledb.DB_TYPE_VECTOR}) in db.log
    assert [k for k, _ in db.log].count("commit") == 1 and ("rollback", "") not in db.log


def test_batch_errors_are_mapped_back_to_chunk_ids_and_roll_back() -> None:
    db = RecordingDb(registry(V1), batch_errors=[1, 2])
    with pytest.raises(StoreError, match=r"2 of 3 chunks could not be written to KB_V1 \(nothing was committed\): "
                                         r"d1#1: ORA-12899: value too large \(row 1\); d1#2: ORA-12899"):
        make_store(db).write_documents("KB_V1", [doc("d1", 3)])
    assert ("rollback", "") in db.log and ("commit", "") not in db.log


def test_chunks_dropped_from_a_document_are_deleted_in_the_same_transaction() -> None:
    stored = [(f"d1#{i}", "old", i, "text", "a.txt", "x", {}, array.array("f", [0, 0, 0])) for i in range(3)]
    db = RecordingDb([*registry(V1), when("FROM KB_V1 WHERE doc_id = :doc_id", stored)])
    assert make_store(db).write_documents("KB_V1", [doc("d1", 2)]) == 2
    kinds = [(k, s.split(" WHERE")[0] if isinstance(s, str) else "") for k, s in db.log
             if k in ("executemany", "commit")]
    assert kinds == [("executemany", "DELETE FROM KB_V1"), ("executemany", "MERGE INTO KB_V1 t USING (SELECT :chunk_id AS "
                     "chunk_id, :doc_id AS doc_id, :doc_hash AS doc_hash, :chunk_index AS chunk_index, :chunk_type AS "
                     "chunk_type, :source AS source, :text AS text, :content_hash AS content_hash, JSON(:metadata) AS "
                     "metadata, :embedding AS embedding FROM dual) s ON (t.chunk_id = s.chunk_id) WHEN MATCHED THEN "
                     "UPDATE SET t.doc_id = s.doc_id, t.doc_hash = s.doc_hash, t.chunk_index = s.chunk_index, "
                     "t.chunk_type = s.chunk_type, t.source = s.source, t.text = s.text, t.content_hash = "
                     "s.content_hash, t.metadata = s.metadata, t.embedding = s.embedding WHEN NOT MATCHED THEN INSERT "
                     "(chunk_id, doc_id, doc_hash, chunk_index, chunk_type, source, text, content_hash, metadata, "
                     "embedding) VALUES (s.chunk_id, s.doc_id, s.doc_hash, s.chunk_index, s.chunk_type, s.source, "
                     "s.text, s.content_hash, s.metadata, s.embedding)"), ("executemany", "MERGE INTO "
                     "RAG_EMBEDDING_CACHE c USING (SELECT :model AS model, :text_hash AS text_hash, :vector AS vector "
                     "FROM dual) s ON (c.model = s.model AND c.text_hash = s.text_hash) WHEN NOT MATCHED THEN INSERT "
                     "(model, text_hash, vector) VALUES (s.model, s.text_hash, s.vector)"), ("commit", "")]
    deleted = db.log[[k for k, _ in db.log].index("executemany") + 1][1]
    assert deleted == [{"chunk_id": "d1#2"}]


def test_an_unchanged_document_is_not_rewritten() -> None:
    d = doc("d1", 2)
    stored = [(c.chunk_id, "h1", c.chunk_index, "text", "a.txt", c.content_hash, {}, array.array("f", v.tolist()))
              for c, v in zip(d.chunks, d.vectors)]
    db = RecordingDb([*registry(V1), when("FROM KB_V1 WHERE doc_id = :doc_id", stored)])
    assert make_store(db).write_documents("KB_V1", [d]) == 0
    assert db.statements("executemany") == []


def test_vectors_of_another_dimension_are_refused_before_any_write() -> None:
    db = RecordingDb(registry(V1))
    with pytest.raises(EmbeddingModelMismatch, match="vectors have 4 dimensions, version KB_V1 expects 3 .mini-lm."):
        make_store(db).write_documents("KB_V1", [doc("d1", 1, dim=4)])
    assert db.statements("executemany") == [] and ("rollback", "") in db.log


def test_search_resolves_alias_and_searches_in_one_read_only_snapshot() -> None:
    db = RecordingDb([*registry(V1, aliases={"KB_ACTIVE": "KB_V1"}), when("VECTOR_DISTANCE", [chunk_row("c1", 0.1)])])
    result = make_store(db).search("KB_ACTIVE", QueryVector(np.ones(3, np.float32), "mini-lm"), 1)
    assert (result.version, [h.chunk.chunk_id for h in result.hits]) == ("KB_V1", ["c1"])
    assert result.hits[0].score == pytest.approx(0.9)
    assert result.hits[0].chunk.metadata == {"tags": ["hr"]}
    executed = db.statements()
    assert executed[0] == "SET TRANSACTION READ ONLY"
    assert "FROM RAG_ALIASES" in executed[1] and "FETCH APPROX FIRST :k ROWS ONLY WITH TARGET ACCURACY 95" in executed[-1]
    assert db.log[-1] == ("rollback", "")


def test_query_from_another_model_fails_naming_both_and_never_searches() -> None:
    db = RecordingDb(registry(V1))
    with pytest.raises(EmbeddingModelMismatch, match=r"query embedded with other-model \(3 dims\) but KB_V1 holds "
                                                     r"vectors from mini-lm \(3 dims\)"):
        make_store(db).search("KB_V1", QueryVector(np.ones(3, np.float32), "other-model"), 2)
    assert not any("VECTOR_DISTANCE" in s for s in db.statements())


def test_selective_filter_counts_then_searches_exactly() -> None:
    db = RecordingDb([*registry(V1), when("SELECT COUNT(*)", [(3,)]),
                      when("VECTOR_DISTANCE", [chunk_row("c1", 0.2), chunk_row("c2", 0.3)])])
    store = make_store(db, exact_filter_threshold=10)
    hits = store.search("KB_V1", QueryVector(np.ones(3, np.float32), "mini-lm"), 2,
                        [FieldFilter("tags", any_of=("hr",))]).hits
    assert [h.chunk.chunk_id for h in hits] == ["c1", "c2"]
    search = [s for s in db.statements() if "VECTOR_DISTANCE" in s]
    assert len(search) == 1 and "APPROX" not in search[0] and "FETCH FIRST :k ROWS ONLY" in search[0]
    binds = db.log[[s for _, s in db.log].index(search[0]) + 1][1]
    assert binds["f0"] == "hr" and binds["k"] == 2 and binds["q"].typecode == "f"


def test_broad_filter_widens_candidate_depth_until_k_rows_match() -> None:
    def candidates(binds: dict[str, Any]) -> list[tuple[Any, ...]]:
        found = {8: 1, 32: 2}.get(binds.get("depth", 0), 0)
        return [chunk_row(f"c{i}", 0.1 * i) for i in range(found)]

    db = RecordingDb([*registry(V1), when("COUNT(*) FROM KB_V1 t WHERE JSON_EXISTS", [(500,)]),
                      when("COUNT(*) FROM KB_V1 t WHERE 1=1", [(10_000,)]), when(":depth", candidates)])
    store = make_store(db, exact_filter_threshold=100, candidate_factor=4)
    hits = store.search("KB_V1", QueryVector(np.ones(3, np.float32), "mini-lm"), 2,
                        [FieldFilter("tags", any_of=("hr",))]).hits
    assert [h.chunk.chunk_id for h in hits] == ["c0", "c1"]
    depths = [b["depth"] for k, b in db.log if k == "binds" and "depth" in b]
    assert depths == [8, 32]


def test_widening_that_would_cover_the_table_turns_exact() -> None:
    db = RecordingDb([*registry(V1), when("COUNT(*) FROM KB_V1 t WHERE JSON_EXISTS", [(50,)]),
                      when("COUNT(*) FROM KB_V1 t WHERE 1=1", [(20,)]), when(":depth", []),
                      when("FETCH FIRST :k ROWS ONLY", [chunk_row("c1", 0.1), chunk_row("c2", 0.2)])])
    store = make_store(db, exact_filter_threshold=10, candidate_factor=4)
    hits = store.search("KB_V1", QueryVector(np.ones(3, np.float32), "mini-lm"), 2,
                        [FieldFilter("tags", any_of=("hr",))]).hits
    assert [h.chunk.chunk_id for h in hits] == ["c1", "c2"]
    searches = [s for s in db.statements() if "VECTOR_DISTANCE" in s]
    assert [":depth" in s for s in searches] == [True, False]


def test_filter_matching_nothing_returns_no_hits_without_a_vector_search() -> None:
    db = RecordingDb([*registry(V1), when("SELECT COUNT(*)", [(0,)])])
    hits = make_store(db).search("KB_V1", QueryVector(np.ones(3, np.float32), "mini-lm"), 5,
                                 [FieldFilter("doc_id", any_of=("nope",))]).hits
    assert hits == () and not any("VECTOR_DISTANCE" in s for s in db.statements())


def test_injected_target_raises_before_any_statement() -> None:
    db = RecordingDb([])
    with pytest.raises(InvalidIdentifier, match="invalid retrieval target"):
        make_store(db).search("KB_V1 UNION SELECT", QueryVector(np.ones(3, np.float32), "mini-lm"), 1)
    assert db.log == []


def test_point_alias_replaces_the_view_and_records_history_with_previous() -> None:
    v2 = ("KB_V2", "mini-lm", 3, "cosine", "hnsw", None, "2025-02-01", None)
    db = RecordingDb(registry(V1, v2, aliases={"KB_ACTIVE": "KB_V1"}))
    change = make_store(db).point_alias("KB_ACTIVE", "KB_V2", reason="eval passed")
    assert (change.alias, change.version, change.previous, change.reason) == ("KB_ACTIVE", "KB_V2", "KB_V1", "eval passed")
    executed = db.statements()
    view = executed.index(sql.alias_view_ddl("KB_ACTIVE", "KB_V2"))
    merge = next(i for i, s in enumerate(executed) if s.startswith("MERGE INTO RAG_ALIASES"))
    history = next(i for i, s in enumerate(executed) if s.startswith("INSERT INTO RAG_ALIAS_HISTORY"))
    assert view < merge < history
    history_binds = [b for k, b in db.log if k == "binds" and "previous" in b][0]
    assert history_binds == {"alias": "KB_ACTIVE", "version": "KB_V2", "previous": "KB_V1",
                             "changed": change.changed_at, "reason": "eval passed", "forced": 0}


def test_alias_refuses_a_version_of_another_model_unless_forced() -> None:
    other = ("KB_V9", "e5-large", 1024, "cosine", "hnsw", None, "2025-03-01", None)
    db = RecordingDb(registry(V1, other, aliases={"KB_ACTIVE": "KB_V1"}))
    with pytest.raises(VersionConflict, match=r"alias KB_ACTIVE serves KB_V1 \(mini-lm, 3 dims\); KB_V9 uses "
                                              r"e5-large \(1024 dims\)"):
        make_store(db).point_alias("KB_ACTIVE", "KB_V9")
    assert not any(s.startswith("CREATE OR REPLACE VIEW") for s in db.statements())
    forced = make_store(db).point_alias("KB_ACTIVE", "KB_V9", forced=True)
    assert forced.forced is True and sql.alias_view_ddl("KB_ACTIVE", "KB_V9") in db.statements()


def test_rollback_points_the_alias_at_its_previous_version() -> None:
    v2 = ("KB_V2", "mini-lm", 3, "cosine", "hnsw", None, "2025-02-01", None)
    history = [("KB_ACTIVE", "KB_V2", "KB_V1", "2025-02-02", "promote", 0)]
    db = RecordingDb([*registry(V1, v2, aliases={"KB_ACTIVE": "KB_V2"}), when("FROM RAG_ALIAS_HISTORY", history)])
    change = make_store(db).rollback_alias("KB_ACTIVE")
    assert (change.version, change.previous, change.reason) == ("KB_V1", "KB_V2", "rollback")
    assert sql.alias_view_ddl("KB_ACTIVE", "KB_V1") in db.statements()


def test_create_version_runs_table_vector_and_text_index_ddl_and_tolerates_existing_index() -> None:
    created: dict[str, tuple[Any, ...]] = {}

    class Db(RecordingDb):
        def answer(self, statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]]:
            if statement.startswith("CREATE VECTOR INDEX"):
                raise oracledb.DatabaseError(types.SimpleNamespace(code=955, full_code="ORA-00955",
                                                                   message="ORA-00955: name is already used"))
            if statement.startswith("INSERT INTO RAG_VERSIONS"):
                created[binds["name"]] = (binds["name"], binds["model"], binds["dimension"], binds["distance"],
                                          binds["index_type"], binds["profile"], binds["created_at"], None)
            if "FROM RAG_VERSIONS WHERE name" in statement:
                return [created[binds["name"]]] if binds["name"] in created else []
            return [(0, 0)] if statement.startswith("SELECT COUNT(*), COUNT(DISTINCT") else []

    from backend.core.types import VersionSpec

    db = Db([])
    version = make_store(db, type="hnsw").create_version(VersionSpec("KB_V3", "mini-lm", 3, "dot"))
    assert (version.name, version.dimension, version.distance, version.chunk_count) == ("KB_V3", 3, "dot", 0)
    ddl = [s for s in db.statements() if s.startswith("CREATE")]
    assert ddl == [sql.version_table_ddl("KB_V3", 3), sql.doc_index_ddl("KB_V3"),
                   sql.vector_index_ddl("KB_V3", "dot", OracleVectorIndexSettings(type="hnsw")),
                   sql.text_index_ddl("KB_V3")]
    assert ("commit", "") in db.log
