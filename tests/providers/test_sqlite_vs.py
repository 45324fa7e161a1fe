"""The embedded store: the shared contract, plus what only SQLite does."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from backend.common.config import SqliteAnnSettings
from backend.common.errors import EmbeddingModelMismatch, InvalidIdentifier, StoreUnavailable
from backend.core.ports import Stores
from backend.core.types import Chunk, DocumentWrite, FieldFilter, QueryVector, VersionSpec
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import REPO
from tests.contracts.vector_store import (
    ALL_CHUNK_IDS,
    VectorStoreContract,
    corpus_docs,
    embed,
    ids,
    make_doc,
    random_vectors,
)


class _SqliteContract(VectorStoreContract):
    """What both SQLite runs state their own way: the bundle of separate port objects over one
    ``SqliteDatabase`` (``SqliteVectorStore.stores()``, what ``build_stores`` returns), and where
    an unreachable file is."""

    @pytest.fixture
    def stores(self, store: SqliteVectorStore) -> Stores:
        return store.stores()

    def test_an_unreachable_store_says_where_it_is(self, tmp_path: Path) -> None:
        (tmp_path / "a-file").write_text("not a folder")
        where = tmp_path / "a-file" / "rag.sqlite"
        with pytest.raises(StoreUnavailable, match=re.escape(f"cannot create the folder of SQLite store {where}")):
            SqliteVectorStore(where)

    def test_the_bundle_holds_one_object_per_port(self, store: SqliteVectorStore, stores: Stores) -> None:
        parts = [stores.vectors, stores.admin, stores.interactions, stores.conversations, stores.enrichment_cache]
        assert len({id(p) for p in parts}) == 5 and store not in parts
        assert stores.owner is store.db


class TestSqliteVectorStore(_SqliteContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Any]:
        store = SqliteVectorStore(tmp_path / "contract.sqlite")
        yield store
        store.close()

    def test_finish_load_readies_what_search_uses(self, store: Any, version: str, embedder: Any) -> None:
        """Below ``store.sqlite.ann.min_vectors`` rows no index is built: the exact scan answers, saying why."""
        store.finish_load(version)
        store.finish_load(version)
        result = store.search(version, self.query(embedder, "vacation"), k=3)
        assert result.dense_index is not None and result.dense_index["kind"] == "exact"
        assert "min_vectors" in result.dense_index["reason"] and len(result.hits) == 3
        assert store.get_version(version).chunk_count == len(ALL_CHUNK_IDS)


class _IndexedAfterEachWrite(SqliteVectorStore):
    """Finishes the load after every write, as ingest does once at its end, so every search of
    the contract runs on a fresh HNSW index (threshold 1 row) rather than the exact scan."""

    def write_documents(self, version: str, documents: Any, *, allow_served: bool = False) -> int:
        written = super().write_documents(version, documents, allow_served=allow_served)
        self.finish_load(version)
        return written

    def delete_documents(self, version: str, doc_ids: Any, *, allow_served: bool = False) -> int:
        deleted = super().delete_documents(version, doc_ids, allow_served=allow_served)
        self.finish_load(version)
        return deleted


class TestSqliteVectorStoreWithAnnIndex(_SqliteContract):
    """The same contract with the per-version ANN index on (store.sqlite.ann, min_vectors 1)."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Any]:
        store = _IndexedAfterEachWrite(tmp_path / "contract-ann.sqlite", ann_settings=SqliteAnnSettings(min_vectors=1))
        yield store
        store.close()

    def test_finish_load_readies_what_search_uses(self, store: Any, version: str, embedder: Any) -> None:
        """At ``min_vectors`` rows or more finish_load builds the HNSW index, and an unfiltered search uses it."""
        store.finish_load(version)
        result = store.search(version, self.query(embedder, "vacation"), k=3)
        assert result.dense_index is not None and result.dense_index["kind"] == "hnsw" and len(result.hits) == 3

    def assert_ranking_exact(self, exact: int, pairs: int) -> None:
        """HNSW is approximate: no leak and exactly min(k, visible) hits still hold for every pair
        (asserted by the contract), the exact ranking for nearly all (isotropic 16-dim vectors,
        the hardest case for a graph)."""
        assert exact >= 0.9 * pairs


# --- SQLite-only behaviour -----------------------------------------------------------
EVIL = "kb; DROP TABLE x"


def _schema(path: Path) -> list[tuple[str, str]]:
    """The database's objects, read over a connection of its own."""
    with sqlite3.connect(path) as con:
        return sorted(con.execute("SELECT type, name FROM sqlite_master"))


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "sqlite-only.sqlite"


