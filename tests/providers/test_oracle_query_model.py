"""In-database query embeddings on the Oracle fake: ``rag oracle load-model``'s statements, the parity
check and the gate that lets a dense search embed the question itself; every new statement through
sqlglot's Oracle dialect.

``ModelCatalogDb`` adds to the fake what a server does for these statements: mining models loaded
from a BLOB, ``VECTOR_EMBEDDING`` answered by **running the loaded bytes** with onnxruntime and
onnxruntime-extensions (what Oracle's in-database ONNX Runtime does with them), and the
``RAG_QUERY_MODEL_CHECKS`` rows. Assumed, not verified on a server: loading a model whose name is
taken fails (ORA-00955 here) until it is dropped.
"""

from __future__ import annotations

import array
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnxruntime_extensions")

from backend.common.config import EmbeddingSettings  # noqa: E402
from backend.core.types import QueryVector  # noqa: E402
from backend.providers.local.embedder import make_local_embedder, packaged_model_path  # noqa: E402
from backend.providers.local.onnx_text_model import (  # noqa: E402
    INPUT_NAME,
    OUTPUT_NAME,
    database_text,
    ensure_text_model,
    oracle_metadata,
    text_session,
)
from backend.providers.oracle_vs import query_model, sql  # noqa: E402
from tests.providers.oracle_fake import CatalogDb, catalog_store, ora  # noqa: E402
from tests.providers.test_oracle_sql_parse import SqlCheckError, check  # noqa: E402

MODEL_DIR = packaged_model_path("sentence-transformers/all-MiniLM-L6-v2")
FP32 = "sentence-transformers/all-MiniLM-L6-v2@onnx-fp32"
INT8 = "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"
QUESTIONS = ["How many days of annual leave do employees get?", "Qui approuve les notes de frais ?",
             "Wie beantrage ich Elternzeit?", "年次有給休暇は何日ですか", "한국어 문장입니다"]


