"""The training pairs of the answer reader: each perturbation kind at its boundary, the SQuAD pairs
on a real tagged article, the stranger triples' reader (issue 42)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from backend.training import answer_pairs as ap

SENTENCE = "The Harvard Crimson competes in 42 intercollegiate sports in the NCAA Division I Ivy League."
MATERIAL = ap.ArticleMaterial(entities={"org": ("Yale Bulldogs", "Harvard Crimson"), "number": ("42", "17")},
                              nouns=("stadium", "sports", "league", "rowing"), capitalised=("Yale", "Princeton", "Harvard"))


def test_entity_swap_puts_in_another_name_of_the_same_kind_the_sentence_lacks() -> None:
    q = "How many sports does the Harvard Crimson compete in?"
    out = ap.entity_swap(q, SENTENCE, [("the Harvard Crimson", "ORG")], MATERIAL, random.Random(0))
    assert out is not None and out != q
    assert "Yale Bulldogs" in out and "Harvard Crimson" not in out


def test_entity_swap_changes_a_number_the_sentence_holds() -> None:
    q = "Which league has 42 sports?"
    out = ap.entity_swap(q, SENTENCE, [], MATERIAL, random.Random(1))
    assert out is not None and "42" not in out and ap._NUMBER.search(out)


def test_entity_swap_needs_something_the_sentence_holds() -> None:
    assert ap.entity_swap("Who founded Princeton?", SENTENCE, [("Princeton", "ORG")], MATERIAL, random.Random(0)) is None


def test_name_part_swaps_one_word_of_a_multi_word_name() -> None:
    q = "Which league does the Harvard Crimson play in?"
    out = ap.name_part(q, SENTENCE, MATERIAL, random.Random(3))
    assert out is not None and "Crimson" in out and "Harvard Crimson" not in out


def test_negation_negates_the_main_verb_or_the_copula() -> None:
    tokens = [("When", "SCONJ", "advmod", 0), ("did", "AUX", "aux", 5), ("Beyonce", "PROPN", "nsubj", 9),
              ("start", "VERB", "ROOT", 17), ("singing", "VERB", "xcomp", 23), ("?", "PUNCT", "punct", 30)]
    assert ap.negation("When did Beyonce start singing?", tokens) == "When did Beyonce not start singing?"
    copula = [("What", "PRON", "attr", 0), ("is", "AUX", "ROOT", 5), ("the", "DET", "det", 8), ("capital", "NOUN", "nsubj", 12)]
    assert ap.negation("What is the capital?", copula) == "What is not the capital?"
    assert ap.negation("Why did it not rain?", [("not", "PART", "neg", 11)]) is None


def test_antonym_replaces_a_word_the_sentence_holds_by_its_opposite() -> None:
    assert ap.antonym("Who was the first president?", "He was the first president of the club.") == \
        "Who was the last president?"
    assert ap.antonym("Who was the first president?", "He was the first and the last president.") is None


def test_relation_changes_the_asked_relation() -> None:
    assert ap.relation("Who founded the company?", "Jobs founded the company in 1976.") == "Who dissolved the company?"


def test_exclusion_asks_for_something_other_than_the_answer() -> None:
    out = ap.exclusion("Where did she grow up?", "Houston", "She grew up in Houston, Texas.", 1)
    assert out == "Other than Houston, where did she grow up?"
    assert ap.exclusion("Which cities?", "Paris and Rome", "Paris and Rome, then Oslo.", 1) is None


def test_noun_swap_replaces_a_shared_noun_with_another_of_the_article() -> None:
    out = ap.noun_swap("How many sports are in the league?", SENTENCE, ["sports", "league"], MATERIAL, random.Random(2))
    assert out is not None and out != "How many sports are in the league?"
    assert "rowing" in out or "stadium" in out


def _squad(tmp: Path) -> list[dict]:
    context = ("Beyonce was born in Houston, Texas in 1981. She grew up singing in a church choir. "
               "In 1997 she joined the group Destiny's Child, which sold 60 million records.")
    other = "Chopin was born in Warsaw in 1810. He wrote 21 nocturnes for the piano."
    qas = [{"id": "1", "question": "Where was Beyonce born?", "is_impossible": False,
            "answers": [{"text": "Houston, Texas", "answer_start": context.index("Houston")}]},
           {"id": "2", "question": "When did Beyonce join Destiny's Child?", "is_impossible": False,
            "answers": [{"text": "1997", "answer_start": context.index("1997")}]},
           {"id": "3", "question": "When did Beyonce leave Destiny's Child?", "is_impossible": True,
            "answers": [], "plausible_answers": [{"text": "1997", "answer_start": context.index("1997")}]}]
    return [{"title": "Beyonce", "paragraphs": [{"context": context, "qas": qas}]},
            {"title": "Frederic_Chopin", "paragraphs": [{"context": other, "qas": [
                {"id": "4", "question": "How many nocturnes did Chopin write?", "is_impossible": False,
                 "answers": [{"text": "21", "answer_start": other.index("21")}]}]}]}]


def test_squad_pairs_label_answers_one_and_everything_else_zero(tmp_path: Path) -> None:
    pairs = ap.squad_pairs(_squad(tmp_path), random.Random(5), perturbations_per_question=2.0, off_topic_rate=1.0,
                           restated_rate=1.0)
    positives = [p for p in pairs if p.label == 1]
    assert {p.kind for p in positives} == {"positive"}
    assert {p.sentence for p in positives} >= {"Beyonce was born in Houston, Texas in 1981."}
    kinds = {p.kind for p in pairs}
    assert {"adversarial", "off_topic", "restated", "same_para"} <= kinds
    assert kinds & set(ap.PERTURBATIONS), kinds
    for p in pairs:
        if p.kind in ap.PERTURBATIONS:
            assert p.label == 0 and p.question not in {q["question"] for a in _squad(tmp_path)
                                                       for para in a["paragraphs"] for q in para["qas"]}
    assert all(p.group in ("Beyonce", "Frederic Chopin") for p in pairs)
    assert all(p.text_pair.startswith(f"{p.heading} | ") for p in pairs if p.heading)


def test_stranger_triples_are_read_and_bad_lines_named(tmp_path: Path) -> None:
    rows = [{"id": "a", "corpus": "c", "doc": "d.md", "passage": "Gifts over 50 USD need approval. Meals are fine.",
             "question": "do big presents need sign-off", "label": 1, "kind": "paraphrase",
             "answer_sentence": "Gifts over 50 USD need approval."},
            {"id": "b", "corpus": "c", "doc": "d.md", "passage": "Gifts over 50 USD need approval. Meals are fine.",
             "question": "do gifts over 500 USD need the CEO", "label": 0, "kind": "lookalike",
             "answer_sentence": "Gifts over 50 USD need approval."},
            {"id": "c", "corpus": "c", "doc": "d.md", "passage": "Gifts over 50 USD need approval. Meals are fine.",
             "question": "how do I declare gifts on my tax return", "label": 0, "kind": "offtopic_near",
             "answer_sentence": "Gifts over 50 USD need approval."}]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pairs = ap.stranger_pairs(ap.read_triples(path), random.Random(0))
    assert [(p.kind, p.label) for p in pairs] == [("stranger_positive", 1), ("stranger_other", 0),
                                                  ("stranger_lookalike", 0), ("stranger_other", 0),
                                                  ("stranger_offtopic_near", 0), ("stranger_other", 0)]
    assert pairs[3].text_pair == "Meals are fine."  # the look-alike's other sentence: not the one it was made from
    assert pairs[4].text_pair == "Gifts over 50 USD need approval."  # a near off-topic one: the sentence sharing its words
    path.write_text(json.dumps({**rows[0], "label": 2}) + "\n")
    with pytest.raises(ValueError, match=r"t\.jsonl:1: label must be 0 or 1"):
        ap.read_triples(path)


def test_a_folder_of_triples_is_read_file_by_file_in_name_order(tmp_path: Path) -> None:
    row = {"id": "a", "corpus": "c", "doc": "d.md", "passage": "Meals are fine.", "question": "are dinners ok",
           "label": 1, "kind": "paraphrase", "answer_sentence": "Meals are fine."}
    (tmp_path / "triples-b.jsonl").write_text(json.dumps({**row, "id": "b"}) + "\n")
    (tmp_path / "triples.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "notes.jsonl").write_text("not a triple\n")  # only triples*.jsonl are read
    assert [r["id"] for r in ap.read_triples_from(tmp_path)] == ["b", "a"]
    assert [r["id"] for r in ap.read_triples_from(tmp_path / "triples.jsonl")] == ["a"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no triples"):
        ap.read_triples_from(tmp_path / "empty")
