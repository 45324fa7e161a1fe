"""Fitting the answerability model and its thresholds, judged only on held-out groups.

``rag calibrate --answerability`` collects, once per golden query, the candidates the chat
path sees and the features of every sentence of its usable chunks (:func:`judge_query`).
Everything after that is pure:

* sentences are labelled by the golden set: a sentence of an answerable query that holds
  every ``must_contain`` phrase answers it; no sentence of a query expecting ``fallback``
  or ``hybrid`` (partly covered: related text, not the answer) does; answerable queries
  without ``must_contain`` teach the thresholds but not the weights;
* :func:`fit_model` fits a logistic regression on those sentences, each weight held to the
  sign its meaning gives it (:data:`SIGNS`);
* the thresholds are then searched on the same training queries with the real
  ``decide_answer_mode`` (``calibration.fit``), with each golden set weighing the same and,
  within a set, each expected mode (so a large public set does not drown a small set of
  one's own, nor its many answerable questions the few unanswerable ones);
* :func:`cross_validate` does both on ``k - 1`` folds and scores the held-out fold. Folds
  are made of whole *groups* (an article, a document: ``GoldenQuery.group``, else its
  first expected source), so no article is on both sides of a fold.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np

from backend.common.config import FEATURES, RetrievalSettings
from backend.core import ranking_metrics as rm
from backend.core.services.answerability import (
    AnswerabilityJudge,
    AnswerabilityModel,
    Probe,
    QuestionReading,
)
from backend.core.calibration import CalibrationQuery, Grid, Score, Setting, fit, score
from backend.core.answer_mode import Candidate, decide_answer_mode

#: thresholds searched on the probability scale
GRID = Grid(threshold_low=tuple(round(0.025 * i, 3) for i in range(1, 37)),
            threshold_high=tuple(round(0.1 + 0.025 * i, 3) for i in range(36)))


@dataclass(frozen=True)
class JudgedQuery:
    """One golden query with its candidates and the features of its context sentences."""

    id: str
    golden: str
    group: str
    expected_mode: str
    short_query: bool
    candidates: tuple[Candidate, ...]
    #: (sentences x FEATURES), the chunk of each sentence, whether it shares a question word
    features: np.ndarray
    chunk_ids: tuple[str, ...]
    key_term: np.ndarray
    #: which sentences answer (see the module docstring); None: the query teaches no weights
    labels: np.ndarray | None
    #: the sentences themselves, for reports of what was decided on
    sentences: tuple[str, ...] = ()


def judge_query(qid: str, golden: str, group: str, expected_mode: str, must_contain: Sequence[str], question: str,
                short_query: bool, candidates: Sequence[Candidate], judge: AnswerabilityJudge,
                settings: RetrievalSettings, probe: Probe | None = None) -> JudgedQuery:
    gates = settings.hybrid
    usable = [c for c in candidates
              if c.chunk.chunk_type not in gates.exclude_chunk_types_from_llm and c.similarity >= gates.min_similarity_for_hybrid]
    chunks = [c.chunk for c in usable]
    unknown_words = len(probe(question, chunks)) if probe is not None and usable else 0
    judged = judge.judge(question, chunks, [c.similarity for c in usable], unknown_words) if usable else []
    reading = QuestionReading.of(question)
    features = np.array([j.features for j in judged], dtype=np.float64).reshape(len(judged), len(FEATURES))
    labels: np.ndarray | None = None
    if expected_mode in ("fallback", "hybrid"):  # a partly covered question is not answered by any sentence
        labels = np.zeros(len(judged), dtype=bool)
    elif expected_mode == "rag" and must_contain:
        labels = np.array([rm.contains_all(j.sentence.text, must_contain)[0] for j in judged], dtype=bool)
    return JudgedQuery(qid, golden, group, expected_mode, short_query, tuple(candidates), features,
                       tuple(j.sentence.chunk_id for j in judged),
                       np.array([j.quotable(reading) for j in judged], dtype=bool), labels,
                       tuple(j.sentence.text for j in judged))


#: the sign each weight must have: a feature means what its name says, whatever a training
#: set's quirks suggest (SQuAD's look-alike questions copy the paragraph's words, so a free fit
#: learns that covering the question's words is *bad*, which no enterprise question bears out)
SIGNS: dict[str, int] = {"dense": 1, "lexical": 1, "answer_type": 1, "passage_cover": 1, "context_cover": 1,
                         "missing_topic": -1, "entity_cover": 1, "entity_missing": -1, "similarity": 1,
                         "name_cover": 1, "number_missing": -1, "bigram_cover": 1, "novelty": 0, "unknown_words": -1,
                         "evidence": 1, "conflict": -1, "reader": 1}


#: the features blended with the answer reader's log-odds when it judges (the rest weigh 0)
READER_FEATURES = ("reader", "dense", "lexical", "answer_type")


def fit_model(queries: Sequence[JudgedQuery], c: float = 1.0) -> AnswerabilityModel:
    """Logistic regression over the labelled sentences of ``queries``, each golden set
    weighing the same, each weight held to its sign in :data:`SIGNS` (L-BFGS-B, L2 ``1/c``)."""
    from scipy.optimize import minimize

    rows = [q for q in queries if q.labels is not None and len(q.labels)]
    picks = [_hardest(q) for q in rows]
    x = np.vstack([q.features[i] for q, i in zip(rows, picks)])
    y = np.concatenate([q.labels[i] for q, i in zip(rows, picks)]).astype(float)  # type: ignore[index]
    if not 0 < y.sum() < len(y):
        raise ValueError("answerability: the training queries need sentences that answer and sentences that do not")
    sets = [q.golden for q, i in zip(rows, picks) for _ in i]
    counts = {g: sets.count(g) for g in set(sets)}
    weight = np.array([1.0 / (len(counts) * counts[g]) for g in sets])
    xb = np.hstack([x, np.ones((len(x), 1))])
    l2 = 1.0 / (c * len(x))

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = xb @ theta
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))
        value = float(np.sum(weight * (np.logaddexp(0.0, z) - y * z))) + l2 * float(theta[:-1] @ theta[:-1])
        grad = xb.T @ (weight * (p - y))
        grad[:-1] += 2 * l2 * theta[:-1]
        return value, grad

    # with the answer reader, only what reads meaning (and the kind of answer) is blended with it: word
    # overlaps and word lists, which the reader makes redundant, weigh 0
    read = bool(np.any(x[:, FEATURES.index("reader")] != 0))
    allowed = READER_FEATURES if read else FEATURES
    bounds = [(0.0, 0.0) if f not in allowed else (0.0, None) if SIGNS[f] > 0 else (None, 0.0) if SIGNS[f] < 0
              else (None, None) for f in FEATURES]
    fitted = minimize(loss, np.zeros(len(FEATURES) + 1), jac=True, method="L-BFGS-B",
                      bounds=[*bounds, (None, None)])
    weights = {name: round(float(w), 4) for name, w in zip(FEATURES, fitted.x[:-1])}
    return AnswerabilityModel(round(float(fitted.x[-1]), 4), weights)


#: sentences per query that teach the weights: the answering ones and the closest others
TRAIN_PER_QUERY = 6


def _hardest(q: JudgedQuery) -> np.ndarray:
    """Indices of the labelled sentences of ``q`` the model learns from: every answering
    sentence and the ``TRAIN_PER_QUERY`` others closest to the question (dense + lexical),
    so the model learns to tell the answer from its look-alikes, not from noise."""
    assert q.labels is not None
    closeness = q.features[:, FEATURES.index("dense")] + q.features[:, FEATURES.index("lexical")]
    order = np.argsort(-closeness, kind="stable")
    others = [i for i in order if not q.labels[i]][:TRAIN_PER_QUERY]
    return np.array(sorted({*np.where(q.labels)[0].tolist(), *others}), dtype=int)


def scored_candidates(q: JudgedQuery, model: AnswerabilityModel, bar: float) -> tuple[Candidate, ...]:
    """``q``'s candidates with ``evidence`` as ``attach_answerability`` sets it under ``model``."""
    probs = model.probabilities(q.features)
    best: dict[str, float] = {cid: 0.0 for cid in q.chunk_ids}
    for cid, p, ok in zip(q.chunk_ids, probs, q.key_term):
        if ok:
            best[cid] = max(best[cid], round(float(p), 6))
    return tuple(replace(c, evidence=best[c.chunk.chunk_id], relevance=best[c.chunk.chunk_id])
                 if c.chunk.chunk_id in best else c for c in q.candidates)


