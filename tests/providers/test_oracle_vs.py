"""The shared store contract, run against a real Oracle Database 23ai.

Skipped unless ``RAG_TEST_ORACLE_DSN``, ``RAG_TEST_ORACLE_USER`` and
``RAG_TEST_ORACLE_PASSWORD`` are set (or the issue's ``ORACLE_DSN``,
``ORACLE_USER``, ``ORACLE_PASSWORD``; see docs/ORACLE.md). The variables are read when this
module is imported, before the autouse fixture clears ``RAG_*`` variables for
each test. Every test works in freshly named versions and aliases; what a test
created is dropped afterwards, so a shared database stays clean.

Below the contract class, Oracle-only behaviour (MERGE batches and their batch
errors, the k-hits guarantee under filters, view rotation, the read-only
snapshot) runs against a recording stand-in for the server, which cannot run
here: it records every statement, bind and commit, and answers from rules.
"""

from __future__ import annotations

import array
import datetime
import os
import types
from typing import Any, Callable, Iterator

import numpy as np
import oracledb
import pytest

from backend.common.config import OracleSettings, OracleVectorIndexSettings
from backend.common.errors import EmbeddingModelMismatch, InvalidIdentifier, StoreError, StoreUnavailable, VersionConflict
from backend.core.ports import (
    ConversationLog,
    EnrichmentCache,
    IndexAdmin,
    InteractionLog,
    SeriesLocking,
    Stores,
    VectorStore,
)
from backend.core.types import Chunk, DocumentWrite, FieldFilter, Interaction, QueryVector, Visibility
from backend.providers.oracle_vs import sql
from backend.providers.oracle_vs.connection import OracleConnector
from backend.providers.oracle_vs.store import OracleVectorStore
from tests.contracts.vector_store import ALL_CHUNK_IDS, VectorStoreContract
from tests.providers.oracle_fake import FakeCursor

ORACLE_DSN = os.environ.get("RAG_TEST_ORACLE_DSN") or os.environ.get("ORACLE_DSN")
ORACLE_USER = os.environ.get("RAG_TEST_ORACLE_USER") or os.environ.get("ORACLE_USER")
ORACLE_PASSWORD = os.environ.get("RAG_TEST_ORACLE_PASSWORD") or os.environ.get("ORACLE_PASSWORD")
ORACLE_WALLET = os.environ.get("RAG_TEST_ORACLE_WALLET_DIR")
ORACLE_WALLET_PASSWORD = os.environ.get("RAG_TEST_ORACLE_WALLET_PASSWORD")
ORACLE_INDEX = os.environ.get("RAG_TEST_ORACLE_INDEX", "hnsw")

requires_oracle = pytest.mark.skipif(
    not (ORACLE_DSN and ORACLE_USER and ORACLE_PASSWORD),
    reason="set RAG_TEST_ORACLE_DSN, RAG_TEST_ORACLE_USER, RAG_TEST_ORACLE_PASSWORD (or ORACLE_DSN, ORACLE_USER, "
           "ORACLE_PASSWORD) to run the contract suite against Oracle Database 23ai",
)


@pytest.fixture(scope="session")
def oracle_store() -> Iterator[OracleVectorStore]:
    settings = OracleSettings.model_validate({
        "dsn": ORACLE_DSN, "user": ORACLE_USER, "password": ORACLE_PASSWORD,
        "config_dir": ORACLE_WALLET, "wallet_location": ORACLE_WALLET, "wallet_password": ORACLE_WALLET_PASSWORD,
        "vector_index": {"type": ORACLE_INDEX},
    })
    store = OracleVectorStore.from_settings(settings)
    yield store
    store.close()


