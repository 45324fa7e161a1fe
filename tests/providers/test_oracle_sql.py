"""Statements the Oracle store generates, one distance and index type at a time.

No Oracle server can run here, so the text of each statement is checked
against the 23ai syntax it must follow (see docs/ORACLE.md for the sources).
"""

from __future__ import annotations

import re
import types
from typing import Callable

import oracledb
import pytest

from backend.common.config import OracleVectorIndexSettings
from backend.common.errors import InvalidIdentifier, StoreError, StoreUnavailable
from backend.core.types import FieldFilter
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.connection import dsn_endpoint, map_error
from backend.providers.oracle_vs.search_plan import SearchPlan, first_plan, next_plan, run_with_guarantee

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
    assert "text          CLOB,\n" in ddl and "source        VARCHAR2(2000),\n" in ddl
    for column in ("doc_id", "doc_hash", "chunk_index", "chunk_type", "source", "content_hash"):
        assert f"\n    {column} " in ddl


def test_version_table_rejects_a_dimension_outside_oracle_limits() -> None:
    with pytest.raises(ValueError, match="1..65535, got 0"):
        sql.version_table_ddl("KB_V1", 0)


def test_metadata_index_is_a_json_search_index_synced_on_commit() -> None:
    assert sql.metadata_index_ddl("KB_V1") == (
        "CREATE SEARCH INDEX KB_V1_MIDX ON KB_V1 (metadata) FOR JSON PARAMETERS ('SYNC (ON COMMIT)')")


def test_text_index_is_oracle_text_synced_on_commit() -> None:
    assert sql.text_index_ddl("KB_V1") == (
        "CREATE INDEX KB_V1_TIDX ON KB_V1 (text) INDEXTYPE IS CTXSYS.CONTEXT "
        "PARAMETERS ('SYNC (ON COMMIT) STOPLIST CTXSYS.EMPTY_STOPLIST')"
    )


def test_catalog_creates_registry_alias_history_interactions_and_cache_idempotently() -> None:
    names = [ddl.split("(")[0].split()[-1] for ddl in sql.CATALOG_DDL]
    assert names == ["RAG_VERSIONS", "RAG_ALIASES", "RAG_ALIAS_HISTORY", "CHAT_INTERACTIONS", "RAG_EMBEDDING_CACHE",
                     "RAG_CONVERSATION_TURNS", "RAG_FEEDBACK", "RAG_AUDIT_LOG", "RAG_QUOTA_COUNTERS", "RAG_SERIES_LOCKS",
                     "RAG_SERIES_LOCK_HOLDERS"]
    assert all(ddl.startswith("CREATE TABLE IF NOT EXISTS ") for ddl in sql.CATALOG_DDL)
    assert "resp_mode         VARCHAR2(16) NOT NULL" in sql.CATALOG_DDL[3]
    assert "embedding    VECTOR(*, FLOAT32) NOT NULL" in sql.CATALOG_DDL[4]


def test_alias_view_is_one_create_or_replace_statement() -> None:
    assert sql.alias_view_ddl("KB_ACTIVE", "KB_V2") == (
        "CREATE OR REPLACE VIEW KB_ACTIVE AS SELECT chunk_id, doc_id, chunk_index, chunk_type, source, text, "
        "content_hash, metadata, doc_hash, embedding FROM KB_V2"
    )


def test_chunks_are_inserted_or_updated_by_chunk_id_binding_values_into_column_slots() -> None:
    assert sql.insert_chunk_sql("KB_V1") == (
        "INSERT INTO KB_V1 (chunk_id, doc_id, doc_hash, chunk_index, chunk_type, source, text, content_hash, "
        "metadata, embedding) VALUES (:chunk_id, :doc_id, :doc_hash, :chunk_index, :chunk_type, :source, :text, "
        ":content_hash, :metadata, :embedding)")
    assert sql.update_chunk_sql("KB_V1") == (
        "UPDATE KB_V1 SET doc_id = :doc_id, doc_hash = :doc_hash, chunk_index = :chunk_index, "
        "chunk_type = :chunk_type, source = :source, text = :text, content_hash = :content_hash, "
        "metadata = :metadata, embedding = :embedding WHERE chunk_id = :chunk_id")


def test_chunk_binds_name_every_placeholder_of_both_statements() -> None:
    row = {"chunk_id": "c1", "doc_id": "d", "doc_hash": "h", "chunk_index": 0, "chunk_type": "text", "source": "s",
           "text": "t", "content_hash": "ch", "metadata": {"a": 1}, "embedding": None, "embed_hash": "x"}
    binds = sql.chunk_binds(row)
    for statement in (sql.insert_chunk_sql("KB_V1"), sql.update_chunk_sql("KB_V1")):
        names = re.findall(r":(\w+)", statement)
        assert set(binds) == set(names) and len(names) == len(set(names)) == 10
    assert (binds["text"], binds["metadata"]) == ("t", {"a": 1})


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
    lambda bad: sql.metadata_index_ddl(bad),
    lambda bad: sql.alias_view_ddl(bad, "KB_V1"),
    lambda bad: sql.alias_view_ddl("KB_ACTIVE", bad),
    lambda bad: sql.insert_chunk_sql(bad),
    lambda bad: sql.update_chunk_sql(bad),
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


