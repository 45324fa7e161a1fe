"""``rag oracle check`` against a scripted database: every statement it sends is answered from a
script (a dictionary view's rows, a plan, an error), so each first-contact outcome is reproduced
without a server: a database that passes everything, a missing privilege, a plan that scans the
table instead of the vector index, a release older than 23.4, the SQLite backend refused, and
secrets never printed. Every statement it sends is checked as Oracle SQL (sqlglot's dialect;
``EXPLAIN PLAN`` and the advisor's PL/SQL block by a strict pattern around a parsed body)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from click.testing import CliRunner

from backend.cli import oracle as oracle_cli
from backend.cli.main import cli
from backend.providers.oracle_vs import first_contact as fc
from backend.providers.oracle_vs import plan_checks, query_model, sql, vpd
from backend.providers.oracle_vs.connection import OracleConnector
from tests.providers.oracle_fake import FakeCursor, ora
from tests.providers.test_oracle_sql_parse import check as check_sql

V = "KB_V1"
VIDX, TIDX = sql.index_names(V)
MIDX = sql.metadata_index_name(V)
AIDX = sql.acl_index_name(V)
PASSWORD = "s3cret-Pa55word"
WALLET_PASSWORD = "w4llet-Secret"

Answer = list[tuple[Any, ...]] | BaseException | Callable[[str, dict[str, Any]], list[tuple[Any, ...]]]


def good_plan(statement: str) -> list[tuple[Any, ...]]:
    """A plan as 23ai writes it for each shape: vector index for FETCH APPROX, the Text index for
    CONTAINS, the JSON search index for JSON_EXISTS."""
    if "FETCH APPROX" in statement:
        return [(0, "SELECT STATEMENT", None, None), (1, "COUNT", "STOPKEY", None),
                (2, "VIEW", None, None), (3, "SORT", "ORDER BY STOPKEY", None),
                (4, "TABLE ACCESS", "BY INDEX ROWID", V), (5, "VECTOR INDEX", "HNSW SCAN", VIDX)]
    if "CONTAINS" in statement:
        return [(0, "SELECT STATEMENT", None, None), (1, "TABLE ACCESS", "BY INDEX ROWID", V),
                (2, "DOMAIN INDEX", None, TIDX)]
    if "$.rag_acl" in statement:  # the access condition through the multivalue index (review §2.9)
        return [(0, "SELECT STATEMENT", None, None), (1, "SORT", "AGGREGATE", None),
                (2, "TABLE ACCESS", "BY INDEX ROWID BATCHED", V), (3, "HASH", "UNIQUE", None),
                (4, "INDEX", "RANGE SCAN (MULTI VALUE)", AIDX)]
    return [(0, "SELECT STATEMENT", None, None), (1, "TABLE ACCESS", "BY INDEX ROWID", V),
            (2, "DOMAIN INDEX", None, MIDX)]


def scanning_plan(statement: str) -> list[tuple[Any, ...]]:
    """The optimizer skipped the vector index (review U2's fear): a full scan and a sort."""
    if "FETCH APPROX" in statement:
        return [(0, "SELECT STATEMENT", None, None), (1, "SORT", "ORDER BY STOPKEY", None),
                (2, "TABLE ACCESS", "FULL", V)]
    return good_plan(statement)


class ScriptedDb:
    """Answers by statement prefix (the first match wins); records every statement and its binds."""

    def __init__(self, server_version: str = "23.7.0.25.1", plan: Callable[[str], list[tuple[Any, ...]]] = good_plan,
                 **overrides: Answer) -> None:
        self.server_version = server_version
        self.plan = plan
        self.log: list[tuple[str, Any]] = []
        self.explained: dict[str, str] = {}
        self.plan_rows: set[str] = set()
        self.rolled_back = False
        self.script: dict[str, Answer] = {
            fc.SESSION_PRIVS_SQL: [("CREATE SESSION",), ("CREATE TABLE",), ("CREATE VIEW",), ("CREATE SEQUENCE",),
                                   ("CREATE MINING MODEL",), ("CREATE JOB",)],
            fc.USER_SYS_PRIVS_SQL: [],
            fc.SESSION_ROLES_SQL: [("DB_DEVELOPER_ROLE",), ("CTXAPP",), ("RESOURCE",)],
            fc.DEFAULT_TABLESPACE_SQL: [("RAG", "USERS")],
            fc.TS_QUOTAS_SQL: [("USERS", 10_485_760, -1)],
            fc.VECTOR_POOL_SQL: [("1MB POOL", 536_870_912, 1_048_576, "DONE"), ("64KB POOL", 268_435_456, 0, "DONE")],
            fc.LATEST_VERSION_SQL: [(V, "mini-lm", 384, "cosine", "hnsw", None, "2026-11-25", None, 3, None, None, None)],
            fc.row_count_sql(V): [(1204,)],
            fc.ADVISOR_SQL: [('{"suggested_vector_memory_size":"2MB"}',)],
            sql.INDEX_STATUS_SQL: [(VIDX, "VALID", None), (TIDX, "VALID", "VALID"), (MIDX, "VALID", "VALID"),
                                   (AIDX, "VALID", None), ("KB_V1_PK", "VALID", None)],
            "SELECT 'question'": [],
            sql.POISONED_CACHE_SQL: [(0,)],
            vpd.CURRENT_SOURCE_SQL: [(1,)],
            sql.POOL_MODE_SQL: [(None, "0")],
            query_model.MODEL_SQL: [],
            "SELECT t.chunk_id, SCORE(1)": [],
        }
        self.script.update({k.replace("__", " "): v for k, v in overrides.items()})

    def answer(self, statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]]:
        # the thin driver raises DPY-4010 before sending a statement with an unbound placeholder
        # (EXPLAIN PLAN too: only DDL skips the bind scan)
        placeholders = set(re.findall(r"(?<!\w):([A-Za-z]\w*)", re.sub(r"'[^']*'", "", statement)))
        assert placeholders == set(binds), f"binds {sorted(binds)} for placeholders {sorted(placeholders)}: {statement}"
        if m := re.match(r"EXPLAIN PLAN SET STATEMENT_ID = '(\w+)' INTO PLAN_TABLE FOR (.*)$", statement):
            self.explained[m.group(1)] = m.group(2)
            self.plan_rows.add(m.group(1))
            return []
        if statement == plan_checks.PLAN_ROWS_SQL:
            return self.plan(self.explained[binds["sid"]])
        if statement == plan_checks.DELETE_PLAN_SQL:
            self.plan_rows.discard(binds["sid"])
            return []
        for prefix, found in self.script.items():
            if statement.startswith(prefix):
                if isinstance(found, BaseException):
                    raise found
                return found(statement, binds) if callable(found) else list(found)
        raise AssertionError(f"unscripted statement: {statement}")

    def statements(self) -> list[str]:
        return [s for k, s in self.log if k == "execute"]