@requires_oracle
@pytest.mark.oracle
class TestOracleVectorStore(VectorStoreContract):
    def assert_ranking_exact(self, exact: int, pairs: int) -> None:
        """HNSW/IVF candidates are approximate: no leak and exactly min(k, visible) hits still hold
        for every pair, the ranking for nearly all."""
        assert exact >= (pairs if ORACLE_INDEX == "none" else 0.9 * pairs)

    @pytest.fixture
    def stores(self, store: OracleVectorStore) -> Stores:
        return store.stores()

    def test_an_unreachable_store_says_where_it_is(self, tmp_path: Any) -> None:
        settings = OracleSettings.model_validate({"dsn": "127.0.0.1:1/FREEPDB1", "user": "rag",
                                                  "password": "not-this-one", "connect_timeout_s": 3})
        with pytest.raises(StoreUnavailable, match=r"127\.0\.0\.1:1") as info:
            OracleVectorStore.from_settings(settings)
        assert "not-this-one" not in str(info.value)

    def test_finish_load_readies_what_search_uses(self, store: Any, version: str, embedder: Any) -> None:
        """finish_load builds the version's vector index (``store.oracle.vector_index``; ``none``: exact)
        and is idempotent; the version answers every search after it."""
        store.finish_load(version)
        store.finish_load(version)
        assert len(store.search(version, self.query(embedder, "vacation"), k=3).hits) == 3
        assert store.get_version(version).chunk_count == len(ALL_CHUNK_IDS)

    @pytest.fixture
    def store(self, oracle_store: OracleVectorStore) -> Iterator[Any]:
        versions = {v.name for v in oracle_store.list_versions()}
        aliases = set(oracle_store.list_aliases())
        yield oracle_store
        for alias in set(oracle_store.list_aliases()) - aliases:
            oracle_store.drop_alias(alias)
        for version in {v.name for v in oracle_store.list_versions()} - versions:
            oracle_store.drop_version(version)


# --- Oracle-only behaviour: statements and binds recorded by a fake connection ---------------
# A stand-in for the Oracle server (which cannot run here): it records every statement,
# bind and transaction event, and answers from rules the test gives it.

Rule = Callable[[str, dict[str, Any]], "list[tuple[Any, ...]] | None"]
V1 = ("KB_V1", "mini-lm", 3, "cosine", "hnsw", "default", "2025-01-01T00:00:00", None)
#: the same version with an IVF index: filtered searches count first and widen (review §2.8 keeps that plan for IVF)
V1_IVF = ("KB_V1", "mini-lm", 3, "cosine", "ivf", "default", "2025-01-01T00:00:00", None)


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


class RecordingCursor(FakeCursor):
    def _answer(self, statement: str, binds: dict[str, Any]) -> list[tuple[Any, ...]]:
        return list(self.db.answer(statement, binds))

    def getbatcherrors(self) -> list[Any]:
        return [types.SimpleNamespace(offset=i, message=f"ORA-12899: value too large (row {i})")
                for i in self.db.batch_errors if i < len(self.many)]

    def getarraydmlrowcounts(self) -> list[int]:
        return [2 for _ in self.many]


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
    def resolve(b: dict[str, Any]) -> list[tuple[Any, ...]]:
        name = aliases.get(b["target"], b["target"])
        return [by_name[name]] if name in by_name else []

    return [
        when("FROM RAG_VERSIONS v WHERE v.name = :name", lambda b: [by_name[b["name"]]] if b["name"] in by_name else []),
        when("WHERE v.name = COALESCE(", resolve),
        when("UPDATE RAG_VERSIONS SET generation = generation + 1",
             lambda b: [by_name[b["name"]][1:3]] if b["name"] in by_name else []),
        when("FROM RAG_ALIASES WHERE alias_name = :alias",
             lambda b: [(aliases[b["alias"]],)] if b["alias"] in aliases else []),
        when("p.version_name = :version",
             lambda b: [(a, "live") for a, v in aliases.items() if v == b["version"]]),
    ]


