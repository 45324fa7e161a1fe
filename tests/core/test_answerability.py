"""The answerability model: its features at their boundaries (pure), the decision it drives,
and the judge with the real local model on look-alike questions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from backend.common.config import AnswerabilitySettings, HybridGateSettings, RetrievalSettings
from backend.core.services.answerability import (
    FEATURES,
    FRAMING,
    AnswerabilityJudge,
    AnswerabilityModel,
    QuestionReading,
    attach_answerability,
    compound_terms,
    conflicts,
    feature_matrix,
    fold_accents,
    missing_words,
    model_from,
    question_entities,
    question_names,
)
from backend.core.services.evidence import ScoredSentence, Sentence, SentenceScorer
from backend.core.answer_mode import Candidate, decide_answer_mode
from backend.core.types import Chunk

YALE = "How many sports does Yale compete in?"
HARVARD = "The Harvard Crimson competes in 42 intercollegiate sports in the NCAA Division I Ivy League."
YALE_TEXT = "Yale University fields 35 varsity teams that compete in the Ivy League."


def feature(rows: np.ndarray, name: str, i: int = 0) -> float:
    return float(rows[i, FEATURES.index(name)])


def scored(text: str, passage: int = 1, dense: float = 0.5, lexical: float = 0.5) -> ScoredSentence:
    return ScoredSentence(Sentence(text, None, passage, f"c{passage}"), dense, lexical, False)


def chunk(text: str, n: int = 1) -> Chunk:
    return Chunk(f"c{n}", f"d{n}", text, f"d{n}.md", 0)


# --- reading the question ------------------------------------------------------------
def test_names_and_numbers_of_a_question_are_what_it_is_about() -> None:
    assert question_entities(YALE) == ("yale",)
    assert question_entities("Which three particles did Chadwick find in 1932?") == ("3", "chadwick", "1932")
    assert question_entities("What is the per diem?") == ()  # nothing capitalised past the first word
    # the asker is no name: "I'm" made every sentence unquotable ("a name of the question found nowhere")
    assert question_entities("What happens if I'm late for an I'm OK check-in, or if I've missed one?") == ("ok",)
    assert question_names("What year was the Legend of Zelda: Australian Princess planned?") == (
        "legend of zelda", "australian princess")
    assert question_names("When did Beyonce start becoming popular?") == ()


def test_accents_do_not_separate_a_name_typed_without_them() -> None:
    assert fold_accents("Beyoncé and Frédéric Chopin") == "Beyonce and Frederic Chopin"


# --- features ------------------------------------------------------------------------
def test_a_sentence_about_another_college_does_not_cover_the_question_s_name() -> None:
    reading = QuestionReading.of(YALE)
    rows = feature_matrix(reading, [scored(HARVARD), scored(YALE_TEXT, 2)], [chunk(HARVARD), chunk(YALE_TEXT, 2)],
                          [0.6, 0.5])
    assert feature(rows, "entity_cover", 0) == 0.0 and feature(rows, "entity_cover", 1) == 1.0
    assert feature(rows, "entity_missing") == 0.0  # Yale is in the retrieved text (passage 2)
    alone = feature_matrix(reading, [scored(HARVARD)], [chunk(HARVARD)], [0.6])
    assert feature(alone, "entity_missing") == 1.0


def test_three_is_not_two() -> None:
    reading = QuestionReading.of("Which three particles did he discover?")
    rows = feature_matrix(reading, [scored("He discovered two particles."), scored("He discovered three particles.")],
                          [chunk("He discovered two particles. He discovered three particles.")], [0.5])
    assert feature(rows, "number_missing", 0) == 1.0 and feature(rows, "number_missing", 1) == 0.0


def test_a_multi_word_name_counts_only_whole() -> None:
    reading = QuestionReading.of("What character helped Link in Ocarina Princess?")
    text = "Twilight Princess takes place after Ocarina of Time."
    rows = feature_matrix(reading, [scored(text)], [chunk(text)], [0.5])
    assert feature(rows, "name_cover") == 0.0
    assert feature(feature_matrix(QuestionReading.of("Who is in Twilight Princess?"), [scored(text)], [chunk(text)],
                                  [0.5]), "name_cover") == 1.0


def test_unknown_words_are_counted_and_capped() -> None:
    reading = QuestionReading.of("Which brand of safety shoes?")
    rows = feature_matrix(reading, [scored("Wear S3 safety shoes.")], [chunk("Wear S3 safety shoes.")], [0.5],
                          unknown_words=7)
    assert feature(rows, "unknown_words") == 3.0


def test_missing_words_are_the_topic_words_absent_from_the_context() -> None:
    assert missing_words("Which brand of safety shoes is in the PPE kit?",
                         [chunk("The PPE kit holds S3 safety shoes.")]) == ["brand"]
    assert missing_words("How many days of annual leave?", [chunk("25 days of annual leave")]) == []
    # a number word is no word the knowledge base lacks: the text writes "10" (numbers are entity features)
    assert missing_words("How long is the sabbatical after ten years of service?",
                         [chunk("After 10 years of service the entitlement rises to 30 days.")]) == ["sabbatical"]


# --- the model -----------------------------------------------------------------------
def test_a_weight_for_an_unknown_feature_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown answerability features"):
        AnswerabilityModel(0.0, {"cosine": 1.0})
    with pytest.raises(ValueError, match="unknown feature"):
        AnswerabilitySettings(weights={"cosine": 1.0})


def test_probabilities_follow_the_logit_and_contributions_explain_it() -> None:
    model = AnswerabilityModel(-1.0, {"dense": 2.0, "unknown_words": -1.5})
    x = np.zeros((2, len(FEATURES)))
    x[0, FEATURES.index("dense")] = 1.0
    x[1, FEATURES.index("unknown_words")] = 1.0
    p = model.probabilities(x)
    assert p[0] == pytest.approx(1 / (1 + np.exp(-1.0))) and p[1] == pytest.approx(1 / (1 + np.exp(2.5)))
    rows = model.contributions(x[1])
    assert rows[0]["feature"] == "unknown_words" and rows[0]["contribution"] == -1.5
    assert rows[0]["means"] == "question words the knowledge base never uses"


# --- the decision ----------------------------------------------------------------------
def settings(**changes: Any) -> RetrievalSettings:
    base = {"decision_score": "answerability", "threshold_low": 0.0, "threshold_high": 0.6,
            "answerability": AnswerabilitySettings(min_sentence_relevance=0.3),
            "hybrid": HybridGateSettings(min_similarity_for_hybrid=0.2, min_chunks_for_hybrid=1,
                                         min_total_context_chars=0)}
    return RetrievalSettings(**{**base, **changes})


def cand(rank: int, evidence: float | None, similarity: float = 0.5, relevance: float | None = -1.0) -> Candidate:
    """With ``decision_score: answerability`` the probability is both what is compared and the relevance."""
    return Candidate(chunk("x" * 200, rank), similarity, similarity, rank, evidence,
                     evidence if relevance == -1.0 else relevance)


@pytest.mark.parametrize(("evidence", "mode"), [(0.6, "rag"), (0.59, "hybrid"), (0.3, "hybrid"), (0.29, "fallback"),
                                                (0.0, "fallback")])
def test_no_floor_lets_an_irrelevant_sentence_through(evidence: float, mode: str) -> None:
    # threshold_low 0 would take anything into hybrid; the relevance bar (0.3) still decides
    decision = decide_answer_mode([cand(1, evidence)], settings(), False)
    assert decision.mode == mode
    if mode == "fallback":
        assert "no retrieved sentence is relevant to the question" in decision.reasons[-1]
        assert "relevance bar 0.3" in decision.reasons[-1]


def test_the_probability_of_a_chunk_is_its_best_relevant_sentence(embedder: Any) -> None:
    text = "Employees receive 25 days of paid annual leave per calendar year.\n\nThe office kitchen closes at 18:00."
    question = "How many days of annual leave do employees get?"
    model = AnswerabilitySettings(intercept=-2.0, weights={"dense": 3.0, "lexical": 2.0}, min_sentence_relevance=0.3)
    out = attach_answerability([Candidate(chunk(text), 0.6, 0.6, 1)], question, SentenceScorer(embedder),
                               settings(answerability=model)).candidates
    judged = AnswerabilityJudge(SentenceScorer(embedder), model_from(model)).judge(question, [chunk(text)], [0.6])
    assert out[0].evidence == pytest.approx(max(j.probability for j in judged), abs=1e-6)
    assert judged[0].probability > judged[1].probability


@pytest.mark.parametrize(("evidence", "relevance", "mode"), [
    (0.7, 0.1, "rag"),           # evidence decides rag; the answerer still quotes only what shares a word
    (0.4, 0.3, "hybrid"),        # partial evidence, and a relevant sentence
    (0.4, 0.29, "fallback"),     # partial evidence, but nothing relevant: never hybrid
    (0.4, None, "fallback"),     # nothing was judged
])
def test_with_evidence_deciding_hybrid_still_needs_a_relevant_sentence(evidence: float, relevance: float | None,
                                                                      mode: str) -> None:
    decision = decide_answer_mode([cand(1, evidence, relevance=relevance)],
                                  settings(decision_score="evidence", threshold_low=0.025, threshold_high=0.55), False)
    assert decision.mode == mode


@pytest.mark.parametrize(("text", "terms"), [
    ("How many questions does the Tier 4 vendor questionnaire have?", {"tier 4"}),
    ("Which three particles are produced?", {"3 particle"}),
    ("How many emergency exits does floor 3 of the office have?", {"floor 3"}),
    ("after 5 years of service, in 2026, 2 exits, 4.5 kg, 80 dB", {"5 year", "2 exit"}),
    ("How much does the C400 weigh? Variant: NWA-C400; Weight: 27 kg", {"c400", "nwa-c400"}),
    ("part-time staff get 20 days", {"part-time", "20 day"}),
])
def test_numbered_and_counted_terms_are_read_with_their_number(text: str, terms: set[str]) -> None:
    assert compound_terms(text) == terms


@pytest.mark.parametrize(("question", "sentence", "conflict"), [
    ("How many questions does the Tier 4 questionnaire have?", "Tier 1 - Critical: full questionnaire (120 questions).",
     True),
    ("Which three particles are produced?", "The decay produces two particles and a photon.", True),
    ("Which three particles are produced?", "The decay produces three particles.", False),
    ("How many emergency exits does floor 3 have?", "Floor 2 has four emergency exits.", True),
    ("How much does the C400 weigh?", "The NWA-C400 and the C200 are always lifted by two engineers.", False),
    ("How much does the C400 weigh?", "The NWA-C200 weighs 18 kg.", True),
    ("How many days of leave do part-time staff get?", "Full-time employees get 25 days.", True),
    ("How many days of leave after 5 years?", "Leave is 25 days a year.", False),  # names no other number of years
    ("Which was the last year he won?", "In 1990, the first year of the league, he won.", True),
    ("Which was the last year he won?", "1990 was both the first and the last year he won.", False),
    ("What is the largest city in the north?", "The smallest city in the south is Faro.", True),
    ("What is the maximum team size?", "A team needs at least 6 engineers.", False),  # "at least" is an amount
    ("Which rooms need the most protection?", "Most of the halls are louder than 80 dB.", False),
    # values of one attribute: a colour, steady or blinking (flashing is blinking)
    ("What does a blinking amber LED mean?", "Status LED: Blinking red; Meaning: Overheating.", True),
    ("What does a blinking amber LED mean?", "Status LED: Steady amber; Meaning: Disk or fan fault.", True),
    ("What does a flashing amber LED mean?", "Status LED: Blinking amber; Meaning: Fan fault.", False),
    ("What does the red button do?", "Press the button to restart.", False),  # names no other colour
])
def test_a_sentence_naming_a_sibling_instead_conflicts(question: str, sentence: str, conflict: bool) -> None:
    assert conflicts(compound_terms(question), sentence) is conflict


def test_a_sentence_saying_what_its_document_shows_is_framing() -> None:
    assert FRAMING.match("This document shows the floor plans of the Amsterdam office with the emergency exits.")
    assert FRAMING.match("The following section lists the approved vendors.")
    assert not FRAMING.match("The document shows the customer's name and is signed on site.")


def test_a_conflicting_sentence_is_neither_evidence_nor_quotable(embedder: Any) -> None:
    """The look-alike row about Tier 1 scores high for a Tier 4 question but proves nothing: the chunk holding
    only it has no evidence, and the judge never quotes it."""
    question = "How many questions does the Tier 4 vendor security questionnaire have?"
    tier1 = "Tier 1 vendors fill in the full vendor security questionnaire (120 questions)."
    scorer = SentenceScorer(embedder)
    assert scorer.chunk_evidence(question, [chunk(tier1)]) == [0.0]
    assert scorer.chunk_evidence("How many questions does the Tier 1 vendor security questionnaire have?",
                                 [chunk(tier1)])[0] > 0.3
    judged = AnswerabilityJudge(scorer, AnswerabilityModel(0.0, {"dense": 1.0})).judge(question, [chunk(tier1)], [0.6])
    assert judged and not judged[0].quotable(QuestionReading.of(question))


# --- with the real model ---------------------------------------------------------------
def test_the_shipped_model_prefers_the_sentence_that_answers_over_its_look_alike(embedder: Any) -> None:
    """The configured weights, on text nobody fitted them on: the Yale question is answered by
    the Yale sentence, not by the Harvard one it resembles."""
    from backend.common.config import load_settings

    shipped = load_settings(env={}).retrieval.answerability
    judge = AnswerabilityJudge(SentenceScorer(embedder), model_from(shipped))
    both = judge.judge(YALE, [chunk(HARVARD), chunk(YALE_TEXT, 2)], [0.6, 0.55])
    by_text = {j.sentence.text: j.probability for j in both}
    assert by_text[YALE_TEXT] > by_text[HARVARD]
    harvard_only = judge.judge(YALE, [chunk(HARVARD)], [0.6])
    assert harvard_only[0].probability < by_text[YALE_TEXT]


def test_a_list_item_without_a_full_stop_is_a_sentence_and_a_question_is_never_quotable(embedder: Any) -> None:
    """Issue 42, item 7: the last item of a list keeps its place even unpunctuated, and a sentence that
    is a question (an FAQ entry restating what is asked) says nothing, whoever judges it."""
    from backend.core.sentence_segments import segment_kinds

    text = "PPE kit\n\nThe kit holds:\n- S3 safety boots\n- A hard hat\n- Ear plugs rated 30 dB"
    assert [s for _, k, s in segment_kinds(text) if k == "item"] == ["S3 safety boots", "A hard hat",
                                                                      "Ear plugs rated 30 dB"]
    faq = chunk("Which boots are in the PPE kit? The kit has S3 safety boots.")
    judged = AnswerabilityJudge(SentenceScorer(embedder), model_from(AnswerabilitySettings())).judge(
        "Which boots are in the PPE kit?", [faq], [0.6])
    reading = QuestionReading.of("Which boots are in the PPE kit?")
    quotable = {j.sentence.text: j.quotable(reading) for j in judged}
    assert quotable == {"Which boots are in the PPE kit?": False, "The kit has S3 safety boots.": True}
