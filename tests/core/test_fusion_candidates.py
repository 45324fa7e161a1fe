"""Fusion on candidates ranks exactly as fusion on whole rows did.

``SearchService`` now fuses ``(chunk_id, score)`` candidates (``VectorStore.dense_candidates`` /
``lexical_candidates``) and reads rows for its final hits only. The reference below is the
previous implementation, computed from the row-returning searches (``search`` /
``lexical_search``, a filtered ``search`` for the dense similarity of lexical-only hits): for
rrf and score fusion, with and without stop words and feedback, filters and access control,
ids, order and every score must be identical (``==``, not approximately) on a real store with
the real model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from backend.common.config import ProfileSettings, RetrievalSettings
from backend.core.fusion import reciprocal_rank_fusion, score_fusion
from backend.core.lexical_query import (
    ENGLISH_STOP_WORDS,
    combine_feedback,
    expansion_terms,
    query_words,
    stop_words,
)
from backend.core.services.search_service import SearchRequest, SearchService
from backend.core.types import Chunk, DocumentWrite, FieldFilter, QueryVector, VersionSpec, Visibility, content_hash
from backend.providers.sqlite_vs.store import SqliteVectorStore

VERSION = "KB_FUSE_V1"
TOPICS = {
    "hr": "employees annual leave vacation days holiday sick pay salary manager approval request policy",
    "it": "password laptop vpn network security incident account login device software update policy",
    "finance": "travel expenses receipts budget invoice approval limit reimbursement card payment policy",
    "library": "information retrieval indexing documents classification catalogue search evaluation library",
}
QUERIES = ["How many days of annual leave do employees get?", "What is the password policy for laptops?",
           "Who approves travel expenses above the limit?", "information retrieval evaluation of indexing languages",
           "the policy of the library", "vpn"]
DEPARTMENTS = tuple(TOPICS)


def corpus() -> list[tuple[str, str, dict[str, Any]]]:
    """180 chunks: words drawn from one topic plus a few from another and some stop words, so the
    dense and lexical rankings differ, lexical scores tie, and feedback finds new terms."""
    rng = np.random.default_rng(21)
    out = []
    for n in range(180):
        dept = DEPARTMENTS[n % 4]
        own = TOPICS[dept].split()
        other = TOPICS[DEPARTMENTS[(n + 1 + n // 4) % 4]].split()
        words = [*rng.choice(own, size=int(rng.integers(4, 10))), *rng.choice(other, size=int(rng.integers(0, 4))),
                 *rng.choice(["the", "of", "and", "for", "is"], size=3)]
        rng.shuffle(words)
        acl = ["public"] if n % 3 == 0 else [f"group:{dept}"]
        out.append((f"c{n:03d}", " ".join(words) + ".", {"dept": dept, "rag_acl": acl}))
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[SqliteVectorStore]:
    store = SqliteVectorStore(Path(tmp_path_factory.mktemp("fuse")) / "fuse.sqlite")
    store.create_version(VersionSpec(VERSION, embedder.model_id, embedder.dimension, "cosine"))
    rows = corpus()
    vectors = embedder.embed_documents([text for _, text, _ in rows])
    store.write_documents(VERSION, [
        DocumentWrite(cid, content_hash(text), [Chunk(cid, cid, text, f"{meta['dept']}.md", 0, metadata=meta)],
                      vectors[n:n + 1])
        for n, (cid, text, meta) in enumerate(rows)])
    store.point_alias("KB_FUSE", VERSION)
    yield store
    store.close()


def reference(store: SqliteVectorStore, settings: RetrievalSettings, text: str, q: QueryVector, pool: int,
              filters: tuple[FieldFilter, ...], visibility: Visibility | None, strategy: str
              ) -> list[tuple[str, float, float | None, float | None]]:
    """The previous ``_fusion`` / ``_lexical``: ``(chunk_id, score, fused_score, lexical_score)``."""
    cfg, lex = settings.fusion, settings.lexical
    depth = max(cfg.lexical_depth, pool) if strategy == "fusion" else pool
    dense = store.search("KB_FUSE", q, max(cfg.dense_depth, pool), filters, visibility=visibility)
    terms = query_words(text, lex)
    first = store.lexical_search(dense.version, " ".join(terms), depth, filters, visibility=visibility)
    lexical = [(h.chunk.chunk_id, h.lexical_score) for h in first.hits]
    if lex.feedback_docs and first.hits:
        texts = [h.chunk.text for h in first.hits]
        extra = expansion_terms(terms, texts[: lex.feedback_docs], texts, lex.feedback_terms,
                                stop_words(lex) | ENGLISH_STOP_WORDS)
        if extra:
            second = store.lexical_search(dense.version, " ".join(terms + extra), depth, filters, visibility=visibility)
            lexical = combine_feedback(lexical, [(h.chunk.chunk_id, h.lexical_score) for h in second.hits],
                                       lex.feedback_weight)[:depth]

    def similarity(ids: list[str]) -> dict[str, float]:
        if not ids:
            return {}
        found = store.search(dense.version, q, len(ids), (FieldFilter("chunk_id", any_of=tuple(ids)),),
                             visibility=visibility)
        return {h.chunk.chunk_id: h.score for h in found.hits}

    lexical_score = dict(lexical)
    if strategy == "lexical":
        sims = similarity([c for c, _ in lexical])
        return [(c, sims[c], None, lexical_score[c]) for c, _ in lexical if c in sims]
    if cfg.method == "score":
        fused = score_fusion({"dense": [(h.chunk.chunk_id, h.score) for h in dense.hits], "lexical": lexical},
                             {"dense": cfg.dense_weight, "lexical": cfg.lexical_weight}, cfg.normalization)[:pool]
    else:
        fused = reciprocal_rank_fusion({"dense": [h.chunk.chunk_id for h in dense.hits],
                                        "lexical": [c for c, _ in lexical]},
                                       {"dense": cfg.dense_weight, "lexical": cfg.lexical_weight}, cfg.k)[:pool]
    sims = {h.chunk.chunk_id: h.score for h in dense.hits}
    sims.update(similarity([f.chunk_id for f in fused if f.chunk_id not in sims]))
    return [(f.chunk_id, sims[f.chunk_id], f.score, lexical_score.get(f.chunk_id)) for f in fused
            if f.chunk_id in sims]


SETTINGS = {
    "rrf": {"fusion": {"method": "rrf", "dense_depth": 15, "lexical_depth": 15}},
    "rrf+stop+feedback": {"fusion": {"method": "rrf", "dense_depth": 5, "lexical_depth": 40},
                          "lexical": {"stop_words": "english", "feedback_docs": 5}},
    "score": {"fusion": {"method": "score", "dense_weight": 0.6, "lexical_weight": 0.4, "dense_depth": 15,
                         "lexical_depth": 15}},
    "score+stop": {"fusion": {"method": "score", "normalization": "zscore", "dense_depth": 10, "lexical_depth": 30},
                   "lexical": {"stop_words": "english"}},
    "chosen": {"fusion": {"method": "score", "dense_weight": 0.6, "lexical_weight": 0.4, "dense_depth": 200,
                          "lexical_depth": 200}, "lexical": {"stop_words": "english", "feedback_docs": 5}},
    "lexical heavy": {"fusion": {"method": "rrf", "dense_weight": 0.1, "lexical_weight": 1.0, "dense_depth": 3,
                                 "lexical_depth": 20}, "lexical": {"stop_words": "english"}},
    "feedback only": {"fusion": {"method": "score", "dense_depth": 12, "lexical_depth": 12},
                      "lexical": {"feedback_docs": 3, "feedback_terms": 4, "feedback_weight": 0.5}},
}
ACCESS: dict[str, tuple[tuple[FieldFilter, ...], Visibility | None]] = {
    "open": ((), None),
    "filtered": ((FieldFilter("dept", any_of=("hr", "it")),), None),
    "acl": ((), Visibility.of("ann", ("finance",))),
    "acl+filter": ((FieldFilter("dept", any_of=("library", "finance")),), Visibility.of("bo", ("library",))),
}


@pytest.mark.parametrize("strategy", ["fusion", "lexical"])
@pytest.mark.parametrize("access", list(ACCESS))
@pytest.mark.parametrize("name", list(SETTINGS))
def test_candidates_fuse_to_the_same_ids_order_and_scores_as_rows(store: SqliteVectorStore, embedder: Any,
                                                                  name: str, access: str, strategy: str) -> None:
    settings = RetrievalSettings.model_validate(SETTINGS[name])
    service = SearchService(store, embedder, ProfileSettings(index_name=VERSION), settings)
    filters, visibility = ACCESS[access]
    lookups = 0
    for text in QUERIES:
        for top_k in (3, 10):
            q = service.embed_query(text)
            outcome = service.search(SearchRequest(text, "KB_FUSE", top_k, filters, strategy=strategy,
                                                   visibility=visibility))
            got = [(h.chunk.chunk_id, h.score, h.fused_score, h.lexical_score) for h in outcome.hits]
            expected = reference(store, settings, text, q, top_k, filters, visibility, strategy)
            assert got == expected[:top_k], (text, top_k)
            assert [h.rank for h in outcome.hits] == list(range(1, len(got) + 1))
            stored = store.fetch_chunks(VERSION, [c for c, *_ in got])
            assert [h.chunk for h in outcome.hits] == [stored[c] for c, *_ in got]
            if visibility is not None:
                labels = set(visibility.labels)
                assert all(set(h.chunk.metadata["rag_acl"]) & labels for h in outcome.hits)
            lookups += int(outcome.details.get("dense_lookups", 0))  # type: ignore[call-overload]
    if name == "lexical heavy" or strategy == "lexical":
        assert lookups > 0  # lexical-only hits took the similarity lookup path