def make_store(db: RecordingDb, **index: Any) -> OracleVectorStore:
    settings = OracleSettings(vector_index=OracleVectorIndexSettings(**index))
    return OracleVectorStore(OracleConnector(RecordingPool(db), where="db.test:1521"), settings)


def test_the_bundle_is_one_object_per_port_around_one_connector() -> None:
    """Composition, not inheritance: each port its own object, all on the facade's connector."""
    store = make_store(RecordingDb([]))
    stores = store.stores()
    assert isinstance(stores.vectors, VectorStore) and isinstance(stores.admin, IndexAdmin)
    assert isinstance(stores.admin, SeriesLocking) and isinstance(stores.interactions, InteractionLog)
    assert isinstance(stores.conversations, ConversationLog) and isinstance(stores.enrichment_cache, EnrichmentCache)
    parts = [stores.vectors, stores.admin, stores.interactions, stores.conversations, stores.enrichment_cache]
    assert len({id(p) for p in parts}) == 5 and not any(isinstance(p, OracleVectorStore) for p in parts)
    assert stores.owner is store.connector
    assert all(getattr(p, "connector", None) is store.connector for p in parts[:4])


def doc(doc_id: str, n: int, dim: int = 3) -> DocumentWrite:
    chunks = [Chunk(f"{doc_id}#{i}", doc_id, f"text {i}", "a.txt", i) for i in range(n)]
    vectors = np.arange(n * dim, dtype=np.float32).reshape(n, dim) / 10
    return DocumentWrite(doc_id, "h1", chunks, vectors)


def chunk_row(chunk_id: str, dist: float) -> tuple[Any, ...]:
    return (chunk_id, "d1", 0, "text", "a.txt", "body", "ch", {"tags": ["hr"]}, dist)


def test_write_inserts_float32_vectors_with_batcherrors_and_commits_once() -> None:
    db = RecordingDb(registry(V1))
    written = make_store(db).write_documents("KB_V1", [doc("d1", 2)])
    assert written == 2
    inserts = [i for i, (k, s) in enumerate(db.log) if k == "executemany" and s == sql.insert_chunk_sql("KB_V1")]
    assert len(inserts) == 1 and not any(s.startswith("UPDATE KB_V1 ") for s in db.statements("executemany"))
    rows = db.log[inserts[0] + 1][1]
    assert [r["chunk_id"] for r in rows] == ["d1#0", "d1#1"]
    vector = rows[1]["embedding"]
    assert isinstance(vector, array.array) and vector.typecode == "f"
    assert list(vector) == pytest.approx([0.3, 0.4, 0.5])
    assert (rows[0]["text"], rows[0]["metadata"], rows[0]["chunk_index"]) == ("text 0", {}, 0)
    assert ("inputsizes", {"embedding": oracledb.DB_TYPE_VECTOR, "metadata": oracledb.DB_TYPE_JSON}) in db.log
    assert [k for k, _ in db.log].count("commit") == 1 and ("rollback", "") not in db.log


def test_batch_errors_are_mapped_back_to_chunk_ids_and_roll_back() -> None:
    db = RecordingDb(registry(V1), batch_errors=[1, 2])
    with pytest.raises(StoreError, match=r"2 of 3 chunks could not be written to KB_V1 \(nothing was committed\): "
                                         r"d1#1: ORA-12899: value too large \(row 1\); d1#2: ORA-12899"):
        make_store(db).write_documents("KB_V1", [doc("d1", 3)])
    assert ("rollback", "") in db.log and ("commit", "") not in db.log