class _Cursor(FakeCursor):
    def _answer(self, statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]]:
        return self.db.answer(statement, binds)


class _Connection:
    def __init__(self, db: ScriptedDb) -> None:
        self.db = db
        self.version = db.server_version

    def __enter__(self) -> "_Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def cursor(self) -> _Cursor:
        return _Cursor(self.db)

    def rollback(self) -> None:
        self.db.rolled_back = True
        self.db.log.append(("rollback", ""))

    def commit(self) -> None:  # pragma: no cover - the check must never commit
        raise AssertionError("rag oracle check committed")


class _Pool:
    def __init__(self, db: ScriptedDb) -> None:
        self.db = db

    def acquire(self) -> _Connection:
        return _Connection(self.db)

    def close(self, force: bool = False) -> None:
        pass


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    path = tmp_path / "rag.yaml"
    path.write_text(yaml.safe_dump({"store": {"backend": "oracle", "oracle": {
        "dsn": "db.test:1521/FREEPDB1", "user": "rag"}}}))
    return path


def invoke(db: ScriptedDb, profile: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    monkeypatch.setattr(oracle_cli, "open_connector", lambda settings: OracleConnector(_Pool(db), "db.test:1521"))
    return CliRunner().invoke(cli, ["--config", str(profile), "oracle", "check", *args],
                              env={"RAG_STORE__ORACLE__PASSWORD": PASSWORD,
                                   "RAG_STORE__ORACLE__WALLET_PASSWORD": WALLET_PASSWORD})


def checks(result: Any) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in json.loads(result.stdout)["checks"]}


