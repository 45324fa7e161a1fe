"""Follow-ups that substitute a constraint, and answers that lead with their answer: the
offline condensing rule and the extractive answerer's composition, with the real local model."""

from __future__ import annotations

from typing import Any

import pytest

from backend.common.config import AnswerabilitySettings
from backend.core.services.conversation import (
    ATTRIBUTE_MIN,
    MAX_BARE_CONTENT_WORDS,
    _agree_article,
    condense_offline,
    is_bare,
    spans,
    substitute,
    without_attribute,
)
from backend.core.services.evidence import SentenceScorer
from backend.core.services.followups import FollowUpResult, load_followups
from backend.core.services.followups import summary as followup_summary
from backend.common.errors import EvaluationError
from backend.core.types import ChatRequest, Chunk
from backend.providers.local.extractive import ExtractiveChatModel
from tests.conftest import REPO

FULL_TIME = "How many days of annual leave do full-time employees get?"


@pytest.fixture(scope="module")
def scorer(embedder: Any) -> SentenceScorer:
    return SentenceScorer(embedder)


# --- follow-ups ----------------------------------------------------------------------
def test_a_constraint_replaces_the_phrase_it_stands_for(scorer: SentenceScorer) -> None:
    sim = scorer.phrase_similarities
    assert condense_offline("and for part-time staff?", FULL_TIME, sim).query == \
        "How many days of annual leave do part-time staff get?"
    assert condense_offline("what about the UK?", "What is the full-day per diem within the Netherlands?",
                            sim).query == "What is the full-day per diem within the UK?"
    rule = condense_offline("and for part-time staff?", FULL_TIME, sim)
    assert (rule.by, rule.rule) == ("rule", "substitution")


def test_a_new_colour_or_signal_replaces_the_one_asked_about() -> None:
    """No model needed: "blinking red" stands for "steady amber", not for "LED" (the closest phrase by meaning)."""
    assert condense_offline("and blinking red?", "What does a steady amber status LED on the appliance mean?").query \
        == "What does a blinking red status LED on the appliance mean?"
    assert condense_offline("and the green one?", "What does the red button do?").query == \
        "What does the green button do?"


def test_without_a_close_phrase_the_new_attribute_is_asked_about_the_old_topic(scorer: SentenceScorer) -> None:
    out = condense_offline("and the hotline number?", "How quickly must a security incident be reported?",
                           scorer.phrase_similarities)
    assert out.rule == "connective" and out.query.startswith("the hotline number (")
    assert "security incident" in out.query
    # no model: the same, never a substitution
    assert condense_offline("and for part-time staff?", FULL_TIME, None).rule == "connective"


def test_a_connective_follow_up_that_asks_its_own_question_is_read_on_its_own(scorer: SentenceScorer) -> None:
    out = condense_offline("and who approves it?", "How do I request annual leave?", scorer.phrase_similarities)
    assert out.query == "Who approves it (request annual leave)?" and out.rule == "elliptical"
    own = condense_offline("and what is the VPN client called?", FULL_TIME, scorer.phrase_similarities)
    assert own.query == "What is the VPN client called?" and own.rule == "connective"


def test_a_long_or_personal_rest_is_no_constraint(scorer: SentenceScorer) -> None:
    assert substitute("Between which hours is lone working allowed?", "the max weight I can lift alone",
                      scorer.phrase_similarities) is None


@pytest.mark.parametrize("head,phrase,expected", [
    ("when an ", "managers", "when "),  # plural: the article goes, never "an managers"
    ("when an ", "manager", "when a "),
    ("is a ", "auditor", "is an "),
    ("A ", "intern", "An "),
    ("is a ", "glass", "is a "),  # "-ss" is no plural
    ("is a ", "VPS", "is a "),  # an acronym is no plural
    ("for the ", "managers", "for the "),  # only "a"/"an" agree in number
])
def test_the_article_before_a_replaced_phrase_agrees_with_it(head: str, phrase: str, expected: str) -> None:
    assert _agree_article(head, phrase) == expected


def test_a_substituted_plural_loses_the_singular_article(scorer: SentenceScorer) -> None:
    assert substitute("What is the notice period when an employee resigns?", "for managers",
                      scorer.phrase_similarities) == "What is the notice period when managers resigns?"


