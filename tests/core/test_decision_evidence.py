"""``decide_answer_mode`` with ``decision_score: evidence``, at its boundaries (pure, from tables)."""

from __future__ import annotations

import pytest

from backend.common.config import HybridGateSettings, RetrievalSettings
from backend.core.answer_mode import Candidate, decide_answer_mode
from backend.core.types import Chunk

TEXT = "x" * 200


def settings(**changes: object) -> RetrievalSettings:
    base = {"decision_score": "evidence", "threshold_low": 0.3, "threshold_high": 0.6,
            "hybrid": HybridGateSettings(min_similarity_for_hybrid=0.2, min_chunks_for_hybrid=2, min_total_context_chars=300)}
    return RetrievalSettings(**{**base, **changes})  # type: ignore[arg-type]


def cand(rank: int, similarity: float, evidence: float | None, chunk_type: str = "text") -> Candidate:
    # hybrid also needs a relevant sentence (answerability.min_sentence_relevance, 0.25): the
    # chunk's best sentence is as relevant as its evidence here, so the thresholds decide
    return Candidate(Chunk(f"c#{rank}", "c", TEXT, "c.md", rank, chunk_type=chunk_type), similarity, similarity, rank,
                     evidence, evidence)


@pytest.mark.parametrize(("evidences", "mode"), [
    ((0.6, 0.1), "rag"),            # at the high threshold
    ((0.5999, 0.1), "hybrid"),      # just below it; 2 usable chunks, 400 chars
    ((0.3, 0.1), "hybrid"),         # at the low threshold
    ((0.2999, 0.29), "fallback"),   # just below it
    ((0.1, 0.65), "rag"),           # the best usable chunk counts, whatever its rank
])
def test_thresholds_compare_the_best_evidence_of_usable_chunks(evidences: tuple[float, float], mode: str) -> None:
    # chunk similarities (0.3) would be hybrid under the similarity decision; evidence decides here
    decision = decide_answer_mode([cand(1, 0.3, evidences[0]), cand(2, 0.3, evidences[1])], settings(), False)
    assert decision.mode == mode
    assert decision.max_evidence == max(evidences) and decision.decision_score == "evidence"


def test_evidence_of_a_chunk_below_min_similarity_or_of_a_figure_is_not_compared() -> None:
    decision = decide_answer_mode([cand(1, 0.5, 0.2), cand(2, 0.19, 0.9), cand(3, 0.9, 0.95, "figure")], settings(), False)
    assert decision.max_evidence == 0.2 and decision.mode == "fallback"
    assert "max evidence 0.2000 < low threshold 0.3" in decision.reasons


def test_no_scored_usable_chunk_is_fallback() -> None:
    decision = decide_answer_mode([cand(1, 0.9, None), cand(2, 0.8, None)], settings(), False)
    assert decision.mode == "fallback" and decision.max_evidence is None
    assert decision.reasons == ("no usable chunk (similarity >= 0.2) has evidence to compare",)


def test_hybrid_by_evidence_still_needs_its_gates() -> None:
    one_chunk = decide_answer_mode([cand(1, 0.5, 0.45)], settings(), False)
    assert one_chunk.mode == "fallback" and any("min_chunks_for_hybrid 2" in r for r in one_chunk.reasons)
    loose = settings(hybrid=HybridGateSettings(min_similarity_for_hybrid=0.2, min_chunks_for_hybrid=1,
                                               min_total_context_chars=0))
    assert decide_answer_mode([cand(1, 0.5, 0.45)], loose, False).mode == "hybrid"


def test_short_queries_tighten_the_evidence_thresholds_too() -> None:
    cands = [cand(1, 0.5, 0.62), cand(2, 0.5, 0.1)]
    assert decide_answer_mode(cands, settings(), False).mode == "rag"
    assert decide_answer_mode(cands, settings(), True).mode == "hybrid"  # high 0.6 + boost 0.05


def test_similarity_decision_ignores_evidence() -> None:
    cands = [cand(1, 0.7, 0.0), cand(2, 0.5, 0.0)]
    decision = decide_answer_mode(cands, settings(decision_score="similarity"), False)
    assert decision.mode == "rag" and decision.decision_score == "similarity"