def assert_read_only(db: ScriptedDb) -> None:
    """Only SELECTs, EXPLAIN PLAN, the advisor's block and the deletion of its own plan rows; every
    plan row deleted and the transaction rolled back."""
    for statement in db.statements():
        assert statement.startswith(("SELECT", "EXPLAIN PLAN SET STATEMENT_ID = 'RAG_CHECK_", "BEGIN DBMS_VECTOR.")) \
            or statement == plan_checks.DELETE_PLAN_SQL, statement
    assert not db.plan_rows and db.rolled_back


# --- outcomes ---------------------------------------------------------------------------------
def test_a_database_that_passes_everything_exits_0(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = ScriptedDb()
    result = invoke(db, profile, monkeypatch, "--json")
    assert result.exit_code == 0, result.output
    found = checks(result)
    assert {c["status"] for c in found.values()} <= {"pass", "skip"}
    assert found["database version"]["detail"].startswith("23.7.0.25.1 >= 23.4")
    assert "not in this release: 23.10+" in found["database version"]["detail"]  # not in this release
    for shape in ("plan: dense FETCH APPROX", "plan: filtered FETCH APPROX", "plan: ACL count",
                  "plan: lexical CONTAINS", "plan: JSON filter count", "plan: JSON filter exact"):
        assert found[shape]["status"] == "pass", found[shape]
    assert "VECTOR INDEX HNSW SCAN KB_V1_VIDX" in found["plan: dense FETCH APPROX"]["plan"]
    # an HNSW version's filtered search is the hinted one-statement shape (review §2.8), required
    assert found["plan: filtered FETCH APPROX"]["covers"] == "U2 U3 §2.8" and found["plan: filtered FETCH APPROX"]["required"]
    assert "plan: filtered candidates" not in found  # IVF's shape
    assert "INDEX RANGE SCAN (MULTI VALUE) KB_V1_AIDX" in found["plan: ACL count"]["plan"]
    assert "2MB" in found["vector memory advisor"]["detail"]
    assert {found[n]["covers"] for n in ("MERGE of a 5,000-byte payload", "IVF on the contract corpus",
                                         "a kill between an IVF build and its record")} == {"U4", "contract", "U9"}
    assert_read_only(db)
    explained = [b for (kind, s), (_, b) in zip(db.log, db.log[1:]) if kind == "execute" and s.startswith("EXPLAIN")]
    assert len(explained) == 6 and all(len(b["q"]) == 384 for b in explained if "q" in b)
    table = invoke(ScriptedDb(), profile, monkeypatch)
    assert table.exit_code == 0
    assert table.stdout.splitlines()[0].startswith("rag oracle check: db.test:1521 as RAG (Oracle 23.7.0.25.1)")
    assert re.search(r"^pass +plan: dense FETCH APPROX +U2 +uses the vector index KB_V1_VIDX$", table.stdout, re.M)
    assert "(exit 0)" in table.stdout.splitlines()[-1]


def test_a_missing_privilege_fails_and_names_the_grant(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = ScriptedDb(**{fc.SESSION_PRIVS_SQL: [("CREATE SESSION",), ("CREATE TABLE",), ("CREATE SEQUENCE",)],
                       fc.TS_QUOTAS_SQL: []})
    result = invoke(db, profile, monkeypatch)
    assert result.exit_code == 1, result.output
    assert re.search(r"^fail +privilege CREATE VIEW +§1\.5 +missing: needed for alias views$", result.stdout, re.M)
    assert "-> GRANT CREATE VIEW TO RAG;" in result.stdout
    assert "-> ALTER USER RAG QUOTA UNLIMITED ON USERS;" in result.stdout
    assert "not ready (exit 1)" in result.stdout
    found = checks(invoke(db, profile, monkeypatch, "--json"))
    assert found["privilege CREATE VIEW"]["fix"].startswith("GRANT CREATE VIEW TO RAG;")
    assert found["privilege CREATE TABLE"]["status"] == "pass"


def test_a_missing_text_role_and_an_unreadable_pool(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = ScriptedDb(**{fc.SESSION_ROLES_SQL: [("RESOURCE",)], fc.VECTOR_POOL_SQL: ora(942, "table or view does not exist")})
    found = checks(invoke(db, profile, monkeypatch, "--json"))
    assert found["role CTXAPP"]["status"] == "fail" and "GRANT CTXAPP TO RAG" in found["role CTXAPP"]["fix"]
    assert found["vector pool"]["status"] == "warn" and not found["vector pool"]["required"]
    assert "SELECT_CATALOG_ROLE" in found["vector pool"]["fix"]


def test_a_plan_that_scans_the_table_instead_of_the_vector_index_fails(profile: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    db = ScriptedDb(plan=scanning_plan)
    result = invoke(db, profile, monkeypatch, "--json")
    assert result.exit_code == 1
    found = checks(result)
    dense = found["plan: dense FETCH APPROX"]
    assert dense["status"] == "fail" and dense["required"]
    assert dense["detail"] == "does not use the vector index KB_V1_VIDX: a full table scan of KB_V1"
    assert "TABLE ACCESS FULL KB_V1" in dense["plan"] and "GATHER_TABLE_STATS" in dense["fix"]
    # the store's one-statement filtered HNSW search (review §2.8) must use the index: a failure
    assert found["plan: filtered FETCH APPROX"]["status"] == "fail" and found["plan: filtered FETCH APPROX"]["required"]
    assert found["plan: lexical CONTAINS"]["status"] == "pass"
    table = invoke(ScriptedDb(plan=scanning_plan), profile, monkeypatch).stdout
    assert re.search(r"^fail +plan: filtered FETCH APPROX", table, re.M)
    assert_read_only(db)


def test_an_empty_vector_pool_fails_for_hnsw(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = ScriptedDb(**{fc.VECTOR_POOL_SQL: []})
    found = checks(invoke(db, profile, monkeypatch, "--json"))
    assert found["vector pool"]["status"] == "fail" and "VECTOR_MEMORY_SIZE" in found["vector pool"]["fix"]


def test_a_release_before_23_4_fails(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = invoke(ScriptedDb(server_version="19.24.0.0.0"), profile, monkeypatch, "--json")
    assert result.exit_code == 1
    version = checks(result)["database version"]
    assert version["status"] == "fail" and "23ai (23.4 or later)" in version["detail"]
    assert "upgrade" in version["fix"]


def test_26ai_features_are_noted(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    detail = checks(invoke(ScriptedDb(server_version="23.26.0.0.0"), profile, monkeypatch, "--json"))[
        "database version"]["detail"]
    assert "26ai" in detail and "not in this release" not in detail


def test_no_version_yet_skips_the_plans_and_still_passes(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = ScriptedDb(**{fc.LATEST_VERSION_SQL: []})
    result = invoke(db, profile, monkeypatch, "--json")
    assert result.exit_code == 0
    found = checks(result)
    assert found["sample version"]["status"] == "skip" and "rag ingest" in found["sample version"]["fix"]
    assert not any(name.startswith("plan:") for name in found)


def test_an_unknown_version_and_a_broken_enrichment_union(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = checks(invoke(ScriptedDb(**{sql.RESOLVE_TARGET_SQL: []}), profile, monkeypatch, "--json",
                            "--version", "kb_old"))
    assert "no version or alias KB_OLD" in missing["sample version"]["detail"]
    db = ScriptedDb(**{"SELECT 'question'": ora(932, "inconsistent datatypes: expected - got VECTOR")})
    result = invoke(db, profile, monkeypatch, "--json")
    assert result.exit_code == 1
    union = checks(result)["UNION ALL of VECTOR columns"]
    assert union["status"] == "fail" and union["covers"] == "U1" and "ORA-00932" in union["detail"]


def test_a_long_lexical_query_rejected_is_a_warning(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = ScriptedDb(**{"SELECT t.chunk_id, SCORE(1)": ora(1460, "unimplemented or unreasonable conversion requested")})
    result = invoke(db, profile, monkeypatch, "--json")
    assert result.exit_code == 0
    long = checks(result)["long lexical query"]
    assert long["status"] == "warn" and long["covers"] == "U8" and "max_question_chars" in long["fix"]


def test_sqlite_backend_is_refused_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "rag.yaml"
    path.write_text(yaml.safe_dump({"store": {"backend": "sqlite"}}))
    result = CliRunner().invoke(cli, ["--config", str(path), "oracle", "check"])
    assert result.exit_code == 2
    assert "needs store.backend oracle" in result.output and "'sqlite'" in result.output


def test_secrets_are_never_printed(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for args in ((), ("--json",)):
        for db in (ScriptedDb(), ScriptedDb(**{fc.SESSION_PRIVS_SQL: []}, plan=scanning_plan)):
            result = invoke(db, profile, monkeypatch, *args)
            assert PASSWORD not in result.output and WALLET_PASSWORD not in result.output
            assert "FREEPDB1" not in result.output  # the endpoint only, as every store message


def test_an_unreachable_database_exits_1_without_the_password(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from backend.common.errors import StoreUnavailable

    def refuse(settings: Any) -> Any:
        raise StoreUnavailable("Oracle store at db.test:1521: connecting failed: ORA-12541: no listener",
                               endpoint="db.test:1521")

    monkeypatch.setattr(oracle_cli, "open_connector", refuse)
    result = CliRunner().invoke(cli, ["--config", str(profile), "oracle", "check"],
                                env={"RAG_STORE__ORACLE__PASSWORD": PASSWORD})
    assert result.exit_code == 1 and "ORA-12541" in result.output and PASSWORD not in result.output


# --- every statement is Oracle SQL ------------------------------------------------------------
EXPLAIN = re.compile(r"EXPLAIN PLAN SET STATEMENT_ID = 'RAG_CHECK_[A-Z0-9_]+' INTO PLAN_TABLE FOR (SELECT .*)$")
ADVISOR = re.compile(r"BEGIN DBMS_VECTOR\.INDEX_VECTOR_MEMORY_ADVISOR\(INDEX_TYPE => :index_type, "
                     r"NUM_VECTORS => :num_vectors, DIM_COUNT => :dim_count, DIM_TYPE => :dim_type, "
                     r"PARAMETER_JSON => :parameters, RESPONSE_JSON => :response\); END;")


def check_statement(statement: str) -> None:
    """sqlglot keeps EXPLAIN PLAN and PL/SQL blocks as opaque commands: the wrapper is matched in
    full and the explained statement parsed."""
    if statement.startswith("EXPLAIN"):
        m = EXPLAIN.fullmatch(statement)
        assert m, statement
        check_sql(m.group(1))
    elif statement.startswith("BEGIN"):
        assert ADVISOR.fullmatch(statement), statement
    else:
        check_sql(statement)


def test_every_statement_the_check_sends_is_valid_oracle_sql(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = ScriptedDb()
    invoke(db, profile, monkeypatch)
    sent = set(db.statements())
    invoke(db2 := ScriptedDb(), profile, monkeypatch, "--version", "kb_active")  # RESOLVE_TARGET_SQL
    sent |= set(db2.statements())
    for statement in sorted(sent):
        check_statement(statement)
    for constant in (fc.SESSION_PRIVS_SQL, fc.USER_SYS_PRIVS_SQL, fc.SESSION_ROLES_SQL, fc.DEFAULT_TABLESPACE_SQL,
                     fc.TS_QUOTAS_SQL, fc.VECTOR_POOL_SQL, fc.LATEST_VERSION_SQL, plan_checks.PLAN_ROWS_SQL,
                     plan_checks.DELETE_PLAN_SQL, fc.ADVISOR_SQL):
        assert constant in sent, constant


def test_a_typo_in_the_explain_wrapper_fails_the_check() -> None:
    good = plan_checks.explain_sql("RAG_CHECK_1", sql.count_matching_sql(V, "1=1"))
    check_statement(good)
    for bad in (good.replace("SET STATEMENT_ID", "SET STATEMENTID"), good.replace("INTO PLAN_TABLE", "INTO PLANTABLE"),
                good.replace("COUNT(*) FROM", "COUNT(*) FORM")):
        with pytest.raises(AssertionError):
            check_statement(bad)
    with pytest.raises(ValueError):
        plan_checks.explain_sql("x'; DROP TABLE t; --", "SELECT 1 FROM dual")


def test_plan_uses_reads_ivf_and_domain_index_rows() -> None:
    ivf = [(0, "SELECT STATEMENT", None, None), (1, "TABLE ACCESS", "FULL", f"VECTOR${VIDX}$81357_81365_0$IVF_FLAT_CENTROIDS")]
    assert plan_checks.plan_uses(ivf, "vector", V, VIDX) == "used"
    assert plan_checks.plan_uses([(0, "TABLE ACCESS", "FULL", V)], "text", V, TIDX) == "full scan"
    assert plan_checks.plan_uses([(0, "DOMAIN INDEX", None, MIDX)], "text", V, TIDX) == "not used"


def test_n1_explain_plan_is_executed_never_fetched(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 4, N1 (fails at 18552a8): ``FirstContact.rows`` fetched after ``EXPLAIN PLAN`` and the
    ``DELETE`` of its rows, which the thin driver refuses (DPY-1003): every plan check failed and the
    command exited 1 on any database with a version. The stand-in now refuses the fetch exactly as
    python-oracledb does (its own error), and every search shape gets a plan row."""
    from tests.providers.oracle_fake import is_query, not_a_query

    assert [is_query(s) for s in ("SELECT 1 FROM SYS.DUAL", "  /* hint */ (WITH a AS (SELECT 1 FROM SYS.DUAL) "
                                  "SELECT * FROM a)", "EXPLAIN PLAN SET STATEMENT_ID = 'X' FOR SELECT 1 FROM SYS.DUAL",
                                  "DELETE FROM PLAN_TABLE", "BEGIN NULL; END;", "-- note\nselect 1 from sys.dual")] \
        == [True, True, False, False, False, True]
    assert str(not_a_query()).startswith("DPY-1003: the executed statement does not return rows")
    db = ScriptedDb()
    result = invoke(db, profile, monkeypatch, "--json")
    assert result.exit_code == 0, result.output
    shapes = {name: c for name, c in checks(result).items() if name.startswith("plan: ")}
    assert len(shapes) == 6 and all(c["status"] == "pass" and c["plan"] for c in shapes.values()), shapes
    assert "DPY-1003" not in result.output


def test_n2_poisoned_cache_rows_are_counted_with_the_statement_that_removes_them(
        profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 4, N2: the check counts cache rows an int8 version wrote before the fix and prints the
    DELETE; a clean cache passes; neither fails the check (the rows are read as misses)."""
    assert checks(invoke(ScriptedDb(), profile, monkeypatch, "--json"))["embedding cache"]["status"] == "pass"
    result = invoke(ScriptedDb(**{sql.POISONED_CACHE_SQL: [(42,)]}), profile, monkeypatch, "--json")
    assert result.exit_code == 0
    found = checks(result)["embedding cache"]
    assert found["status"] == "warn" and found["detail"].startswith("42 rows hold an int8 version's scaled integers")
    assert found["fix"] == "DELETE FROM RAG_EMBEDDING_CACHE WHERE VECTOR_NORM(embedding) >= 127; COMMIT;"


def test_n3_the_advisor_is_asked_in_the_versions_format(profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 4, N3 (fails at 18552a8): the check always passed ``DIM_TYPE 'FLOAT32'`` and the formula
    counted 4 bytes a dimension, a pool need 4x too high for an int8 version."""
    int8 = (V, "mini-lm", 384, "cosine", "hnsw", None, "2026-11-25", None, 3, None, None,
            '{"format": 1, "vector_format": "int8"}')
    db = ScriptedDb(**{fc.LATEST_VERSION_SQL: [int8]})
    found = checks(invoke(db, profile, monkeypatch, "--json"))["vector memory advisor"]
    advisor = [b for (kind, s), (_, b) in zip(db.log, db.log[1:]) if kind == "execute" and s == fc.ADVISOR_SQL]
    assert [b["dim_type"] for b in advisor] == ["INT8"]
    assert f"formula 1.3 x vectors x dims x 1 = {int(1.3 * 1204 * 384)} bytes" in found["detail"]
    db = ScriptedDb()
    invoke(db, profile, monkeypatch, "--json")
    assert [b["dim_type"] for (kind, s), (_, b) in zip(db.log, db.log[1:])
            if kind == "execute" and s == fc.ADVISOR_SQL] == ["FLOAT32"]


@pytest.mark.parametrize("mode,why", [
    (("OLTP", "0"), "Autonomous Database (CLOUD_SERVICE OLTP)"),
    ((None, "1"), "an elastic vector pool (VECTOR_MEMORY_SIZE=1)"),
    ((None, "2147483648"), "VECTOR_MEMORY_SIZE 2147483648 is above the 0 bytes allocated"),
])
def test_m1_a_pool_that_grows_on_demand_is_not_reported_empty(profile: Path, monkeypatch: pytest.MonkeyPatch,
                                                              mode: tuple[Any, Any], why: str) -> None:
    """Review 4, M1 (fails at 18552a8): on Autonomous Database, an elastic pool or a PDB quota the
    allocation is 0 or small until HNSW indexes are built, and the check failed "vector pool empty"."""
    db = ScriptedDb(**{fc.VECTOR_POOL_SQL: [("1MB POOL", 0, 0, "DONE")], sql.POOL_MODE_SQL: [mode]})
    result = invoke(db, profile, monkeypatch, "--json")
    found = checks(result)["vector pool"]
    assert found["status"] == "pass" and why in found["detail"], found
    assert result.exit_code == 0
    db = ScriptedDb(**{fc.VECTOR_POOL_SQL: [("1MB POOL", 0, 0, "DONE")], sql.POOL_MODE_SQL: [(None, "0")]})
    assert checks(invoke(db, profile, monkeypatch, "--json"))["vector pool"]["status"] == "fail"


def _model_script(**extra: Any) -> dict[str, Any]:
    from backend.providers.oracle_vs import model_checks

    sha = "c" * 64
    return {query_model.MODEL_SQL: [("RAG_QUERY_EMBEDDER", "EMBEDDING", "ONNX")],
            query_model.FINGERPRINT_SQL: [(sha,)],
            model_checks.dimension_sql("RAG_QUERY_EMBEDDER"): [(384,)],
            model_checks.many_rows_sql("RAG_QUERY_EMBEDDER", V): [(100, 384)],
            query_model.CHECK_SQL: [("mini-lm", 40, 0.99999, 0.999995, 0.9999, 1, "q", "now", sha)], **extra}


def test_u5_m2_the_query_model_rows_say_what_the_database_does_with_the_graph(
        profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 4, U5 and M2 (no such rows at 18552a8): the check asks whether Oracle runs the exported
    graph (one text, and 100 of the version's rows in one statement), at the version's dimension,
    whether its fingerprint is recorded, and whether the sample version's parity check counts."""
    from backend.providers.oracle_vs import model_checks

    db = ScriptedDb(**_model_script())
    result = invoke(db, profile, monkeypatch, "--json")
    assert result.exit_code == 0, result.output
    found = checks(result)
    assert found["query model"]["status"] == "pass" and "sha256 cccccccccccccccc" in found["query model"]["detail"]
    assert found["VECTOR_EMBEDDING of one text"] == {**found["VECTOR_EMBEDDING of one text"], "status": "pass",
                                                     "detail": "384 dimensions", "covers": "U5"}
    assert found["VECTOR_EMBEDDING of 100 rows"]["detail"] == "100 rows embedded, 384 dimensions"
    assert found["parity check"]["status"] == "pass" and "passed" in found["parity check"]["detail"]
    binds = [b for (kind, s), (_, b) in zip(db.log, db.log[1:])
             if kind == "execute" and s == model_checks.dimension_sql("RAG_QUERY_EMBEDDER")]
    assert binds == [{"qtext": "rag oracle check"}]
    assert_read_only(db)
    # a graph the database refuses, and a wrong dimension, fail with the statement
    refused = ScriptedDb(**_model_script(**{model_checks.dimension_sql("RAG_QUERY_EMBEDDER"):
                                            ora(40284, "model does not exist")}))
    row = checks(invoke(refused, profile, monkeypatch, "--json"))["VECTOR_EMBEDDING of one text"]
    assert row["status"] == "fail" and "ORA-40284" in row["detail"] and "VECTOR_EMBEDDING" in row["statement"]
    wrong = ScriptedDb(**_model_script(**{model_checks.dimension_sql("RAG_QUERY_EMBEDDER"): [(768,)]}))
    assert checks(invoke(wrong, profile, monkeypatch, "--json"))["VECTOR_EMBEDDING of one text"]["detail"] \
        == "768 dimensions; KB_V1 holds 384"
    # no check for the graph loaded now (the JOIN on its fingerprint finds none)
    unchecked = ScriptedDb(**_model_script(**{query_model.CHECK_SQL: []}))
    row = checks(invoke(unchecked, profile, monkeypatch, "--json"))["parity check"]
    assert row["status"] == "skip" and row["fix"] == "rag oracle parity --version KB_V1"


def test_u6_ivf_on_an_empty_questions_table_is_read_from_what_the_load_left(
        profile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 4, U6 (no such row at 18552a8): an IVF version without questions shows whether Oracle
    built its question index on the empty table."""
    ivf = (V, "mini-lm", 384, "cosine", "ivf", None, "2026-11-25", None, 3, None, None, None)
    q_index = sql.question_vector_index_name(V)
    ok = ScriptedDb(**{fc.LATEST_VERSION_SQL: [ivf]})
    version_indexes = ok.script.pop(sql.INDEX_STATUS_SQL)
    # first match wins: the questions' count before the version's (its statement starts the same)
    ok.script = {sql.question_count_sql(V): [(0,)],
                 sql.INDEX_STATUS_SQL: lambda s, b: ([(q_index, "VALID", None)] if b["table_name"].endswith("_QUESTIONS")
                                                     else list(version_indexes)),  # type: ignore[arg-type]
                 **ok.script}

    found = checks(invoke(ok, profile, monkeypatch, "--json"))["IVF on an empty questions table"]
    assert found["status"] == "pass" and found["covers"] == "U6"
    hnsw = checks(invoke(ScriptedDb(), profile, monkeypatch, "--json"))["IVF on an empty questions table"]
    assert hnsw["status"] == "skip" and "vector_index.type: ivf" in hnsw["fix"]