def decision_score(q: JudgedQuery, model: AnswerabilityModel, bar: float) -> float:
    """The compared score of a query: its best relevant sentence's probability (0 if none)."""
    return max((c.evidence or 0.0 for c in scored_candidates(q, model, bar)), default=0.0)


def _as_calibration(queries: Sequence[JudgedQuery], model: AnswerabilityModel,
                    base: RetrievalSettings) -> list[CalibrationQuery]:
    bar, min_sim = base.answerability.min_sentence_relevance, base.hybrid.min_similarity_for_hybrid
    return [CalibrationQuery(q.id, q.golden, q.expected_mode, q.short_query, {min_sim: scored_candidates(q, model, bar)})
            for q in queries]


def _grid(base: RetrievalSettings) -> Grid:
    gates = base.hybrid
    return replace(GRID, min_similarity_for_hybrid=(gates.min_similarity_for_hybrid,),
                   min_chunks_for_hybrid=(gates.min_chunks_for_hybrid,),
                   min_total_context_chars=(gates.min_total_context_chars,))


def fit_thresholds(queries: Sequence[JudgedQuery], model: AnswerabilityModel, base: RetrievalSettings,
                   rag_penalty: float, balanced: bool = True) -> Setting:
    """The (low, high) with the best objective; ``balanced``: each golden set and each expected
    mode within it weighing the same, else each query."""
    cal = _as_calibration(queries, model, base)
    weights = _set_weights(cal) if balanced else None
    setting, _ = fit(cal, _with_model(base, model), _grid(base), rag_penalty, weights=weights)
    return setting