class ModelCatalogDb(CatalogDb):
    """The fake, plus mining models, ``VECTOR_EMBEDDING`` and the parity checks table."""

    def __init__(self) -> None:
        super().__init__()
        self.models: dict[str, tuple[bytes, str]] = {}
        self.runtimes: dict[str, Any] = {}
        self.checks: dict[tuple[str, str], tuple[Any, ...]] = {}
        self.check_sha: dict[tuple[str, str], str | None] = {}  # each check's model_sha256
        self.fingerprints: dict[str, str] = {}  # RAG_QUERY_MODELS
        self.checks_table = False  # catalog tables are always there in the base fake; this one is made late

    def passed(self, version: str, row: tuple[Any, ...], sha: str = "a" * 64) -> None:
        """A recorded check for ``version`` measured on the loaded graph (its fingerprint recorded)."""
        self.checks_table = True
        self.checks[(version, "RAG_QUERY_EMBEDDER")] = row
        self.check_sha[(version, "RAG_QUERY_EMBEDDER")] = sha
        self.fingerprints["RAG_QUERY_EMBEDDER"] = sha
        self.models.setdefault("RAG_QUERY_EMBEDDER", (b"", ""))

    def _embed(self, model: str, text: str) -> array.array:
        if model not in self.models:
            raise ora(40284, f"model {model} does not exist")
        if model not in self.runtimes:
            path = Path(self.models[model][1])
            self.runtimes[model] = text_session(path)
        out = self.runtimes[model].run([OUTPUT_NAME], {INPUT_NAME: np.array([text], dtype=object)})[0][0]
        return array.array("f", out.astype(np.float32).tobytes())

    def run(self, statement: str, binds: dict[str, Any], session: int | None = None) -> list[tuple[Any, ...]]:
        s = statement
        self._start_race(s)
        if s == query_model.CHECKS_DDL:
            self.checks_table = True  # then the base fake's DDL semantics (implicit commits)
        if s == query_model.ADD_FINGERPRINT_COLUMN_SQL:
            self.commit(session)
            raise ora(1430, "column being added already exists in table")
        if s == query_model.FINGERPRINT_SQL:
            sha = self.fingerprints.get(binds["model_name"])
            return [(sha,)] if sha else []
        if s == query_model.FORGET_FINGERPRINT_SQL:
            self.fingerprints.pop(binds["model_name"], None)
            return []
        if s == query_model.RECORD_FINGERPRINT_SQL:
            self.fingerprints[binds["model_name"]] = binds["sha256"]
            return []
        if s == query_model.LOAD_MODEL_SQL:
            name = binds["model_name"]
            if name in self.models:
                raise ora(955, "name is already used by an existing object")
            path = self.blob_dir / f"{name}.onnx"
            path.write_bytes(binds["model_data"])
            assert binds["metadata"] and '"embeddingOutput": "embedding"' in binds["metadata"]
            self.models[name] = (binds["model_data"][:16], str(path))
            self.runtimes.pop(name, None)
            self.commit(session)
            return []
        if s == query_model.DROP_MODEL_SQL:
            self.models.pop(binds["model_name"], None)
            self.commit(session)
            return []
        if s == query_model.MODEL_SQL:
            return [(binds["model_name"], "EMBEDDING", "ONNX")] if binds["model_name"] in self.models else []
        if m := re.fullmatch(r"SELECT VECTOR_EMBEDDING\((\w+) USING :qtext AS data\) FROM SYS\.DUAL", s):
            return [(self._embed(m.group(1), binds["qtext"]),)]
        if s == query_model.FORGET_MODEL_SQL:
            for key in [k for k in self.checks if k[1] == binds["model_name"]]:
                del self.checks[key]
            return []
        if s == query_model.DELETE_CHECK_SQL:
            self.checks.pop((binds["version_name"], binds["model_name"]), None)
            return []
        if s == query_model.INSERT_CHECK_SQL:
            key = (binds["version_name"], binds["model_name"])
            self.checks[key] = tuple(
                binds[c] for c in ("embed_model", "texts", "min_cosine", "mean_cosine", "threshold", "passed",
                                   "worst_text", "checked_at"))
            self.check_sha[key] = binds["model_sha256"]
            return []
        if s == query_model.CHECK_SQL:
            if not self.checks_table:
                raise ora(942, "table or view does not exist")
            key = (binds["version_name"], binds["model_name"])
            row = self.checks.get(key)
            sha = self.check_sha.get(key)
            # the JOIN: only while the loaded model has the fingerprint the check measured
            return [(*row, sha)] if row and sha and self.fingerprints.get(key[1]) == sha else []
        if m := re.match(r"SELECT COUNT\(\*\) FROM (\w+) t WHERE", s):  # the search plan's counts
            return [(self.tables.get(m.group(1), 0),)]
        if "VECTOR_DISTANCE" in s:  # a search: the statement is what these tests read; no rows
            for model in re.findall(r"VECTOR_EMBEDDING\((\w+) USING", s):
                if model not in self.models:
                    raise ora(40284, f"model {model} does not exist")
            return []
        return super().run(statement, binds, session)


