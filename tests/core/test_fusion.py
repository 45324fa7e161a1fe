"""Pure ranking math: reciprocal rank fusion, duplicate collapse, the freshness tie-breaker."""

from __future__ import annotations

from typing import Any

import pytest

from backend.core.fusion import apply_freshness, collapse_duplicates, parse_timestamp, reciprocal_rank_fusion
from backend.core.types import Chunk, ScoredChunk


def test_rrf_score_is_the_weighted_sum_of_reciprocal_ranks() -> None:
    fused = reciprocal_rank_fusion({"dense": ["a", "b", "c"], "lexical": ["c", "a", "d"]},
                                   {"dense": 1.0, "lexical": 1.0}, k=60)
    assert [f.chunk_id for f in fused] == ["a", "c", "b", "d"]
    assert [f.score for f in fused] == pytest.approx([1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 62, 1 / 63])
    assert fused[0].ranks == {"dense": 1, "lexical": 2}
    assert fused[3].ranks == {"lexical": 3}


def test_rrf_weights_scale_each_side() -> None:
    fused = reciprocal_rank_fusion({"dense": ["a", "b"], "lexical": ["b", "c"]}, {"dense": 2.0, "lexical": 0.5}, k=10)
    assert {f.chunk_id: f.score for f in fused} == pytest.approx({"a": 2 / 11, "b": 2 / 12 + 0.5 / 11, "c": 0.5 / 12})
    assert [f.chunk_id for f in fused] == ["b", "a", "c"]


def test_zero_lexical_weight_keeps_the_dense_order() -> None:
    fused = reciprocal_rank_fusion({"dense": ["a", "b", "c"], "lexical": ["c", "x"]}, {"dense": 1.0, "lexical": 0.0}, k=60)
    assert [f.chunk_id for f in fused] == ["a", "b", "c", "x"]
    assert fused[-1].score == 0.0


def test_larger_k_lets_agreement_at_deep_ranks_beat_a_single_top_rank() -> None:
    """x is first on one side only; y is tenth on both: 1/(k+1) vs 2/(k+10) flips at k = 8."""
    dense = ["x", *[f"d{i}" for i in range(8)], "y"]
    lexical = [*[f"l{i}" for i in range(9)], "y"]
    small = reciprocal_rank_fusion({"dense": dense, "lexical": lexical}, {}, k=1)
    large = reciprocal_rank_fusion({"dense": dense, "lexical": lexical}, {}, k=60)
    assert [f.chunk_id for f in small].index("x") < [f.chunk_id for f in small].index("y")
    assert [f.chunk_id for f in large][0] == "y"


def test_equal_fused_scores_are_ordered_by_best_rank_then_first_appearance() -> None:
    fused = reciprocal_rank_fusion({"dense": ["a", "b"], "lexical": ["c", "d"]}, {}, k=60)
    assert [f.chunk_id for f in fused] == ["a", "c", "b", "d"]


def test_duplicate_ids_in_one_ranking_count_once_at_their_first_rank() -> None:
    fused = reciprocal_rank_fusion({"dense": ["a", "a", "b"]}, {}, k=60)
    assert [(f.chunk_id, f.ranks["dense"]) for f in fused] == [("a", 1), ("b", 2)]
    assert fused[0].score == pytest.approx(1 / 61)


def test_rrf_rejects_k_below_one() -> None:
    with pytest.raises(ValueError, match="k must be at least 1, got 0"):
        reciprocal_rank_fusion({"dense": ["a"]}, {}, k=0)


def _hit(cid: str, score: float, rank: int, **meta: Any) -> ScoredChunk:
    return ScoredChunk(Chunk(cid, "d", "t", "s", 0, metadata=meta), score, rank)


def _text_hit(cid: str, text: str, rank: int) -> ScoredChunk:
    return ScoredChunk(Chunk(cid, cid.split(":")[0], text, "s", 0), 1.0 - rank / 10, rank)


def test_collapse_keeps_the_best_ranked_hit_of_each_text_and_renumbers() -> None:
    hits = [_text_hit("a:0", "footer", 1), _text_hit("b:0", "policy", 2), _text_hit("c:0", "footer", 3),
            _text_hit("d:0", "leave", 4), _text_hit("e:0", "policy", 5)]
    kept, dropped = collapse_duplicates(hits)
    assert [(h.chunk.chunk_id, h.rank) for h in kept] == [("a:0", 1), ("b:0", 2), ("d:0", 3)]
    assert dropped == 2
    assert collapse_duplicates([]) == ((), 0)