def _set_weights(cal: Sequence[CalibrationQuery]) -> np.ndarray:
    """Each golden set weighs the same, and within a set each expected mode: 348 unanswerable
    questions among 4,719 count as much as the answerable ones (balanced accuracy)."""
    sizes: dict[tuple[str, str], int] = {}
    modes: dict[str, set[str]] = {}
    for q in cal:
        sizes[(q.golden, q.expected_mode)] = sizes.get((q.golden, q.expected_mode), 0) + 1
        modes.setdefault(q.golden, set()).add(q.expected_mode)
    return np.array([len(cal) / (len(modes) * len(modes[q.golden]) * sizes[(q.golden, q.expected_mode)])
                     for q in cal])


def _with_model(base: RetrievalSettings, model: AnswerabilityModel, setting: Setting | None = None) -> RetrievalSettings:
    answerability = base.answerability.model_copy(update={"intercept": model.intercept, "weights": dict(model.weights)})
    out = base.model_copy(update={"decision_score": "answerability", "answerability": answerability})
    return setting.apply(out) if setting is not None else out


def folds_by_group(queries: Sequence[JudgedQuery], k: int) -> list[list[int]]:
    """Whole groups per fold, largest groups first onto the smallest fold (deterministic)."""
    groups: dict[str, list[int]] = {}
    for i, q in enumerate(queries):
        groups.setdefault(q.group, []).append(i)
    folds: list[list[int]] = [[] for _ in range(min(k, len(groups)))]
    for name in sorted(groups, key=lambda g: (-len(groups[g]), g)):
        min(folds, key=len).extend(groups[name])
    return [sorted(f) for f in folds]


@dataclass(frozen=True)
class HeldOut:
    """What the held-out folds decided, pooled."""

    score: Score
    by_golden: dict[str, Score]
    #: per query: (golden, expected mode, decided mode, decision score)
    decisions: tuple[tuple[str, str, str, float], ...]

    def auc(self, golden: str | None = None) -> float | None:
        """ROC AUC of the decision score between answerable (``rag``) and unanswerable (``fallback``) queries."""
        rows = [(e, s) for g, e, _, s in self.decisions if (golden is None or g == golden) and e in ("rag", "fallback")]
        pos = [s for e, s in rows if e == "rag"]
        neg = [s for e, s in rows if e == "fallback"]
        if not pos or not neg:
            return None
        from sklearn.metrics import roc_auc_score

        return round(float(roc_auc_score([1] * len(pos) + [0] * len(neg), pos + neg)), 4)


