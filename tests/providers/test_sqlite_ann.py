"""The embedded store's per-version HNSW index: built at ``finish_load``, used, dropped, reloaded,
rebuilt, and never a way round access control. Real store, real index files, real vectors."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from backend.benchmarks.ann_vectors import minilm_like
from backend.common.config import SqliteAnnSettings
from backend.core.types import ACL_FIELD, Chunk, DocumentWrite, FieldFilter, QueryVector, VersionSpec, Visibility
from backend.providers.sqlite_vs import ann
from backend.providers.sqlite_vs import matrices as matrices_module
from backend.providers.sqlite_vs.store import SqliteVectorStore

MODEL, DIM = "bench-model", 384
TINY = SqliteAnnSettings(min_vectors=50)
EXACT = SqliteAnnSettings(enabled=False)


def _fill(store: SqliteVectorStore, version: str, vectors: np.ndarray, per_doc: int = 10,
          visible_every: int = 0) -> None:
    """``vectors`` as documents of ``per_doc`` chunks; with ``visible_every``, one document in
    that many is labelled ``group:few``, every other one ``group:many``."""
    store.create_version(VersionSpec(version, MODEL, DIM, "cosine"))
    docs = []
    for d in range(len(vectors) // per_doc):
        label = "group:few" if visible_every and d % visible_every == 0 else "group:many"
        chunks = [Chunk(f"d{d}::{i}", f"d{d}", f"chunk {i} of document {d}", f"d{d}.txt", i,
                        metadata={ACL_FIELD: [label], "tags": [f"t{d % 7}"]}) for i in range(per_doc)]
        docs.append(DocumentWrite(f"d{d}", f"h{d}", chunks, vectors[d * per_doc:(d + 1) * per_doc]))
    for start in range(0, len(docs), 200):
        store.write_documents(version, docs[start:start + 200])


def _stamp(path: Path, version: str) -> dict[str, Any] | None:
    with sqlite3.connect(path) as con:
        (raw,) = con.execute("SELECT ann FROM rag_versions WHERE name = ?", (version,)).fetchone()
    return json.loads(raw) if raw else None


def _q(v: np.ndarray) -> QueryVector:
    return QueryVector(v, MODEL)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "ann.sqlite"


@pytest.fixture
def built(db: Path) -> Iterator[tuple[SqliteVectorStore, np.ndarray]]:
    vectors = minilm_like(3000, DIM, seed=3)
    store = SqliteVectorStore(db, ann_settings=TINY)
    _fill(store, "KB_V1", vectors)
    store.finish_load("KB_V1")
    yield store, vectors
    store.close()


def test_index_is_built_at_finish_load_stamped_and_used(db: Path, built: tuple[SqliteVectorStore, np.ndarray]) -> None:
    store, vectors = built
    stamp = _stamp(db, "KB_V1")
    assert stamp is not None and stamp["chunks"]["count"] == 3000
    assert stamp["chunks"]["library"] == "faiss" and stamp["chunks"]["type"] == "hnsw"
    assert stamp["chunks"]["M"] == TINY.connectivity and stamp["generation"] >= 1
    assert ann.index_file(str(db.resolve()), "KB_V1").is_file()
    result = store.search("KB_V1", _q(vectors[5]), 10)
    assert result.dense_index is not None and result.dense_index["kind"] == "hnsw"
    assert result.hits[0].chunk.chunk_id == "d0::5"  # a stored vector finds itself
    assert store.dense_candidates("KB_V1", _q(vectors[5]), 10).dense_index["kind"] == "hnsw"  # type: ignore[index]


def test_recall_at_10_against_exact(db: Path, built: tuple[SqliteVectorStore, np.ndarray]) -> None:
    store, _ = built
    exact = SqliteVectorStore(db, ann_settings=EXACT)
    queries = minilm_like(3040, DIM, seed=3)[3000:]  # the same distribution, not stored
    found = 0
    for q in queries:
        approx = {h.chunk.chunk_id for h in store.search("KB_V1", _q(q), 10).hits}
        truth = exact.search("KB_V1", _q(q), 10)
        assert truth.dense_index["kind"] == "exact"  # type: ignore[index]
        found += len(approx & {h.chunk.chunk_id for h in truth.hits})
    assert found / (10 * len(queries)) >= 0.97


def test_small_version_stays_exact_and_has_no_file(db: Path) -> None:
    store = SqliteVectorStore(db, ann_settings=TINY)
    vectors = minilm_like(40, DIM)
    _fill(store, "KB_SMALL", vectors)
    store.finish_load("KB_SMALL")
    assert _stamp(db, "KB_SMALL") is None
    assert not ann.index_file(store.path, "KB_SMALL").exists()
    how = store.search("KB_SMALL", _q(vectors[0]), 5).dense_index
    assert how is not None and how["kind"] == "exact" and "min_vectors" in how["reason"]


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_easy_set_equals_exact(db: Path, dtype: str) -> None:
    store = SqliteVectorStore(db, ann_settings=TINY.model_copy(update={"dtype": dtype}))
    vectors = minilm_like(300, DIM, seed=11)
    _fill(store, "KB_EASY", vectors)
    store.finish_load("KB_EASY")
    exact = SqliteVectorStore(db, ann_settings=EXACT)
    for q in vectors[:20]:
        a, e = store.search("KB_EASY", _q(q), 8), exact.search("KB_EASY", _q(q), 8)
        assert a.dense_index["kind"] == "hnsw"  # type: ignore[index]
        assert [(h.chunk.chunk_id, round(h.score, 5)) for h in a.hits] == \
               [(h.chunk.chunk_id, round(h.score, 5)) for h in e.hits]


def test_dropped_with_the_version(db: Path, built: tuple[SqliteVectorStore, np.ndarray]) -> None:
    store, _ = built
    path = ann.index_file(store.path, "KB_V1")
    assert path.is_file()
    store.drop_version("KB_V1")
    assert not path.exists()


def test_survives_a_reopen(db: Path, built: tuple[SqliteVectorStore, np.ndarray],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    _, vectors = built
    monkeypatch.setattr(matrices_module, "INDEXES", ann.AnnCache())  # a new process: nothing loaded
    reopened = SqliteVectorStore(db, ann_settings=TINY)
    result = reopened.search("KB_V1", _q(vectors[7]), 10)
    assert result.dense_index["kind"] == "hnsw" and result.hits[0].chunk.chunk_id == "d0::7"  # type: ignore[index]


@pytest.mark.parametrize("damage", ["truncate", "delete"])
def test_damaged_file_falls_back_to_exact_then_finish_load_rebuilds(
        db: Path, built: tuple[SqliteVectorStore, np.ndarray], monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    store, vectors = built
    path = ann.index_file(store.path, "KB_V1")
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])
    else:
        path.unlink()
    monkeypatch.setattr(matrices_module, "INDEXES", ann.AnnCache())
    result = store.search("KB_V1", _q(vectors[9]), 10)
    assert result.dense_index["kind"] == "exact" and "unusable" in result.dense_index["reason"]  # type: ignore[index]
    assert result.hits[0].chunk.chunk_id == "d0::9" and len(result.hits) == 10
    store.finish_load("KB_V1")
    assert store.search("KB_V1", _q(vectors[9]), 10).dense_index["kind"] == "hnsw"  # type: ignore[index]


def test_a_write_after_finish_load_makes_the_index_stale(built: tuple[SqliteVectorStore, np.ndarray]) -> None:
    store, vectors = built
    store.delete_documents("KB_V1", ["d0"])
    how = store.search("KB_V1", _q(vectors[15]), 10).dense_index
    assert how is not None and how["kind"] == "exact" and "stale" in how["reason"]
    store.finish_load("KB_V1")
    assert store.search("KB_V1", _q(vectors[15]), 10).dense_index["kind"] == "hnsw"  # type: ignore[index]


@pytest.mark.parametrize("settings,kind", [(SqliteAnnSettings(min_vectors=20), "hnsw"),
                                           (SqliteAnnSettings(min_vectors=20, max_depth=64), "exact"),
                                           (SqliteAnnSettings(min_vectors=1000), "exact")])
def test_one_percent_visible_returns_no_hidden_row_and_full_k(db: Path, settings: SqliteAnnSettings,
                                                             kind: str) -> None:
    """1 % of documents readable: widened HNSW, or the exact scan over the visible rows
    (filter below min_vectors; widening past max_depth), never a hidden chunk, always k."""
    store = SqliteVectorStore(db, ann_settings=settings)
    vectors = minilm_like(5000, DIM, seed=5)
    _fill(store, "KB_ACL", vectors, visible_every=100)  # 5 of 500 documents: 50 chunks
    store.finish_load("KB_ACL")
    reader = Visibility("ann-test", ("group:few",))
    visible = {f"d{d}" for d in range(0, 500, 100)}
    for q in minilm_like(5030, DIM, seed=5)[5000:]:
        result = store.search("KB_ACL", _q(q), 10, visibility=reader)
        assert {h.chunk.doc_id for h in result.hits} <= visible
        assert len(result.hits) == 10
        assert result.dense_index["kind"] == kind  # type: ignore[index]
        candidates = store.dense_candidates("KB_ACL", _q(q), 10, [FieldFilter("tags", any_of=("t0",))],
                                            visibility=reader)
        assert {c.split("::")[0] for c, _ in candidates.hits} <= visible and len(candidates.hits) == 10


def test_plan_is_a_pure_decision() -> None:
    s = SqliteAnnSettings(min_vectors=100, max_depth=1000)
    assert ann.plan(10_000, None, 10, False, s, "why").kind == "exact"
    assert ann.plan(10_000, None, 10, True, s) == ann.Plan("hnsw", "unfiltered", 10)
    assert ann.plan(10_000, 100, 10, True, s).kind == "exact"  # few visible rows: scan them
    assert ann.plan(10_000, 5_000, 10, True, s).depth == 40  # half visible: twice as deep, twice over
    assert ann.plan(10_000, 150, 10, True, s).kind == "exact"  # would need depth 1334 > max_depth


def test_concurrent_searches_share_one_index_and_agree(built: tuple[SqliteVectorStore, np.ndarray]) -> None:
    """Request threads search one loaded index at once: each gets what it gets alone."""
    from concurrent.futures import ThreadPoolExecutor

    store, vectors = built
    alone = [[h.chunk.chunk_id for h in store.search("KB_V1", _q(v), 10).hits] for v in vectors[:40]]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda v: [h.chunk.chunk_id for h in store.search("KB_V1", _q(v), 10).hits],
                                 vectors[:40]))
    assert together == alone


def _child(store: SqliteVectorStore, vectors: np.ndarray, *, deleted: list[str], edited: dict[str, np.ndarray],
           added: np.ndarray) -> None:
    """KB_V2 from KB_V1 as a sync builds it: carried rows, some documents deleted, some re-written
    with new vectors, one new document."""
    store.create_version(VersionSpec("KB_V2", MODEL, DIM, "cosine", parent="KB_V1"))
    store.delete_documents("KB_V2", deleted)
    writes = [DocumentWrite(doc, f"h{doc}-v2", [Chunk(f"{doc}::{i}", doc, f"chunk {i} of {doc}, edited", f"{doc}.txt", i,
                                                     metadata={ACL_FIELD: ["group:many"]}) for i in range(len(vs))], vs)
              for doc, vs in edited.items()]
    writes.append(DocumentWrite("dnew", "hnew", [Chunk(f"dnew::{i}", "dnew", f"new chunk {i}", "dnew.txt", i,
                                                       metadata={ACL_FIELD: ["group:many"]}) for i in range(len(added))],
                                added))
    store.write_documents("KB_V2", writes)
    store.finish_load("KB_V2")


def test_a_child_version_extends_its_parents_index(db: Path, built: tuple[SqliteVectorStore, np.ndarray]) -> None:
    """Issue 46: a sync's version starts from the parent's graph and adds only what it lacks. Deleted and
    replaced rows are never hits, edited rows are found by their new vectors, and the results are those
    of the exact scan as often as a fresh index's."""
    store, vectors = built
    fresh = minilm_like(3060, DIM, seed=11)[3000:]
    _child(store, vectors, deleted=["d1", "d2"], edited={"d3": fresh[:10], "d4": fresh[10:20]}, added=fresh[20:30])
    stamp = _stamp(db, "KB_V2")
    assert stamp is not None
    entry = stamp["chunks"]
    assert entry["from"] == "KB_V1.faiss" and entry["added"] == 30  # 20 edited rows and 10 new ones
    assert entry["count"] == 3000 - 20 + 10 and entry["keys"] == 3000 + 30  # 40 stale: 2 deleted, 2 replaced docs
    gone = {f"d{d}::{i}" for d in (1, 2) for i in range(10)}
    assert store.search("KB_V2", _q(vectors[15]), 10).hits[0].chunk.chunk_id not in gone
    for v, cid in [(fresh[5], "d3::5"), (fresh[25], "dnew::5"), (vectors[47], "d4::7")]:
        hits = store.search("KB_V2", _q(v), 10).hits
        ids = [h.chunk.chunk_id for h in hits]
        assert len(ids) == len(set(ids)) == 10 and not gone & set(ids)
        if cid != "d4::7":
            assert ids[0] == cid  # an edited or new row found by its new vector
        else:
            assert cid not in ids or hits[ids.index(cid)].score < 0.99  # the old vector of d4::7 is not its score
    exact = SqliteVectorStore(db, ann_settings=EXACT)
    found = 0
    queries = minilm_like(3100, DIM, seed=3)[3060:]
    for q in queries:
        result = store.search("KB_V2", _q(q), 10)
        assert result.dense_index["kind"] == "hnsw"  # type: ignore[index]
        found += len({h.chunk.chunk_id for h in result.hits} & {h.chunk.chunk_id for h in
                                                                exact.search("KB_V2", _q(q), 10).hits})
    assert found / (10 * len(queries)) >= 0.97
    parent = store.search("KB_V1", _q(vectors[15]), 10)  # the parent's own index is untouched
    assert parent.hits[0].chunk.chunk_id == "d1::5" and _stamp(db, "KB_V1")["chunks"]["keys"] == 3000  # type: ignore[index]


def test_too_many_stale_entries_build_the_index_whole(db: Path, built: tuple[SqliteVectorStore, np.ndarray]) -> None:
    store, vectors = built
    _child(store, vectors, deleted=[f"d{d}" for d in range(40)], edited={}, added=minilm_like(10, DIM, seed=12))
    entry = _stamp(db, "KB_V2")["chunks"]  # type: ignore[index]
    assert "from" not in entry and entry["keys"] == entry["count"] == 3000 - 400 + 10  # 400 of 3010 > 0.1


def test_a_parent_index_built_otherwise_is_not_extended(db: Path, built: tuple[SqliteVectorStore, np.ndarray]) -> None:
    store, vectors = built
    other = SqliteVectorStore(db, ann_settings=SqliteAnnSettings(min_vectors=50, connectivity=8))
    _child(other, vectors, deleted=["d1"], edited={}, added=minilm_like(10, DIM, seed=13))
    entry = _stamp(db, "KB_V2")["chunks"]  # type: ignore[index]
    assert "from" not in entry and entry["M"] == 8 and entry["keys"] == entry["count"]
