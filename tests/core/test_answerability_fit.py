"""Fitting the answerability model: folds never split a group, weights keep their signs,
held-out decisions come from models that never saw the held-out group (pure, synthetic)."""

from __future__ import annotations

import numpy as np
import pytest

from backend.common.config import HybridGateSettings, RetrievalSettings
from backend.core.services.answerability import FEATURES
from backend.core.services.answerability_fit import (
    SIGNS,
    JudgedQuery,
    cross_validate,
    fit_model,
    folds_by_group,
    scored_candidates,
)
from backend.core.answer_mode import Candidate
from backend.core.types import Chunk

BASE = RetrievalSettings(decision_score="answerability", threshold_low=0.2, threshold_high=0.5,
                         hybrid=HybridGateSettings(min_similarity_for_hybrid=0.2, min_chunks_for_hybrid=1,
                                                   min_total_context_chars=0))


def query(qid: str, group: str, answerable: bool, rng: np.random.Generator, golden: str = "g.jsonl") -> JudgedQuery:
    """Three sentences; an answerable query's first one answers (high dense and bigram cover),
    an unanswerable query's sentences look alike but miss a question word (unknown_words 1)."""
    x = rng.uniform(0.2, 0.4, size=(3, len(FEATURES)))
    x[:, FEATURES.index("unknown_words")] = 0.0 if answerable else 1.0
    x[:, FEATURES.index("reader")] = 0.0  # no answer reader: its feature is 0
    if answerable:
        x[0, FEATURES.index("dense")] = rng.uniform(0.7, 0.9)
        x[0, FEATURES.index("bigram_cover")] = rng.uniform(0.6, 1.0)
    chunk = Chunk(f"{qid}-c", "d", "text " * 40, "d.md", 0)
    labels = np.array([answerable, False, False])
    return JudgedQuery(qid, golden, group, "rag" if answerable else "fallback", False,
                       (Candidate(chunk, 0.6, 0.6, 1),), x, (chunk.chunk_id,) * 3, np.ones(3, dtype=bool), labels)


@pytest.fixture
def queries() -> list[JudgedQuery]:
    rng = np.random.default_rng(7)
    return [query(f"q{g}-{i}", f"article-{g}", i % 4 != 0, rng) for g in range(6) for i in range(12)]


def test_folds_hold_whole_groups(queries: list[JudgedQuery]) -> None:
    folds = folds_by_group(queries, 4)
    assert sorted(i for f in folds for i in f) == list(range(len(queries)))
    owner = {}
    for n, fold in enumerate(folds):
        for i in fold:
            assert owner.setdefault(queries[i].group, n) == n  # a group is never on two sides
    assert len(folds_by_group(queries[:12], 5)) == 1  # one group: one fold, never an empty one


def test_weights_keep_the_sign_their_meaning_gives_them(queries: list[JudgedQuery]) -> None:
    flipped = [JudgedQuery(q.id, q.golden, q.group, q.expected_mode, q.short_query, q.candidates,
                           np.where(np.arange(len(FEATURES)) == FEATURES.index("unknown_words"),
                                    1.0 - q.features, q.features), q.chunk_ids, q.key_term, q.labels)
               for q in queries]  # unknown words now go with the answerable queries: a quirk to refuse
    model = fit_model(flipped)
    for name, sign in SIGNS.items():
        w = model.weights[name]
        assert (w >= 0 if sign > 0 else w <= 0 if sign < 0 else True), (name, w)
    assert model.weights["unknown_words"] == 0.0
    assert fit_model(queries).weights["unknown_words"] < 0


def test_with_the_reader_only_meaning_features_are_blended_with_it(queries: list[JudgedQuery]) -> None:
    from backend.core.services.answerability_fit import READER_FEATURES

    read = [JudgedQuery(q.id, q.golden, q.group, q.expected_mode, q.short_query, q.candidates,
                        np.where(np.arange(len(FEATURES)) == FEATURES.index("reader"),
                                 np.where(q.features[:, [FEATURES.index("dense")]] > 0.6, 4.0, -4.0), q.features),
                        q.chunk_ids, q.key_term, q.labels) for q in queries]
    model = fit_model(read)
    assert model.weights["reader"] > 0
    assert all(w == 0.0 for name, w in model.weights.items() if name not in READER_FEATURES)


def test_a_set_with_one_kind_of_sentence_cannot_be_fitted(queries: list[JudgedQuery]) -> None:
    with pytest.raises(ValueError, match="sentences that answer and sentences that do not"):
        fit_model([q for q in queries if q.expected_mode == "fallback"])


def test_held_out_decisions_separate_what_the_folds_never_saw(queries: list[JudgedQuery]) -> None:
    result = cross_validate(queries, BASE, k=3)
    assert len(result.folds) == 3 and result.held_out.score.queries == len(queries)
    assert result.held_out.auc() == pytest.approx(1.0)
    assert result.held_out.score.unanswerable_as_rag == 0
    suggested = result.suggested(BASE)
    assert suggested["decision_score"] == "answerability"
    assert set(suggested["answerability"]["weights"]) == set(FEATURES)


def test_a_chunk_scores_its_best_quotable_sentence_only(queries: list[JudgedQuery]) -> None:
    model = fit_model(queries)
    q = queries[1]
    cands = scored_candidates(q, model, bar=0.0)
    assert cands[0].evidence == pytest.approx(max(model.probabilities(q.features)), abs=1e-6)
    silent = JudgedQuery(q.id, q.golden, q.group, q.expected_mode, q.short_query, q.candidates, q.features,
                         q.chunk_ids, np.zeros(3, dtype=bool), q.labels)
    assert scored_candidates(silent, model, bar=0.0)[0].evidence == 0.0  # no sentence shares a word: nothing counts
