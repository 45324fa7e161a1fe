"""Oracle features the store uses since issue 30 (review §2.6-2.9), proved without a server.

* **Native filtered HNSW search** (§2.8): an HNSW version's filtered search is one hinted
  ``FETCH APPROX ... WHERE`` statement (no count first); IVF keeps the count-and-widen plan. A
  filtered statement that comes back short (an index that, against the docs, post-filtered) is
  counted and turns exact, so ``k`` visible hits still come back and no hidden row ever does: the
  stand-in below answers every statement from real rows, honouring each statement's own WHERE.
* **Multivalue index on rag_acl** (§2.9): created by ``finish_load`` with the other indexes, kept
  once valid, gone with the version.
* **Vector-pool advisor** (§2.6): before an HNSW build, ``finish_load`` compares the advisor's
  size with the pool's free bytes; short, it builds IVF (recorded on the version) or fails, in
  both cases before any index is dropped.
* **VPD** (§2.7): with ``vpd: on`` the policy function and context package are created once, every
  version table gets the policy before rows are copied into it, and loses it before it is dropped.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from backend.common.errors import StoreError
from backend.core.types import FieldFilter, QueryVector, VersionSpec, Visibility
from backend.providers.oracle_vs import load_indexes, sql, vector_pool, vpd
from backend.providers.oracle_vs.store import OracleVectorStore
from tests.providers.oracle_fake import CatalogDb, catalog_store, ora
from tests.providers.test_oracle_sql_parse import SqlCheckError, check
from tests.providers.test_oracle_vs import V1, V1_IVF, RecordingDb, make_store, registry, when

Q = QueryVector(np.ones(3, np.float32), "mini-lm")
ALICE = Visibility.of("alice", ("hr",))


# --- native filtered HNSW search (§2.8) ---------------------------------------------------------
def test_hnsw_filtered_search_is_one_hinted_fetch_approx_with_the_acl_inside_and_no_count() -> None:
    db = RecordingDb([*registry(V1), when("SELECT COUNT(*)", [(3,)]),
                      when("t.chunk_id, VECTOR_DISTANCE", [("c1", 0.1), ("c2", 0.2)])])
    found = make_store(db).dense_candidates("KB_V1", Q, 2, [FieldFilter("tags", any_of=("hr",))], visibility=ALICE)
    assert [c for c, _ in found.hits] == ["c1", "c2"]
    statements = db.statements()
    assert statements[0] == sql.RESOLVE_TARGET_SQL and len(statements) == 2  # no COUNT(*), no widening
    search = statements[1]
    assert search.startswith("SELECT /*+ VECTOR_INDEX_TRANSFORM(t KB_V1_VIDX) */ t.chunk_id, VECTOR_DISTANCE(")
    assert "WHERE JSON_EXISTS(t.metadata, '$.tags?(@ == $f0)'" in search
    assert "JSON_EXISTS(t.metadata, '$.rag_acl?(@ == $f1 || @ == $f2 || @ == $f3)'" in search
    assert search.endswith("ORDER BY dist FETCH APPROX FIRST :k ROWS ONLY WITH TARGET ACCURACY 95")
    assert "alice" not in search
    check(search)


def test_the_hint_is_left_out_when_no_json_search_index_competes() -> None:
    db = RecordingDb([*registry(V1), when("t.chunk_id, VECTOR_DISTANCE", [("c1", 0.1)])])
    store = make_store(db)
    store = OracleVectorStore(store.connector, store.settings.model_copy(update={"metadata_index": False}))
    store.dense_candidates("KB_V1", Q, 1, visibility=ALICE)
    search = db.statements()[1]
    assert "/*+" not in search and "FETCH APPROX FIRST :k" in search and "$.rag_acl" in search


def test_an_unfiltered_hnsw_search_and_an_ivf_filtered_search_keep_their_plans() -> None:
    db = RecordingDb([*registry(V1), when("t.chunk_id, VECTOR_DISTANCE", [("c1", 0.1)])])
    make_store(db).dense_candidates("KB_V1", Q, 1)
    assert "/*+" not in db.statements()[1] and "WHERE 1=1 ORDER BY dist FETCH APPROX" in db.statements()[1]
    db = RecordingDb([*registry(V1_IVF), when("SELECT COUNT(*) FROM KB_V1 t WHERE", [(9_000,)]),
                      when(":depth", [("c1", 0.1)])])
    make_store(db, exact_filter_threshold=10).dense_candidates("KB_V1", Q, 1, visibility=ALICE)
    kinds = ["count" if "COUNT(*)" in s else "candidates" if ":depth" in s else "other" for s in db.statements()]
    assert kinds == ["other", "count", "candidates"]
    assert not any("VECTOR_INDEX_TRANSFORM" in s for s in db.statements())


class Corpus:
    """Rows with vectors and ACL labels, answering the store's search statements from their binds:
    the filter is the statement's ACL condition (labels bound as ``f0``...), honoured by every
    statement. The filtered ``FETCH APPROX`` plays an index that post-filters its global top ``k``
    (the worst case), so it comes back short when hidden rows are nearest."""

    def __init__(self, rows: list[tuple[str, list[float], tuple[str, ...]]]) -> None:
        self.rows = rows

    def _visible(self, binds: dict[str, Any]) -> list[tuple[str, float]]:
        labels = {v for k, v in binds.items() if k.startswith("f")}
        q = np.asarray(binds["q"], dtype=np.float32)
        scored = []
        for chunk_id, vec, acl in self.rows:
            v = np.asarray(vec, dtype=np.float32)
            dist = 1.0 - float(q @ v / (np.linalg.norm(q) * np.linalg.norm(v)))
            scored.append((chunk_id, dist, bool(labels & set(acl))))
        scored.sort(key=lambda r: (r[1], r[0]))
        return [(c, d) for c, d, ok in scored if ok] if labels else [(c, d) for c, d, _ in scored]

    def answer(self, statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]] | None:
        if "COUNT(*)" in statement:
            labels = {v for k, v in binds.items() if k.startswith("f")}
            return [(sum(bool(labels & set(acl)) for _, _, acl in self.rows),)]
        if "VECTOR_DISTANCE" not in statement:
            return None
        if "VECTOR_INDEX_TRANSFORM" in statement:  # post-filtered global top k: short when hidden rows are near
            top = {c for c, _ in self._visible({"q": binds["q"]})[:binds["k"]]}
            return [r for r in self._visible(binds) if r[0] in top]
        return self._visible(binds)[:binds["k"]]


def test_a_short_filtered_hnsw_result_is_counted_and_turns_exact_with_k_visible_hits_and_no_hidden_one() -> None:
    hidden = [(f"secret{i}", [1.0, 0.0, 0.01 * i], ("group:finance",)) for i in range(5)]  # nearest to q
    visible = [(f"open{i}", [1.0, 1.0, 0.1 * i], ("public",)) for i in range(4)]
    corpus = Corpus(hidden + visible)
    db = RecordingDb([*registry(V1), corpus.answer])
    query = QueryVector(np.asarray([1.0, 0.0, 0.0], np.float32), "mini-lm")
    found = make_store(db).dense_candidates("KB_V1", query, 3, visibility=ALICE)
    ids = [c for c, _ in found.hits]
    assert ids == ["open0", "open1", "open2"]  # k visible hits, the nearest visible ones
    assert not any(i.startswith("secret") for i in ids)
    kinds = ["hnsw" if "VECTOR_INDEX_TRANSFORM" in s else "count" if "COUNT(*)" in s else
             "exact" if "FETCH FIRST :k" in s else "other" for s in db.statements()]
    assert kinds == ["other", "hnsw", "count", "exact"]
    for statement in db.statements()[1:]:
        assert "$.rag_acl?(@ == $f0" in statement  # the ACL is in every statement, hidden rows never get a slot


# --- the multivalue index on rag_acl (§2.9) ---------------------------------------------------
def test_finish_load_creates_the_acl_multivalue_index_once_and_it_goes_with_the_version() -> None:
    db = CatalogDb()
    db.add_version("KB_V1", rows=3)
    store = catalog_store(db)
    store.finish_load("KB_V1")
    created = [s for s in db.statements() if s.startswith("CREATE MULTIVALUE INDEX")]
    assert created == ["CREATE MULTIVALUE INDEX KB_V1_AIDX ON KB_V1 t (t.metadata.rag_acl.string())"]
    assert db.indexes["KB_V1_AIDX"][0] == "KB_V1"
    store.finish_load("KB_V1")  # valid: kept
    assert sum(s.startswith("CREATE MULTIVALUE INDEX") for s in db.statements()) == 1
    store.drop_version("KB_V1")
    assert "KB_V1_AIDX" not in db.indexes


def test_no_acl_index_when_switched_off() -> None:
    db = CatalogDb()
    db.add_version("KB_V1", rows=3)
    catalog_store(db, acl_index=False).finish_load("KB_V1")
    assert not any("MULTIVALUE" in s for s in db.statements())


# --- the vector-pool advisor before HNSW (§2.6) -------------------------------------------------
class PoolDb(CatalogDb):
    """``CatalogDb`` whose vector pool and advisor answer as a test says; records the type change."""

    def __init__(self, free: int | None, advised: str | None = "Suggested vector memory pool size: 1000 Bytes",
                 mode: tuple[Any, Any] = (None, "0")) -> None:
        super().__init__()
        self.free, self.advised, self.mode = free, advised, mode
        self.advisor_calls: list[dict[str, Any]] = []

    def _dml(self, s: str, b: dict[str, Any]) -> list[tuple[Any, ...]]:
        if s == sql.VECTOR_POOL_SQL:
            if self.free is None:
                return []
            return [("1MB POOL", self.free + 4096, 4096, "DONE"), ("64KB POOL", 0, 0, "DONE")]
        if s == sql.POOL_MODE_SQL:
            return [self.mode]
        if s == sql.ADVISOR_SQL:
            self.advisor_calls.append({k: v for k, v in b.items() if k != "response"})
            if self.advised is None:
                raise ora(6550, "PLS-00302: component 'INDEX_VECTOR_MEMORY_ADVISOR' must be declared")
            return [(self.advised,)]
        if s == load_indexes._SET_INDEX_TYPE:
            self._update_version(b["name"], lambda r: r.__setitem__(4, b["index_type"]))
            return []
        return super()._dml(s, b)


def _old_hnsw(db: CatalogDb) -> None:
    """KB_V1 at generation 2 with an HNSW index built at generation 1 (so finish_load rebuilds)."""
    db.add_version("KB_V1", rows=3, generation=2, params=json.dumps({"type": "hnsw", "built_generation": 1}))
    db.indexes["KB_V1_VIDX"] = ("KB_V1", "VALID", None)


def test_a_graph_that_fits_the_pool_is_built_as_hnsw() -> None:
    db = PoolDb(free=10_000)
    _old_hnsw(db)
    catalog_store(db).finish_load("KB_V1")
    built = [s for s in db.statements() if s.startswith("CREATE VECTOR INDEX KB_V1_VIDX")]
    assert built and "TYPE HNSW" in built[0]
    assert db.advisor_calls[0] == {"index_type": "HNSW", "num_vectors": 3, "dim_count": 3, "dim_type": "FLOAT32",
                                   "parameters": json.dumps({"neighbors": 32})}


def test_an_int8_graph_is_sized_as_int8() -> None:
    """Review §2.11 with §2.6: an INT8 version's graph needs a quarter of FLOAT32's bytes; sizing it as
    FLOAT32 would fall back to IVF for a graph that fits."""
    db = PoolDb(free=10_000)
    _old_hnsw(db)
    db.versions["KB_V1"][11] = json.dumps({"format": 1, "vector_format": "int8"})
    catalog_store(db).finish_load("KB_V1")
    assert db.advisor_calls[0]["dim_type"] == "INT8"


def test_a_short_pool_falls_back_to_ivf_and_the_version_records_it() -> None:
    db = PoolDb(free=500)
    _old_hnsw(db)
    store = catalog_store(db, vector_index={"pool_shortfall": "ivf"})
    store.finish_load("KB_V1")
    built = [s for s in db.statements() if s.startswith("CREATE VECTOR INDEX")]
    assert built and all("TYPE IVF" in s for s in built)
    assert db.versions["KB_V1"][4] == "ivf"
    assert json.loads(db.versions["KB_V1"][10])["type"] == "ivf"
    before = len(db.statements())
    store.finish_load("KB_V1")  # built at this generation as IVF: nothing to do, no advisor either
    assert not any(s.startswith(("CREATE VECTOR", "DROP INDEX")) for s in db.statements()[before:])


def test_a_short_pool_fails_before_anything_is_dropped_naming_the_figures_and_the_parameter() -> None:
    db = PoolDb(free=500)
    _old_hnsw(db)
    with pytest.raises(StoreError, match=r"need about 1000 bytes .* has 500 bytes free: nothing was dropped or "
                                         r"changed\. raise VECTOR_MEMORY_SIZE by at least 500 bytes"):
        catalog_store(db).finish_load("KB_V1")  # fail is the default (review 4, M1)
    statements = db.statements()
    assert not any(s.startswith(("DROP", "CREATE", "UPDATE", "BEGIN DBMS_STATS", "BEGIN CTX_DDL")) for s in statements)
    assert db.indexes["KB_V1_VIDX"] == ("KB_V1", "VALID", None) and db.versions["KB_V1"][4] == "hnsw"


def test_build_anyway_and_an_unknown_pool_build_hnsw() -> None:
    for db, settings in ((PoolDb(free=500), {"pool_shortfall": "build"}), (PoolDb(free=None), {})):
        _old_hnsw(db)
        catalog_store(db, vector_index=settings).finish_load("KB_V1")
        assert any(s.startswith("CREATE VECTOR INDEX KB_V1_VIDX") and "TYPE HNSW" in s for s in db.statements())


def test_an_unreadable_pool_builds_hnsw_and_a_failing_advisor_falls_back_to_the_formula() -> None:
    db = PoolDb(free=10_000)
    _old_hnsw(db)
    db.fail(sql.VECTOR_POOL_SQL, ora(942, "table or view does not exist"))
    catalog_store(db).finish_load("KB_V1")
    assert any("TYPE HNSW" in s for s in db.statements()) and db.advisor_calls == []
    db = PoolDb(free=40, advised=None)  # formula: 1.3 x 3 vectors x 3 dims x 4 bytes = 46 > 40
    _old_hnsw(db)
    catalog_store(db, vector_index={"pool_shortfall": "ivf"}).finish_load("KB_V1")
    assert db.versions["KB_V1"][4] == "ivf"


@pytest.mark.parametrize("mode", [("DWCS", "0"), (None, "1"), (None, "1000000")])
def test_m1_a_pool_that_grows_on_demand_builds_hnsw_without_sizing_it(mode: tuple[Any, Any]) -> None:
    """Review 4, M1 (fails at 18552a8): on Autonomous Database, with an elastic pool or under a PDB
    quota above the allocation, allocated minus used says nothing about what a build gets; the default
    then built IVF silently everywhere there. Now HNSW is built, and no advisor call is made."""
    db = PoolDb(free=500, mode=mode)
    _old_hnsw(db)
    catalog_store(db).finish_load("KB_V1")
    assert any(s.startswith("CREATE VECTOR INDEX KB_V1_VIDX") and "TYPE HNSW" in s for s in db.statements())
    assert db.versions["KB_V1"][4] == "hnsw" and db.advisor_calls == []


def test_m1_a_short_fixed_pool_fails_by_default() -> None:
    """Review 4, M1: the fallback to IVF is a decision in config, not the default."""
    from backend.common.config import OracleVectorIndexSettings

    assert OracleVectorIndexSettings().pool_shortfall == "fail"
    assert vector_pool.grows_on_demand(None, 805306368, 805306368) is None
    assert vector_pool.pool_mode(("  ", "abc")) == (None, None)


@pytest.mark.parametrize("response,expected", [
    ("Suggested vector memory pool size: 59918628 Bytes", 59918628),
    ("Using default accuracy: 90%\nSuggested vector memory pool size: 76396251 Bytes", 76396251),
    ('{"suggested_vector_memory_size":"2MB"}', 2 * 1024 ** 2),
    ('{"suggested_vector_memory_size": 1234}', 1234),
    ('{"result": {"vector_memory_size": "1.5 GB"}}', int(1.5 * 1024 ** 3)),
    ("", None), ("no figure here", None), ('{"status": "ok"}', None),
])
def test_the_advisor_response_is_read_as_bytes(response: str, expected: int | None) -> None:
    assert vector_pool.advised_bytes(response) == expected


def test_pool_decisions() -> None:
    assert vector_pool.free_bytes([]) is None
    assert vector_pool.free_bytes([("1MB POOL", 100, 30, "DONE"), ("64KB POOL", 10, 5, "DONE")]) == 75
    assert vector_pool.decide(version="V", needed=10, free=10, shortfall="fail").action == "hnsw"
    assert vector_pool.decide(version="V", needed=None, free=1, shortfall="fail").action == "hnsw"
    verdict = vector_pool.decide(version="V", needed=11, free=10, shortfall="ivf")
    assert verdict.action == "ivf" and "VECTOR_MEMORY_SIZE" in verdict.message
    assert vector_pool.formula_bytes(1000, 384) == int(1.3 * 1000 * 384 * 4)


# --- VPD (§2.7) ----------------------------------------------------------------------------------
def test_vpd_objects_are_created_once_when_missing() -> None:
    db = CatalogDb()
    catalog_store(db, vpd="on").ensure_catalog()
    created = [s.split(" AS")[0].split(" (")[0] for s in db.statements() if s.startswith("CREATE OR REPLACE F") or
               s.startswith("CREATE OR REPLACE P")]
    assert created == ["CREATE OR REPLACE FUNCTION RAG_ACL_PREDICATE", "CREATE OR REPLACE PACKAGE RAG_ACL_CTX",
                       "CREATE OR REPLACE PACKAGE BODY RAG_ACL_CTX"]
    for statement in (vpd.FUNCTION_DDL, vpd.PACKAGE_DDL, vpd.PACKAGE_BODY_DDL):
        check(statement)

    class Present(CatalogDb):
        current = 1

        def _dml(self, s: str, b: dict[str, Any]) -> list[tuple[Any, ...]]:
            if s == vpd.OBJECTS_SQL:
                return [("RAG_ACL_PREDICATE", "FUNCTION"), ("RAG_ACL_CTX", "PACKAGE"), ("RAG_ACL_CTX", "PACKAGE BODY")]
            if s == vpd.CURRENT_SOURCE_SQL:
                return [(self.current,)]
            return super()._dml(s, b)

    db = Present()
    catalog_store(db, vpd="on").ensure_catalog()
    assert not any(s.startswith("CREATE OR REPLACE F") for s in db.statements())
    db = Present()
    db.current = 0  # objects of before review 4 M4 (the shared RAG_ACL context): replaced
    catalog_store(db, vpd="on").ensure_catalog()
    assert sum(s.startswith("CREATE OR REPLACE") for s in db.statements()) == 3
    db = CatalogDb()
    catalog_store(db).ensure_catalog()
    assert not any("RAG_ACL" in s for s in db.statements())


def test_a_new_version_gets_the_policy_before_rows_are_copied_and_loses_it_before_its_table_is_dropped() -> None:
    db = CatalogDb()
    db.add_version("KB_V0", rows=5)
    store = catalog_store(db, vpd="on")
    store.create_version(VersionSpec("KB_V1", "mini-lm", 3, "cosine", parent="KB_V0"))
    statements = db.statements()
    policy = statements.index(vpd.ADD_POLICY_SQL)
    binds = [b for k, b in db.log if k == "binds" and b.get("object_name")]
    assert binds[0] == {"object_name": "KB_V1"}
    assert policy < next(i for i, s in enumerate(statements) if s.startswith("INSERT INTO KB_V1 (chunk_id"))
    db.fail(vpd.ADD_POLICY_SQL, ora(28101, "policy already exists"))
    store.finish_load("KB_V1")  # an existing policy is kept, not an error
    store.drop_version("KB_V1")
    statements = db.statements()
    assert statements.index(vpd.DROP_POLICY_SQL) < statements.index(sql.drop_version_ddl("KB_V1"))


def test_without_vpd_no_dbms_rls_call_is_made() -> None:
    db = CatalogDb()
    db.add_version("KB_V0", rows=5)
    store = catalog_store(db)
    store.create_version(VersionSpec("KB_V1", "mini-lm", 3, "cosine", parent="KB_V0"))
    store.finish_load("KB_V1")
    store.drop_version("KB_V1")
    assert not any("DBMS_RLS" in s for s in db.statements())


def test_the_policy_predicate_is_the_runtime_acl_condition_over_the_context_labels() -> None:
    assert "JSON_EXISTS(metadata, '$.rag_acl?(@ == $f0)' PASSING l.label AS \"f0\")" in vpd.PREDICATE
    assert "SYS_CONTEXT('RAG_ACL_RAG_APP', 'LABELS', 4000)" in vpd.predicate("rag_app")
    assert check(vpd.predicate_probe_sql("KB_V1")) == "sqlglot"
    assert vpd.context_ddl("rag_app") == "CREATE OR REPLACE CONTEXT RAG_ACL_RAG_APP USING RAG_APP.RAG_ACL_CTX"
    with pytest.raises(Exception, match="schema"):
        vpd.context_ddl("x; DROP USER y")


@pytest.mark.parametrize("statement,good,bad", [
    (sql.dense_search_sql("KB_V1", "cosine", "1=1", approx=True, transform="KB_V1_VIDX"),
     "VECTOR_INDEX_TRANSFORM(t KB_V1_VIDX)", "VECTOR_INDEX_TRANSFORM(t KB_V1_VIDX"),
    (sql.dense_search_sql("KB_V1", "cosine", "1=1", approx=True, transform="KB_V1_VIDX"),
     "/*+ VECTOR_INDEX_TRANSFORM", "/*+ VECTOR_INDEX_TRANSFROM"),
    (sql.dense_search_sql("KB_V1", "cosine", "1=1", approx=True, transform="KB_V1_VIDX"), "*/ t.", " t."),
    (sql.acl_index_ddl("KB_V1"), "rag_acl.string()", "rag_acl.string("),
    (sql.acl_index_ddl("KB_V1"), "MULTIVALUE INDEX", "MULTIVALUE INDX"),
    (vpd.ADD_POLICY_SQL, "DBMS_RLS.CONTEXT_SENSITIVE", "DBMS_RLS.CONTEXT_SENSITIV"),
    (vpd.FUNCTION_DDL, "RETURN NULL;", "RETURN NULL"),
    (vpd.PACKAGE_BODY_DDL, "END clear_labels;", "END clear_label;"),
    (sql.ADVISOR_SQL, "RESPONSE_JSON => :response); END;", "RESPONSE_JSON => :response; END;"),
])
def test_a_typo_in_a_new_statement_fails_the_check(statement: str, good: str, bad: str) -> None:
    assert good in statement
    check(statement)
    with pytest.raises(SqlCheckError):
        check(statement.replace(good, bad, 1))


def test_a_hint_refuses_an_exact_search_and_a_bad_index_name() -> None:
    with pytest.raises(ValueError, match="approximate"):
        sql.dense_search_sql("KB_V1", "cosine", "1=1", approx=False, transform="KB_V1_VIDX")
    with pytest.raises(Exception, match="index name"):
        sql.dense_search_sql("KB_V1", "cosine", "1=1", approx=True, transform="X) */ DROP")


# --- rag oracle check: the shapes the store now sends, and the VPD rows ----------------------------
def _first_contact(db: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, **oracle: Any) -> dict[str, Any]:
    import yaml

    from tests.providers.test_oracle_first_contact import checks, invoke

    profile = tmp_path / "rag.yaml"
    profile.write_text(yaml.safe_dump({"store": {"backend": "oracle", "oracle": {
        "dsn": "db.test:1521/FREEPDB1", "user": "rag", **oracle}}}))
    return checks(invoke(db, profile, monkeypatch, "--json"))


def test_the_check_explains_ivf_candidates_for_an_ivf_version(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from backend.providers.oracle_vs import first_contact as fc
    from tests.providers.test_oracle_first_contact import V, ScriptedDb

    db = ScriptedDb(**{fc.LATEST_VERSION_SQL: [(V, "mini-lm", 384, "cosine", "ivf", None, "2026-11-25", None, 3,
                                                 None, None, None)]})
    found = _first_contact(db, tmp_path, monkeypatch)
    assert found["plan: filtered candidates"]["status"] == "pass"
    assert "plan: filtered FETCH APPROX" not in found
    assert not any("VECTOR_INDEX_TRANSFORM" in s for s in db.statements())


def test_the_check_reports_the_vpd_objects_and_policy(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.providers.test_oracle_first_contact import V, ScriptedDb

    objects = [("RAG_ACL_PREDICATE", "FUNCTION"), ("RAG_ACL_CTX", "PACKAGE"), ("RAG_ACL_CTX", "PACKAGE BODY")]
    found = _first_contact(ScriptedDb(**{vpd.OBJECTS_SQL: objects, vpd.POLICIES_SQL: [(V,)]}), tmp_path, monkeypatch,
                           vpd="on")
    assert found["VPD objects"]["status"] == "pass" and found["VPD policy"]["status"] == "pass"
    assert "CREATE OR REPLACE CONTEXT RAG_ACL_RAG USING RAG.RAG_ACL_CTX" in found["VPD policy"]["detail"]
    found = _first_contact(ScriptedDb(**{vpd.OBJECTS_SQL: objects[:1], vpd.POLICIES_SQL: []}), tmp_path, monkeypatch,
                           vpd="on")
    assert found["VPD objects"]["status"] == "fail" and found["VPD policy"]["status"] == "fail"
    assert "Enterprise Edition" in found["VPD policy"]["fix"]
    found = _first_contact(ScriptedDb(), tmp_path, monkeypatch)
    assert "VPD policy" not in found  # vpd off: not asked


def test_the_parse_scenario_runs_the_new_statements() -> None:
    """``test_oracle_sql_parse`` parses what a scenario executed: it must include each new kind."""
    from tests.providers.test_oracle_sql_parse import ALL

    for wanted in ("CREATE MULTIVALUE INDEX KB_HNSW_AIDX", vpd.ADD_POLICY_SQL, vpd.DROP_POLICY_SQL, vpd.FUNCTION_DDL,
                   vpd.PACKAGE_BODY_DDL, "SELECT /*+ VECTOR_INDEX_TRANSFORM(t KB_V1_VIDX) */", sql.ADVISOR_SQL):
        assert any(s.startswith(wanted) for s in ALL), wanted


def test_the_advisor_sizes_the_question_graph_too_and_the_sum_decides() -> None:
    db = PoolDb(free=1500)  # each graph: 1000 bytes by the advisor; two do not fit
    _old_hnsw(db)
    db.tables["KB_V1_QUESTIONS"] = 7
    catalog_store(db, vector_index={"pool_shortfall": "ivf"}).finish_load("KB_V1")
    assert [c["num_vectors"] for c in db.advisor_calls] == [3, 7]
    assert db.versions["KB_V1"][4] == "ivf"


def test_a_refused_policy_names_the_setting_and_what_it_needs() -> None:
    db = CatalogDb()
    db.add_version("KB_V0", rows=5)
    db.fail(vpd.ADD_POLICY_SQL, ora(6550, "PLS-00201: identifier 'DBMS_RLS' must be declared"))
    with pytest.raises(StoreError, match=r"adding the RAG_ACL policy to KB_V1 failed: .*PLS-00201.*"
                                         r"store.oracle.vpd is on: it needs Enterprise Edition, EXECUTE ON DBMS_RLS"):
        catalog_store(db, vpd="on").create_version(VersionSpec("KB_V1", "mini-lm", 3, "cosine", parent="KB_V0"))
    assert "KB_V1" not in db.versions  # registered only after the DDL phase: a retry completes it


def test_a_version_loaded_before_the_acl_index_is_advisory_in_the_check(tmp_path: Any,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.providers.test_oracle_first_contact import MIDX, TIDX, VIDX, ScriptedDb

    db = ScriptedDb(**{sql.INDEX_STATUS_SQL: [(VIDX, "VALID", None), (TIDX, "VALID", "VALID"), (MIDX, "VALID", "VALID")]})
    found = _first_contact(db, tmp_path, monkeypatch)
    row = found["ACL multivalue index"]
    assert row["status"] == "fail" and not row["required"] and "finish_load" in row["fix"]
    assert found["vector index"]["status"] == "pass"


def test_m4_each_schema_has_its_own_context_and_public_rows_are_always_visible() -> None:
    """Review 4, M4 (fails at 18552a8): the context ``RAG_ACL`` was one name per database, so a second
    schema (staging beside production) rebound it to its own package and broke the first; and the
    predicate showed ``public`` rows only when the context was unset, unlike the runtime's
    ``Visibility``, which always adds ``public``."""
    assert vpd.context_ddl("rag_prod") != vpd.context_ddl("rag_stage")
    assert vpd.context_ddl("rag_stage") == "CREATE OR REPLACE CONTEXT RAG_ACL_RAG_STAGE USING RAG_STAGE.RAG_ACL_CTX"
    # public is ORed in whatever the context says; no context means no other label
    assert vpd.PREDICATE.startswith("(JSON_EXISTS(metadata, '$.rag_acl?(@ == $f0)' PASSING 'public' AS \"f0\") OR EXISTS (")
    assert "NVL(SYS_CONTEXT('#CTX#', 'LABELS', 4000), '[]')" in vpd.PREDICATE
    # the function names its owner's context, the package sets its owner's: nothing names a shared one
    for ddl in (vpd.FUNCTION_DDL, vpd.PACKAGE_BODY_DDL):
        assert "'RAG_ACL'" not in ddl and "SUBSTR('RAG_ACL_' || " in ddl
        check(ddl)
    assert check(vpd.predicate_probe_sql("KB_V1", "rag_prod")) == "sqlglot"