@pytest.fixture
def sqlite(db_path: Path) -> Iterator[SqliteVectorStore]:
    store = SqliteVectorStore(db_path)
    yield store
    store.close()


@pytest.fixture
def two_versions(sqlite: SqliteVectorStore, embedder: Any) -> tuple[str, str]:
    """KB_A and KB_B hold the same corpus under chunk ids prefixed ``A-`` / ``B-``."""
    for name, prefix in (("KB_A", "A-"), ("KB_B", "B-")):
        sqlite.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "cosine"))
        sqlite.write_documents(name, corpus_docs(embedder, id_prefix=prefix))
    return "KB_A", "KB_B"


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    """Block until ``condition`` holds; the deadline only turns a hang into a failure."""
    deadline = time.monotonic() + 60
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.001)


def test_reader_never_sees_an_error_or_a_mix_while_the_alias_rotates_200_times(
    sqlite: SqliteVectorStore, two_versions: tuple[str, str], embedder: Any
) -> None:
    a, b = two_versions
    sqlite.point_alias("KB_LIVE", a)
    query = QueryVector(embed(embedder, ["vacation days"], query=True)[0], embedder.model_id)
    stop = threading.Event()
    seen: list[tuple[str, set[str]]] = []
    errors: list[BaseException] = []

    view_rows: list[set[str]] = []

    def reader() -> None:
        """Searches through the store, and reads the view over a plain connection as a SQL client would."""
        raw = sqlite3.connect(sqlite.path)
        try:
            while not stop.is_set():
                for result in (sqlite.search("KB_LIVE", query, k=50), sqlite.lexical_search("KB_LIVE", "days", k=50)):
                    seen.append((result.version, {h.chunk.chunk_id.split("-", 1)[0] for h in result.hits}))
                view_rows.append({cid.split("-", 1)[0] for (cid,) in raw.execute("SELECT chunk_id FROM KB_LIVE")})
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread and asserted there
            errors.append(exc)
        finally:
            raw.close()
            sqlite.close()

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for i in range(200):
            sqlite.point_alias("KB_LIVE", b if i % 2 == 0 else a, reason=f"rotation {i}")
            if i % 20 == 0:  # make sure searches really run between rotations
                done = len(seen)
                _wait_for(lambda: len(seen) >= done + 4 or bool(errors), "the reader to search")
    finally:
        stop.set()
        thread.join()
    assert errors == []
    assert len(seen) >= 40
    assert {version for version, _ in seen} == {a, b}
    for version, prefixes in seen:
        assert prefixes == {version[-1]}, f"a {version} result held hits of {prefixes}"
    assert {frozenset(rows) for rows in view_rows} == {frozenset("A"), frozenset("B")}
    assert len(sqlite.alias_history("KB_LIVE")) == 201
    assert sqlite.resolve_alias("KB_LIVE") == a


@pytest.mark.parametrize(
    "call",
    [
        lambda s, q: s.create_version(VersionSpec(EVIL, "m", 8, "cosine")),
        lambda s, q: s.write_documents(EVIL, []),
        lambda s, q: s.delete_documents(EVIL, ["doc"]),
        lambda s, q: s.document_hashes(EVIL),
        lambda s, q: s.get_version(EVIL),
        lambda s, q: s.drop_version(EVIL),
        lambda s, q: s.record_evaluation(EVIL, {"ok": True}),
        lambda s, q: s.point_alias(EVIL, "KB_A"),
        lambda s, q: s.point_alias("KB_LIVE", EVIL),
        lambda s, q: s.resolve_alias(EVIL),
        lambda s, q: s.alias_history(EVIL),
        lambda s, q: s.search(EVIL, q, k=3),
        lambda s, q: s.lexical_search(EVIL, "days", k=3),
        lambda s, q: s.search("KB_A", q, k=3, filters=[FieldFilter(EVIL, any_of=("x",))]),
        lambda s, q: s.lexical_search("KB_A", "days", k=3, filters=[FieldFilter(EVIL, gte="2024")]),
    ],
    ids=["create_version", "write", "delete", "document_hashes", "get_version", "drop_version",
         "record_evaluation", "alias-name", "alias-version", "resolve_alias", "alias_history", "search-target",
         "lexical-target", "search-filter-field", "lexical-filter-field"],
)
def test_injected_identifier_is_rejected_before_any_sql_runs(
    sqlite: SqliteVectorStore, two_versions: tuple[str, str], embedder: Any, db_path: Path, call: Callable[..., Any]
) -> None:
    query = QueryVector(embed(embedder, ["days"], query=True)[0], embedder.model_id)
    before = _schema(db_path)
    statements: list[str] = []
    sqlite._conn().set_trace_callback(statements.append)
    try:
        with pytest.raises(InvalidIdentifier, match=re.escape(repr(EVIL))):
            call(sqlite, query)
    finally:
        sqlite._conn().set_trace_callback(None)
    assert statements == []
    assert _schema(db_path) == before
    assert {v.name for v in sqlite.list_versions()} == {"KB_A", "KB_B"}