def test_chunks_dropped_from_a_document_are_deleted_in_the_same_transaction() -> None:
    stored = [(f"d1#{i}", "old", i, "text", "a.txt", "x", {}, array.array("f", [0, 0, 0]), "d1") for i in range(3)]
    db = RecordingDb([*registry(V1), when("FROM KB_V1 WHERE doc_id IN (:d0,", stored)])
    assert make_store(db).write_documents("KB_V1", [doc("d1", 2)]) == 2
    kinds = [(k, s.split(" WHERE")[0] if isinstance(s, str) else "") for k, s in db.log
             if k in ("executemany", "commit")]
    assert kinds == [("executemany", "DELETE FROM KB_V1"),
                     ("executemany", sql.update_chunk_sql("KB_V1").split(" WHERE")[0]),
                     ("executemany", sql.MERGE_CACHE_SQL.split(" WHERE")[0]), ("commit", "")]
    deleted = db.log[[k for k, _ in db.log].index("executemany") + 1][1]
    assert deleted == [{"chunk_id": "d1#2"}]


def test_an_unchanged_document_is_not_rewritten() -> None:
    d = doc("d1", 2)
    stored = [(c.chunk_id, "h1", c.chunk_index, "text", "a.txt", c.content_hash, {}, array.array("f", v.tolist()),
               "d1") for c, v in zip(d.chunks, d.vectors)]
    db = RecordingDb([*registry(V1), when("FROM KB_V1 WHERE doc_id IN (:d0,", stored)])
    assert make_store(db).write_documents("KB_V1", [d]) == 0
    assert db.statements("executemany") == []


def test_vectors_of_another_dimension_are_refused_before_any_write() -> None:
    db = RecordingDb(registry(V1))
    with pytest.raises(EmbeddingModelMismatch, match="vectors have 4 dimensions, version KB_V1 expects 3 .mini-lm."):
        make_store(db).write_documents("KB_V1", [doc("d1", 1, dim=4)])
    assert db.statements("executemany") == [] and ("rollback", "") in db.log


def test_search_resolves_alias_and_searches_in_two_round_trips() -> None:
    """The alias and its version come back from one statement, the search is the second; no read-only
    transaction (a served version is immutable, and each statement is read-consistent)."""
    db = RecordingDb([*registry(V1, aliases={"KB_ACTIVE": "KB_V1"}), when("VECTOR_DISTANCE", [chunk_row("c1", 0.1)])])
    result = make_store(db).search("KB_ACTIVE", QueryVector(np.ones(3, np.float32), "mini-lm"), 1)
    assert (result.version, [h.chunk.chunk_id for h in result.hits]) == ("KB_V1", ["c1"])
    assert result.hits[0].score == pytest.approx(0.9)
    assert result.hits[0].chunk.metadata == {"tags": ["hr"]}
    executed = db.statements()
    assert len(executed) == 2 and executed[0] == sql.RESOLVE_TARGET_SQL
    assert "FETCH APPROX FIRST :k ROWS ONLY WITH TARGET ACCURACY 95" in executed[1]
    assert not any(k in ("commit", "rollback") for k, _ in db.log)


def test_query_from_another_model_fails_naming_both_and_never_searches() -> None:
    db = RecordingDb(registry(V1))
    with pytest.raises(EmbeddingModelMismatch, match=r"query embedded with other-model \(3 dims\) but KB_V1 holds "
                                                     r"vectors from mini-lm \(3 dims\)"):
        make_store(db).search("KB_V1", QueryVector(np.ones(3, np.float32), "other-model"), 2)
    assert not any("VECTOR_DISTANCE" in s for s in db.statements())


def test_ivf_selective_filter_counts_then_searches_exactly() -> None:
    db = RecordingDb([*registry(V1_IVF), when("SELECT COUNT(*)", [(3,)]),
                      when("VECTOR_DISTANCE", [chunk_row("c1", 0.2), chunk_row("c2", 0.3)])])
    store = make_store(db, exact_filter_threshold=10)
    hits = store.search("KB_V1", QueryVector(np.ones(3, np.float32), "mini-lm"), 2,
                        [FieldFilter("tags", any_of=("hr",))]).hits
    assert [h.chunk.chunk_id for h in hits] == ["c1", "c2"]
    search = [s for s in db.statements() if "VECTOR_DISTANCE" in s]
    assert len(search) == 1 and "APPROX" not in search[0] and "FETCH FIRST :k ROWS ONLY" in search[0]
    binds = db.log[[s for _, s in db.log].index(search[0]) + 1][1]
    assert binds["f0"] == "hr" and binds["k"] == 2 and binds["q"].typecode == "f"


