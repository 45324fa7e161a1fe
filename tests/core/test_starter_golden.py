"""Issue 32: a knowledge base without golden questions gets a starter set from its own
documents: questions whose answers are its sentences, off-topic questions that must fall back,
every row marked generated; deterministic; updated when documents are added or removed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backend.common.config import Settings
from backend.common.errors import EvaluationError
from backend.core.golden import GoldenQuery, load_golden_set, parse_golden_line
from backend.core.sentence_questions import answer_term, ask, parse_sentences, question_for
from backend.core.services.starter_golden import (DocText, content_words, extend_rows, is_generated, read_documents,
                                                  render, starter_queries, write_starter)
from backend.ingest.pipeline import IngestPipeline
from tests.conftest import REPO
from tests.ingest.helpers import write_manifest

DOCS = [
    DocText("leave.md", ("Annual leave. Full-time employees receive 27 days of annual leave per calendar year. "
                         "Unused days may be carried over until the end of March with approval from payroll.",)),
    DocText("garden.md", ("The rooftop garden is tended by volunteers from the sustainability circle. "
                          "Tomatoes and basil are harvested in late July and given away at the reception desk.",)),
]
OFFTOPIC = [parse_golden_line(json.dumps(q)) for q in (
    {"id": "ot1", "query": "What is the capital of Peru?", "expected_mode": "fallback"},
    {"id": "ot2", "query": "Which basil variety smells best?", "expected_mode": "fallback"},  # overlaps the KB
    {"id": "ot3", "query": "Write me a poem about cats", "expected_mode": "fallback"},
)]


def _ask(sentence: str, rare: dict[str, int] | None = None) -> tuple[str, str] | None:
    """``ask`` with every word in five documents but the ``rare`` ones."""
    return ask(parse_sentences([sentence])[0], {**{w: 5 for w in content_words(sentence)}, **(rare or {})})


def test_answer_term_prefers_numbers_then_rare_nouns_of_noun_chunks() -> None:
    df = {"employees": 2, "receive": 1, "annual": 1, "leave": 2, "calendar": 1, "year": 2, "27": 1}
    [full, garden, short, lost] = parse_sentences([
        "Full-time employees receive 27 days of annual leave per calendar year.",
        "The rooftop garden is tended by volunteers.", "It is so.",
        "A lost badge is reported to the security desk within one hour, which blocks it at once."])
    assert answer_term(full, df) == "27"
    assert answer_term(garden, {"rooftop": 2, "volunteers": 1, "garden": 1, "tended": 1}) == "volunteers"
    assert answer_term(short, {}) is None
    # never a verb (``reported`` is the rarest word), an adjective or a determiner
    assert answer_term(lost, {"reported": 1, "lost": 1, "badge": 3, "security": 2, "desk": 3, "hour": 3}) == "security"


def test_question_asks_the_sentence_back() -> None:
    [leave, garden, cellar] = parse_sentences(["Employees receive 27 days of leave.",
                                               "The garden is tended by volunteers.", "The cellar opens at 06:30 daily."])
    assert question_for(leave, 2) == "How many days of leave do employees receive?"
    assert question_for(garden, 5) == "By whom is the garden tended?"
    assert question_for(cellar, 4) == "The cellar opens at what time daily?"  # parsed as one phrase "06:30 daily": kept in place
    assert question_for(garden, 3) is None  # a verb (tended) makes no question


def test_questions_a_person_would_ask() -> None:
    """The noun chunk holding the term is asked for as a whole: ``what``/``who``, or ``which <head>``
    when the term only modifies the head; numbers keep ``how many``/``what time``; a leading
    ``However,`` goes (sentences that gave "The what lab ..." and "Every what wears ...")."""
    cases = {
        "The plant lab on the fourth floor holds the seed vault and the climate chambers.":
            ({"plant": 1}, "Which lab on the fourth floor holds the seed vault and the climate chambers?", "plant"),
        "Every employee wears the access badge visibly inside the building.":
            ({"access": 1}, "Which badge does every employee wear visibly inside the building?", "access"),
        "Electric bicycles count as bicycles for this allowance.":
            ({"allowance": 1}, "Electric bicycles count as bicycles for what?", "allowance"),
        "A lost badge is reported to the security desk within one hour, which blocks it at once.":
            ({"security": 1}, "To which desk is a lost badge reported within one hour, which blocks it at once?",
             "security"),
        "Visitors sign in at the reception desk and are escorted by their host at all times.":
            ({"reception": 1}, "Visitors sign in at which desk and are escorted by their host at all times?",
             "reception"),
        "Flights need approval from the department director before booking.":
            ({"department": 1}, "Flights need approval from which director before booking?", "department"),
        "Train travel is preferred for journeys shorter than six hours.":
            ({}, "Train travel is preferred for journeys shorter than how many hours?", "six"),
        "Hotel costs are reimbursed up to 150 euros per night in European capitals.":
            ({}, "Up to how many euros per night are hotel costs reimbursed in European capitals?", "150"),
        "A desk costs €250 at most in the Lisbon office.": ({}, "How many euros does a desk cost at most in the Lisbon office?",
                                                           "250"),
        "However, the rooftop garden is tended by volunteers.":
            ({"volunteers": 1}, "By whom is the rooftop garden tended?", "volunteers"),
        "Maria Lopez manages the seed vault of the campus.": ({"maria": 1}, "Who manages the seed vault of the campus?",
                                                               "Maria"),
        "The policy took effect in 2021 for all sites.": ({}, "In which year did the policy take effect for all sites?",
                                                          "2021"),
    }
    for sentence, (df, question, term) in cases.items():
        assert _ask(sentence, df) == (question, term), sentence


def test_the_asked_phrase_goes_first_with_the_auxiliary_or_do_as_a_person_asks_it() -> None:
    """Issue 48: not the sentence with a gap ("Employees receive how many days?") but a question: the
    phrase asked for first, then the auxiliary (inverted), a form of ``do`` with the verb's base form,
    or the copula; where moving it would read wrong (a coordinated verb, a phrase deep inside another
    phrase, a negation) the question stays as asked in place."""
    cases = {
        "Visitors must sign in at the reception desk.": ({"reception": 1}, "At which desk must visitors sign in?"),
        "Expense claims are submitted within 30 days of the trip.":
            ({}, "Within how many days of the trip are expense claims submitted?"),
        "The office opens at 8:30 on weekdays.": ({}, "At what time does the office open on weekdays?"),
        "The daily meal allowance in Oslo is NOK 1,400.": ({}, "How many kroner is the daily meal allowance in Oslo?"),
        "Maria Lopez took the training in 2024 at the Bergen office.":
            ({}, "In which year did Maria Lopez take the training at the Bergen office?"),  # a name keeps its capital
        # stays in place: coordinated verbs, a phrase inside another phrase, a negation
        "Visitors sign in at the reception desk and are escorted by their host at all times.":
            ({"reception": 1}, "Visitors sign in at which desk and are escorted by their host at all times?"),
        "Train travel is preferred for journeys shorter than six hours.":
            ({}, "Train travel is preferred for journeys shorter than how many hours?"),
    }
    for sentence, (df, question) in cases.items():
        made = _ask(sentence, df)
        assert made is not None and made[0] == question, (sentence, made)
    made = _ask("Interns do not receive 25 days of leave.", {})
    assert made is None or "do interns" not in made[0].lower()


def test_a_plural_subject_is_not_asked_with_a_singular_wh_word_and_nonsense_is_skipped() -> None:
    # "Who sign in ..." would disagree: another term is asked for instead
    made = _ask("Visitors sign in at the reception desk.", {"visitors": 1, "reception": 5, "desk": 5})
    assert made is not None and not made[0].startswith("Who")
    assert _ask("It is what it is, and so it goes on.", {}) is None  # nothing worth asking
    assert _ask("They are shredded on site by the mobile shredding service.", {"shredding": 1}) is None  # who?
    assert _ask("Read the site file in FieldLink before every visit to a customer.", {"fieldlink": 1}) is None
    assert _ask("For shorter trips use public transport or a company e-bike.", {"bike": 1, "trips": 1}) is None


def test_a_missing_parser_model_is_a_clear_error() -> None:
    with pytest.raises(EvaluationError, match="sanitize.spacy_model: spaCy model package 'no_such_model_x'"):
        parse_sentences(["Employees receive 27 days of leave."], "no_such_model_x")


def test_table_rows_and_labels_make_no_question() -> None:
    doc = DocText("ref.md", ("Variant: NWA-C400; Height: 2U; Weight: 27 kg; Power draw: 650 W; Disks: 8 x 7.68 TB SSD. "
                             "Section FE-04 · Owner: Field Engineering · Last reviewed: 2026-01-30.",))
    assert starter_queries([doc], []) == []


def test_starter_rows_ask_each_document_and_add_offtopic_questions_that_share_no_word() -> None:
    rows = starter_queries(DOCS, OFFTOPIC)
    questions = [r for r in rows if r["expected_mode"] == "rag"]
    assert {r["expected_sources"][0] for r in questions} == {"leave.md", "garden.md"}
    assert all(r["id"].startswith("gen-") and r["generated"] is True for r in rows)
    for r in questions:  # the answer term is asked for, not given away
        assert r["must_contain"][0].lower() not in r["query"].lower()
    fallbacks = [r["query"] for r in rows if r["expected_mode"] == "fallback"]
    assert fallbacks == ["What is the capital of Peru?", "Write me a poem about cats"]
    # every row is a valid golden query, and the same chunks give the same rows
    assert all(GoldenQuery.model_validate(r).generated for r in rows)
    assert starter_queries(DOCS, OFFTOPIC) == rows


def test_the_cap_covers_as_many_documents_as_it_can() -> None:
    docs = [DocText(f"d{i}.md", (f"Topic{i} alpha{i} beta{i} gamma{i} delta{i} sentence number one is here. "
                                 f"Another topic{i} sentence mentions epsilon{i} zeta{i} eta{i} and theta{i} too.",))
            for i in range(30)]
    rows = starter_queries(docs, [], max_questions=24)
    assert len(rows) == 24
    assert len({r["expected_sources"][0] for r in rows}) == 24  # one each first, before any second question


def test_extend_rows_asks_about_new_documents_and_drops_removed_ones() -> None:
    rows = starter_queries(DOCS, OFFTOPIC)
    new = DocText("parking.md", ("Visitors park in the underground garage on level minus two for free. "
                                 "The garage barrier is opened by the security guard named Petrovic.",))
    grown = extend_rows(rows, [*DOCS, new], OFFTOPIC)
    assert grown[:len(rows) - 2] == rows[:len(rows) - 2]  # the old questions stay as they were
    assert any(r["expected_sources"] == ["parking.md"] for r in grown)
    shrunk = extend_rows(grown, [DOCS[1], new], OFFTOPIC)
    assert not any(r.get("expected_sources") == ["leave.md"] for r in shrunk)
    assert [r for r in shrunk if r["expected_mode"] == "fallback"] == [r for r in rows if r["expected_mode"] == "fallback"]
    assert extend_rows(rows, DOCS, OFFTOPIC) == rows


def test_extend_rows_asks_again_about_a_changed_document() -> None:
    rows = starter_queries(DOCS, OFFTOPIC)
    asked = [r for r in rows if r["expected_sources"] == [DOCS[0].doc_id]]
    assert asked
    term = asked[0]["must_contain"][0]
    changed = DocText(DOCS[0].doc_id, tuple(t.replace(term, "zzq") for t in DOCS[0].texts), DOCS[0].topic)
    updated = extend_rows(rows, [changed, *DOCS[1:]], OFFTOPIC)
    assert asked[0] not in updated  # the old text's question is gone
    assert any(r["expected_sources"] == [changed.doc_id] and term not in r["must_contain"] for r in updated)


def test_extend_rows_asks_about_the_new_sentences_of_a_changed_document() -> None:
    rows = starter_queries(DOCS, OFFTOPIC)
    added = "Since March, the greenhouse heater turns on automatically below 7 degrees Celsius."
    changed = DocText(DOCS[0].doc_id, (*DOCS[0].texts, added), DOCS[0].topic)
    updated = extend_rows(rows, [changed, *DOCS[1:]], OFFTOPIC, previous={d.doc_id: d for d in DOCS})
    new_rows = [r for r in updated if r not in rows]
    assert new_rows and all(r["expected_sources"] == [changed.doc_id] and r["generated"] for r in new_rows)
    assert any(r["must_contain"][0] in added for r in new_rows)
    assert updated[-2:] == [r for r in rows if r["expected_mode"] == "fallback"][-2:]  # off-topic rows stay last
    again = extend_rows(updated, [changed, *DOCS[1:]], OFFTOPIC, previous={d.doc_id: d for d in DOCS})
    assert again == updated  # the same change asked about once
    assert extend_rows(rows, DOCS, OFFTOPIC, previous={d.doc_id: d for d in DOCS}) == rows


def test_generated_file_is_marked_and_loads(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text(render(starter_queries(DOCS, OFFTOPIC), version="KB_X_V1"), encoding="utf-8")
    assert path.read_text().startswith("# Starter golden set GENERATED")
    assert is_generated(path) and is_generated(load_golden_set(path))
    assert not is_generated(REPO / "data" / "golden" / "sample_golden.jsonl")


def test_written_from_a_real_version_through_the_store_port(settings: Settings, sqlite_store: Any, embedder: Any,
                                                            tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for doc in DOCS:
        (folder / doc.doc_id).write_text(doc.texts[0], encoding="utf-8")
    manifest = write_manifest(tmp_path / "m.jsonl", [{"dir": "docs"}])
    version = IngestPipeline.from_settings(settings, sqlite_store, embedder).run(manifest).version
    assert version is not None
    docs = read_documents(sqlite_store, version)
    assert [d.doc_id for d in docs] == ["docs/garden.md", "docs/leave.md"]
    path, action = write_starter(settings, sqlite_store, version, "perks")
    assert action == "written" and path == Path(settings.knowledge_bases.dir) / "perks" / "golden.generated.jsonl"
    first = path.read_text()
    assert write_starter(settings, sqlite_store, version, "perks")[1] == "kept"
    assert path.read_text() == first
    golden = load_golden_set(path)
    assert {s for q in golden.queries for s in q.expected_sources} == {"docs/garden.md", "docs/leave.md"}


def test_documents_the_live_version_already_held_are_not_new_when_the_cap_left_them_unasked() -> None:
    """A 1 % sync of a large knowledge base: the set was capped when written, so most documents have
    no row; only the documents the live version lacks (and the changed ones) are asked about, and
    only they are parsed (a 10,000-document sync's gate asked 5,860 questions before)."""
    docs = [DocText(f"d{i}.md", (f"Topic{i} alpha{i} beta{i} gamma{i} delta{i} sentence number one is here. "
                                 f"Another topic{i} sentence mentions epsilon{i} zeta{i} eta{i} and theta{i} too.",))
            for i in range(12)]
    rows = starter_queries(docs, OFFTOPIC, max_questions=4)
    assert len({r["expected_sources"][0] for r in rows if r["expected_mode"] == "rag"}) == 4
    live = {d.doc_id: d for d in docs}
    new = DocText("parking.md", ("Visitors park in the underground garage on level minus two for free. "
                                 "The garage barrier is opened by the security guard named Petrovic.",))
    edited = DocText("d9.md", (docs[9].texts[0] + " Since March the rotor9 heater starts below 7 degrees.",))
    now = [*docs[:9], edited, *docs[10:], new]
    updated = extend_rows(rows, now, OFFTOPIC, previous=live, max_questions=4)
    asked = {r["expected_sources"][0] for r in updated if r["expected_mode"] == "rag"}
    assert asked == {r["expected_sources"][0] for r in rows if r["expected_mode"] == "rag"} | {"parking.md", "d9.md"}
    assert extend_rows(rows, docs, OFFTOPIC, previous=live, max_questions=4) == rows  # nothing changed, nothing asked
    # without the live version's documents, every document no row asks about is new (the first version)
    assert len({r["expected_sources"][0] for r in extend_rows(rows, docs, OFFTOPIC, max_questions=4)
                if r["expected_mode"] == "rag"}) == 12


def test_a_capped_set_parses_only_the_documents_it_asks_about(monkeypatch: pytest.MonkeyPatch) -> None:
    import backend.core.services.starter_golden as sg

    parsed: list[str] = []
    real = sg.parse_sentences
    monkeypatch.setattr(sg, "parse_sentences", lambda texts, model=sg.SPACY_MODEL: parsed.extend(texts) or real(texts, model))
    docs = [DocText(f"d{i}.md", (f"Topic{i} alpha{i} beta{i} gamma{i} delta{i} sentence number one is here.",))
            for i in range(40)]
    rows = starter_queries(docs, [], max_questions=5)
    assert len(rows) == 5
    assert 5 <= len(parsed) <= 6  # the documents up to the fifth question, not all 40