def test_alias_view_selects_the_served_versions_rows(
    sqlite: SqliteVectorStore, two_versions: tuple[str, str], db_path: Path
) -> None:
    a, b = two_versions
    sqlite.point_alias("KB_LIVE", a)
    assert ("view", "KB_LIVE") in _schema(db_path)
    with sqlite3.connect(db_path) as con:
        rows = con.execute("SELECT chunk_id, doc_id FROM KB_LIVE").fetchall()
    assert sorted(cid for cid, _ in rows) == sorted(f"A-{cid}" for cid in ALL_CHUNK_IDS)

    sqlite.point_alias("KB_LIVE", b)
    with sqlite3.connect(db_path) as con:
        rows = con.execute("SELECT chunk_id FROM KB_LIVE WHERE doc_id = 'kitchen'").fetchall()
    assert rows == [("B-kitchen#0",)]


def test_a_write_that_fails_midway_leaves_the_version_unchanged(
    sqlite: SqliteVectorStore, two_versions: tuple[str, str], embedder: Any
) -> None:
    a, _ = two_versions
    hashes = sqlite.document_hashes(a)
    query = QueryVector(embed(embedder, ["vacation days"], query=True)[0], embedder.model_id)
    before = sqlite.search(a, query, k=50)
    text = "Employees accrue five days of vacation per month."
    good = make_doc("hr-leave", [(text, "text")], {}, "hr.md", embed(embedder, [text]), id_prefix="A-", doc_hash="new")
    bad = make_doc("brand-new", [("anything", "text")], {}, "new.md", random_vectors(1, 8))

    with pytest.raises(EmbeddingModelMismatch, match="brand-new"):
        sqlite.write_documents(a, [good, bad])

    assert sqlite.document_hashes(a) == hashes
    after = sqlite.search(a, query, k=50)
    assert [(h.chunk, h.score) for h in after.hits] == [(h.chunk, h.score) for h in before.hits]
    assert sqlite.get_version(a).chunk_count == 7


def test_matrix_cache_follows_writes_and_deletes(sqlite: SqliteVectorStore, two_versions: tuple[str, str], embedder: Any) -> None:
    a, _ = two_versions
    question = "Can I bring my dog to the office?"
    query = QueryVector(embed(embedder, [question], query=True)[0], embedder.model_id)
    assert "dogs#0" not in ids(sqlite.search(a, query, k=3))  # warms the cache

    text = "Dogs are welcome in the office on Fridays if they are on a leash."
    sqlite.write_documents(a, [make_doc("dogs", [(text, "text")], {}, "pets.md", embed(embedder, [text]))])
    assert ids(sqlite.search(a, query, k=3))[0] == "dogs#0"

    other = SqliteVectorStore(sqlite.path)  # another connection, as a second worker would have
    try:
        assert other.delete_documents(a, ["dogs"]) == 1
    finally:
        other.close()
    assert "dogs#0" not in ids(sqlite.search(a, query, k=50))


def test_version_recreated_by_another_process_is_not_served_from_a_stale_cache(
    sqlite: SqliteVectorStore, embedder: Any, db_path: Path
) -> None:
    """A dropped and re-created version restarts its write generation; the cache must
    still notice, even when another process did it."""
    sqlite.create_version(VersionSpec("KB_R", "test/random", 8, "cosine"))
    vec = random_vectors(2, 8, seed=7)
    sqlite.write_documents("KB_R", [DocumentWrite("old", "h", [Chunk("old#0", "old", "old text", "o.txt", 0)], vec[:1])])
    query = QueryVector(vec[1], "test/random")
    assert ids(sqlite.search("KB_R", query, k=5)) == ["old#0"]

    script = textwrap.dedent(f"""
        import numpy as np
        from backend.core.types import Chunk, DocumentWrite, VersionSpec
        from backend.providers.sqlite_vs.store import SqliteVectorStore
        s = SqliteVectorStore({str(db_path)!r})
        s.drop_version("KB_R")
        s.create_version(VersionSpec("KB_R", "test/random", 8, "cosine"))
        vec = np.random.default_rng(7).standard_normal((2, 8)).astype(np.float32)
        s.write_documents("KB_R", [DocumentWrite("new", "h", [Chunk("new#0", "new", "new text", "n.txt", 0)], vec[1:])])
    """)
    subprocess.run([sys.executable, "-c", script], check=True, cwd=REPO, capture_output=True)

    hits = sqlite.search("KB_R", query, k=5).hits
    assert [(h.chunk.chunk_id, h.chunk.text) for h in hits] == [("new#0", "new text")]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