def test_ivf_broad_filter_widens_candidate_depth_until_k_rows_match() -> None:
    def candidates(binds: dict[str, Any]) -> list[tuple[Any, ...]]:
        found = {8: 1, 32: 2}.get(binds.get("depth", 0), 0)
        return [chunk_row(f"c{i}", 0.1 * i) for i in range(found)]

    db = RecordingDb([*registry(V1_IVF), when("COUNT(*) FROM KB_V1 t WHERE JSON_EXISTS", [(500,)]),
                      when("COUNT(*) FROM KB_V1 t WHERE 1=1", [(10_000,)]), when(":depth", candidates)])
    store = make_store(db, exact_filter_threshold=100, candidate_factor=4)
    hits = store.search("KB_V1", QueryVector(np.ones(3, np.float32), "mini-lm"), 2,
                        [FieldFilter("tags", any_of=("hr",))]).hits
    assert [h.chunk.chunk_id for h in hits] == ["c0", "c1"]
    depths = [b["depth"] for k, b in db.log if k == "binds" and "depth" in b]
    assert depths == [8, 32]


def test_ivf_widening_that_would_cover_the_table_turns_exact() -> None:
    db = RecordingDb([*registry(V1_IVF), when("COUNT(*) FROM KB_V1 t WHERE JSON_EXISTS", [(50,)]),
                      when("COUNT(*) FROM KB_V1 t WHERE 1=1", [(20,)]), when(":depth", []),
                      when("FETCH FIRST :k ROWS ONLY", [chunk_row("c1", 0.1), chunk_row("c2", 0.2)])])
    store = make_store(db, exact_filter_threshold=10, candidate_factor=4)
    hits = store.search("KB_V1", QueryVector(np.ones(3, np.float32), "mini-lm"), 2,
                        [FieldFilter("tags", any_of=("hr",))]).hits
    assert [h.chunk.chunk_id for h in hits] == ["c1", "c2"]
    searches = [s for s in db.statements() if "VECTOR_DISTANCE" in s]
    assert [":depth" in s for s in searches] == [True, False]


ALICE = Visibility.of("alice", ("hr",))
#: what the ACL condition must look like: one JSON_EXISTS on rag_acl, every label a PASSING bind
ACL_CLAUSE = ("JSON_EXISTS(t.metadata, '$.rag_acl?(@ == $f{a} || @ == $f{b} || @ == $f{c})' PASSING "
              ':f{a} AS "f{a}", :f{b} AS "f{b}", :f{c} AS "f{c}")')


def test_ivf_visibility_is_a_json_exists_on_rag_acl_inside_the_search_before_the_top_k() -> None:
    """The ACL is in the WHERE of the vector search itself (exact when selective), so a hidden row
    can never take one of the k slots; its labels are bound, never spliced into the SQL."""
    db = RecordingDb([*registry(V1_IVF), when("SELECT COUNT(*)", [(3,)]),
                      when("VECTOR_DISTANCE", [chunk_row("c1", 0.2)])])
    store = make_store(db, exact_filter_threshold=10)
    store.search("KB_V1", QueryVector(np.ones(3, np.float32), "mini-lm"), 2, [FieldFilter("tags", any_of=("x",))],
                 visibility=ALICE)
    count, search = [s for s in db.statements() if "COUNT(*) FROM KB_V1 t WHERE JSON" in s or "VECTOR_DISTANCE" in s]
    clause = "JSON_EXISTS(t.metadata, '$.tags?(@ == $f0)' PASSING :f0 AS \"f0\") AND " + ACL_CLAUSE.format(a=1, b=2, c=3)
    assert count.endswith(f"WHERE {clause}")
    assert f"WHERE {clause} ORDER BY dist, t.chunk_id FETCH FIRST :k ROWS ONLY" in search
    binds = db.log[[s for _, s in db.log].index(search) + 1][1]
    assert (binds["f1"], binds["f2"], binds["f3"]) == ("public", "user:alice", "group:hr")
    assert "alice" not in search


