"""Document-level metrics and gates: pure functions, hand-computed expectations."""

from __future__ import annotations

import math

import pytest

from backend.common.config import GateSettings
from backend.core import ranking_metrics as rm
from backend.core.services.promotion import check_gates


def test_ranked_doc_ids_keep_first_occurrence_of_each_document() -> None:
    assert rm.ranked_doc_ids(["a", "a", "b", "a", "c", "b"]) == ["a", "b", "c"]


def test_hit_recall_and_reciprocal_rank_count_documents_not_chunks() -> None:
    ranked = ["x", "a", "y", "b", "z", "c"]
    relevant = {"a": 1.0, "b": 1.0, "c": 1.0}
    assert rm.hit_at_k(ranked, relevant, 1) == 0.0
    assert rm.hit_at_k(ranked, relevant, 2) == 1.0
    assert rm.recall_at_k(ranked, relevant, 5) == pytest.approx(2 / 3)
    assert rm.reciprocal_rank(ranked, relevant) == 0.5
    assert rm.reciprocal_rank(["x", "y"], relevant) == 0.0


def test_ndcg_uses_graded_gains_with_log_discount() -> None:
    relevant = {"a": 3.0, "b": 1.0}
    ideal = 7 / math.log2(2) + 1 / math.log2(3)
    assert rm.ndcg_at_k(["a", "b"], relevant) == pytest.approx(1.0)
    assert rm.ndcg_at_k(["b", "a"], relevant) == pytest.approx((1 + 7 / math.log2(3)) / ideal)
    assert rm.ndcg_at_k(["x", "a"], relevant) == pytest.approx((7 / math.log2(3)) / ideal)
    assert rm.ndcg_at_k(["x"] * 10 + ["a"], relevant, k=10) == 0.0


def test_ndcg_ideal_is_capped_at_k_relevant_documents() -> None:
    relevant = {f"r{i}": 1.0 for i in range(20)}
    ranked = ["r0", "x", *[f"r{i}" for i in range(1, 9)]]
    ideal = sum(1 / math.log2(i + 2) for i in range(10))
    expected = (1.0 + sum(1 / math.log2(i + 2) for i in range(2, 10))) / ideal
    assert rm.ndcg_at_k(ranked, relevant, k=10) == pytest.approx(expected)


def test_metrics_without_relevant_documents_refuse() -> None:
    with pytest.raises(ValueError, match="recall is undefined"):
        rm.recall_at_k(["a"], {}, 5)
    with pytest.raises(ValueError, match="nDCG is undefined"):
        rm.ndcg_at_k(["a"], {}, 10)


def test_percentiles_interpolate_and_contains_all_normalises_case_and_spaces() -> None:
    assert rm.percentile([10.0, 20.0, 30.0, 40.0], 50) == 25.0
    assert rm.percentile([10.0, 20.0, 30.0, 40.0], 95) == pytest.approx(38.5)
    assert rm.percentile([], 50) is None
    assert rm.contains_all("You get 25  Days of\nleave until 31 March.", ["25 days", "31 march", "5 days", "+31 20"]) == (False, ["5 days", "+31 20"])


GATES = GateSettings(min_recall_at_k=0.6, min_ndcg_at_10=0.5, min_mode_accuracy=0.6, max_regression=0.05)


def test_all_gates_pass_on_good_metrics_and_small_regression() -> None:
    metrics = {"recall_at_k": 0.9, "ndcg_at_10": 0.8, "mode_accuracy": 0.7}
    baseline = {"recall_at_k": 0.92, "ndcg_at_10": 0.8, "mode_accuracy": 0.75}
    results = check_gates(metrics, GATES, baseline)
    assert [(g.name, g.metric, g.passed) for g in results] == [
        ("min_recall_at_k", "recall_at_k", True), ("min_ndcg_at_10", "ndcg_at_10", True),
        ("min_mode_accuracy", "mode_accuracy", True), ("max_regression", "recall_at_k", True),
        ("max_regression", "ndcg_at_10", True), ("max_regression", "mode_accuracy", True),
    ]


def test_failing_minimum_and_regression_are_reported_with_values_and_thresholds() -> None:
    metrics = {"recall_at_k": 0.3, "ndcg_at_10": 0.8, "mode_accuracy": None}
    baseline = {"recall_at_k": 0.9, "ndcg_at_10": 0.9, "mode_accuracy": 0.8}
    failed = [g for g in check_gates(metrics, GATES, baseline) if not g.passed]
    assert [(g.name, g.metric) for g in failed] == [
        ("min_recall_at_k", "recall_at_k"), ("min_mode_accuracy", "mode_accuracy"),
        ("max_regression", "recall_at_k"), ("max_regression", "ndcg_at_10"), ("max_regression", "mode_accuracy"),
    ]
    assert failed[0].describe() == "recall_at_k = 0.3000, minimum 0.6000"
    assert failed[1].describe() == "mode_accuracy = n/a, minimum 0.6000"
    assert failed[3].describe() == "ndcg_at_10 regression = 0.1000 (active 0.9000 -> 0.8000), maximum 0.0500"


def test_disabled_gates_and_missing_baseline_are_skipped() -> None:
    gates = GateSettings(min_recall_at_k=None, min_ndcg_at_10=0.5, min_mode_accuracy=None, max_regression=0.05)
    results = check_gates({"recall_at_k": 0.0, "ndcg_at_10": 0.5, "mode_accuracy": 0.0}, gates, None)
    assert [(g.name, g.passed) for g in results] == [("min_ndcg_at_10", True)]
