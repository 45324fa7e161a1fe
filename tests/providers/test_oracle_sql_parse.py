"""Every statement the Oracle adapter can send, through a SQL parser that knows Oracle's dialect.

No Oracle server runs here, so a typo in generated SQL would otherwise only show on a
real database. Each statement is parsed with sqlglot's ``oracle`` dialect
(``ErrorLevel.RAISE``; a statement sqlglot can only keep as an opaque ``Command``
counts as a failure). The statements come from two sources: the ``sql`` module's
builders for every distance, index type and filter kind, and everything the store
actually executed while a scenario ran every public method against the recording
stand-ins (so SQL written inline in ``index_admin`` / ``store`` is covered too).

Known gaps of sqlglot's Oracle dialect (sqlglot 25-30), and what this test does instead:

1. ``VECTOR(n, FLOAT32)`` / ``VECTOR(*, FLOAT32)`` column types are not parsed: the type
   is checked by a strict pattern, then replaced by ``BLOB`` for the parse.
2. ``JSON_SERIALIZE(x RETURNING CLOB)`` and ``JSON_SERIALIZE(x RETURNING VARCHAR2(n) NULL ON
   ERROR)``: the ``RETURNING`` clause is not parsed; it is checked by pattern and removed.
3. ``FETCH APPROX FIRST ... ROWS ONLY WITH TARGET ACCURACY n`` (23ai approximate top-k):
   ``APPROX`` and the ``WITH TARGET ACCURACY`` tail are checked by pattern and removed.
4. ``UPDATE ... RETURNING c1, c2 INTO :b1, :b2``: the clause is checked (same number of
   columns and binds) and removed.
5. ``CREATE VECTOR INDEX``, ``CREATE INDEX ... INDEXTYPE IS CTXSYS.CONTEXT PARAMETERS
   (...)`` and ``CREATE SEARCH INDEX ... FOR JSON``: sqlglot falls back to ``Command``
   (no check at all), so these three forms are matched in full by a grammar written from
   the 23ai SQL reference (``GRAMMAR`` below).
6. sqlglot is lenient in places: it accepts ``WHEN NOT MATCHED INSERT`` (no ``THEN``) in a
   MERGE, and any identifier as a function name. The negative tests below list typos it
   does catch; the exact text of each statement is also pinned in ``test_oracle_sql.py``.
7. SQL/JSON path filters (``'$.tags?(@ == $f0 || @ == $f1)'``): sqlglot only warns on
   them; every JSON path literal is matched by a strict pattern instead.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

import numpy as np
import pytest
import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel

from backend.common.config import OracleVectorIndexSettings
from backend.core.types import AuditEvent, FieldFilter, Interaction, QueryVector, VersionSpec, Visibility
from backend.providers.oracle_vs import audit, quotas, sql, series_lock, vpd
from backend.providers.oracle_vs.connection import ddl_lock_timeout_sql
from tests.providers.oracle_fake import CatalogDb, catalog_store
from tests.providers.test_oracle_vs import RecordingDb, V1, chunk_row, doc, make_store, registry, when

DISTANCES = ("cosine", "dot", "euclidean")
INDEXES = {"hnsw": OracleVectorIndexSettings(type="hnsw"), "ivf": OracleVectorIndexSettings(type="ivf"),
           "none": OracleVectorIndexSettings(type="none")}
FILTERS = {
    "none": [],
    "any_of_json": [FieldFilter("tags", any_of=("hr", "it"))],
    "all_of_json": [FieldFilter("tags", all_of=("hr", "policy"))],
    "date_range": [FieldFilter("updated_at", gte="2024-01-01", lte="2024-12-31")],
    "column_in": [FieldFilter("doc_id", any_of=("d1", "d2")), FieldFilter("chunk_type", all_of=("text",))],
    "mixed": [FieldFilter("tags", any_of=("hr",)), FieldFilter("source", any_of=("a.md",)),
              FieldFilter("updated_at", gte="2024-01-01")],
    "visibility": [Visibility.of("alice", ("hr", "it")).as_filter()],
    "visibility_and_filter": [FieldFilter("tags", any_of=("hr",)), Visibility.of("bob").as_filter()],
}

_NAME = r"[A-Z][A-Z0-9_]{0,29}"
GRAMMAR = (
    re.compile(rf"CREATE VECTOR INDEX (?P<i>{_NAME})_VIDX ON (?P=i) \(embedding\) "
               r"ORGANIZATION (INMEMORY NEIGHBOR GRAPH|NEIGHBOR PARTITIONS) "
               r"DISTANCE (COSINE|DOT|EUCLIDEAN) WITH TARGET ACCURACY \d{1,3} "
               r"PARAMETERS \(TYPE (HNSW, NEIGHBORS \d+, EFCONSTRUCTION \d+|IVF, NEIGHBOR PARTITIONS \d+)\)"),
    re.compile(rf"CREATE INDEX (?P<i>{_NAME})_TIDX ON (?P=i) \(text\) INDEXTYPE IS CTXSYS\.CONTEXT "
               r"PARAMETERS \('SYNC \(ON COMMIT\) STOPLIST CTXSYS\.EMPTY_STOPLIST'\)"),
    re.compile(rf"CREATE SEARCH INDEX (?P<i>{_NAME})_MIDX ON (?P=i) \(metadata\) FOR JSON "
               r"PARAMETERS \('SYNC \(ON COMMIT\)'\)"),
    re.compile(rf"CREATE VECTOR INDEX (?P<i>{_NAME})_QVIDX ON (?P=i)_QUESTIONS \(embedding\) "
               r"ORGANIZATION (INMEMORY NEIGHBOR GRAPH|NEIGHBOR PARTITIONS) "
               r"DISTANCE (COSINE|DOT|EUCLIDEAN) WITH TARGET ACCURACY \d{1,3} "
               r"PARAMETERS \(TYPE (HNSW, NEIGHBORS \d+, EFCONSTRUCTION \d+|IVF, NEIGHBOR PARTITIONS \d+)\)"),
    # PL/SQL blocks (sqlglot parses SQL only): the after-load calls, every argument bound or a keyword
    re.compile(r"BEGIN CTX_DDL\.OPTIMIZE_INDEX\(:idx_name, 'FULL'\); END;"),
    re.compile(r"BEGIN DBMS_STATS\.GATHER_TABLE_STATS\(USER, :tabname\); END;"),
    # the multivalue index on rag_acl (JSON Developer's Guide 23ai, "Creating Multivalue Function-Based
    # Indexes for JSON_EXISTS": CREATE MULTIVALUE INDEX i ON t alias (alias.col.path.itemMethod()))
    re.compile(rf"CREATE MULTIVALUE INDEX (?P<i>{_NAME})_AIDX ON (?P=i) t \(t\.metadata\.rag_acl\.string\(\)\)"),
    # the vector-memory advisor before an HNSW build (DBMS_VECTOR reference), every argument bound
    re.compile(r"BEGIN DBMS_VECTOR\.INDEX_VECTOR_MEMORY_ADVISOR\(INDEX_TYPE => :index_type, NUM_VECTORS => "
               r":num_vectors, DIM_COUNT => :dim_count, DIM_TYPE => :dim_type, PARAMETER_JSON => :parameters, "
               r"RESPONSE_JSON => :response\); END;"),
    # VPD (DBMS_RLS reference): the policy on a version table, by bound name; the names are constants
    re.compile(r"BEGIN DBMS_RLS\.ADD_POLICY\(object_name => :object_name, policy_name => 'RAG_ACL', "
               r"policy_function => 'RAG_ACL_PREDICATE', statement_types => 'SELECT', "
               r"policy_type => DBMS_RLS\.CONTEXT_SENSITIVE\); END;"),
    re.compile(r"BEGIN DBMS_RLS\.DROP_POLICY\(object_name => :object_name, policy_name => 'RAG_ACL'\); END;"),
    # ALTER SESSION: sqlglot keeps it as a Command; DDL_LOCK_TIMEOUT takes 0..1000000 seconds
    re.compile(r"ALTER SESSION SET DDL_LOCK_TIMEOUT = (0|[1-9]\d{0,5}|1000000)"),
)
#: The organization must agree with the TYPE parameter.
_ORG_TYPE = {"INMEMORY NEIGHBOR GRAPH": "HNSW", "NEIGHBOR PARTITIONS": "IVF"}
_JSON_PATH = re.compile(r"'\$(\[\*\]|\.[A-Za-z][A-Za-z0-9_]*(\?\(@ == \$f\d+( \|\| @ == \$f\d+)*\)|\[\*\])?)?'")
#: The VPD objects (``vpd``): PL/SQL, which sqlglot does not parse. Matched in full; the predicate the
#: function returns is checked as SQL (``vpd.predicate_probe_sql``), and must be ``vpd.PREDICATE``.
_PLSQL = (
    re.compile(r"CREATE OR REPLACE FUNCTION (?P<f>RAG_ACL_PREDICATE) \(p_schema IN VARCHAR2, p_object IN VARCHAR2\) "
               r"RETURN VARCHAR2 AS\nBEGIN\n  -- rag-vpd 2: [^\n]+\n"
               r"  IF SYS_CONTEXT\('USERENV', 'SESSION_USER'\) = p_schema THEN\n"
               r"    RETURN NULL;\n  END IF;\n  RETURN REPLACE\(q'~(?P<predicate>[^~]+)~', '#CTX#', "
               r"SUBSTR\('RAG_ACL_' \|\| p_schema, 1, 128\)\);\nEND (?P=f);"),
    re.compile(r"CREATE OR REPLACE PACKAGE (?P<p>RAG_ACL_CTX) AS\n  PROCEDURE set_labels\(p_labels IN VARCHAR2\);\n"
               r"  PROCEDURE clear_labels;\nEND (?P=p);"),
    re.compile(r"CREATE OR REPLACE PACKAGE BODY (?P<p>RAG_ACL_CTX) AS\n"
               r"  PROCEDURE set_labels\(p_labels IN VARCHAR2\) IS\n  BEGIN\n"
               r"    DBMS_SESSION\.SET_CONTEXT\(SUBSTR\('RAG_ACL_' \|\| \$\$PLSQL_UNIT_OWNER, 1, 128\), 'LABELS', "
               r"p_labels\);\n  END set_labels;\n"
               r"  PROCEDURE clear_labels IS\n  BEGIN\n"
               r"    DBMS_SESSION\.CLEAR_CONTEXT\(SUBSTR\('RAG_ACL_' \|\| \$\$PLSQL_UNIT_OWNER, 1, 128\), NULL, "
               r"'LABELS'\);\n  END clear_labels;\nEND (?P=p);"),
)


class SqlCheckError(AssertionError):
    pass


#: Optimizer hints the store writes: sqlglot keeps a hint's text unchecked, so each must match one of these.
_HINTS = (re.compile(r"FIRST_ROWS\(\d+\)"), re.compile(rf"VECTOR_INDEX_TRANSFORM\(t {_NAME}_VIDX\)"))


def _shim(statement: str) -> str:
    """Replace the constructs sqlglot does not know (gaps 1-4) after checking each strictly."""
    s = statement
    for hint in re.findall(r"/\*\+(.*?)\*/", s):
        if not any(h.fullmatch(hint.strip()) for h in _HINTS):
            raise SqlCheckError(f"unknown or malformed optimizer hint /*+{hint}*/")
    if s.count("/*") != len(re.findall(r"/\*\+.*?\*/", s)):
        raise SqlCheckError("an unterminated comment or a hint without '+'")
    for m in re.finditer(r"VECTOR\(([^)]*)\)", s):
        if not re.fullmatch(r"(\*|[1-9]\d{0,4}), (FLOAT32|INT8)", m.group(1)) and "VECTOR_DISTANCE" not in s[m.start() - 16:m.start() + 7]:
            raise SqlCheckError(f"bad VECTOR type {m.group(0)!r}")
    s = re.sub(r"\bVECTOR\((\*|[1-9]\d{0,4}), (FLOAT32|INT8)\)", "BLOB", s)
    s = re.sub(r"(JSON_SERIALIZE\([\w.]+) RETURNING CLOB\)", r"\1)", s)
    s = re.sub(r"(JSON_SERIALIZE\([\w.]+) RETURNING VARCHAR2\([1-9]\d{0,3}\) NULL ON ERROR\)", r"\1)", s)
    if "APPROX" in s:
        approx = r"FETCH APPROX FIRST :\w+ ROWS ONLY( WITH TARGET ACCURACY \d{1,3})?"
        if len(re.findall(r"\bAPPROX\b", s)) != len(re.findall(approx, s)):
            raise SqlCheckError("APPROX outside 'FETCH APPROX FIRST :n ROWS ONLY [WITH TARGET ACCURACY n]'")
        s = re.sub(approx, lambda m: m.group(0).replace("APPROX ", "").split(" WITH TARGET")[0], s)
    if "TARGET ACCURACY" in s:
        raise SqlCheckError("WITH TARGET ACCURACY outside an approximate FETCH")
    returning = re.search(r" RETURNING ([\w, ]+) INTO ([:\w, ]+)$", s)
    if returning and s.startswith(("UPDATE", "INSERT", "DELETE")):
        cols, binds = returning.group(1).split(", "), returning.group(2).split(", ")
        if len(cols) != len(binds) or not all(re.fullmatch(r":\w+", b) for b in binds):
            raise SqlCheckError(f"RETURNING {cols} INTO {binds}: columns and binds do not pair up")
        s = s[:returning.start()]
    return s


def check(statement: str) -> str:
    """Raise ``SqlCheckError`` unless ``statement`` is valid Oracle 23ai SQL (within the gaps above).
    Returns how it was checked."""
    if statement.startswith("CREATE OR REPLACE FUNCTION") or statement.startswith("CREATE OR REPLACE PACKAGE"):
        found = next((m for m in (g.fullmatch(statement) for g in _PLSQL) if m), None)
        if found is None:
            raise SqlCheckError(f"not a valid VPD object: {statement}")
        if "predicate" in found.groupdict():
            if found.group("predicate") != vpd.PREDICATE:
                raise SqlCheckError("the policy function returns another predicate than vpd.PREDICATE")
            check(vpd.predicate_probe_sql("KB_V1"))
        return "grammar"
    if statement.startswith(("CREATE VECTOR INDEX", "CREATE SEARCH INDEX", "CREATE MULTIVALUE INDEX", "ALTER SESSION",
                             "BEGIN ")) or "INDEXTYPE IS" in statement:
        if not any(g.fullmatch(statement) for g in GRAMMAR):
            raise SqlCheckError(f"not a valid index statement: {statement}")
        org = re.search(r"ORGANIZATION (INMEMORY NEIGHBOR GRAPH|NEIGHBOR PARTITIONS)", statement)
        if org and f"(TYPE {_ORG_TYPE[org.group(1)]}," not in statement:
            raise SqlCheckError(f"organization and TYPE disagree: {statement}")
        return "grammar"
    for literal in re.findall(r"'\$[^']*'", statement):
        if not _JSON_PATH.fullmatch(literal):
            raise SqlCheckError(f"bad SQL/JSON path {literal}")
    try:
        parsed = sqlglot.parse(_shim(statement), read="oracle", error_level=ErrorLevel.RAISE)
    except sqlglot.errors.SqlglotError as exc:
        raise SqlCheckError(f"{exc}\n{statement}") from exc
    if len(parsed) != 1 or parsed[0] is None or isinstance(parsed[0], exp.Command):
        raise SqlCheckError(f"not parsed as one statement: {statement}")
    return "sqlglot"


# --- every statement the builders can make -------------------------------------------------
def builder_statements() -> Iterator[str]:
    yield from sql.CATALOG_DDL
    yield from sql.CATALOG_UPGRADES
    yield from (audit.INSERT_AUDIT_SQL, audit.AUDIT_SQL)
    yield from (quotas.MERGE_QUOTA_SQL, quotas.QUOTA_HITS_SQL, quotas.PRUNE_QUOTA_SQL)
    for name in ("KB_V1", "kb_sample_v1"):
        yield sql.version_table_ddl(name, 384)
        yield sql.doc_index_ddl(name)
        yield sql.text_index_ddl(name)
        yield sql.metadata_index_ddl(name)
        yield sql.acl_index_ddl(name)
        yield vpd.predicate_probe_sql(name)
        yield sql.drop_version_ddl(name)
        yield sql.drop_index_ddl(f"{name}_TIDX", force=True)
        yield sql.drop_index_ddl(f"{name}_VIDX")
        yield sql.alias_view_ddl("KB_ACTIVE", name)
        yield sql.insert_chunk_sql(name)
        yield sql.question_count_sql(name)
        yield sql.update_chunk_sql(name)
        yield sql.delete_chunk_sql(name)
        yield sql.delete_document_sql(name)
        yield sql.document_hashes_sql(name)
        yield sql.document_list_sql(name)
        yield sql.vectors_sql(name)
        yield sql.counts_sql(name)
        yield sql.row_count_sql(name)
        yield sql.asset_refs_sql(name)
        yield sql.asset_refs_sql(name, sql.filter_clause([Visibility.of("alice", ("hr",)).as_filter()])[0])
        yield sql.copy_rows_sql(name, "KB_V0")
        yield sql.empty_table_sql(name)
        yield sql.doc_chunks_sql(name, 1)
        yield sql.doc_chunks_sql(name, sql.DOCS_PER_READ)
    yield sql.drop_alias_ddl("KB_ACTIVE")
    yield from (sql.MERGE_CACHE_SQL, sql.POISONED_CACHE_SQL, sql.PURGE_POISONED_CACHE_SQL)
    yield sql.cached_vectors_sql(1)
    yield sql.cached_vectors_sql(500)
    yield from (sql.FIND_VERSION_SQL, sql.RESOLVE_TARGET_SQL, sql.PROTECTED_SQL, sql.PROTECTED_ONE_SQL,
                sql.BUMP_GENERATION_SQL, sql.INDEX_STATUS_SQL, sql.TABLE_COLUMNS_SQL, sql.CATALOG_COLUMNS_SQL)
    yield from (sql.OPTIMIZE_TEXT_INDEX_SQL, sql.GATHER_TABLE_STATS_SQL)
    yield from (sql.VECTOR_POOL_SQL, sql.POOL_MODE_SQL, sql.ADVISOR_SQL)
    yield from (vpd.OBJECTS_SQL, vpd.CURRENT_SOURCE_SQL, vpd.ADD_POLICY_SQL, vpd.DROP_POLICY_SQL, vpd.POLICIES_SQL)
    yield from (ddl_lock_timeout_sql(0), ddl_lock_timeout_sql(30), ddl_lock_timeout_sql(1_000_000))
    yield from (series_lock.REGISTER_SQL, series_lock.SAY_HOLDER_SQL, series_lock.HOLDER_SQL,
                series_lock.FORGET_HOLDER_SQL, series_lock.lock_sql(0), series_lock.lock_sql(1800))
    for distance in DISTANCES:
        for settings in INDEXES.values():
            ddl = sql.vector_index_ddl("KB_V1", distance, settings)  # type: ignore[arg-type]
            qddl = sql.question_vector_index_ddl("KB_V1", distance, settings)  # type: ignore[arg-type]
            yield from (d for d in (ddl, qddl) if d)
        for filters in FILTERS.values():
            where, _ = sql.filter_clause(filters)
            yield sql.count_matching_sql("KB_V1", where)
            yield sql.dense_search_sql("KB_V1", distance, where, approx=True, target_accuracy=95)  # type: ignore[arg-type]
            yield sql.dense_search_sql("KB_V1", distance, where, approx=True)  # type: ignore[arg-type]
            yield sql.dense_search_sql("KB_V1", distance, where, approx=False)  # type: ignore[arg-type]
            yield sql.candidate_search_sql("KB_V1", distance, where, 90)  # type: ignore[arg-type]
            yield sql.candidate_search_sql("KB_V1", distance, where)  # type: ignore[arg-type]
            yield sql.lexical_search_sql("KB_V1", where)
            # fusion's candidates and by-id reads (ids and scores only, rows for the final hits)
            yield sql.dense_search_sql("KB_V1", distance, where, approx=True, target_accuracy=95,  # type: ignore[arg-type]
                                       ids_only=True)
            yield sql.dense_search_sql("KB_V1", distance, where, approx=False, ids_only=True)  # type: ignore[arg-type]
            # the native filtered HNSW search (review §2.8), hinted
            for ids_only in (False, True):
                yield sql.dense_search_sql("KB_V1", distance, where, approx=True, target_accuracy=95,  # type: ignore[arg-type]
                                           ids_only=ids_only, transform="KB_V1_VIDX")
            yield sql.candidate_search_sql("KB_V1", distance, where, 90, ids_only=True)  # type: ignore[arg-type]
            yield sql.lexical_search_sql("KB_V1", where, ids_only=True)
            yield sql.lexical_search_sql("KB_V1", where, fetch=sql.lexical_fetch(10))  # the score-sorted path
            yield sql.lexical_search_sql("KB_V1", where, ids_only=True, fetch=sql.lexical_fetch(200))
            for columns in sql.BY_ID_COLUMNS:
                yield sql.chunks_by_id_sql("KB_V1", 1, where, columns, distance)  # type: ignore[arg-type]
                yield sql.chunks_by_id_sql("KB_V1", sql.IDS_PER_READ, where, columns, distance)  # type: ignore[arg-type]


# --- every statement a scenario over the public methods executed ---------------------------
def executed_statements() -> list[str]:
    catalog = CatalogDb()
    catalog.add_version("KB_V0", rows=5)
    for index in ("hnsw", "ivf", "none"):
        store = catalog_store(catalog, vector_index={"type": index}, vpd="on")
        store.ensure_catalog()
        name = f"KB_{index.upper()}"
        store.create_version(VersionSpec(name, "mini-lm", 3, "cosine", parent="KB_V0"))
        store.write_documents(name, [doc("d1", 2)])
        store.delete_documents(name, ["d1"])
        store.finish_load(name)
        store.record_evaluation(name, {"hit_at_5": 1.0, "generation": 2})
    store.point_alias("KB_ACTIVE", "KB_HNSW")
    store.point_alias("KB_ACTIVE", "KB_IVF")
    store.rollback_alias("KB_ACTIVE")
    store.protected_versions()
    store.list_versions()
    store.list_aliases()
    store.drop_version("KB_NONE")
    store.drop_alias("KB_ACTIVE")
    statements = catalog.statements()

    recorder = RecordingDb([*registry(V1, aliases={"KB_ACTIVE": "KB_V1"}), when("SELECT COUNT(*)", [(10_000,)]),
                            when("SELECT t.chunk_id, VECTOR_DISTANCE", [("c1", 0.1)]),
                            when("SELECT t.chunk_id, t.dist", [("c1", 0.1)]),
                            when("SELECT t.chunk_id, SCORE(1)", [("c1", 2.5)]),
                            when("VECTOR_DISTANCE", [chunk_row("c1", 0.1)]),
                            when("FROM CHAT_INTERACTIONS ORDER BY", [("q", "rag", "x", None, "KB_ACTIVE", 1.0, "{}",
                                                                     None, "t", "alice")])])
    reader = make_store(recorder, exact_filter_threshold=10)
    q = QueryVector(np.ones(3, np.float32), "mini-lm")
    for filters in FILTERS.values():
        reader.search("KB_ACTIVE", q, 5, filters)
        reader.lexical_search("KB_ACTIVE", "vacation days", 5, filters)
        reader.dense_candidates("KB_ACTIVE", q, 5, filters)
        reader.lexical_candidates("KB_ACTIVE", "vacation days", 5, filters)
    reader.asset_refs("KB_V1")
    alice = Visibility.of("alice", ("hr",))
    for visibility in (None, alice):
        reader.similarities("KB_V1", q, ["c1", "c2"], visibility=visibility)
        reader.fetch_chunks("KB_V1", ["c1", "c2"], visibility=visibility)
        reader.chunk_texts("KB_V1", ["c1", "c2"], visibility=visibility)
    reader.search("KB_ACTIVE", q, 5, visibility=alice)
    reader.lexical_search("KB_ACTIVE", "vacation days", 5, FILTERS["any_of_json"], visibility=alice)
    reader.asset_refs("KB_V1", visibility=alice)
    reader.document_hashes("KB_V1")
    reader.document_list("KB_V1")
    reader.cached_vectors("mini-lm", ["a", "b"])
    reader.version_vectors("KB_ACTIVE")
    reader.resolve_alias("KB_ACTIVE")
    reader.alias_history("KB_ACTIVE")
    reader.record_interaction(Interaction("q", "rag", "x", None, "KB_ACTIVE", 1.0, {}))
    reader.append_audit(AuditEvent("promote", "ok", "alice", "default", "KB_V1", "r1", "http", {"status": 200}, "t"))
    reader.audit_events(5)
    reader.audit_events(5, before_id=10)
    reader.count_request("principal:alice", "minute", "2026-11-28T10:00Z")
    reader.prune_quota_counters("2026-11-27")
    reader.interactions(5)
    reader.count_interactions()
    return statements + recorder.statements() + recorder.statements("executemany")


ALL = sorted(set(builder_statements()) | set(executed_statements()))


@pytest.mark.parametrize("statement", ALL, ids=lambda s: re.sub(r"\W+", "_", s[:60]))
def test_every_generated_statement_is_valid_oracle_sql(statement: str) -> None:
    check(statement)


def test_the_scenario_covers_every_kind_of_statement() -> None:
    heads = {" ".join(s.split()[:3]) for s in ALL}
    for head in ("CREATE VECTOR INDEX", "CREATE SEARCH INDEX", "MERGE INTO RAG_ALIASES", "ALTER TABLE RAG_VERSIONS",
                 "DROP INDEX IF", "DROP INDEX KB_V1_TIDX", "UPDATE RAG_VERSIONS SET", "INSERT INTO RAG_ALIAS_HISTORY",
                 "INSERT INTO CHAT_INTERACTIONS", "INSERT INTO RAG_AUDIT_LOG", "MERGE INTO RAG_QUOTA_COUNTERS",
                 "SET TRANSACTION READ", "DELETE FROM RAG_VERSIONS",
                 "CREATE OR REPLACE"):
        assert head in heads, head
    assert len(ALL) > 150
    assert sum(check(s) == "grammar" for s in ALL) >= 8


@pytest.mark.parametrize("good,bad", [
    ("FETCH APPROX FIRST", "FETCH APROX FIRST"),
    ("FETCH APPROX FIRST :k ROWS ONLY WITH TARGET ACCURACY 95", "FETCH APPROX FIRST :k ROWS WITH TARGET ACCURACY 95"),
    ("ORDER BY dist, t.chunk_id", "ORDER dist, t.chunk_id"),
    ("VECTOR_DISTANCE(t.embedding, :q, COSINE) AS dist", "VECTOR_DISTANCE(t.embedding, :q, COSINE AS dist"),
    ("'$.tags?(@ == $f0 || @ == $f1)'", "'$.tags?(@ = $f0 || @ == $f1)'"),
    ("JSON_SERIALIZE(t.metadata RETURNING CLOB)", "JSON_SERIALIZE(t.metadata RETURNING CLOB"),
])
def test_a_typo_in_a_search_fails_the_check(good: str, bad: str) -> None:
    where, _ = sql.filter_clause(FILTERS["any_of_json"])
    statement = sql.dense_search_sql("KB_V1", "cosine", where, approx=True, target_accuracy=95)
    if "t.chunk_id" in good:
        statement = sql.dense_search_sql("KB_V1", "cosine", where, approx=False)
    assert good in statement
    check(statement)
    with pytest.raises(SqlCheckError):
        check(statement.replace(good, bad, 1))


@pytest.mark.parametrize("statement,good,bad", [
    (sql.vector_index_ddl("KB_V1", "dot", INDEXES["hnsw"]), "ORGANIZATION INMEMORY", "ORGANISATION INMEMORY"),
    (sql.vector_index_ddl("KB_V1", "dot", INDEXES["hnsw"]), "TYPE HNSW", "TYPE IVF"),
    (sql.vector_index_ddl("KB_V1", "dot", INDEXES["ivf"]), "DISTANCE DOT", "DISTANCE MANHATTAN"),
    (sql.text_index_ddl("KB_V1"), "CTXSYS.CONTEXT", "CTXSYS.CONTXT"),
    (sql.metadata_index_ddl("KB_V1"), "FOR JSON", "FOR JSN"),
    (sql.version_table_ddl("KB_V1", 3), "VECTOR(3, FLOAT32)", "VECTOR(3, FLOAT23)"),
    (sql.version_table_ddl("KB_V1", 3), "NUMBER(10) NOT NULL,", "NUMBER(10) NOT NULL"),
    (sql.insert_chunk_sql("KB_V1"), "embedding) VALUES (:chunk_id,", "embedding) VALUES :chunk_id,"),
    (sql.update_chunk_sql("KB_V1"), "SET doc_id = :doc_id,", "SET doc_id = :doc_id doc_hash,"),
    (sql.BUMP_GENERATION_SQL, "INTO :r_model, :r_dimension", "INTO :r_model"),
    (sql.PROTECTED_SQL, "UNION ALL", "UNION ALL ALL"),
    (sql.counts_sql("KB_V1"), "GETLENGTH(text)), 0) +", "GETLENGTH(text), 0) +"),
    (sql.asset_refs_sql("KB_V1"), "'$.image_ref[*]'", "'$.image_ref[*'"),
])
def test_a_typo_in_ddl_or_registry_sql_fails_the_check(statement: Any, good: str, bad: str) -> None:
    assert good in statement
    check(statement)
    with pytest.raises(SqlCheckError):
        check(statement.replace(good, bad, 1))
