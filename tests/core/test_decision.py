"""Boundary tables for the pure answer-mode decision (seed 004 "Retrieval Modes")."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from pydantic import ValidationError

from backend.common.config import RetrievalSettings, ShortQuerySettings
from backend.common.errors import ConfigError
from backend.core.answer_mode import (
    Candidate,
    count_tokens,
    decide_answer_mode,
    downgrade_on_blank_answer,
    effective_thresholds,
    is_short_query,
    normalize_similarity,
    select_context,
    sources_used,
)
from backend.core.types import Chunk

BASE: dict[str, Any] = {
    "threshold_low": 0.35,
    "threshold_high": 0.55,
    "short_query": {"max_tokens": 3, "boost": 0.05},
    "hybrid": {"min_similarity_for_hybrid": 0.35, "min_chunks_for_hybrid": 2, "min_total_context_chars": 300,
               "exclude_chunk_types_from_llm": ["figure"], "max_context_chars": 6000},
}


def retrieval(**changes: Any) -> RetrievalSettings:
    data = {**BASE, **changes}
    if "hybrid" in changes:
        data["hybrid"] = {**BASE["hybrid"], **changes["hybrid"]}
    return RetrievalSettings.model_validate(data)


def cand(similarity: float, rank: int, chars: int = 200, chunk_type: str = "text") -> Candidate:
    text = ("x" * (chars - 1) + ".") if chars else ""
    chunk = Chunk(f"c{rank}", "d", text, "src.md", rank, chunk_type=chunk_type)
    return Candidate(chunk, similarity, similarity, rank)


def cands(*specs: Any) -> list[Candidate]:
    """Each spec is a similarity, or (similarity, chars), or (similarity, chars, chunk_type)."""
    out = []
    for rank, spec in enumerate(specs, start=1):
        spec = spec if isinstance(spec, tuple) else (spec,)
        out.append(cand(spec[0], rank, *spec[1:]))
    return out


# --- thresholds at, just below and just above -------------------------------------
@pytest.mark.parametrize(
    ("candidates", "expected"),
    [
        pytest.param(cands(0.55), "rag", id="max_at_high_is_rag"),
        pytest.param(cands(0.5501), "rag", id="max_just_above_high_is_rag"),
        pytest.param(cands(0.5499, 0.40), "hybrid", id="max_just_below_high_is_hybrid_when_gates_hold"),
        pytest.param(cands(0.5499), "fallback", id="max_just_below_high_with_one_chunk_fails_chunk_gate"),
        pytest.param(cands((0.35, 200), (0.35, 200)), "hybrid", id="max_at_low_is_hybrid"),
        pytest.param(cands(0.3501, 0.3501), "hybrid", id="max_just_above_low_is_hybrid"),
        pytest.param(cands(0.3499, 0.34), "fallback", id="max_just_below_low_is_fallback"),
        pytest.param(cands(0.99, 0.98, 0.97), "rag", id="very_high_is_rag"),
        pytest.param([], "fallback", id="no_candidates_is_fallback"),
    ],
)
def test_mode_follows_thresholds_at_their_boundaries(candidates: list[Candidate], expected: str) -> None:
    assert decide_answer_mode(candidates, retrieval(), short_query_active=False).mode == expected


# --- each hybrid gate failing alone --------------------------------------------------
@pytest.mark.parametrize(
    ("candidates", "expected", "reason"),
    [
        pytest.param(cands((0.45, 400), (0.30, 400)), "fallback", r"1 usable chunks .* < min_chunks_for_hybrid 2",
                     id="chunk_gate_fails_alone"),
        pytest.param(cands((0.45, 200), (0.36, 200)), "hybrid", "hybrid gates hold: 2 usable chunks",
                     id="chunk_gate_at_minimum_holds"),
        pytest.param(cands((0.45, 149), (0.40, 150)), "fallback", "299 usable context chars < min_total_context_chars 300",
                     id="context_chars_gate_fails_alone_one_below"),
        pytest.param(cands((0.45, 150), (0.40, 150)), "hybrid", "300 context chars", id="context_chars_gate_at_minimum"),
        pytest.param(cands((0.45, 200), (0.3499, 200)), "fallback", "1 usable chunks",
                     id="min_similarity_gate_just_below_drops_chunk"),
        pytest.param(cands((0.45, 200), (0.35, 200)), "hybrid", "2 usable chunks", id="min_similarity_gate_at_value_counts_chunk"),
    ],
)
def test_each_hybrid_gate_decides_alone(candidates: list[Candidate], expected: str, reason: str) -> None:
    decision = decide_answer_mode(candidates, retrieval(), short_query_active=False)
    assert decision.mode == expected
    assert any(re.search(reason, r) for r in decision.reasons), decision.reasons


@pytest.mark.parametrize(("best", "expected"), [(0.4999, "fallback"), (0.50, "hybrid"), (0.52, "hybrid")])
def test_min_best_similarity_gate_needs_the_best_chunk_at_its_value(best: float, expected: str) -> None:
    settings = retrieval(hybrid={"min_best_similarity": 0.5})
    decision = decide_answer_mode(cands((best, 200), (0.40, 200)), settings, short_query_active=False)
    assert decision.mode == expected, decision.reasons
    assert decision.usable_chunks == 2  # the context is unchanged: only the decision is gated
    # the "why" panel lists the gate with the others, failed exactly when it refused
    assert decision.gates_passed["min_best_similarity"] is (expected == "hybrid")
    if expected == "fallback":
        assert any("min_best_similarity 0.5" in r for r in decision.reasons)


def test_min_best_similarity_is_no_gate_at_zero() -> None:
    decision = decide_answer_mode(cands((0.30, 200), (0.30, 200)), retrieval(), short_query_active=False)
    assert "min_best_similarity" not in decision.gates_passed


def test_min_best_similarity_leaves_rag_alone() -> None:
    settings = retrieval(hybrid={"min_best_similarity": 0.9})
    assert decide_answer_mode(cands(0.60, 0.40), settings, short_query_active=False).mode == "rag"


def test_min_similarity_gate_uses_its_own_value_not_threshold_low() -> None:
    settings = retrieval(hybrid={"min_similarity_for_hybrid": 0.42})
    decision = decide_answer_mode(cands((0.45, 200), (0.41, 200)), settings, short_query_active=False)
    assert (decision.mode, decision.usable_chunks, decision.usable_context_chars) == ("fallback", 1, 200)
    assert decision.gates_passed == {"min_chunks_for_hybrid": False, "min_total_context_chars": False,
                                     "min_similarity_for_hybrid": True}


def test_decision_reports_numbers_it_compared() -> None:
    decision = decide_answer_mode(cands((0.5, 200), (0.4, 150), (0.1, 900)), retrieval(), short_query_active=False)
    assert decision.mode == "hybrid"
    assert decision.max_similarity == 0.5 and decision.max_eligible_similarity == 0.5
    assert (decision.usable_chunks, decision.usable_context_chars) == (2, 350)
    assert (decision.thresholds.low, decision.thresholds.high, decision.thresholds.kind) == (0.35, 0.55, "normalized")
    assert decision.context.below_min_similarity == ("c3",)


# --- figures and context ---------------------------------------------------------------
def test_figure_on_top_does_not_count_and_text_below_decides() -> None:
    decision = decide_answer_mode(cands((0.9, 200, "figure"), (0.6, 200)), retrieval(), short_query_active=False)
    assert decision.mode == "rag"
    assert decision.max_similarity == 0.9 and decision.max_eligible_similarity == 0.6
    assert [c.chunk.chunk_id for c in decision.context.used] == ["c2"]
    assert decision.context.excluded_by_type == ("c1",)


def test_only_figures_retrieved_cannot_be_rag() -> None:
    decision = decide_answer_mode(cands((0.9, 200, "figure"), (0.8, 200, "figure")), retrieval(), short_query_active=False)
    assert decision.mode == "fallback"
    assert decision.reasons == ("no retrieved chunk may reach the LLM",)


def test_scanning_continues_past_figures_so_text_meets_gates() -> None:
    decision = decide_answer_mode(
        cands((0.6, 200, "figure"), (0.58, 200, "figure"), (0.45, 200), (0.42, 200)), retrieval(), short_query_active=False
    )
    assert decision.mode == "hybrid"
    assert [c.chunk.chunk_id for c in decision.context.used] == ["c3", "c4"]


def test_rag_needs_text_context_even_when_text_reaches_high() -> None:
    settings = retrieval(hybrid={"min_similarity_for_hybrid": 0.7})
    decision = decide_answer_mode(cands((0.6, 200)), settings, short_query_active=False)
    assert decision.mode == "fallback"
    assert "no text context survived selection" in decision.reasons[0]


def test_exclusion_list_is_configurable() -> None:
    settings = retrieval(hybrid={"exclude_chunk_types_from_llm": []})
    decision = decide_answer_mode(cands((0.9, 200, "figure")), settings, short_query_active=False)
    assert decision.mode == "rag" and decision.context.used[0].chunk.chunk_type == "figure"


def test_select_context_truncates_to_budget_and_reports_the_rest() -> None:
    selection = select_context(cands((0.9, 200), (0.8, 100, "figure"), (0.7, 200), (0.6, 200)), ["figure"], 250, 0.35)
    assert [(c.chunk.chunk_id, len(c.chunk.text)) for c in selection.used] == [("c1", 200), ("c3", 50)]
    assert selection.excluded_by_type == ("c2",)
    assert selection.over_budget == ("c4",)
    assert selection.chars == 250


def test_context_budget_limits_hybrid_char_gate() -> None:
    settings = retrieval(hybrid={"max_context_chars": 250})
    decision = decide_answer_mode(cands((0.45, 200), (0.40, 200)), settings, short_query_active=False)
    assert (decision.mode, decision.usable_context_chars) == ("fallback", 250)


# --- short queries ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "tokens", "short"),
    [("annual leave?", 2, True), ("annual leave days", 3, True), ("how many leave days", 4, False),
     ("leave ??? !!", 1, True), ("annual-leave days", 3, True), ("", 0, True)],
)
def test_short_query_counts_word_tokens(question: str, tokens: int, short: bool) -> None:
    assert count_tokens(question) == tokens
    assert is_short_query(question, ShortQuerySettings(max_tokens=3)) is short


def test_short_query_detection_can_be_disabled() -> None:
    assert is_short_query("leave", ShortQuerySettings(enabled=False)) is False


@pytest.mark.parametrize(
    ("candidates", "short", "expected"),
    [
        pytest.param(cands(0.57, 0.45), False, "rag", id="long_query_0.57_is_rag"),
        pytest.param(cands(0.57, 0.45), True, "hybrid", id="short_query_raises_high_threshold_to_0.60"),
        pytest.param(cands(0.60, 0.45), True, "rag", id="short_query_at_tightened_high_is_rag"),
        pytest.param(cands(0.37, 0.37), False, "hybrid", id="long_query_0.37_is_hybrid"),
        pytest.param(cands(0.37, 0.37), True, "fallback", id="short_query_raises_low_threshold_to_0.40"),
    ],
)
def test_short_query_tightens_thresholds_by_boost(candidates: list[Candidate], short: bool, expected: str) -> None:
    decision = decide_answer_mode(candidates, retrieval(), short_query_active=short)
    assert decision.mode == expected
    assert decision.thresholds.short_query_active is short


def test_explicit_short_thresholds_replace_boost() -> None:
    settings = retrieval(short_query={"max_tokens": 3, "threshold_low": 0.5, "threshold_high": 0.8})
    th = effective_thresholds(settings, short_query_active=True)
    assert (th.low, th.high, th.base_low, th.base_high) == (0.5, 0.8, 0.35, 0.55)
    assert decide_answer_mode(cands(0.75, 0.6), settings, short_query_active=True).mode == "hybrid"
    assert decide_answer_mode(cands(0.75, 0.6), settings, short_query_active=False).mode == "rag"


def test_short_thresholds_never_loosen() -> None:
    settings = retrieval(short_query={"max_tokens": 3, "threshold_low": 0.1, "threshold_high": 0.4})
    th = effective_thresholds(settings, short_query_active=True)
    assert (th.low, th.high) == (0.35, 0.55)


# --- blank primary answer ----------------------------------------------------------------
@pytest.mark.parametrize("answer", ["", "   \n\t", None])
def test_blank_primary_answer_turns_rag_into_fallback(answer: str | None) -> None:
    decision = decide_answer_mode(cands(0.9), retrieval(), short_query_active=False)
    downgraded = downgrade_on_blank_answer(decision, answer)
    assert (downgraded.mode, downgraded.decided_mode, downgraded.blank_primary_answer) == ("fallback", "rag", True)
    assert downgraded.reasons[-1] == "primary model returned a blank answer in mode rag"


def test_blank_answer_turns_hybrid_into_fallback_and_text_keeps_mode() -> None:
    decision = decide_answer_mode(cands(0.45, 0.45), retrieval(), short_query_active=False)
    assert downgrade_on_blank_answer(decision, "").mode == "fallback"
    assert downgrade_on_blank_answer(decision, "An answer [1].") is decision


# --- raw mode ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("similarities", "expected"),
    [((0.6,), "rag"), ((0.5999, 0.5), "hybrid"), ((0.3, 0.3), "hybrid"), ((0.2999, 0.29), "fallback")],
)
def test_raw_cosine_uses_raw_cosine_thresholds(similarities: tuple[float, ...], expected: str) -> None:
    settings = retrieval(score_mode="raw", distance="cosine", raw_cosine_low=0.3, raw_cosine_high=0.6,
                         hybrid={"min_similarity_for_hybrid": 0.25})
    decision = decide_answer_mode(cands(*similarities), settings, short_query_active=False)
    assert (decision.mode, decision.thresholds.kind) == (expected, "raw_cosine")


@pytest.mark.parametrize(("similarities", "expected"), [((20.0,), "rag"), ((19.99, 15.0), "hybrid"), ((9.99, 9.0), "fallback")])
def test_raw_dot_uses_raw_dot_thresholds(similarities: tuple[float, ...], expected: str) -> None:
    settings = retrieval(score_mode="raw", distance="dot", raw_dot_low=10.0, raw_dot_high=20.0,
                         hybrid={"min_similarity_for_hybrid": 5.0})
    decision = decide_answer_mode(cands(*similarities), settings, short_query_active=False)
    assert (decision.mode, decision.thresholds.kind, decision.thresholds.high) == (expected, "raw_dot", 20.0)


def test_raw_mode_short_query_adds_boost_to_raw_thresholds() -> None:
    settings = retrieval(score_mode="raw", distance="cosine", raw_cosine_low=0.3, raw_cosine_high=0.6,
                         short_query={"max_tokens": 3, "threshold_low": 0.9, "threshold_high": 0.95, "boost": 0.05})
    th = effective_thresholds(settings, short_query_active=True)
    assert (round(th.low, 6), round(th.high, 6), th.kind) == (0.35, 0.65, "raw_cosine")


# --- normalization -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "distance", "score_mode", "expected"),
    [
        (0.7, "cosine", "normalized", 0.7),
        (0.0, "cosine", "normalized", 0.0),
        (-0.2, "cosine", "normalized", 0.0),
        (1.0000001, "cosine", "normalized", 1.0),
        (0.0, "dot", "normalized", 0.5),
        (0.4, "dot", "normalized", 0.7),
        (-1.0, "dot", "normalized", 0.0),
        (1.0, "dot", "normalized", 1.0),
        (-0.0, "euclidean", "normalized", 1.0),
        (-1.0, "euclidean", "normalized", 0.5),
        (-math.sqrt(2), "euclidean", "normalized", 0.0),
        (-2.0, "euclidean", "normalized", 0.0),
        (-0.2, "cosine", "raw", -0.2),
        (12.5, "dot", "raw", 12.5),
    ],
)
def test_normalize_similarity_per_distance(raw: float, distance: str, score_mode: str, expected: float) -> None:
    assert normalize_similarity(raw, distance, score_mode) == pytest.approx(expected, abs=1e-9)


def test_euclidean_normalization_matches_cosine_for_unit_vectors() -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    a, b = (v / np.linalg.norm(v) for v in rng.normal(size=(2, 384)))
    cosine = float(a @ b)
    neg_distance = -float(np.linalg.norm(a - b))
    assert normalize_similarity(neg_distance, "euclidean", "normalized") == pytest.approx(max(cosine, 0.0), abs=1e-6)


@pytest.mark.parametrize(("distance", "score_mode"), [("euclidean", "raw"), ("manhattan", "normalized"), ("cosine", "scaled")])
def test_unsupported_distance_and_score_mode_raise_config_error(distance: str, score_mode: str) -> None:
    with pytest.raises(ConfigError, match=f"score_mode '{score_mode}' is not supported with distance '{distance}'"):
        normalize_similarity(0.5, distance, score_mode)


def test_config_rejects_raw_with_euclidean_at_load() -> None:
    with pytest.raises(ValidationError, match="score_mode 'raw' is not supported with distance 'euclidean'"):
        retrieval(score_mode="raw", distance="euclidean")


# --- sources_used --------------------------------------------------------------------------
def test_sources_used_all_partial_none() -> None:
    settings = retrieval()
    exclusions = settings.hybrid.exclude_chunk_types_from_llm
    everything = cands(0.8, (0.6, 200, "figure"), 0.5)
    partly = cands(0.8, 0.5, 0.1)
    nothing = cands(0.1)
    assert sources_used(decide_answer_mode(everything, settings, False), everything, exclusions) == "all"
    assert sources_used(decide_answer_mode(partly, settings, False), partly, exclusions) == "partial"
    assert sources_used(decide_answer_mode(nothing, settings, False), nothing, exclusions) == "none"