@pytest.fixture(scope="module")
def text_model(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return ensure_text_model(MODEL_DIR, tmp_path_factory.mktemp("onnx-text-cache"), 256)


@pytest.fixture(scope="module")
def fp32(text_model: Any) -> Any:
    return make_local_embedder(EmbeddingSettings(local={"runtime": "onnx", "quantization": "none",
                                                        "onnx_cache_dir": str(text_model.path.parent.parent)}))


@pytest.fixture
def db(tmp_path: Path) -> ModelCatalogDb:
    fake = ModelCatalogDb()
    fake.blob_dir = tmp_path  # type: ignore[attr-defined]
    return fake


def _connector(db: ModelCatalogDb, **settings: Any) -> Any:
    connector = catalog_store(db, **settings).connector
    connector._pool.close = lambda force=False: None  # the fake's pool has nothing to close
    return connector


def executed(db: CatalogDb) -> list[str]:
    return [s for kind, s in db.log if kind in ("execute", "executemany")]


# --- pure parts -------------------------------------------------------------------------
def test_the_question_replaces_every_vector_bind_and_nothing_else() -> None:
    statement = ("SELECT t.chunk_id, VECTOR_DISTANCE(t.embedding, :q, COSINE) AS dist FROM KB_V1 t "
                 "WHERE t.doc_id = :qa ORDER BY VECTOR_DISTANCE(t.embedding, :q, COSINE) FETCH FIRST :k ROWS ONLY")
    out = query_model.embed_in_statement(statement, "rag_query_embedder")
    assert out.count("VECTOR_EMBEDDING(RAG_QUERY_EMBEDDER USING :qtext AS data)") == 2
    assert ":qa" in out and not re.search(r":q\b", out)
    with pytest.raises(ValueError):
        query_model.embed_in_statement("SELECT 1 FROM KB_V1 WHERE doc_id = :qa", "M")


@pytest.mark.parametrize("bad", ["RAG VERSIONS", "x;DROP", "DUAL", "DBMS_X", "A" * 31])
def test_a_model_name_is_an_identifier(bad: str) -> None:
    with pytest.raises(Exception, match="model_name"):
        query_model.model_name(bad)


def test_parity_figures_and_the_gate() -> None:
    a = np.array([[1.0, 0.0], [0.0, 1.0]])
    b = np.array([[1.0, 0.0], [0.1, 1.0]])
    check_ = query_model.compare("KB_V1", "M", FP32, ["one", "two"], a, b, 0.9999)
    assert check_.texts == 2 and not check_.passed and check_.worst_text == "two"
    assert check_.min_cosine == pytest.approx(1 / np.sqrt(1.01))
    assert "REFUSED" in check_.summary() and "two" in check_.summary()
    ok = query_model.compare("KB_V1", "M", FP32, ["one"], a[:1], a[:1], 0.9999)
    assert ok.passed and query_model.may_embed_in_database(ok, FP32, 0.9999)
    assert not query_model.may_embed_in_database(ok, INT8, 0.9999)  # restamped since: checked for another model
    assert not query_model.may_embed_in_database(ok, FP32, 0.99999)  # the floor was raised since
    assert not query_model.may_embed_in_database(None, FP32, 0.9999)
    assert not query_model.compare("KB_V1", "M", FP32, [], a[:0], a[:0], 0.9).passed  # no golden question


# --- on the fake -------------------------------------------------------------------------
def test_load_model_binds_the_blob_and_replaces_a_loaded_model(db: ModelCatalogDb, text_model: Any) -> None:
    con = _connector(db)
    data = text_model.path.read_bytes()
    query_model.load_model(con, "rag_query_embedder", data, oracle_metadata())
    assert query_model.loaded_model(con, "RAG_QUERY_EMBEDDER") == ("RAG_QUERY_EMBEDDER", "EMBEDDING", "ONNX")
    db.checks[("KB_V1", "RAG_QUERY_EMBEDDER")] = (FP32, 1, 1.0, 1.0, 0.9999, 1, "x", "now")
    sha = query_model.load_model(con, "RAG_QUERY_EMBEDDER", data, oracle_metadata())  # a second load: dropped first
    assert db.fingerprints == {"RAG_QUERY_EMBEDDER": sha} and len(sha) == 64
    sent = executed(db)
    assert sent.count(query_model.DROP_MODEL_SQL) == 1 and sent.count(query_model.LOAD_MODEL_SQL) == 2
    assert db.checks == {}  # checks of the replaced model are forgotten
    assert db.checks_table


def test_parity_on_the_database_passes_for_the_fp32_stamp_and_refuses_int8(
        db: ModelCatalogDb, text_model: Any, fp32: Any) -> None:
    con = _connector(db)
    query_model.load_model(con, "RAG_QUERY_EMBEDDER", text_model.path.read_bytes(), oracle_metadata())
    database = query_model.database_vectors(con, "RAG_QUERY_EMBEDDER", QUESTIONS)
    good = query_model.compare("KB_V1", "RAG_QUERY_EMBEDDER", FP32, QUESTIONS, database,
                               fp32.embed_queries(QUESTIONS), 0.9999)
    assert good.passed, good.summary()
    int8 = make_local_embedder(EmbeddingSettings(local={"runtime": "onnx", "quantization": "int8",
                                                        "onnx_cache_dir": str(text_model.path.parent.parent)}))
    bad = query_model.compare("KB_V2", "RAG_QUERY_EMBEDDER", INT8, QUESTIONS, database,
                              int8.embed_queries(QUESTIONS), 0.9999)
    assert not bad.passed and bad.min_cosine < 0.9999
    query_model.record_check(con, good)
    query_model.record_check(con, bad)
    assert db.checks[("KB_V1", "RAG_QUERY_EMBEDDER")][5] == 1 and db.checks[("KB_V2", "RAG_QUERY_EMBEDDER")][5] == 0
    # the text bound is the normalised one (database_text), never the raw question
    assert all(q != database_text(q) for q in QUESTIONS[1:])


def _search(db: ModelCatalogDb, version_model: str, enabled: bool = True) -> list[str]:
    store = catalog_store(db, query_embedding={"enabled": enabled})
    db.add_version("KB_V1", rows=3, model=version_model, dim=384)
    before = len(db.log)
    vec = np.ones(384, dtype=np.float32) / np.sqrt(384)
    store.search("KB_V1", QueryVector(vec, version_model, text="annual leave"), 5)
    return [s for kind, s in db.log[before:] if kind == "execute" and "VECTOR_DISTANCE" in s]


def test_a_version_without_a_check_is_searched_with_the_local_vector(db: ModelCatalogDb) -> None:
    searches = _search(db, FP32)
    assert searches and all("VECTOR_EMBEDDING" not in s for s in searches)


def test_a_version_that_passed_embeds_the_question_in_the_search_statement(db: ModelCatalogDb) -> None:
    db.passed("KB_V1", (FP32, 5, 0.99999, 0.999995, 0.9999, 1, "q", "now"))
    searches = _search(db, FP32)
    assert searches and all("VECTOR_EMBEDDING(RAG_QUERY_EMBEDDER USING :qtext AS data)" in s for s in searches)
    assert all(not re.search(r":q\b", s) for s in searches)


@pytest.mark.parametrize("row", [
    (FP32, 5, 0.9990, 0.9995, 0.9999, 0, "q", "now"),   # refused
    (INT8, 5, 0.99999, 0.99999, 0.9999, 1, "q", "now"),  # checked for another stamp
])
def test_a_refused_or_stale_check_keeps_the_local_vector(db: ModelCatalogDb, row: tuple[Any, ...]) -> None:
    from structlog.testing import capture_logs

    db.passed("KB_V1", row)
    with capture_logs() as logs:
        assert all("VECTOR_EMBEDDING" not in s for s in _search(db, FP32))
    refused = [e for e in logs if e["event"] == "store.query_embedding_refused"]
    assert len(refused) == 1 and "cosine min" in refused[0]["check"]  # refused with the figures


def test_switched_off_nothing_is_asked(db: ModelCatalogDb) -> None:
    db.checks[("KB_V1", "RAG_QUERY_EMBEDDER")] = (FP32, 5, 1.0, 1.0, 0.9999, 1, "q", "now")
    _search(db, FP32, enabled=False)
    assert query_model.CHECK_SQL not in executed(db)


# --- every new statement through sqlglot's Oracle dialect -------------------------------------
_EMBED = re.compile(r"VECTOR_EMBEDDING\([A-Z][A-Z0-9_]{0,29} USING :qtext AS data\)")
PLSQL = (
    re.compile(r"BEGIN DBMS_VECTOR\.LOAD_ONNX_MODEL\(model_name => :model_name, model_data => :model_data, "
               r"metadata => JSON\(:metadata\)\); END;"),
    re.compile(r"BEGIN DBMS_VECTOR\.DROP_ONNX_MODEL\(model_name => :model_name, force => TRUE\); END;"),
)


def check_with_embedding(statement: str) -> str:
    """``check``, plus the one construct sqlglot does not parse: ``VECTOR_EMBEDDING(m USING :x AS data)``
    (matched strictly, then replaced by a plain call), and the two PL/SQL calls (by grammar)."""
    if statement.startswith("BEGIN "):
        if not any(g.fullmatch(statement) for g in PLSQL):
            raise SqlCheckError(f"not a valid DBMS_VECTOR call: {statement}")
        return "grammar"
    if "VECTOR_EMBEDDING" in statement and len(_EMBED.findall(statement)) != statement.count("VECTOR_EMBEDDING"):
        raise SqlCheckError(f"bad VECTOR_EMBEDDING: {statement}")
    return check(_EMBED.sub("VECTOR_EMBEDDING(:qtext)", statement))


def _new_statements() -> list[str]:
    searches = [sql.dense_search_sql("KB_V1", "cosine", "1=1", approx=True, target_accuracy=95),
                sql.candidate_search_sql("KB_V1", "cosine", "1=1", 95)]
    return [query_model.LOAD_MODEL_SQL, query_model.DROP_MODEL_SQL, query_model.MODEL_SQL, query_model.CHECKS_DDL,
            query_model.DELETE_CHECK_SQL, query_model.FORGET_MODEL_SQL, query_model.INSERT_CHECK_SQL,
            query_model.CHECK_SQL, query_model.MODELS_DDL, query_model.FINGERPRINT_SQL,
            query_model.FORGET_FINGERPRINT_SQL, query_model.RECORD_FINGERPRINT_SQL,
            query_model.ADD_FINGERPRINT_COLUMN_SQL, query_model.embed_sql("RAG_QUERY_EMBEDDER"),
            *(query_model.embed_in_statement(s, "RAG_QUERY_EMBEDDER") for s in searches),
            sql.version_table_ddl("KB_V1", 384, "int8")]


@pytest.mark.parametrize("statement", _new_statements())
def test_every_new_statement_is_valid_oracle_sql(statement: str) -> None:
    check_with_embedding(statement)


@pytest.mark.parametrize("good, bad", [
    ("USING :qtext AS data", "USING :qtext data"),
    ("DBMS_VECTOR.LOAD_ONNX_MODEL(", "DBMS_VECTOR.LOAD_ONNX_MODELS("),
    ("VARCHAR2(1000),", "VARCHAR(1000)),"),
    ("VECTOR(384, INT8)", "VECTOR(384, INT16)"),
])
def test_a_typo_in_a_new_statement_fails_the_check(good: str, bad: str) -> None:
    statement = next(s for s in _new_statements() if good in s)
    check_with_embedding(statement)
    with pytest.raises(SqlCheckError):
        check_with_embedding(statement.replace(good, bad, 1))


# --- the commands ------------------------------------------------------------------------------
def test_embedder_settings_follow_the_versions_stamp() -> None:
    from backend.cli.oracle_model import embedder_settings_for
    from backend.common.errors import ConfigError

    emb = EmbeddingSettings()
    assert (embedder_settings_for(INT8, emb).local.runtime, embedder_settings_for(INT8, emb).local.quantization) \
        == ("onnx", "int8")
    assert embedder_settings_for(FP32, emb).local.quantization == "none"
    assert embedder_settings_for("sentence-transformers/all-MiniLM-L6-v2", emb).local.runtime == "torch"
    with pytest.raises(ConfigError, match="local embedder"):
        embedder_settings_for("cohere.embed-v4.0", emb)


def _profile(tmp_path: Path, cache: Path, backend: str = "oracle") -> Path:
    import yaml

    path = tmp_path / "rag.yaml"
    path.write_text(yaml.safe_dump({"store": {"backend": backend, "oracle": {"dsn": "db.test:1521/FREEPDB1",
                                                                             "user": "rag"}},
                                    "embeddings": {"local": {"onnx_cache_dir": str(cache)}}}))
    return path


def test_rag_oracle_load_model_proves_the_graph_then_loads_it(db: ModelCatalogDb, text_model: Any, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from backend.cli import oracle as oracle_cli
    from backend.cli.main import cli

    monkeypatch.setattr(oracle_cli, "open_connector", lambda settings: _connector(db))
    profile = _profile(tmp_path, text_model.path.parent.parent)
    result = CliRunner().invoke(cli, ["--config", str(profile), "oracle", "load-model"],
                                env={"RAG_STORE__ORACLE__PASSWORD": "pw"})
    assert result.exit_code == 0, result.output
    assert "cosine min 1.0000" in result.output or "cosine min 0.9999" in result.output
    assert re.search(r"loaded RAG_QUERY_EMBEDDER \(sha256 [0-9a-f]{16}\): EMBEDDING / ONNX", result.output)
    assert set(db.models) == {"RAG_QUERY_EMBEDDER"}
    out = tmp_path / "m.onnx"
    only_file = CliRunner().invoke(cli, ["--config", str(profile), "oracle", "load-model", "--output", str(out)])
    assert only_file.exit_code == 0 and out.read_bytes() == text_model.path.read_bytes()


def test_rag_oracle_parity_needs_the_oracle_store(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from backend.cli.main import cli

    result = CliRunner().invoke(cli, ["--config", str(_profile(tmp_path, tmp_path, "sqlite")), "oracle", "parity"])
    assert result.exit_code == 2 and "needs store.backend oracle" in result.output


@pytest.mark.parametrize("stamp, code, verdict", [(FP32, 0, "passed"), (INT8, 1, "REFUSED")])
def test_rag_oracle_parity_records_and_prints_the_figures(db: ModelCatalogDb, text_model: Any, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch, stamp: str, code: int,
                                                          verdict: str) -> None:
    import json

    from click.testing import CliRunner

    from backend.cli import oracle as oracle_cli
    from backend.cli.main import cli
    from backend.providers import registry

    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"query": q, "expected_mode": "rag", "expected_sources": {"d1": 1}}) + "\n"
                              for q in QUESTIONS))
    db.add_version("KB_V1", rows=3, model=stamp, dim=384)
    connector = _connector(db)
    query_model.load_model(connector, "RAG_QUERY_EMBEDDER", text_model.path.read_bytes(), oracle_metadata())
    monkeypatch.setattr(oracle_cli, "open_connector", lambda settings: _connector(db))
    store = catalog_store(db)
    store.connector._pool.close = lambda force=False: None
    monkeypatch.setattr(registry, "build_store", lambda settings: store)
    result = CliRunner().invoke(cli, ["--config", str(_profile(tmp_path, text_model.path.parent.parent)), "oracle",
                                      "parity", "--version", "KB_V1", "--golden", str(golden)],
                                env={"RAG_STORE__ORACLE__PASSWORD": "pw"})
    assert result.exit_code == code, result.output
    assert f"KB_V1: {verdict}: model RAG_QUERY_EMBEDDER vs {stamp} on 5 golden questions, cosine min" in result.output
    row = db.checks[("KB_V1", "RAG_QUERY_EMBEDDER")]
    assert row[0] == stamp and row[1] == 5 and row[5] == (1 if code == 0 else 0)


