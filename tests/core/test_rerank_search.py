"""Tunable fusion and reranking: the pure functions, then SearchService on the real store
with the real model (the ``sentences`` reranker is the real embedder re-scoring sentences)."""

from __future__ import annotations

from typing import Any

import pytest

from backend.common.config import FusionSettings, ProfileSettings, RetrievalSettings
from backend.core.fusion import apply_rerank, normalise_scores, score_fusion
from backend.core.services.search_service import SearchRequest, SearchService
from backend.core.types import Chunk, ScoredChunk
from backend.providers.rerank.sentences import SentenceReranker
from tests.core.test_search_service import ALIAS, PROFILE, TEXTS, similarities, store  # noqa: F401 - fixture


def test_minmax_and_zscore_normalisation() -> None:
    assert normalise_scores([2.0, 4.0, 3.0], "minmax") == [0.0, 1.0, 0.5]
    assert normalise_scores([5.0, 5.0], "minmax") == [1.0, 1.0]
    z = normalise_scores([1.0, 2.0, 3.0], "zscore")
    assert z == pytest.approx([-1.2247449, 0.0, 1.2247449])
    assert normalise_scores([], "zscore") == []
    with pytest.raises(ValueError, match="minmax or zscore"):
        normalise_scores([1.0], "rank")


def test_score_fusion_is_a_convex_combination_with_a_floor_for_the_missing_side() -> None:
    fused = score_fusion({"dense": [("a", 0.9), ("b", 0.5), ("c", 0.1)], "lexical": [("c", 12.0), ("d", 4.0)]},
                         {"dense": 3.0, "lexical": 1.0}, "minmax")
    scores = {f.chunk_id: f.score for f in fused}
    # dense a=1, b=0.5, c=0 (floor 0); lexical c=1, d=0 (floor 0); weights 0.75 / 0.25
    assert scores == pytest.approx({"a": 0.75, "b": 0.375, "c": 0.25, "d": 0.0})
    assert [f.chunk_id for f in fused] == ["a", "b", "c", "d"]
    assert fused[2].ranks == {"dense": 3, "lexical": 1}


def test_score_fusion_keeps_margins_that_rrf_throws_away() -> None:
    """a leads dense by a mile and is 2nd lexically by a hair: score fusion keeps it first."""
    fused = score_fusion({"dense": [("a", 0.9), ("b", 0.2), ("c", 0.1)],
                          "lexical": [("b", 10.0), ("a", 9.9), ("c", 0.0)]}, {}, "minmax")
    assert fused[0].chunk_id == "a"


def _hits(ids: list[str]) -> tuple[ScoredChunk, ...]:
    return tuple(ScoredChunk(Chunk(c, c, c, "s.txt", 0), 1.0 - i / 10, i + 1) for i, c in enumerate(ids))


def test_apply_rerank_reorders_only_the_head_and_keeps_dense_scores() -> None:
    hits = _hits(["a", "b", "c", "d"])
    out, moves = apply_rerank(hits, [0.1, 0.9, 0.5])
    assert [h.chunk.chunk_id for h in out] == ["b", "c", "a", "d"]
    assert [h.rank for h in out] == [1, 2, 3, 4]
    assert [h.score for h in out] == [0.9, 0.8, 1.0, 0.7]
    assert [(h.rerank_score, h.rank_before_rerank) for h in out] == [(0.9, 2), (0.5, 3), (0.1, 1), (None, None)]
    assert [(m.chunk_id, m.before, m.after) for m in moves] == [("b", 2, 1), ("c", 3, 2), ("a", 1, 3)]
    tied, _ = apply_rerank(hits, [0.5, 0.5])
    assert [h.chunk.chunk_id for h in tied] == ["a", "b", "c", "d"]
    with pytest.raises(ValueError, match="5 rerank scores for 4 hits"):
        apply_rerank(hits, [0.0] * 5)


class RecordingReranker:
    """Wraps the real sentence reranker and records what it was asked."""

    def __init__(self, inner: SentenceReranker) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: list[tuple[str, list[str]]] = []

    def rerank(self, query: str, texts: Any) -> list[float]:
        self.calls.append((query, list(texts)))
        return self.inner.rerank(query, texts)