def test_freshness_puts_the_newer_of_two_near_equal_hits_first() -> None:
    hits = [_hit("old", 0.800, 1, updated_at="2023-01-01"), _hit("new", 0.795, 2, updated_at="2025-01-01"),
            _hit("far", 0.700, 3, updated_at="2026-01-01")]
    out = apply_freshness(hits, epsilon=0.01)
    assert [(h.chunk.chunk_id, h.rank) for h in out] == [("new", 1), ("old", 2), ("far", 3)]
    assert [h.score for h in out] == [0.795, 0.800, 0.700]


def test_freshness_leaves_hits_further_apart_than_epsilon_alone() -> None:
    hits = [_hit("a", 0.90, 1, updated_at="2020-01-01"), _hit("b", 0.85, 2, updated_at="2025-01-01")]
    assert [h.chunk.chunk_id for h in apply_freshness(hits, epsilon=0.01)] == ["a", "b"]


def test_freshness_runs_are_anchored_on_their_first_hit() -> None:
    """0.90, 0.88, 0.86 tie with eps 0.05; 0.84 is 0.06 below the anchor and starts a new run."""
    hits = [_hit("a", 0.90, 1, updated_at="2021-01-01"), _hit("b", 0.88, 2, updated_at="2022-01-01"),
            _hit("c", 0.86, 3, updated_at="2023-01-01"), _hit("d", 0.84, 4, updated_at="2024-01-01")]
    assert [h.chunk.chunk_id for h in apply_freshness(hits, epsilon=0.05)] == ["c", "b", "a", "d"]


def test_hits_without_a_date_sort_as_oldest_and_the_sort_is_stable() -> None:
    hits = [_hit("none1", 0.5, 1), _hit("bad", 0.5, 2, updated_at="last tuesday"),
            _hit("dated", 0.5, 3, updated_at="2024-05-05"), _hit("none2", 0.5, 4)]
    assert [h.chunk.chunk_id for h in apply_freshness(hits, epsilon=0.0)] == ["dated", "none1", "bad", "none2"]


def test_freshness_compares_instants_across_time_zones() -> None:
    hits = [_hit("utc_midnight", 0.7, 1, updated_at="2025-03-01"),
            _hit("plus2_noon", 0.7, 2, updated_at="2025-03-01T12:00:00+02:00"),
            _hit("minus5_late", 0.7, 3, updated_at="2025-02-28T23:00:00-05:00")]
    assert [h.chunk.chunk_id for h in apply_freshness(hits, epsilon=0.0)] == ["plus2_noon", "minus5_late", "utc_midnight"]


def test_freshness_reads_the_configured_field() -> None:
    hits = [_hit("a", 0.6, 1, published="2020-01-01", updated_at="2030-01-01"), _hit("b", 0.6, 2, published="2021-01-01")]
    assert [h.chunk.chunk_id for h in apply_freshness(hits, epsilon=0.0, field="published")] == ["b", "a"]


def test_parse_timestamp_treats_naive_values_as_utc() -> None:
    assert parse_timestamp("2025-01-02T03:04:05").isoformat() == "2025-01-02T03:04:05+00:00"  # type: ignore[union-attr]
    assert parse_timestamp(None) is None
    assert parse_timestamp(20250102) is None


def test_a_limit_returns_exactly_the_first_entries_of_the_full_fusion() -> None:
    """``limit`` picks with a heap; ties (equal scores and best ranks) must still fall by first appearance."""
    import random

    from backend.core.fusion import score_fusion

    rng = random.Random(7)
    for _ in range(50):
        ids = [f"c{i}" for i in range(40)]
        dense, lexical = rng.sample(ids, 25), rng.sample(ids, 25)
        full = reciprocal_rank_fusion({"dense": dense, "lexical": lexical}, {"dense": 1.0, "lexical": 1.0}, 20)
        for limit in (1, 8, 30, 100):
            assert reciprocal_rank_fusion({"dense": dense, "lexical": lexical}, {"dense": 1.0, "lexical": 1.0}, 20,
                                          limit=limit) == full[:limit]
        scored = {"dense": [(c, float(rng.randint(0, 3))) for c in dense],
                  "lexical": [(c, float(rng.randint(0, 3))) for c in lexical]}
        whole = score_fusion(scored, {"dense": 0.6, "lexical": 0.4}, "minmax")
        assert score_fusion(scored, {"dense": 0.6, "lexical": 0.4}, "minmax", limit=8) == whole[:8]
