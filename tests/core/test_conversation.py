"""The offline rule that makes a follow-up standalone, and how an answer is cut for streaming."""

from __future__ import annotations

import pytest

from backend.common.errors import ProviderUnavailable
from backend.core.services.conversation import (
    Condensed,
    condense,
    condense_offline,
    condense_with_llm,
    conversation_key,
    stream_pieces,
    topic_words,
)
from backend.core.types import ChatRequest

PREVIOUS = "How many days of annual leave do employees get?"


# without a model (no phrase to substitute) the constraint is asked about the previous question's topic (rule 1c)
@pytest.mark.parametrize("follow_up,expected", [
    ("and for part-time staff?", "for part-time staff (days annual leave employees)?"),
    ("And what about contractors?", "contractors (days annual leave employees)?"),
    ("what about after 5 years", "after 5 years (days annual leave employees)?"),
    ("How about interns?", "interns (days annual leave employees)?"),
    ("but in Lisbon?", "in Lisbon (days annual leave employees)?"),
])
def test_a_connective_follow_up_continues_the_previous_question(follow_up: str, expected: str) -> None:
    out = condense_offline(follow_up, PREVIOUS)
    assert (out.query, out.by, out.rule) == (expected, "rule", "connective")
    assert out.constraint and out.constraint.lower() in follow_up.lower()  # the answer must meet it (issue 42)


@pytest.mark.parametrize("follow_up,expected", [
    ("Who approves it?", "Who approves it (days annual leave employees)?"),
    ("Can they carry it over?", "Can they carry it over (days annual leave employees)?"),
    ("Is that paid out.", "Is that paid out (days annual leave employees)."),
])
def test_a_short_follow_up_pointing_back_gets_the_previous_topic(follow_up: str, expected: str) -> None:
    assert condense_offline(follow_up, PREVIOUS) == Condensed(expected, "rule", "elliptical")


@pytest.mark.parametrize("question", [
    "What is the visitor policy for the Lisbon office?",  # standalone
    "Which form do I use to request parental leave when the child is adopted from abroad?",  # long, has no back-reference
    "android phones",  # "and" only as part of a word
])
def test_a_standalone_question_is_left_alone(question: str) -> None:
    assert condense_offline(question, PREVIOUS) == Condensed(question, "none")


def test_without_a_previous_question_nothing_is_condensed() -> None:
    assert condense_offline("and for part-time staff?", None) == Condensed("and for part-time staff?", "none")
    assert condense("  and   for part-time staff? ", [], None) == Condensed("and for part-time staff?", "none")


def test_the_rule_chains_on_the_previous_standalone_question() -> None:
    history = [PREVIOUS, "How many days of annual leave do part-time staff get?"]
    assert condense("and in Lisbon?", history, None).query == "in Lisbon (days annual leave part-time staff)?"


def test_topic_words_keep_the_spelling_and_drop_function_words() -> None:
    assert topic_words("What does the VPN policy say about MFA for contractors?") == "VPN policy say MFA contractors"


def test_a_number_naming_the_previous_subject_is_kept() -> None:
    """A second follow-up about "their licence renewal" after "What time does depot 19 open?" lost
    the 19 and asked about every depot (seen in a new user's pass, 2026-12-07)."""
    assert topic_words("What time does depot 19 open on weekdays?") == "time depot 19 open weekdays"
    assert topic_words("How many days of leave do tier 3 staff get after 5 years?") == \
        "days leave tier 3 staff after 5 years"
    assert topic_words("Does depot 28 open before depot 19 or is 5 enough?") == "depot 28 open before depot 19 enough"
    assert condense_offline("what about their licence renewal?", "What time does depot 19 open on weekdays?").query \
        == "their licence renewal (time depot 19 open weekdays)?"


class ScriptedLlm:
    name = "openai_compat"

    def __init__(self, answer: str | Exception) -> None:
        self.answer = answer
        self.requests: list[ChatRequest] = []

    def generate(self, request: ChatRequest) -> str:
        self.requests.append(request)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_a_failing_or_blank_llm_falls_back_to_the_rule() -> None:
    failing = ScriptedLlm(ProviderUnavailable("down"))
    assert condense_with_llm(failing, "and for part-time staff?", [PREVIOUS]).by == "rule"
    assert condense_with_llm(ScriptedLlm("  \n "), "and for part-time staff?", [PREVIOUS]).by == "rule"


def test_the_llm_sees_the_last_questions_only_and_its_first_line_is_taken() -> None:
    llm = ScriptedLlm("Standalone question?\nExplanation the model added.")
    history = [f"question {i}" for i in range(10)]
    assert condense("follow up", history, llm) == Condensed("Standalone question?", "llm")
    prompt = llm.requests[0].question
    assert "User: question 9" in prompt and "User: question 5" not in prompt and "Last question: follow up" in prompt


def test_conversation_keys_are_hashes() -> None:
    assert conversation_key("c-1") == conversation_key("c-1") != conversation_key("c-2")
    assert len(conversation_key("c-1")) == 64 and "c-1" not in conversation_key("c-1")


@pytest.mark.parametrize("text,pieces", [
    ("One [1]. Two [2] Three. [3]", ["One [1]. ", "Two [2] ", "Three. [3]"]),
    ("First sentence [1] Second sentence [2]", ["First sentence [1] ", "Second sentence [2]"]),
    ("No markers. Just text!  Still?", ["No markers. ", "Just text!  ", "Still?"]),
    ("", []),
])
def test_stream_pieces_join_back_into_the_answer(text: str, pieces: list[str]) -> None:
    assert stream_pieces(text) == pieces and "".join(pieces) == text