@pytest.mark.parametrize("strategy", ["dense", "lexical", "fusion"])
def test_rerank_reorders_the_top_n_of_any_strategy_and_explains_it(store: Any, embedder: Any,  # noqa: F811
                                                                   strategy: str) -> None:
    query = "Which portal handles annual leave requests?"
    settings = RetrievalSettings.model_validate({"rerank": {"provider": "sentences", "top_n": 4}})
    plain = SearchService(store, embedder, PROFILE, settings).search(SearchRequest(query, ALIAS, 6, strategy=strategy))
    reranker = RecordingReranker(SentenceReranker(embedder, sentence_weight=0.5))
    outcome = SearchService(store, embedder, PROFILE, settings, reranker).search(
        SearchRequest(query, ALIAS, 6, strategy=strategy))
    head = [h.chunk.chunk_id for h in plain.hits[:4]]
    assert reranker.calls == [(query, [TEXTS[c][0] for c in head])]
    scores = dict(zip(head, reranker.inner.rerank(query, [TEXTS[c][0] for c in head])))
    expected_head = sorted(head, key=lambda c: (-scores[c], head.index(c)))
    assert [h.chunk.chunk_id for h in outcome.hits] == expected_head + [h.chunk.chunk_id for h in plain.hits[4:]]
    sims = similarities(store, embedder, query)
    assert [h.score for h in outcome.hits] == pytest.approx([sims[h.chunk.chunk_id] for h in outcome.hits], abs=1e-6)
    explained = outcome.details["rerank"]
    assert explained["provider"] == "sentences" and explained["reranked"] == len(head)
    assert [(o["chunk_id"], o["rank_before"], o["rank_after"]) for o in explained["order"]] == \
        [(c, head.index(c) + 1, n) for n, c in enumerate(expected_head, start=1)]
    assert explained["moved"] == sum(a != b for a, b in zip(head, expected_head))
    assert outcome.details["order_by"].startswith("rerank_score (top 4), then ")
    assert outcome.hits[0].rerank_score == pytest.approx(scores[expected_head[0]])


def test_rerank_widens_the_pool_to_top_n_before_cutting_to_top_k(store: Any, embedder: Any) -> None:  # noqa: F811
    settings = RetrievalSettings.model_validate({"rerank": {"provider": "sentences", "top_n": 6}})
    reranker = RecordingReranker(SentenceReranker(embedder))
    outcome = SearchService(store, embedder, PROFILE, settings, reranker).search(SearchRequest("VPN", ALIAS, 2))
    assert len(reranker.calls[0][1]) == 6 and len(outcome.hits) == 2


def test_score_fusion_and_a_profiles_own_weights(store: Any, embedder: Any) -> None:  # noqa: F811
    query = "leave SACC-111"
    profile = ProfileSettings(index_name="KB_SEARCH_V1", fusion=FusionSettings(method="score", dense_weight=0.7,
                                                                                lexical_weight=0.3, dense_depth=4))
    outcome = SearchService(store, embedder, profile, RetrievalSettings()).search(
        SearchRequest(query, ALIAS, 4, strategy="fusion"))
    sims = similarities(store, embedder, query)
    dense_top = sorted(sims, key=lambda c: -sims[c])[:4]
    lexical = store.lexical_search(ALIAS, query, 100).hits
    fused = score_fusion({"dense": [(c, sims[c]) for c in dense_top],
                          "lexical": [(h.chunk.chunk_id, h.score) for h in lexical]},
                         {"dense": 0.7, "lexical": 0.3}, "minmax")[:4]
    assert [h.chunk.chunk_id for h in outcome.hits] == [f.chunk_id for f in fused]
    assert [h.fused_score for h in outcome.hits] == pytest.approx([f.score for f in fused])
    assert outcome.details["fusion"]["method"] == "score" and outcome.details["fusion"]["dense_weight"] == 0.7
    assert [h.score for h in outcome.hits] == pytest.approx([sims[f.chunk_id] for f in fused], abs=1e-6)


def test_tuning_compares_with_plain_fusion_and_suggests_a_snippet() -> None:
    import yaml

    from backend.core.services.tuning import Candidate, Measured, baseline_of, render_table, suggested_config

    plain = Measured(Candidate(), 0.40, {"1": 0.5, "2": 0.3, "3": 0.4}, 10.0)
    better = Measured(Candidate(method="score", dense_weight=0.7, lexical_weight=0.3, rerank="sentences",
                                headers=True), 0.45, {"1": 0.6, "2": 0.3, "3": 0.35}, 25.0)
    assert baseline_of([better, plain]) is plain
    assert better.against(plain) == (1, 1)
    table = render_table([plain, better], plain).splitlines()
    assert table[1].startswith("fusion score d0.7/l0.3 depth100 rerank sentences@20 headers") and "+0.0500" in table[1]
    snippet = yaml.safe_load(suggested_config(better.candidate, "sample"))
    assert snippet["retrieval"]["fusion"]["method"] == "score" and snippet["retrieval"]["rerank"] == {
        "provider": "sentences", "top_n": 20}
    assert snippet["embeddings"]["profiles"]["sample"]["chunk_headers"] is True
    settings = better.candidate.retrieval(RetrievalSettings())
    assert (settings.fusion.method, settings.rerank.provider, settings.strategy) == ("score", "sentences", "fusion")