@pytest.mark.parametrize("question,bare", [
    ("who do I tell?", True),  # one content word ("tell"): names no subject
    ("what's the deadline?", True),
    ("Where is the Lisbon office?", False),  # two: a subject of its own
    ("When do salary increases take effect?", False),
    ("deadline?", False),  # not a question form: a constraint, not an ellipsis
])
def test_a_question_naming_no_subject_is_bare(question: str, bare: bool) -> None:
    assert MAX_BARE_CONTENT_WORDS == 1
    assert is_bare(question) is bare


def test_a_bare_question_gets_the_previous_topic_and_a_topic_switch_does_not() -> None:
    previous = "How do I report a lost badge?"
    assert condense_offline("who do I tell?", previous).query == "who do I tell (report lost badge)?"
    assert condense_offline("Which VPN gateway is used in Lisbon?", previous).rule is None


def test_a_new_attribute_drops_the_one_it_replaces_from_the_topic(scorer: SentenceScorer) -> None:
    """Keeping "operating temperature range" would fetch the first answer's sentence again."""
    sim = scorer.phrase_similarities
    previous = "What is the operating temperature range of the appliance?"
    out = condense_offline("and the max altitude?", previous, sim)
    assert out.rule == "connective" and "appliance" in out.query and "temperature" not in out.query
    # nothing close enough (a constant cosine just under the bar): the topic is kept whole
    assert without_attribute(previous, "max altitude", lambda p, ts: [ATTRIBUTE_MIN - 0.01] * len(ts)) == previous
    # never every content word: with its only one taken away the topic is kept whole
    assert without_attribute("Which shift?", "minimum team size", lambda p, ts: [0.9] * len(ts)) == "Which shift?"


def test_spans_are_runs_of_content_words() -> None:
    texts = [t for _, _, t in spans("How often is a Tier 1 vendor re-reviewed?")]
    assert "Tier 1 vendor" in texts and "How" not in texts and "is a" not in texts


def test_the_shipped_follow_up_set_loads_and_a_bad_one_names_its_line(tmp_path: Any) -> None:
    rows = load_followups(REPO / "data" / "golden" / "followups.jsonl")
    answerable = [r for r in rows if r.expected_mode != "fallback"]
    assert len(answerable) >= 40 and all(r.must_contain for r in answerable)
    assert len(rows) - len(answerable) >= 20  # off-topic follow-ups: nothing to contain, fallback expected
    bad = tmp_path / "f.jsonl"
    bad.write_text('{"id": "a", "first": "q", "follow_up": "and?", "must_contain": []}\n'
                   '{"id": "b", "first": "q", "follow_up": "and?", "expected_mode": "fallback", "must_contain": ["x"]}\n')
    with pytest.raises(EvaluationError, match=r"(?s)f\.jsonl:1:.*must_contain.*f\.jsonl:2:.*must_contain"):
        load_followups(bad)


def test_off_topic_follow_ups_are_counted_apart_from_must_contain() -> None:
    def result(expected: str, mode: str, passed: bool) -> FollowUpResult:
        return FollowUpResult("x", "and?", "q", None, mode, expected, mode == expected, passed, ())

    s = followup_summary([result("rag", "rag", True), result("rag", "fallback", False),
                          result("fallback", "fallback", True), result("fallback", "hybrid", True)])
    assert s["must_contain_pass_rate"] == 0.5 and s["fallback_rate"] == 0.5
    assert (s["answerable"], s["unanswerable"], s["mode_accuracy"]) == (2, 2, 0.5)
    assert followup_summary([result("rag", "rag", True)])["fallback_rate"] is None


# --- answer composition ----------------------------------------------------------------
POOL_CARS = """Pool cars

This policy explains how field engineers use company vehicles.
Book a pool car in FieldLink at least one working day before the visit.
Pool cars are parked in the garage under the Amsterdam office.
These rules keep drivers safe.
"""
KIT = """Site kit

The site kit contains:
- a power supply
- two SFP+ modules
- a console cable

Return the kit to the warehouse after the visit.
"""


def answerer(embedder: Any, **kw: Any) -> ExtractiveChatModel:
    return ExtractiveChatModel(embedder, answerability=AnswerabilitySettings(min_sentence_relevance=0.2), **kw)


