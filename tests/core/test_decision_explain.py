"""``decision_explain`` is one typed record, built once with the answer: its JSON keeps the keys and
their order, survives the trip through the stored interaction, and matches the published schema.

Real chat service over the real corpus and local model (``tests/core/conftest``)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from backend.api.models import DecisionExplain as PublishedExplain
from backend.core.decision_explain import DecisionExplain
from backend.core import answer_report as ctx
from backend.core.services.chat_service import ChatQuery
from backend.core.answer_mode import decide_answer_mode
from tests.api.corpus import FALLBACK_QUESTION, RAG_QUESTION, Corpus
from tests.core.test_chat_service import make_service
from tests.core.test_decision import cands, retrieval

#: the keys of the JSON object in the order every response and stored row has carried them
KEYS = [
    "mode", "decided_mode", "blank_primary_answer", "llm_judged_unanswerable", "short_query_active", "thresholds",
    "max_similarity", "max_eligible_similarity", "decision_score", "max_evidence", "answerability", "gates",
    "excluded_chunk_ids", "reasons", "effective_query", "query_tokens", "used_llm", "answered_by", "score_mode",
    "distance", "retrieval_target", "domain", "version", "strategy", "score_source", "top_k", "candidates",
    "answer_explain", "condensed_by", "condensed_rule", "rerank", "retrieval_settings", "dense_index",
]


@pytest.mark.parametrize("question", [RAG_QUESTION, FALLBACK_QUESTION])
def test_the_explanation_round_trips_through_json_and_the_published_schema(
        corpus: Corpus, embedder: Any, question: str) -> None:
    answer = make_service(corpus.settings, corpus.store, embedder).answer(ChatQuery(question, record=False))
    explain = answer.decision_explain
    assert isinstance(explain, DecisionExplain)
    data = explain.to_dict()
    assert list(data) == KEYS
    stored = json.loads(json.dumps(data))  # what the interaction row holds
    again = DecisionExplain.from_dict(stored)
    assert again == explain and again.to_dict() == data
    assert (again.thresholds, again.gates, again.reasons) == (explain.thresholds, explain.gates, explain.reasons)
    assert answer.to_dict()["decision_explain"] == data
    assert PublishedExplain.model_validate(data).model_dump(mode="json") == stored


def test_it_reads_as_the_mapping_it_replaced_and_cannot_be_patched(corpus: Corpus, embedder: Any) -> None:
    explain = make_service(corpus.settings, corpus.store, embedder).answer(
        ChatQuery(RAG_QUESTION, record=False)).decision_explain
    assert explain["version"] == explain.version and explain.get("condensed_by") == "none"
    assert explain["thresholds"] == explain.thresholds.to_dict() and dict(explain) == explain.to_dict()
    assert explain == explain.to_dict() and len(explain) == len(KEYS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        explain.mode = "fallback"  # type: ignore[misc]
    copy = explain.to_dict()
    copy["mode"] = "patched"
    assert explain["mode"] == "rag"  # to_dict hands out a copy


def test_a_decision_alone_is_explained_without_request_facts() -> None:
    decision = decide_answer_mode(cands(0.9), retrieval(), short_query_active=False)
    explain = ctx.decision_explain(decision)
    assert (explain.mode, explain.effective_query, explain.condensed_by) == (decision.mode, None, "none")
    assert explain["gates"]["passed"] == decision.gates_passed
    assert DecisionExplain.from_dict(explain.to_dict()) == explain


def _judged(best: float, p: float, **hybrid: Any) -> Any:
    from dataclasses import replace

    from backend.core.answer_mode import Candidate

    settings = retrieval(decision_score="answerability", threshold_low=0.1, threshold_high=0.9,
                         hybrid={"min_chunks_for_hybrid": 1, "min_total_context_chars": 0, **hybrid},
                         answerability={"min_sentence_relevance": 0.1})
    scored = [Candidate(c.chunk, c.similarity, c.raw_score, c.rank, evidence=p, relevance=p) for c in cands(best)]
    decision = decide_answer_mode(scored, settings, short_query_active=False)
    return replace(decision, judged_sentence="Cars are returned charged.", judged_by="reader")


def test_the_verdict_says_in_words_why_a_judged_sentence_was_not_quoted() -> None:
    from backend.core.decision_explain import verdict

    partial = _judged(0.6, 0.5, min_best_similarity=0.5)
    assert partial.mode == "hybrid" and "quoted as a partial answer" in verdict(partial)
    loose = _judged(0.45, 0.5, min_best_similarity=0.5)
    assert loose.mode == "fallback"
    assert "only loosely about the question (best passage similarity 0.45)" in verdict(loose)
    low = _judged(0.6, 0.05, min_best_similarity=0.5)
    assert low.mode == "fallback" and "a partial answer needs 0.10" in verdict(low)