# --- the metadata (facet) index ------------------------------------------------------
def _facets(path: Path, version: str) -> set[tuple[str, object, str]]:
    with sqlite3.connect(path) as con:
        return set(con.execute(f"SELECT f.field, f.value, t.chunk_id FROM {version}_facets f JOIN {version} t "
                               "ON t.rowid = f.rid"))


def test_facet_index_follows_inserts_rewrites_and_deletes(sqlite: SqliteVectorStore, db_path: Path) -> None:
    sqlite.create_version(VersionSpec("KB_F_V1", "test/random-8", 8, "cosine"))
    vec = random_vectors(1, 8)
    meta = {"tags": ["hr", "leave", "hr"], "dept": "hr", "year": 2025, "nested": {"a": 1}, "none": None}
    sqlite.write_documents("KB_F_V1", [make_doc("d1", [("leave text", "text")], meta, "d1.md", vec)])
    assert _facets(db_path, "KB_F_V1") == {("tags", "hr", "d1#0"), ("tags", "leave", "d1#0"), ("dept", "hr", "d1#0"),
                                           ("year", 2025, "d1#0")}
    sqlite.write_documents("KB_F_V1", [make_doc("d1", [("leave text", "text")], {"dept": "it"}, "d1.md", vec,
                                                doc_hash="v2")])
    assert _facets(db_path, "KB_F_V1") == {("dept", "it", "d1#0")}
    sqlite.delete_documents("KB_F_V1", ["d1"])
    assert _facets(db_path, "KB_F_V1") == set()


def test_number_and_string_values_match_exactly_as_in_json(sqlite: SqliteVectorStore) -> None:
    sqlite.create_version(VersionSpec("KB_F_V2", "test/random-8", 8, "cosine"))
    sqlite.write_documents("KB_F_V2", [
        make_doc("num", [("a", "text")], {"year": 2025}, "a.md", random_vectors(1, 8, seed=1)),
        make_doc("str", [("b", "text")], {"year": "2025"}, "b.md", random_vectors(1, 8, seed=2)),
    ])
    q = QueryVector(random_vectors(1, 8, seed=3)[0], "test/random-8")
    assert ids(sqlite.search("KB_F_V2", q, 5, (FieldFilter("year", any_of=("2025",)),))) == ["str#0"]


def test_filtered_search_plan_reads_the_facet_index_not_the_json(sqlite: SqliteVectorStore, db_path: Path) -> None:
    from backend.providers.sqlite_vs.filters import filter_sql

    sqlite.create_version(VersionSpec("KB_F_V3", "test/random-8", 8, "cosine"))
    where, params = filter_sql((FieldFilter("tags", all_of=("hr", "leave")),
                                FieldFilter("updated_at", gte="2024-01-01", lte="2024-12-31")), table="KB_F_V3")
    with sqlite3.connect(db_path) as con:
        plan = " | ".join(r[3] for r in con.execute(
            f"EXPLAIN QUERY PLAN SELECT t.rowid FROM KB_F_V3 AS t WHERE {where}", params))
    assert "json_each" not in where and "json_extract" not in where
    assert plan.count("KB_F_V3_facets USING PRIMARY KEY (field=? AND value=?)") == 2, plan
    assert "KB_F_V3_facets USING PRIMARY KEY (field=? AND value>? AND value<?)" in plan, plan


def test_a_version_written_before_the_facet_index_gets_it_on_open(tmp_path: Path, embedder: Any) -> None:
    path = tmp_path / "old.sqlite"
    store = SqliteVectorStore(path)
    store.create_version(VersionSpec("KB_OLD_V1", embedder.model_id, embedder.dimension, "cosine"))
    store.write_documents("KB_OLD_V1", corpus_docs(embedder))
    store.close()
    with sqlite3.connect(path) as con:  # what a database of an earlier release looks like
        for trigger in ("ins", "del", "upd"):
            con.execute(f"DROP TRIGGER KB_OLD_V1_facets_{trigger}")
        con.execute("DROP TABLE KB_OLD_V1_facets")
    reopened = SqliteVectorStore(path)
    try:
        q = QueryVector(embed(embedder, ["vacation"], query=True)[0], embedder.model_id)
        assert set(ids(reopened.search("KB_OLD_V1", q, 10, (FieldFilter("dept", any_of=("it",)),)))) == {
            "it-vpn#0", "it-password#0", "it-password#1"}
    finally:
        reopened.close()
