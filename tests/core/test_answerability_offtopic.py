"""Off-topic look-alikes: a question that names what the context or the knowledge base never
mentions may quote nothing, and an answer needs a quotable sentence (pure, from tables)."""

from __future__ import annotations

import pytest

from backend.common.config import AnswerabilitySettings, HybridGateSettings, RetrievalSettings
from backend.core.services.answerability import FEATURES, QuestionReading, SentenceJudgement
from backend.core.services.evidence import ScoredSentence, Sentence
from backend.core.answer_mode import Candidate, decide_answer_mode
from backend.core.types import Chunk

QUESTION = "Which safety shoes are in the PPE kit?"
SENTENCE = "Safety shoes with steel toe caps (class S3)."


def judgement(entity_missing: float = 0.0, unknown_words: float = 0.0, text: str = SENTENCE) -> SentenceJudgement:
    features = [0.0] * len(FEATURES)
    features[FEATURES.index("entity_missing")] = entity_missing
    features[FEATURES.index("unknown_words")] = unknown_words
    return SentenceJudgement(ScoredSentence(Sentence(text, None, 1, "c1"), 0.8, 0.6, True), tuple(features), 0.9)


@pytest.mark.parametrize(("entity_missing", "unknown_words", "quotable"), [
    (0.0, 0.0, True),    # everything the question names is in the context and the knowledge base
    (1.0, 0.0, False),   # "the CEO of Northwind": a name in no retrieved passage
    (0.0, 1.0, False),   # "which *brand* of safety shoes": a word the knowledge base never uses
    (0.0, 3.0, False),   # capped count, same verdict
    (1.0, 1.0, False),
])
def test_a_question_asking_beyond_the_context_quotes_nothing(entity_missing: float, unknown_words: float,
                                                             quotable: bool) -> None:
    j = judgement(entity_missing, unknown_words)
    assert j.asks_beyond_context is not quotable
    assert j.quotable(QuestionReading.of(QUESTION)) is quotable


def test_a_sentence_sharing_no_word_stays_unquotable_whatever_the_context() -> None:
    assert not judgement(text="The office kitchen closes at 18:00.").quotable(QuestionReading.of(QUESTION))


def settings() -> RetrievalSettings:
    return RetrievalSettings(decision_score="evidence", threshold_low=0.025, threshold_high=0.55,
                             answerability=AnswerabilitySettings(min_sentence_relevance=0.2),
                             hybrid=HybridGateSettings(min_similarity_for_hybrid=0.2, min_chunks_for_hybrid=1,
                                                       min_total_context_chars=0))


def cand(evidence: float, relevance: float | None) -> Candidate:
    return Candidate(Chunk("c1", "d1", "x" * 200, "d1.md", 0), 0.5, 0.5, 1, evidence, relevance)


@pytest.mark.parametrize(("evidence", "relevance", "mode"), [
    (0.55, 0.0, "fallback"),     # at the high threshold, but no sentence may be quoted
    (0.9, 0.0, "fallback"),
    (0.55, 1e-6, "rag"),         # one quotable sentence: evidence decides, as before
    (0.55, 0.1, "rag"),          # below the relevance bar: rag still quotes what shares a word
    (0.55, None, "rag"),         # sentences not judged (answerability off): evidence alone
    (0.5499, 0.0, "fallback"),   # hybrid already needed a relevant sentence
])
def test_rag_needs_a_quotable_sentence(evidence: float, relevance: float | None, mode: str) -> None:
    decision = decide_answer_mode([cand(evidence, relevance)], settings(), False)
    assert decision.mode == mode
    if mode == "fallback" and evidence >= 0.55:
        assert "no retrieved sentence may be quoted" in decision.reasons[-1]


def test_without_sentence_judging_relevance_is_not_consulted() -> None:
    off = settings().model_copy(update={"answerability": AnswerabilitySettings(enabled=False)})
    assert decide_answer_mode([cand(0.6, 0.0)], off, False).mode == "rag"