# --- review 4: N5 (the question embedded once) and M2 (reloading the model) -------------------------
class _Counting:
    """The real local embedder, counting the questions it embeds."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls = inner, 0
        self.model_id, self.dimension = inner.model_id, inner.dimension
        self.compatible_models = getattr(inner, "compatible_models", frozenset())

    def embed_queries(self, texts: Any) -> Any:
        self.calls += 1
        return self.inner.embed_queries(texts)

    def embed_documents(self, texts: Any) -> Any:
        return self.inner.embed_documents(texts)


def _service(db: ModelCatalogDb, embedder: Any) -> Any:
    from backend.common.config import Settings
    from backend.core.services.search_service import SearchService

    settings = Settings()
    store = catalog_store(db, query_embedding={"enabled": True})
    return SearchService(store, embedder, settings.embeddings.profile_for(), settings.retrieval,
                         defer_query_vector=True)


def test_n5_a_cleared_version_is_searched_without_embedding_the_question_here(db: ModelCatalogDb, fp32: Any) -> None:
    """Review 4, N5 (fails at 18552a8): the question was embedded by the local embedder on every
    search and again by ``VECTOR_EMBEDDING`` in the statement; the question and summary reads and
    the similarities still bound the local vector. Now a version cleared by its parity check is
    searched, in every vector read, with the database's embedding only."""
    from backend.core.search_request import SearchRequest

    db.add_version("KB_V1", rows=3, model=fp32.model_id, dim=384)
    db.passed("KB_V1", (fp32.model_id, 5, 0.99999, 0.999995, 0.9999, 1, "q", "now"))
    counting = _Counting(fp32)
    service = _service(db, counting)
    before = len(db.log)
    service.search(SearchRequest("How many days of annual leave?", "KB_V1", 5, strategy="dense"))
    query = service.embed_query("How many days of annual leave?")
    store = catalog_store(db, query_embedding={"enabled": True})
    store.search_questions("KB_V1", query, 3)
    store.search_summaries("KB_V1", query, 3)
    store.similarities("KB_V1", query, ["d#0"])
    reads = [s for kind, s in db.log[before:] if kind == "execute" and "VECTOR_DISTANCE" in s]
    assert len(reads) >= 4 and all("VECTOR_EMBEDDING(RAG_QUERY_EMBEDDER USING :qtext AS data)" in s for s in reads)
    assert counting.calls == 0 and not query.computed
    # a version without a check: the question is embedded here, once
    db.add_version("KB_V2", rows=3, model=fp32.model_id, dim=384)
    service.search(SearchRequest("How many days of annual leave?", "KB_V2", 5, strategy="dense"))
    assert counting.calls == 1