def test_ivf_visibility_applies_to_the_broad_candidate_search_and_the_lexical_search() -> None:
    db = RecordingDb([*registry(V1_IVF), when("COUNT(*) FROM KB_V1 t WHERE JSON_EXISTS", [(500,)]),
                      when(":depth", [chunk_row("c1", 0.1), chunk_row("c2", 0.2)]),
                      when("CONTAINS(t.text, :query, 1)", [chunk_row("c3", 5.0)])])
    store = make_store(db, exact_filter_threshold=100)
    store.search("KB_V1", QueryVector(np.ones(3, np.float32), "mini-lm"), 2, visibility=ALICE)
    store.lexical_search("KB_V1", "leave", 2, visibility=ALICE)
    candidate = [s for s in db.statements() if ":depth" in s][0]
    assert candidate.endswith(f"WHERE {ACL_CLAUSE.format(a=0, b=1, c=2)} ORDER BY t.dist, t.chunk_id "
                              "FETCH FIRST :k ROWS ONLY")
    lexical = [s for s in db.statements() if "CONTAINS" in s][0]
    assert f"CONTAINS(t.text, :query, 1) > 0 AND {ACL_CLAUSE.format(a=0, b=1, c=2)} ORDER BY" in lexical


def test_asset_refs_under_visibility_keep_only_images_of_visible_chunks() -> None:
    db = RecordingDb([*registry(V1), when("JSON_TABLE", [("hr/img_001.png",)])])
    assert make_store(db).asset_refs("KB_V1", visibility=ALICE) == {"hr/img_001.png"}
    statement = [s for s in db.statements() if "JSON_TABLE" in s][0]
    assert statement.endswith(f"WHERE r.image_ref IS NOT NULL AND {ACL_CLAUSE.format(a=0, b=1, c=2)}")
    binds = [b for k, b in db.log if k == "binds" and "f0" in b][0]
    assert binds == {"f0": "public", "f1": "user:alice", "f2": "group:hr"}


def test_ivf_filter_matching_nothing_returns_no_hits_without_a_vector_search() -> None:
    db = RecordingDb([*registry(V1_IVF), when("SELECT COUNT(*)", [(0,)])])
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
    history_binds = [b for k, b in db.log if k == "binds" and "reason" in b][0]
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


def test_interactions_are_recorded_in_chat_interactions_with_resp_mode() -> None:
    explain_text = '{"max_similarity": 0.7, "reasons": ["a"]}'
    row = ("q?", "hybrid", "extractive", "handbook", "KB_ACTIVE", 12.5, explain_text, "c1", "2025-01-01T00:00:00",
           "alice")
    db = RecordingDb([when("FROM CHAT_INTERACTIONS ORDER BY id DESC", [row])])
    store = make_store(db)
    when_ = datetime.date(2025, 1, 2)
    store.record_interaction(Interaction("q?", "hybrid", "extractive", "handbook", "KB_ACTIVE", 12.5,
                                         {"max_similarity": 0.7, "reasons": ["a"], "day": when_}, "c1",
                                         principal="alice"))
    insert = [s for s in db.statements() if s.startswith("INSERT INTO CHAT_INTERACTIONS")]
    assert len(insert) == 1 and "resp_mode" in insert[0] and insert[0].endswith(":decision_explain, :principal)")
    assert ("inputsizes", {"decision_explain": oracledb.DB_TYPE_JSON}) in db.log
    binds = [b for k, b in db.log if k == "binds" and "resp_mode" in b][0]
    assert (binds["resp_mode"], binds["domain_key"], binds["decision_explain"]) == (
        "hybrid", "handbook", {"max_similarity": 0.7, "reasons": ["a"], "day": "2025-01-02"})
    assert binds["principal"] == "alice"
    got = store.interactions(limit=1)[0]
    assert (got.resp_mode, got.domain, got.decision_explain) == ("hybrid", "handbook",
                                                                 {"max_similarity": 0.7, "reasons": ["a"]})
    assert got.principal == "alice"


