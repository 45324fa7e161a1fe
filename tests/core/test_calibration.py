"""Calibration (``backend.core.calibration``): folds, fit and held-out scoring, pure."""

from __future__ import annotations

from backend.common.config import HybridGateSettings, RetrievalSettings
from backend.core.calibration import CalibrationQuery, Grid, Setting, cross_validate, fit, folds_of, score
from backend.core.answer_mode import Candidate
from backend.core.types import Chunk

BASE = RetrievalSettings(decision_score="evidence", threshold_low=0.35, threshold_high=0.55,
                         hybrid=HybridGateSettings(min_similarity_for_hybrid=0.3, min_chunks_for_hybrid=1,
                                                   min_total_context_chars=0))
GRID = Grid(threshold_low=(0.2, 0.3, 0.4), threshold_high=(0.5, 0.6, 0.7, 0.8), min_similarity_for_hybrid=(0.3,),
            min_chunks_for_hybrid=(1,), min_total_context_chars=(0,))


def query(i: int, expected: str, evidence: float, golden: str = "g.jsonl") -> CalibrationQuery:
    # hybrid also needs a relevant sentence (answerability.min_sentence_relevance 0.25): as relevant as its evidence
    cands = (Candidate(Chunk(f"q{i}#0", "d", "t" * 100, "d.md", 0), 0.5, 0.5, 1, evidence, evidence),)
    return CalibrationQuery(f"{golden}:q{i}", golden, expected, False, {0.3: cands})


# answerable queries have evidence 0.65-0.9, look-alikes 0.4-0.55, off-topic 0.1
QUERIES = ([query(i, "rag", 0.65 + 0.05 * (i % 6)) for i in range(12)]
           + [query(100 + i, "hybrid", 0.4 + 0.03 * (i % 6)) for i in range(6)]
           + [query(200 + i, "fallback", 0.1) for i in range(4)])


def test_folds_are_stratified_disjoint_and_deterministic() -> None:
    folds = folds_of(QUERIES, 4, seed=7)
    assert folds == folds_of(QUERIES, 4, seed=7) and folds != folds_of(QUERIES, 4, seed=8)
    assert sorted(i for f in folds for i in f) == list(range(len(QUERIES)))
    for fold in folds:  # every fold holds each mode in proportion (12/6/4 over 4 folds)
        modes = [QUERIES[i].expected_mode for i in fold]
        assert modes.count("rag") == 3 and 1 <= modes.count("hybrid") <= 2 and modes.count("fallback") == 1


def test_fit_separates_the_modes() -> None:
    setting, objective = fit(QUERIES, BASE, GRID)
    assert objective == 1.0
    assert setting.threshold_low in (0.2, 0.3) and setting.threshold_high == 0.6
    assert score(QUERIES, setting, BASE).accuracy == 1.0


def test_rag_penalty_prefers_caution_over_answering_a_look_alike() -> None:
    # a look-alike at 0.62: high 0.6 answers it rag (1 error), high 0.7 demotes two answerable queries (2 errors)
    tricky = [*QUERIES, query(300, "hybrid", 0.62)]
    cautious, _ = fit(tricky, BASE, GRID, rag_penalty=2.0)
    assert score(tricky, cautious, BASE).unanswerable_as_rag == 0 and cautious.threshold_high == 0.7
    bold, _ = fit(tricky, BASE, GRID, rag_penalty=0.0)
    assert bold.threshold_high == 0.6 and score(tricky, bold, BASE).unanswerable_as_rag == 1
    assert score(tricky, bold, BASE).accuracy > score(tricky, cautious, BASE).accuracy


def test_cross_validation_scores_each_fold_on_queries_it_did_not_fit() -> None:
    result = cross_validate(QUERIES, BASE, k=4, seed=0, grid=GRID)
    assert len(result.folds) == 4 and sum(f.test.queries for f in result.folds) == len(QUERIES)
    for fold in result.folds:
        assert fold.train + fold.test.queries == len(QUERIES)
    assert {i for f in result.folds for i in f.test_ids} == {q.id for q in QUERIES}
    assert result.held_out.queries == len(QUERIES) and result.held_out.accuracy == 1.0
    assert result.suggested == Setting(0.3, 0.6, 0.3, 1, 0) or result.suggested.threshold_high == 0.6
    # the configured thresholds (0.35 / 0.55) put the look-alikes at 0.55 into rag
    assert result.current.unanswerable_as_rag == 1 and result.current.accuracy < 1.0
