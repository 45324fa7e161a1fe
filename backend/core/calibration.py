"""Calibrating the answer-mode thresholds and hybrid gates on golden sets, with k-fold
cross-validation, so that thresholds are never judged by the queries they were fit on.

``rag calibrate`` (``backend/cli/calibrate.py``) collects, once per golden query, the
ranked candidates the chat path would see (with sentence evidence for every value of
``min_similarity_for_hybrid`` in the grid). Everything after that is pure:

* :func:`fit` searches the grid (``threshold_low``, ``threshold_high``,
  ``min_similarity_for_hybrid``, ``min_chunks_for_hybrid``, ``min_total_context_chars``)
  for the setting with the best *objective* on the queries it is given: mode accuracy
  minus ``rag_penalty`` x the share of queries that expect ``hybrid`` or ``fallback``
  but would be answered ``rag`` (a confident answer the corpus does not support is
  worse than a cautious one). Ties go to the middle of the tied settings.
* :func:`cross_validate` splits the queries into ``k`` folds, stratified by golden set
  and expected mode, fits on ``k - 1`` folds and scores the fitted setting on the
  held-out fold with the real :func:`decide_answer_mode`. The pooled held-out figures
  are the honest estimate; the suggested configuration is the fit on all queries.

Nothing here writes configuration.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from backend.common.config import RetrievalSettings
from backend.core.answer_mode import Candidate, decide_answer_mode, effective_thresholds

MODES = ("rag", "hybrid", "fallback")
_MODE_INDEX = {m: i for i, m in enumerate(MODES)}


@dataclass(frozen=True)
class Grid:
    """The settings searched. Thresholds step through ``[low_min, high_max]``."""

    threshold_low: tuple[float, ...] = tuple(round(0.025 * i, 3) for i in range(29))          # 0.00 .. 0.70
    threshold_high: tuple[float, ...] = tuple(round(0.30 + 0.025 * i, 3) for i in range(25))  # 0.30 .. 0.90
    min_similarity_for_hybrid: tuple[float, ...] = (0.20, 0.25, 0.30, 0.35)
    min_chunks_for_hybrid: tuple[int, ...] = (1, 2)
    min_total_context_chars: tuple[int, ...] = (0, 150, 300)


@dataclass(frozen=True)
class CalibrationQuery:
    """One golden query and its candidates per ``min_similarity_for_hybrid`` of the grid
    (evidence depends on which chunks are usable)."""

    id: str
    golden: str
    expected_mode: str
    short_query: bool
    candidates: dict[float, tuple[Candidate, ...]]


@dataclass(frozen=True)
class Setting:
    threshold_low: float
    threshold_high: float
    min_similarity_for_hybrid: float
    min_chunks_for_hybrid: int
    min_total_context_chars: int

    def apply(self, base: RetrievalSettings) -> RetrievalSettings:
        hybrid = base.hybrid.model_copy(update={
            "min_similarity_for_hybrid": self.min_similarity_for_hybrid,
            "min_chunks_for_hybrid": self.min_chunks_for_hybrid,
            "min_total_context_chars": self.min_total_context_chars,
        })
        return base.model_copy(update={"threshold_low": self.threshold_low, "threshold_high": self.threshold_high,
                                       "hybrid": hybrid})

    def as_config(self) -> dict[str, Any]:
        return {"threshold_low": self.threshold_low, "threshold_high": self.threshold_high,
                "hybrid": {"min_similarity_for_hybrid": self.min_similarity_for_hybrid,
                           "min_chunks_for_hybrid": self.min_chunks_for_hybrid,
                           "min_total_context_chars": self.min_total_context_chars}}


@dataclass(frozen=True)
class Score:
    queries: int
    correct: int
    unanswerable_as_rag: int
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def accuracy(self) -> float:
        return self.correct / self.queries if self.queries else 0.0


@dataclass(frozen=True)
class Fold:
    index: int
    train: int
    test_ids: tuple[str, ...]
    setting: Setting
    train_accuracy: float
    test: Score


@dataclass(frozen=True)
class CalibrationResult:
    folds: tuple[Fold, ...]
    held_out: Score
    held_out_by_golden: dict[str, Score]
    suggested: Setting
    suggested_in_sample: Score
    current: Score
    current_by_golden: dict[str, Score]
    rag_penalty: float
    decision_score: str


# --- scoring one setting -------------------------------------------------------------
def score(queries: Sequence[CalibrationQuery], setting: Setting, base: RetrievalSettings) -> Score:
    """Decide every query with the real ``decide_answer_mode`` under ``setting``."""
    settings = setting.apply(base)
    correct = wrong_rag = 0
    confusion: dict[str, dict[str, int]] = {}
    for q in queries:
        mode = decide_answer_mode(q.candidates[setting.min_similarity_for_hybrid], settings, q.short_query).mode
        correct += mode == q.expected_mode
        wrong_rag += mode == "rag" and q.expected_mode != "rag"
        row = confusion.setdefault(q.expected_mode, {})
        row[mode] = row.get(mode, 0) + 1
    return Score(len(queries), correct, wrong_rag, confusion)


def _features(queries: Sequence[CalibrationQuery], min_sim: float, base: RetrievalSettings,
              gates: tuple[int, int]) -> tuple[np.ndarray, ...]:
    """Per query: the compared score, whether the gates hold, whether context exists, and
    the threshold offsets of short queries; so the grid over (low, high) is vectorized."""
    min_chunks, min_chars = gates
    probe = Setting(0.0, 0.0, min_sim, min_chunks, min_chars).apply(base)
    compared, gates_ok, has_context, low_off, high_off = [], [], [], [], []
    for q in queries:
        d = decide_answer_mode(q.candidates[min_sim], probe, q.short_query)
        value = d.max_evidence if base.decision_score in ("evidence", "answerability") else d.max_eligible_similarity
        compared.append(np.nan if value is None or d.max_eligible_similarity is None else value)
        relevance = max((c.relevance for c in d.context.used if c.relevance is not None), default=None)
        relevant = base.decision_score == "similarity" or (
            relevance is not None and relevance >= base.answerability.min_sentence_relevance)
        gates_ok.append(d.usable_chunks >= min_chunks and d.usable_context_chars >= min_chars and relevant)
        has_context.append(d.usable_chunks > 0)
        low_off.append(base.short_query.boost if q.short_query else 0.0)
        high_off.append(base.short_query.boost if q.short_query else 0.0)
    return (np.array(compared, dtype=float), np.array(gates_ok), np.array(has_context),
            np.array(low_off), np.array(high_off))


def fit(queries: Sequence[CalibrationQuery], base: RetrievalSettings, grid: Grid = Grid(),
        rag_penalty: float = 1.0, weights: np.ndarray | None = None) -> tuple[Setting, float]:
    """The grid setting with the best objective on ``queries`` (and that objective);
    ``weights`` weigh each query (default: all 1)."""
    expected = np.array([_MODE_INDEX[q.expected_mode] for q in queries])
    answerable = expected == 0
    w = np.ones(len(queries)) if weights is None else np.asarray(weights, dtype=float)
    n = max(float(w.sum()), 1e-9)
    best: list[tuple[float, Setting]] = []
    top = -np.inf
    explicit_short = base.short_query.threshold_low is not None or base.short_query.threshold_high is not None
    for min_sim, min_chunks, min_chars in itertools.product(grid.min_similarity_for_hybrid, grid.min_chunks_for_hybrid,
                                                            grid.min_total_context_chars):
        compared, gates_ok, has_context, low_off, high_off = _features(queries, min_sim, base, (min_chunks, min_chars))
        valid = ~np.isnan(compared)
        value = np.where(valid, compared, -1.0)
        for low, high in itertools.product(grid.threshold_low, grid.threshold_high):
            if low > high:
                continue
            if explicit_short:  # exact thresholds for short queries come from the real function
                lows = np.array([effective_thresholds(Setting(low, high, 0, 0, 0).apply(base), bool(o)).low
                                 if o else low for o in low_off])
                highs = np.array([effective_thresholds(Setting(low, high, 0, 0, 0).apply(base), bool(o)).high
                                  if o else high for o in high_off])
            else:
                lows, highs = np.round(low + low_off, 9), np.round(high + high_off, 9)
            rag = valid & (value >= highs) & has_context
            hybrid = valid & ~rag & (value >= lows) & (value < highs) & gates_ok
            decided = np.where(rag, 0, np.where(hybrid, 1, 2))
            objective = (np.sum(w * (decided == expected)) - rag_penalty * np.sum(w * (rag & ~answerable))) / n
            setting = Setting(low, high, min_sim, min_chunks, min_chars)
            if objective > top + 1e-12:
                top, best = objective, [(objective, setting)]
            elif abs(objective - top) <= 1e-12:
                best.append((objective, setting))
    ties = sorted((s for _, s in best), key=lambda s: (s.threshold_high, s.threshold_low, s.min_similarity_for_hybrid,
                                                       s.min_chunks_for_hybrid, s.min_total_context_chars))
    return ties[len(ties) // 2], float(top)


# --- cross-validation ----------------------------------------------------------------
def folds_of(queries: Sequence[CalibrationQuery], k: int, seed: int) -> list[list[int]]:
    """Indices per fold, stratified by (golden set, expected mode), deterministic for a seed."""
    if k < 2:
        raise ValueError("k-fold cross-validation needs at least 2 folds")
    strata: dict[tuple[str, str], list[int]] = {}
    for i, q in enumerate(queries):
        strata.setdefault((q.golden, q.expected_mode), []).append(i)
    rng = random.Random(seed)
    folds: list[list[int]] = [[] for _ in range(k)]
    offset = 0
    for key in sorted(strata):
        members = sorted(strata[key], key=lambda i: queries[i].id)
        rng.shuffle(members)
        for j, i in enumerate(members):
            folds[(offset + j) % k].append(i)
        offset += len(members)
    return [sorted(f) for f in folds]


def _pool(scores: Sequence[Score]) -> Score:
    confusion: dict[str, dict[str, int]] = {}
    for s in scores:
        for exp, row in s.confusion.items():
            for dec, n in row.items():
                confusion.setdefault(exp, {})[dec] = confusion.setdefault(exp, {}).get(dec, 0) + n
    return Score(sum(s.queries for s in scores), sum(s.correct for s in scores),
                 sum(s.unanswerable_as_rag for s in scores), confusion)


def cross_validate(queries: Sequence[CalibrationQuery], base: RetrievalSettings, *, k: int = 5, seed: int = 0,
                   grid: Grid = Grid(), rag_penalty: float = 1.0) -> CalibrationResult:
    """Fit on k-1 folds, score on the held-out fold; then fit on everything for the suggestion."""
    folds = []
    held_by_golden: dict[str, list[Score]] = {}
    for index, test_idx in enumerate(folds_of(queries, k, seed), start=1):
        test = [queries[i] for i in test_idx]
        train = [q for i, q in enumerate(queries) if i not in set(test_idx)]
        setting, _ = fit(train, base, grid, rag_penalty)
        folds.append(Fold(index, len(train), tuple(q.id for q in test), setting, score(train, setting, base).accuracy,
                          score(test, setting, base)))
        for golden in sorted({q.golden for q in test}):
            held_by_golden.setdefault(golden, []).append(score([q for q in test if q.golden == golden], setting, base))
    suggested, _ = fit(queries, base, grid, rag_penalty)
    current = Setting(base.threshold_low, base.threshold_high, base.hybrid.min_similarity_for_hybrid,
                      base.hybrid.min_chunks_for_hybrid, base.hybrid.min_total_context_chars)
    current_queries = [q for q in queries if current.min_similarity_for_hybrid in q.candidates]
    goldens = sorted({q.golden for q in queries})
    return CalibrationResult(
        folds=tuple(folds), held_out=_pool([f.test for f in folds]),
        held_out_by_golden={g: _pool(v) for g, v in held_by_golden.items()},
        suggested=suggested, suggested_in_sample=score(queries, suggested, base),
        current=score(current_queries, current, base),
        current_by_golden={g: score([q for q in current_queries if q.golden == g], current, base) for g in goldens},
        rag_penalty=rag_penalty, decision_score=base.decision_score,
    )