def test_cached_vectors_are_read_in_bound_chunks_of_500_hashes() -> None:
    db = RecordingDb([when("FROM RAG_EMBEDDING_CACHE", lambda b: [(b["h0"], array.array("f", [1.0, 2.0]))])])
    hashes = [f"{i:064x}" for i in range(501)]
    cached = make_store(db).cached_vectors("mini-lm", hashes)
    assert set(cached) == {hashes[0], hashes[500]}
    np.testing.assert_allclose(cached[hashes[500]], [1.0, 2.0])
    binds = [b for k, b in db.log if k == "binds" and "embed_model" in b]
    assert [sum(v is not None for v in b.values()) - 1 for b in binds] == [500, 1]  # the 1 padded to 8
    assert [len(b) - 1 for b in binds] == [500, 8] and binds[0]["embed_model"] == "mini-lm"


def test_lexical_search_binds_braced_words_and_filters() -> None:
    db = RecordingDb([*registry(V1), when("CONTAINS(t.text, :query, 1)", [chunk_row("c1", 7.0), chunk_row("c2", 3.0)])])
    result = make_store(db).lexical_search("KB_V1", "Vacation OR (days", 5, [FieldFilter("dept", any_of=("hr",))])
    assert [(h.chunk.chunk_id, h.score, h.lexical_score) for h in result.hits] == [("c1", 7.0, 7.0), ("c2", 3.0, 3.0)]
    binds = [b for k, b in db.log if k == "binds" and "query" in b][0]
    assert binds == {"f0": "hr", "query": "{vacation} ACCUM {or} ACCUM {days}", "n": sql.lexical_fetch(5)}


def test_lexical_search_without_words_runs_no_text_query() -> None:
    db = RecordingDb(registry(V1))
    assert make_store(db).lexical_search("KB_V1", "?! --", 5).hits == ()
    assert not any("CONTAINS" in s for s in db.statements())


def test_version_vectors_reads_every_vector_of_the_resolved_version() -> None:
    db = RecordingDb([*registry(V1, aliases={"KB_ACTIVE": "KB_V1"}),
                      when("SELECT chunk_id, embedding FROM KB_V1", [("a", array.array("f", [1, 0, 0])),
                                                                     ("b", array.array("f", [0, 1, 0]))])])
    chunk_ids, matrix = make_store(db).version_vectors("KB_ACTIVE")
    assert chunk_ids == ["a", "b"]
    np.testing.assert_array_equal(matrix, np.array([[1, 0, 0], [0, 1, 0]], np.float32))


def test_empty_strings_stored_as_null_come_back_as_empty_strings() -> None:
    """Oracle keeps '' as NULL; a chunk with an empty source must round-trip unchanged."""
    row = ("c1", "d1", 0, "text", None, None, "ch", "{}", 0.0)
    db = RecordingDb([*registry(V1), when("VECTOR_DISTANCE", [row])])
    hit = make_store(db).search("KB_V1", QueryVector(np.ones(3, np.float32), "mini-lm"), 1).hits[0]
    assert (hit.chunk.source, hit.chunk.text, hit.chunk.metadata) == ("", "", {})


def test_the_store_implements_every_store_port() -> None:
    from backend.core.ports import IndexAdmin, InteractionLog, VectorStore

    store = make_store(RecordingDb([]))
    assert [isinstance(store, port) for port in (VectorStore, IndexAdmin, InteractionLog)] == [True, True, True]
