"""``decision_explain``: why an answer took its mode, as one typed, frozen record.

Built once, when the answer is (``DecisionExplain.of``), from the mode decision and the
request's facts; nothing edits it afterwards. Its JSON (``to_dict``) is what ``/chat``,
the stream's events, ``rag ask --json`` and the stored interaction carry, key for key and
in this order; ``api/models.DecisionExplain`` is its published schema. It also reads as a
mapping (``explain["version"]``), the form the stored interaction and older callers use.

The parts other modules explain in their own words (the extractive answerer's
``answer_explain``, the reranker's moves, the retrieval stamp, the dense index) stay the
JSON objects those modules make.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any

from backend.core.answer_mode import ModeDecision

_DIGITS = 6


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, _DIGITS)


@dataclass(frozen=True)
class ThresholdsExplain:
    """The thresholds the decision compared, and the configured ones before short-query tightening."""

    low: float
    high: float
    base_low: float
    base_high: float
    kind: str

    def to_dict(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, "base_low": self.base_low, "base_high": self.base_high,
                "kind": self.kind}


@dataclass(frozen=True)
class GatesExplain:
    """The hybrid gates: their configured minimums, what the context had, and which passed."""

    min_similarity_for_hybrid: float
    min_chunks_for_hybrid: int
    min_total_context_chars: int
    usable_chunks: int
    usable_context_chars: int
    passed: Mapping[str, bool]
    #: the best chunk's similarity a partial answer needs (0: no such gate)
    min_best_similarity: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"min_similarity_for_hybrid": self.min_similarity_for_hybrid,
                "min_chunks_for_hybrid": self.min_chunks_for_hybrid,
                "min_total_context_chars": self.min_total_context_chars,
                "min_best_similarity": self.min_best_similarity, "usable_chunks": self.usable_chunks,
                "usable_context_chars": self.usable_context_chars, "passed": dict(self.passed)}


@dataclass(frozen=True)
class AnswerabilityExplain:
    """The answerability model's verdict (decision_score evidence or answerability)."""

    best_sentence: float | None
    relevance_bar: float
    unknown_words: tuple[str, ...]
    #: who judged the sentences: ``reader`` (the trained model) or ``features`` (the logistic model)
    judged_by: str | None = None
    #: the sentence judged most likely to answer (the one ``best_sentence`` scores)
    sentence: str | None = None
    #: the verdict in plain words
    verdict: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"best_sentence": self.best_sentence, "relevance_bar": self.relevance_bar,
                "unknown_words": list(self.unknown_words), "judged_by": self.judged_by, "sentence": self.sentence,
                "verdict": self.verdict}


def verdict(decision: ModeDecision) -> str:
    """Why the mode, in a sentence a user reads: which sentence was judged, and how it compares."""
    score, sentence = decision.max_relevance, decision.judged_sentence
    who = "the answer reader" if decision.judged_by == "reader" else "the answerability model"
    quoted = f'"{sentence if len(sentence) <= 160 else sentence[:157] + "..."}"' if sentence else None
    th = decision.thresholds
    if decision.llm_judged_unanswerable:
        return "the language model replied that the passages do not answer the question"
    if quoted is None or score is None:
        return "no retrieved sentence could be judged: nothing in the knowledge base answers the question"
    if decision.mode == "rag":
        return f"{who} judged that {quoted} answers the question (probability {score:.2f})"
    if decision.mode == "hybrid":
        return (f"{who} found no sentence that clearly answers; the closest, {quoted}, scored {score:.2f} "
                f"(a clear answer needs {th.high:.2f}), so it is quoted as a partial answer")
    needed = max(th.low, decision.relevance_bar or 0.0)
    if score >= needed:  # a hybrid gate refused it: say which, in words
        loose = any("min_best_similarity" in r for r in decision.reasons)
        why = (f"the knowledge base is only loosely about the question (best passage similarity "
               f"{decision.max_similarity or 0.0:.2f})" if loose else "the partial-answer gates did not hold")
        return (f"{who} found no sentence that clearly answers: the closest, {quoted}, scored {score:.2f}, "
                f"but {why}, so nothing is quoted")
    return (f"{who} found no sentence that answers the question: the closest, {quoted}, scored {score:.2f} "
            f"(a partial answer needs {needed:.2f})")


