"""Query term frequency on the lexical side and lexical-to-dense feedback (``fusion.dense_feedback_docs``),
on a real embedded store with the real local model."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from backend.common.config import LexicalSettings, ProfileSettings, RetrievalSettings
from backend.core.dense_feedback import feedback_query
from backend.core.fusion import reciprocal_rank_fusion
from backend.core.lexical_query import lexical_terms, query_words
from backend.core.services.search_service import SearchRequest, SearchService
from backend.core.types import Chunk, DocumentWrite, VersionSpec, Visibility, content_hash
from backend.providers.sqlite_vs.store import SqliteVectorStore, fts_query

VERSION = "KB_DFB_V1"
TEXTS = {
    "vpn": "vpn setup guide for the office network",
    "password": "password setup guide for the office network",
    "leave": "annual leave and vacation days for employees, approved by the manager",
    "sick": "sick leave: tell your manager on the first day and bring a doctor's note after three days",
    "expenses": "travel expenses are paid back against receipts within thirty days",
    "laptop": "a lost laptop is a security incident: report it and change your password",
    "holiday": "public holidays are not counted as vacation days",
    "budget": "the travel budget of each team is set by finance every year",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[SqliteVectorStore]:
    store = SqliteVectorStore(Path(tmp_path_factory.mktemp("dfb")) / "dfb.sqlite")
    store.create_version(VersionSpec(VERSION, embedder.model_id, embedder.dimension, "cosine"))
    vectors = embedder.embed_documents(list(TEXTS.values()))
    store.write_documents(VERSION, [
        DocumentWrite(cid, content_hash(text), [Chunk(f"{cid}#0", cid, text, f"{cid}.md", 0,
                                                      metadata={"rag_acl": ["group:it"] if cid == "laptop" else
                                                                ["public"]})], vectors[n:n + 1])
        for n, (cid, text) in enumerate(TEXTS.items())])
    store.point_alias("KB_DFB", VERSION)
    yield store
    store.close()


def test_lexical_terms_keep_repeats_only_with_query_term_frequency() -> None:
    text = "Retrieval of documents: retrieval evaluation and the retrieval of indexing"
    off = LexicalSettings(stop_words="english")
    on = off.model_copy(update={"query_term_frequency": True})
    assert lexical_terms(text, off) == query_words(text, off) == ["retrieval", "documents", "evaluation", "indexing"]
    assert lexical_terms(text, on) == ["retrieval", "documents", "retrieval", "evaluation", "retrieval", "indexing"]
    # a query of stop words only keeps them all, repeats included
    assert lexical_terms("what is what", on) == ["what", "is", "what"]
    assert fts_query("vpn VPN password") == '"vpn" OR "vpn" OR "password"'


def test_a_repeated_word_weighs_more_in_the_store_bm25(store: SqliteVectorStore) -> None:
    # the two guides differ by one word; "vpn" is the rarer one (the laptop text says "password" too)
    once = store.lexical_candidates(VERSION, "vpn password", 2)
    assert [c for c, _ in once.hits] == ["vpn#0", "password#0"]
    repeated = dict(store.lexical_candidates(VERSION, "vpn password password password", 8).hits)
    assert max(repeated, key=lambda c: repeated[c]) == "password#0"
    assert repeated["password#0"] == pytest.approx(3 * once.hits[1][1], rel=1e-6)
    assert repeated["vpn#0"] == pytest.approx(once.hits[0][1], rel=1e-6)


def test_feedback_query_moves_toward_the_centroid_and_keeps_the_norm() -> None:
    rng = np.random.default_rng(3)
    q = rng.normal(size=8).astype(np.float32) * 3
    fb = [rng.normal(size=8).astype(np.float32) for _ in range(3)]
    assert np.array_equal(feedback_query(q, fb, 0.0), q) and np.array_equal(feedback_query(q, [], 0.5), q)
    moved = feedback_query(q, fb, 0.5)
    centroid = np.mean([v / np.linalg.norm(v) for v in fb], axis=0)

    def cos(a: np.ndarray, b: np.ndarray) -> float:
        return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))

    assert cos(moved, centroid) > cos(q, centroid)
    assert np.linalg.norm(moved) == pytest.approx(np.linalg.norm(q), rel=1e-5)
    expected = q / np.linalg.norm(q) + 0.5 * centroid
    assert cos(moved, expected) == pytest.approx(1.0, abs=1e-6)
    assert cos(feedback_query(q, fb, 2.0), centroid) > cos(moved, centroid)
    with pytest.raises(ValueError, match="weight"):
        feedback_query(q, fb, -1.0)


def _service(store: SqliteVectorStore, embedder: Any, docs: int) -> SearchService:
    settings = RetrievalSettings.model_validate({
        "strategy": "fusion", "fusion": {"method": "rrf", "k": 20, "dense_depth": 8, "lexical_depth": 8,
                                         "dense_feedback_docs": docs, "dense_feedback_weight": 0.5},
        "lexical": {"stop_words": "english", "query_term_frequency": True}})
    return SearchService(store, embedder, ProfileSettings(index_name=VERSION), settings)


@pytest.mark.parametrize("visibility", [None, Visibility.of("ann", ())])
def test_dense_feedback_searches_with_the_moved_vector_and_scores_with_the_question(
        store: SqliteVectorStore, embedder: Any, visibility: Visibility | None) -> None:
    text = "How do I report a lost laptop and change my password?"
    service = _service(store, embedder, 2)
    outcome = service.search(SearchRequest(text, "KB_DFB", 5, visibility=visibility))
    q = service.embed_query(text)
    # the reference: lexical first, its first 2 visible hits' stored vectors move the query
    words = lexical_terms(text, LexicalSettings(stop_words="english", query_term_frequency=True))
    lexical = store.lexical_candidates(VERSION, " ".join(words), 8, visibility=visibility)
    first = [c for c, _ in lexical.hits[:2]]
    vectors = store.chunk_vectors(VERSION, first, visibility=visibility)
    moved = feedback_query(q.values, [vectors[c] for c in first], 0.5)
    dense = store.dense_candidates(VERSION, type(q)(moved, q.model, q.accepts), 8, visibility=visibility)
    fused = reciprocal_rank_fusion({"dense": [c for c, _ in dense.hits], "lexical": [c for c, _ in lexical.hits]},
                                   {"dense": 1.0, "lexical": 1.0}, 20)[:5]
    assert [h.chunk.chunk_id for h in outcome.hits] == [f.chunk_id for f in fused]
    assert outcome.details["dense_feedback"] == {"docs": len(first), "weight": 0.5, "chunk_ids": first}
    # hit.score is the similarity to the question itself, never to the moved vector
    sims = store.similarities(VERSION, q, [h.chunk.chunk_id for h in outcome.hits])
    assert [h.score for h in outcome.hits] == [sims[h.chunk.chunk_id] for h in outcome.hits]
    assert dict(dense.hits) != {c: sims[c] for c, _ in dense.hits if c in sims}
    if visibility is not None:  # a chunk the reader may not see never moves the query
        assert "laptop#0" not in first and all(h.chunk.chunk_id != "laptop#0" for h in outcome.hits)
    else:
        assert "laptop#0" in first and len(first) == 2


def test_dense_feedback_off_is_the_plain_fusion(store: SqliteVectorStore, embedder: Any) -> None:
    text = "vacation days and public holidays"
    off = _service(store, embedder, 0).search(SearchRequest(text, "KB_DFB", 5))
    on = _service(store, embedder, 3).search(SearchRequest(text, "KB_DFB", 5))
    assert "dense_feedback" not in off.details and on.details["dense_feedback"]["docs"] == 3
    words = len(lexical_terms(text, LexicalSettings(stop_words="english", query_term_frequency=True)))
    assert off.details["lexical"]["query_term_frequency"] == {"words_sent": words}