def test_m2_reloading_forgets_the_checks_before_the_model_is_dropped(db: ModelCatalogDb, text_model: Any) -> None:
    """Review 4, M2 (fails at 18552a8): ``load_model`` dropped the model, loaded the new one, and only
    then forgot the parity checks: between the load's commit and the forget's, versions checked
    against the old graph were served by the new, unchecked one. Now the checks and the fingerprint
    go (committed) first, and the new graph's sha256 is recorded after it is loaded."""
    con = _connector(db)
    data = text_model.path.read_bytes()
    query_model.load_model(con, "RAG_QUERY_EMBEDDER", data, oracle_metadata())
    before = len(db.log)
    query_model.load_model(con, "RAG_QUERY_EMBEDDER", data + b"\n", oracle_metadata())
    sent = [s if kind != "commit" else "COMMIT" for kind, s in db.log[before:] if kind in ("execute", "commit")]
    order = [sent.index(s) for s in (query_model.FORGET_MODEL_SQL, query_model.FORGET_FINGERPRINT_SQL, "COMMIT",
                                     query_model.DROP_MODEL_SQL, query_model.LOAD_MODEL_SQL,
                                     query_model.RECORD_FINGERPRINT_SQL)]
    assert order == sorted(order), sent
    import hashlib

    assert db.fingerprints["RAG_QUERY_EMBEDDER"] == hashlib.sha256(data + b"\n").hexdigest()


