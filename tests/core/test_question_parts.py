"""A question that coordinates two questions is read part by part (issue 42: a two-part question
fell back because no single sentence answers both halves)."""

from __future__ import annotations

import pytest

from backend.core.question_parts import question_parts


@pytest.mark.parametrize("question, parts", [
    ("Within how many days are expense claims submitted, and how often is the diesel generator tested?",
     ("Within how many days are expense claims submitted?", "How often is the diesel generator tested?")),
    ("How often is the generator tested and what does a blinking red LED mean?",
     ("How often is the generator tested?", "What does a blinking red LED mean?")),
    ("How long are daily backups kept and how often are restores tested?",
     ("How long are daily backups kept?", "How often are restores tested?")),
    ("What is the policy number, and also whom do I call in an emergency?",
     ("What is the policy number?", "Whom do I call in an emergency?")),
])
def test_two_questions_are_split_at_the_second_question_word(question: str, parts: tuple[str, ...]) -> None:
    assert question_parts(question) == parts


@pytest.mark.parametrize("question", [
    "How many days of leave do full-time and part-time staff get?",  # a coordination of nouns
    "Can I bring pens and paper?",
    "What is the per diem for Oslo and how?",  # a stub is no question of its own
    "How many days of annual leave do employees get?",
])
def test_one_question_stays_whole(question: str) -> None:
    assert question_parts(question) == (question,)