# --- the k-hits guarantee as pure functions -------------------------------------------------



@pytest.mark.parametrize("filtered,matching,index_type,expected", [
    (False, None, "hnsw", SearchPlan("approx")),
    (False, None, "none", SearchPlan("exact")),
    (True, 40, "hnsw", SearchPlan("filtered")),  # HNSW filters inside the FETCH APPROX (review §2.8)
    (True, None, "hnsw", SearchPlan("filtered")),  # ... so no count is needed first
    (True, 40, "ivf", SearchPlan("exact")),
    (True, 50, "ivf", SearchPlan("exact")),
    (True, 51, "ivf", SearchPlan("candidates", depth=20)),
])
def test_first_plan_is_exact_for_selective_filters_and_candidates_for_broad_ones(
        filtered: bool, matching: int | None, index_type: str, expected: SearchPlan) -> None:
    assert first_plan(k=5, filtered=filtered, matching=matching, index_type=index_type, threshold=50) == expected


@pytest.mark.parametrize("plan,got,matching,total,expected", [
    (SearchPlan("candidates", 20), 5, 900, 1000, None),
    (SearchPlan("candidates", 20), 3, 3, 1000, None),
    (SearchPlan("candidates", 20), 2, 900, 1000, SearchPlan("candidates", 80)),
    (SearchPlan("candidates", 320), 2, 900, 1000, SearchPlan("exact")),
    (SearchPlan("approx"), 4, 1000, 1000, SearchPlan("exact")),
    (SearchPlan("filtered"), 4, 900, 1000, SearchPlan("exact")),  # HNSW came back short though 900 match
    (SearchPlan("filtered"), 4, 4, 1000, None),  # every match came back
    (SearchPlan("exact"), 0, 900, 1000, None),
])
def test_next_plan_widens_until_k_or_every_match(plan: SearchPlan, got: int, matching: int, total: int,
                                                 expected: SearchPlan | None) -> None:
    assert next_plan(plan, got=got, k=5, matching=matching, total=total) == expected


def test_run_with_guarantee_counts_only_when_a_result_is_short() -> None:
    calls: list[str] = []

    def count(name: str, value: int) -> Callable[[], int]:
        return lambda: calls.append(name) or value  # type: ignore[func-returns-value]

    rows, tried = run_with_guarantee(lambda p: [1, 2, 3], SearchPlan("approx"), k=3,
                                     matching=count("matching", 10), total=count("total", 10))
    assert (rows, tried, calls) == ([1, 2, 3], [SearchPlan("approx")], [])
    rows, tried = run_with_guarantee(lambda p: [1] if p.mode == "approx" else [1, 2, 3], SearchPlan("approx"), k=3,
                                     matching=count("matching", 10), total=count("total", 10))
    assert (rows, tried) == ([1, 2, 3], [SearchPlan("approx"), SearchPlan("exact")])


def test_search_rows_fetch_metadata_as_json_text() -> None:
    statement = sql.dense_search_sql("KB_V1", "cosine", "1=1", approx=True)
    assert statement.startswith("SELECT t.chunk_id, t.doc_id, t.chunk_index, t.chunk_type, t.source, t.text, "
                                "t.content_hash, JSON_SERIALIZE(t.metadata RETURNING CLOB) AS metadata, ")


def _driver_error(cls: type, full_code: str, code: int, message: str) -> BaseException:
    return cls(types.SimpleNamespace(full_code=full_code, code=code, message=message))


@pytest.mark.parametrize("error,kind,text", [
    (_driver_error(oracledb.OperationalError, "DPY-6005", 0, "DPY-6005: cannot connect to database.\n[Errno 111] "
                   "Connection refused"), StoreUnavailable,
     "Oracle store at db:1521 is unavailable (searching): DPY-6005: cannot connect to database. [Errno 111] "
     "Connection refused"),
    (_driver_error(oracledb.DatabaseError, "ORA-01017", 1017, "ORA-01017: invalid credential or not authorized"),
     StoreUnavailable, "Oracle store at db:1521 is unavailable (searching): ORA-01017: invalid credential"),
    (_driver_error(oracledb.DatabaseError, "ORA-00942", 942, "ORA-00942: table or view does not exist"),
     StoreError, "Oracle store at db:1521: searching failed: ORA-00942: table or view does not exist"),
    (_driver_error(oracledb.DatabaseError, "ORA-51962", 51962, "ORA-51962: The vector memory area is out of space"),
     StoreError, "out of space (HNSW indexes live in the vector pool: size VECTOR_MEMORY_SIZE"),
])
def test_driver_errors_map_to_store_errors_naming_the_endpoint(error: BaseException, kind: type, text: str) -> None:
    mapped = map_error(error, "db:1521", "searching")
    assert type(mapped) is kind
    assert text in mapped.user_message