_NESTED = {"thresholds": ThresholdsExplain, "gates": GatesExplain, "answerability": AnswerabilityExplain}


@dataclass(frozen=True, eq=False)
class DecisionExplain(Mapping[str, Any]):
    """The numbers and reasons behind the mode, then the request's facts (see the module docstring).
    Equal to any mapping with the same JSON (``explain == {...}``), like the dict it replaces."""

    # --- the decision
    mode: str
    decided_mode: str
    blank_primary_answer: bool
    llm_judged_unanswerable: bool
    short_query_active: bool
    thresholds: ThresholdsExplain
    max_similarity: float | None
    max_eligible_similarity: float | None
    decision_score: str
    max_evidence: float | None
    answerability: AnswerabilityExplain | None
    gates: GatesExplain
    excluded_chunk_ids: tuple[str, ...]
    reasons: tuple[str, ...]
    # --- the request (None only for a decision explained on its own, as tests do)
    effective_query: str | None = None
    query_tokens: int | None = None
    used_llm: str | None = None
    answered_by: str | None = None
    score_mode: str | None = None
    distance: str | None = None
    retrieval_target: str | None = None
    domain: str | None = None
    version: str | None = None
    strategy: str | None = None
    score_source: str | None = None
    top_k: int | None = None
    candidates: int | None = None
    answer_explain: Mapping[str, Any] | None = None
    condensed_by: str = "none"
    condensed_rule: str | None = None
    rerank: Mapping[str, Any] | None = None
    retrieval_settings: Mapping[str, Any] | None = None
    dense_index: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, decision: ModeDecision, **facts: Any) -> DecisionExplain:
        """The explanation of ``decision`` with the request's ``facts`` (the fields after ``reasons``)."""
        th = decision.thresholds
        return cls(
            mode=decision.mode, decided_mode=decision.decided_mode,
            blank_primary_answer=decision.blank_primary_answer,
            llm_judged_unanswerable=decision.llm_judged_unanswerable, short_query_active=th.short_query_active,
            thresholds=ThresholdsExplain(round(th.low, _DIGITS), round(th.high, _DIGITS), round(th.base_low, _DIGITS),
                                         round(th.base_high, _DIGITS), th.kind),
            max_similarity=_round(decision.max_similarity),
            max_eligible_similarity=_round(decision.max_eligible_similarity),
            decision_score=decision.decision_score, max_evidence=_round(decision.max_evidence),
            answerability=None if decision.relevance_bar is None else AnswerabilityExplain(
                _round(decision.max_relevance), decision.relevance_bar, tuple(decision.unknown_words),
                decision.judged_by, decision.judged_sentence, verdict(decision)),
            gates=GatesExplain(decision.min_similarity_for_hybrid, decision.min_chunks_for_hybrid,
                               decision.min_total_context_chars, decision.usable_chunks,
                               decision.usable_context_chars, decision.gates_passed, decision.min_best_similarity),
            excluded_chunk_ids=tuple(decision.context.excluded_by_type), reasons=tuple(decision.reasons),
            **facts,
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DecisionExplain:
        """The record back from its JSON (a stored interaction's ``decision_explain``)."""
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data:
                continue
            value = data[f.name]
            if f.name in _NESTED and value is not None:
                nested = dict(value)
                if "unknown_words" in nested:
                    nested["unknown_words"] = tuple(nested["unknown_words"])
                value = _NESTED[f.name](**nested)
            elif f.name in ("excluded_chunk_ids", "reasons"):
                value = tuple(value)
            values[f.name] = value
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object, keys in field order (what every response and the stored row carry)."""
        return dict(self._json)

    @cached_property
    def _json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if hasattr(value, "to_dict"):
                value = value.to_dict()
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, Mapping):
                value = dict(value)
            out[f.name] = value
        return out

    # --- read as a mapping (the JSON object's keys)
    def __getitem__(self, key: str) -> Any:
        return self._json[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._json)

    def __len__(self) -> int:
        return len(self._json)