def test_m2_a_search_during_a_reload_never_embeds_with_a_missing_or_unchecked_graph(
        db: ModelCatalogDb, text_model: Any, fp32: Any) -> None:
    """Review 4, M2: a search that starts while the model is being loaded again (a fresh process: no
    cached verdict) finds no check that counts and binds the local vector, instead of embedding with a
    dropped model (ORA-40284) or with the new graph on the old graph's check."""
    con = _connector(db)
    sha = query_model.load_model(con, "RAG_QUERY_EMBEDDER", text_model.path.read_bytes(), oracle_metadata())
    db.add_version("KB_V1", rows=3, model=FP32, dim=384)
    db.passed("KB_V1", (FP32, 5, 0.99999, 0.999995, 0.9999, 1, "q", "now"), sha=sha)
    vec = np.ones(384, dtype=np.float32) / np.sqrt(384)

    def search() -> list[str]:
        before = len(db.log)
        catalog_store(db, query_embedding={"enabled": True}).search(
            "KB_V1", QueryVector(vec, FP32, text="annual leave"), 5)
        return [s for kind, s in db.log[before:] if kind == "execute" and "VECTOR_DISTANCE" in s]

    db.race_at(query_model.LOAD_MODEL_SQL, search, window=2.0)
    query_model.load_model(con, "RAG_QUERY_EMBEDDER", text_model.path.read_bytes() + b"\n", oracle_metadata())
    race = db.finish_race()
    assert "error" not in race, race
    assert race["value"] and all("VECTOR_EMBEDDING" not in s for s in race["value"])
    assert all("VECTOR_EMBEDDING" not in s for s in search())  # the new graph: its check is not recorded yet