def ask(model: ExtractiveChatModel, question: str, *texts: str, mode: str = "rag") -> tuple[str, Any]:
    chunks = tuple(Chunk(f"c{i}", f"d{i}", t, f"d{i}.md", 0) for i, t in enumerate(texts))
    return model.generate_explained(ChatRequest(mode, "", question, chunks, (0.6,) * len(chunks)))  # type: ignore[arg-type]


def test_the_answer_leads_with_the_answering_sentence_and_drops_framing(embedder: Any) -> None:
    text, why = ask(answerer(embedder), "How do I book a pool car?", POOL_CARS)
    assert text.startswith("Book a pool car in FieldLink at least one working day before the visit. [1]")
    assert "This policy explains" not in text and "These rules keep" not in text
    assert why["sentences"][0]["answerability"] > 0 and why["sentences"][0]["contributions"]


def test_list_items_stay_a_list_in_document_order(embedder: Any) -> None:
    text, _ = ask(answerer(embedder), "What does the site kit contain?", KIT)
    items = [ln.split(" [")[0] for ln in text.splitlines() if ln.startswith("- ")]
    assert items[-2:] == ["- two SFP+ modules", "- a console cable"]
    assert text.index("power supply") < text.index("SFP+") < text.index("console cable")


def test_the_answer_respects_its_length_limit_but_keeps_its_lead(embedder: Any) -> None:
    full, _ = ask(answerer(embedder), "What does the site kit contain?", KIT)
    text, _ = ask(answerer(embedder, max_answer_chars=80), "What does the site kit contain?", KIT)
    assert "console cable" in full and "console cable" not in text and len(text) <= 80
    assert text.startswith("The site kit contains: [1]")
    lead_only, _ = ask(answerer(embedder, max_answer_chars=80), "What does the site kit contain?",
                       "The site kit contains a power supply, two SFP+ modules, a console cable, a rack rail set "
                       "and a printed checklist for the visit.")
    assert len(lead_only) > 80  # the lead is never cut


def test_no_sentence_sharing_a_word_with_the_question_is_ever_quoted(embedder: Any) -> None:
    text, why = ask(answerer(embedder), "What is the dress code for the boat party?", POOL_CARS, mode="hybrid")
    assert text == "" and why["quotable"] == 0  # blank: the chat service falls back


MESSENGER = """Satellite messenger

Each field engineer carries a satellite messenger with an SOS button for sites without mobile coverage. Test it at the start of each week. Pool cars are parked in the garage under the office.
"""


def test_an_instruction_about_the_lead_s_subject_continues_it(embedder: Any) -> None:
    """'Test it ...' means nothing without the sentence before it, and answers "how often should I test it?"."""
    text, _ = ask(answerer(embedder), "how often should I test it (field engineer carry sites without mobile coverage)?",
                  MESSENGER)
    assert text.startswith("Each field engineer carries a satellite messenger")
    assert "Test it at the start of each week. [1]" in text and "Pool cars" not in text


def test_a_connective_follow_up_keeps_its_constraint_and_the_answer_must_meet_it(scorer: SentenceScorer) -> None:
    """Issue 42, point 4: the new constraint travels with the rewrite, and ``constraint_met`` reads
    a sentence with the rewrite's own phrase cosines; a number is never a paraphrase."""
    from backend.core.services.conversation import SUBSTITUTE_MIN, constraint_met

    sim = scorer.phrase_similarities
    assert condense_offline("and for part-time staff?", FULL_TIME, sim).constraint == "part-time staff"
    assert condense_offline("what about tier 3 vendors?", "How often is a Tier 1 vendor re-reviewed?",
                            sim).constraint == "tier 3 vendors"
    assert condense_offline("Who approves it?", "How do I request annual leave?", sim).constraint is None
    assert constraint_met("part-time staff", "Part-time staff accrue leave pro rata.", sim) == 1.0
    assert constraint_met("tier 3 vendors", "Tier 1 vendors are re-reviewed every year.", sim) == 0.0
    assert constraint_met("interns", "Every full-time employee receives 25 days of paid annual leave.", sim) \
        < SUBSTITUTE_MIN
    assert constraint_met("staff working part time", "Part-time employees accrue leave pro rata.", sim) \
        >= SUBSTITUTE_MIN
    assert constraint_met("the", "anything", sim) is None and constraint_met("interns", "x y", None) is None