@dataclass(frozen=True)
class AnswerabilityCalibration:
    """The held-out figures, and the fit on everything: one model, and thresholds for all the
    sets together (``setting``) and for each golden set on its own (``per_set``)."""

    folds: tuple[tuple[int, int, AnswerabilityModel, Setting], ...]
    held_out: HeldOut
    model: AnswerabilityModel
    setting: Setting
    rag_penalty: float
    per_set: dict[str, Setting] = field(default_factory=dict)

    def suggested(self, base: RetrievalSettings) -> dict[str, Any]:
        """The ``retrieval`` block to copy into a profile."""
        return {"decision_score": "answerability", **self.setting.as_config(),
                "answerability": {"intercept": self.model.intercept, "weights": dict(self.model.weights),
                                  "min_sentence_relevance": base.answerability.min_sentence_relevance}}


def held_out_decisions(queries: Sequence[JudgedQuery], model: AnswerabilityModel, setting: Setting,
                       base: RetrievalSettings) -> list[tuple[str, str, str, float]]:
    settings = _with_model(base, model, setting)
    bar = base.answerability.min_sentence_relevance
    out: list[tuple[str, str, str, float]] = []
    for q in queries:
        cands = scored_candidates(q, model, bar)
        mode = decide_answer_mode(cands, settings, q.short_query).mode
        out.append((q.golden, q.expected_mode, mode, max((c.evidence or 0.0 for c in cands), default=0.0)))
    return out


def cross_validate(queries: Sequence[JudgedQuery], base: RetrievalSettings, *, k: int = 5,
                   rag_penalty: float = 1.0, per_set: bool = True,
                   set_of: Callable[[str], str] = lambda golden: golden) -> AnswerabilityCalibration:
    """Held-out figures over ``k`` folds by group. The weights are fitted on every training
    query; with ``per_set`` the thresholds are fitted per knowledge base (``set_of`` maps a
    golden set to the knowledge base it tests; one knowledge base's probabilities sit higher
    than another's: Wikipedia paraphrases, a policy repeats its question's words), else once
    for all sets together."""
    folds = []
    decisions: list[tuple[str, str, str, float]] = []
    for index, test_idx in enumerate(folds_by_group(queries, k), start=1):
        test_set = set(test_idx)
        train = [q for i, q in enumerate(queries) if i not in test_set]
        test = [queries[i] for i in test_idx]
        model = fit_model(train)
        setting = fit_thresholds(train, model, base, rag_penalty)
        folds.append((index, len(train), model, setting))
        if not per_set:
            decisions.extend(held_out_decisions(test, model, setting, base))
            continue
        for name in sorted({set_of(q.golden) for q in test}):
            own = [q for q in train if set_of(q.golden) == name]
            complete = {q.expected_mode for q in own} >= {q.expected_mode for q in queries if set_of(q.golden) == name}
            fitted = fit_thresholds(own, model, base, rag_penalty) if complete else setting
            decisions.extend(held_out_decisions([q for q in test if set_of(q.golden) == name], model, fitted, base))
    model = fit_model(queries)
    setting = fit_thresholds(queries, model, base, rag_penalty)
    sets = {name: fit_thresholds([q for q in queries if set_of(q.golden) == name], model, base, rag_penalty)
            for name in sorted({set_of(q.golden) for q in queries})} if per_set else {}
    return AnswerabilityCalibration(tuple(folds), HeldOut(_score(decisions), {
        g: _score([d for d in decisions if d[0] == g]) for g in sorted({d[0] for d in decisions})}, tuple(decisions)),
        model, setting, rag_penalty, sets)


def _score(decisions: Sequence[tuple[str, str, str, float]]) -> Score:
    confusion: dict[str, dict[str, int]] = {}
    for _, expected, decided, _ in decisions:
        row = confusion.setdefault(expected, {})
        row[decided] = row.get(decided, 0) + 1
    return Score(len(decisions), sum(e == d for _, e, d, _ in decisions),
                 sum(d == "rag" and e != "rag" for _, e, d, _ in decisions), confusion)


__all__ = ["JudgedQuery", "judge_query", "fit_model", "fit_thresholds", "cross_validate", "folds_by_group",
           "AnswerabilityCalibration", "HeldOut", "score"]