def test_m2_a_cached_verdict_whose_model_is_gone_falls_back_to_the_bound_vector(db: ModelCatalogDb) -> None:
    """Review 4, M2: a process that cached "allowed" (``GATE_TTL_S``) and searches after the model was
    dropped gets its rows with the bound vector, and asks the gate again next time."""
    from structlog.testing import capture_logs

    db.add_version("KB_V1", rows=3, model=FP32, dim=384)
    db.passed("KB_V1", (FP32, 5, 0.99999, 0.999995, 0.9999, 1, "q", "now"))
    store = catalog_store(db, query_embedding={"enabled": True})
    query = QueryVector(np.ones(384, dtype=np.float32) / np.sqrt(384), FP32, text="annual leave")
    store.search("KB_V1", query, 5)
    db.checks.clear()  # load_model's first steps: the checks forgotten, then the model dropped
    db.models.clear()
    before = len(db.log)
    with capture_logs() as logs:
        store.search("KB_V1", query, 5)
    sent = [s for kind, s in db.log[before:] if kind == "execute" and "VECTOR_DISTANCE" in s]
    assert "VECTOR_EMBEDDING" in sent[0] and re.search(r":q\b", sent[-1])
    assert [e["event"] for e in logs if e["event"] == "store.query_model_missing"] == ["store.query_model_missing"]


def test_m2_a_check_of_another_graph_does_not_count(db: ModelCatalogDb) -> None:
    """Review 4, M2: a check measured on a graph other than the one loaded now is not honoured."""
    db.add_version("KB_V1", rows=3, model=FP32, dim=384)
    db.passed("KB_V1", (FP32, 5, 0.99999, 0.999995, 0.9999, 1, "q", "now"), sha="a" * 64)
    db.fingerprints["RAG_QUERY_EMBEDDER"] = "b" * 64  # loaded again since
    store = catalog_store(db, query_embedding={"enabled": True})
    before = len(db.log)
    store.search("KB_V1", QueryVector(np.ones(384, dtype=np.float32) / np.sqrt(384), FP32, text="leave"), 5)
    assert all("VECTOR_EMBEDDING" not in s for kind, s in db.log[before:] if kind == "execute")
