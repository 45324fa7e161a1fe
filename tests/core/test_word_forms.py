"""Unknown words (issue 29): a contraction, a function word, a typo or an inflection of a word
the knowledge base uses is not a word it never uses; an off-topic word still is (pure, and the
store probe through a fake store)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from backend.core.services.answerability import missing_words, unknown_words
from backend.core.sentence_words import stem as _stem
from backend.core.word_forms import (
    function_word_typo,
    inflections,
    is_contraction,
    typo_in,
    typo_of,
)
from backend.core.types import Chunk

PASSAGE = ("Hearing protection must be worn above 80 dB. Leave requests of more than two weeks are "
           "submitted 4 weeks in advance. Every customer visit is confirmed 24 hours before. When your "
           "manager is not available, call HR.")


def chunk(text: str = PASSAGE) -> Chunk:
    return Chunk("c1", "d1", text, "d1.md", 0)


@pytest.mark.parametrize(("token", "expected"), [
    ("don't", True), ("isnt", True), ("i'm", True), ("what's", True), ("what’s", True), ("can't", True),
    ("im", True), ("they're", True),
    ("google's", False),   # a possessive: Google is a topic
    ("donut", False), ("badge", False),
])
def test_contractions(token: str, expected: bool) -> None:
    assert is_contraction(token) is expected


@pytest.mark.parametrize(("typed", "word", "expected"), [
    ("reqeusts", "requests", True),   # two neighbouring letters swapped
    ("evryone", "everyone", True),    # a letter left out
    ("requestts", "requests", True),  # a letter added
    ("requesys", "requests", True),   # t -> y: keys side by side
    ("boat", "boot", False),          # a and o are far apart: another word, not a slip
    ("boats", "boots", False),
    ("brand", "grand", False),        # the first letter differs
    ("requests", "requests", False),  # the same word is no typo
    ("reqs", "requests", False),
])
def test_one_slip(typed: str, word: str, expected: bool) -> None:
    assert typo_of(typed, word) is expected


@pytest.mark.parametrize(("token", "expected"), [
    ("teh", True), ("wat", True), ("wehn", True), ("wich", True),
    ("hat", False),    # not "what": the first letter is kept by slips
    ("witch", False),  # an added letter makes another word out of a short one
    ("shoe", False), ("brand", False),
])
def test_slips_on_function_words(token: str, expected: bool) -> None:
    assert function_word_typo(token) is expected


def test_typos_need_five_letters_and_a_word_of_the_passages() -> None:
    assert typo_in("reqeusts", {"requests"})
    assert not typo_in("boot", {"boat"})     # short: too often another real word
    assert not typo_in("boots", {"boats"})   # long enough, but not a slip
    assert not typo_in("reqeusts", {"leave"})


def test_irregular_forms_share_a_stem() -> None:
    assert _stem("worn") == _stem("wear") == _stem("wore") == _stem("wearing")
    assert _stem("told") == _stem("tell")
    assert _stem("children") == _stem("child")
    # a table column or policy noun asked with its verb: "Weight: 27 kg" answers "how much does it weigh?"
    assert _stem("weight") == _stem("weigh") == _stem("weighs")
    assert _stem("theft") == _stem("stolen") == _stem("steal")


@pytest.mark.parametrize(("word", "forms"), [
    ("wear", {"wear", "worn", "wore", "wears", "wearing"}),
    ("worn", {"wear", "wearing"}),
    ("changes", {"change", "changed", "changing"}),
    ("policies", {"policy"}),
    ("press", {"presses", "pressed", "pressing"}),
    ("tell", {"told"}),
])
def test_inflections(word: str, forms: set[str]) -> None:
    assert forms <= set(inflections(word))
    assert inflections(word)[0] == word


@pytest.mark.parametrize("question", [
    "what if they don't confirm the visit?",            # a contraction
    "who do i call if my manager isnt available",        # one without its apostrophe
    "and for reqeusts of two weeks",                     # a typo of a word of the passage
    "wehn do i confirm with teh cusotmer",               # typos of function words and of "customer"
    "when do I have to wear hearing protection?",        # the passage says "worn"
    "what about everyone else?",                         # a function word
])
def test_words_the_passages_use_in_another_form_are_not_missing(question: str) -> None:
    assert missing_words(question, [chunk()]) == []


@pytest.mark.parametrize(("question", "missing"), [
    ("which brand of hearing protection?", ["brand"]),
    ("how many boats per customer visit?", ["boats"]),   # not "boots", not in the passage either
    ("what are google's leave requests?", ["google's"]),
    ("is a boat allowed on site?", ["boat"]),
])
def test_off_topic_words_stay_missing(question: str, missing: list[str]) -> None:
    assert missing_words(question, [chunk(PASSAGE + " Safety boots are worn on site.")]) == missing


@dataclass
class FakeStore:
    """Knows the words of ``vocabulary`` exactly (an index that does not stem: Oracle Text ``{word}``)."""

    vocabulary: set[str]
    asked: list[str] = field(default_factory=list)

    def lexical_candidates(self, target: str, text: str, k: int, visibility: object = None) -> "FakeStore":
        self.asked.append(text)
        self.hits = [w for w in text.split() if w in self.vocabulary]
        return self


def test_the_store_is_asked_about_every_form_of_a_word_in_one_probe() -> None:
    store = FakeStore({"worn", "pressed"})
    question = "must I wear gloves when I press the button?"
    assert unknown_words(store, "KB", question, [chunk("Nothing about it.")]) == ("gloves", "button")  # type: ignore[arg-type]
    assert len(store.asked) == 4
    assert "worn" in store.asked[0].split() and "pressed" in store.asked[2].split()
