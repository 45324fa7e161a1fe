"""Sentence segmentation, scoring and evidence (``backend.core.services.evidence``) and the
extractive answer built on them, with the real local model where vectors matter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.core.services.evidence import (
    SentenceScorer,
    attach_evidence,
    carries_answer_type,
    content_words,
    question_type,
    segment,
)
from backend.core.services.retrieval_service import Candidate
from backend.core.types import ChatRequest, Chunk
from backend.providers.local.extractive import ExtractiveChatModel
from tests.conftest import REPO, make_settings

# annual-leave::3 as the Markdown loader stores it (README's example question answers from annual-leave)
LEAVE_TAIL = (
    "Illness during leave\n\nIf you fall ill during annual leave and report it on the first day of illness, the sick "
    "days are credited back to your balance.\n\nBuying extra leave\n\nEmployees may buy up to 5 additional days per "
    "year through the flexible benefits window, which is open each year from 1 to 30 November."
)
LEAVE_HEAD = (
    "Annual Leave Policy\n\nPolicy owner: People Team · Policy number: HR-101 · Last reviewed: 2026-01-15\n\n"
    "Entitlement\n\nEvery full-time employee receives 25 days of paid annual leave per calendar year, in addition to "
    "the company holidays.\n\nPart-time employees receive leave pro rata to their contracted hours."
)
README_QUESTION = "How many days of annual leave do employees get?"


# --- segmentation --------------------------------------------------------------------
def test_headings_become_context_never_sentence_text() -> None:
    pairs = segment(LEAVE_TAIL)
    assert pairs[-1] == ("Buying extra leave", "Employees may buy up to 5 additional days per year through the flexible "
                         "benefits window, which is open each year from 1 to 30 November.")
    assert all(not s.startswith(("Buying extra leave", "Illness during leave")) for _, s in pairs)


def test_list_markers_are_dropped_and_items_stay_apart() -> None:
    text = "Standard PPE kit\n- Safety shoes with steel toe caps (class S3).\n- Safety helmet (EN 397), white.\n"
    assert segment(text) == [("Standard PPE kit", "Safety shoes with steel toe caps (class S3)."),
                             ("Standard PPE kit", "Safety helmet (EN 397), white.")]


def test_table_rows_are_units_named_by_their_header_cells() -> None:
    text = ("Access levels\n\nLevel | Areas | Who\n\nA1 | Entrance, kitchens | All employees\n\n"
            "A3 | Server room, floor 0 | IT infrastructure team only\n\nAccess levels are reviewed every 6 months.")
    assert segment(text) == [
        ("Access levels", "Level: A1; Areas: Entrance, kitchens; Who: All employees."),
        ("Access levels", "Level: A3; Areas: Server room, floor 0; Who: IT infrastructure team only."),
        ("Access levels", "Access levels are reviewed every 6 months."),
    ]


def test_pdf_wrapped_lines_join_and_a_sentence_cut_by_the_chunk_end_is_dropped() -> None:
    text = ("Retention\nDaily backups are kept for 35 days. A monthly backup of financial\nsystems is kept for 7 years.\n"
            "Recovery objectives\n  - Tier 1 services: recovery point objective (RPO) 15")
    assert [s for _, s in segment(text)] == ["Daily backups are kept for 35 days.",
                                             "A monthly backup of financial systems is kept for 7 years."]


def test_fact_lines_with_several_labels_are_text_not_headings() -> None:
    assert segment(LEAVE_HEAD)[0] == ("Annual Leave Policy",
                                      "Policy owner: People Team · Policy number: HR-101 · Last reviewed: 2026-01-15")


# --- question and answer types -------------------------------------------------------
@pytest.mark.parametrize(("question", "qtype"), [
    ("How many days of annual leave do employees get?", "number"),
    ("How much is the on-call allowance?", "number"),
    ("What is the minimum password length?", "number"),
    ("When is the yearly change freeze?", "date"),
    ("Until when can carried-over days be used?", "date"),
    ("Whom do I call in a medical emergency abroad?", "name"),
    ("Where is the assembly point?", "location"),
    ("Which safety shoes are part of the PPE kit?", "option"),
    ("Can I use my personal laptop?", None),
])
def test_question_types(question: str, qtype: str | None) -> None:
    assert question_type(question) == qtype


@pytest.mark.parametrize(("sentence", "qtype", "carries"), [
    ("Every full-time employee receives 25 days of paid annual leave.", "number", True),
    ("Reviews are held twice a year.", "number", True),
    ("Leave requests go through the HR portal.", "number", False),
    ("A change freeze applies from 15 December to 5 January.", "date", True),
    ("The freeze is announced by the platform team.", "date", False),
    ("Call the field coordinator before agreeing.", "name", True),
    ("Shoes are replaced when worn out.", "option", False),
    ("Safety shoes with steel toe caps (class S3).", "option", True),
])
def test_answer_types(sentence: str, qtype: str, carries: bool) -> None:
    assert carries_answer_type(sentence, qtype) is carries


def test_content_words_drop_function_words_and_join_word_forms() -> None:
    assert content_words("How many days of annual leave do employees get?") == ["day", "annual", "leav", "employ"]
    assert content_words("I lost my badge") == content_words("if I lose the badges")


# --- the answer, with the real model ----------------------------------------------------
def test_readme_example_leads_with_the_sentence_that_answers(embedder: Any) -> None:
    chunks = (Chunk("annual-leave::3", "annual-leave", LEAVE_TAIL, "annual-leave.md", 3),
              Chunk("annual-leave::0", "annual-leave", LEAVE_HEAD, "annual-leave.md", 0))
    model = ExtractiveChatModel(embedder)
    text, why = model.generate_explained(ChatRequest("rag", "rag prompt", README_QUESTION, chunks))
    assert text.startswith("Every full-time employee receives 25 days of paid annual leave per calendar year, "
                           "in addition to the company holidays. [2]")
    assert "Buying extra leave Employees" not in text
    assert why is not None and why["question_type"] == "number"
    lead = why["sentences"][0]
    assert (lead["role"], lead["marker"], lead["chunk_id"], lead["heading"]) == (
        "lead", "[2]", "annual-leave::0", "Entitlement")
    assert lead["answer_type_match"] is True and lead["score"] > why["runner_up"]["score"]


def test_a_sentence_that_continues_the_lead_follows_it(embedder: Any) -> None:
    text = ("Faulty appliance parts\n- Disks removed from appliances are never shipped. They are degaussed and shredded "
            "on site by the mobile shredding service.\n- Tools are the field engineer's responsibility.")
    answer = ExtractiveChatModel(embedder).generate(ChatRequest(
        "rag", "p", "What happens to disks removed from a customer appliance?", (Chunk("r#0", "r", text, "r.txt", 0),)))
    assert answer.startswith("Disks removed from appliances are never shipped. [1] They are degaussed and shredded")


def test_every_answer_sentence_keeps_its_citation(embedder: Any) -> None:
    chunks = (Chunk("a#0", "a", LEAVE_HEAD, "a.md", 0), Chunk("b#0", "b", LEAVE_TAIL, "b.md", 0))
    answer, why = ExtractiveChatModel(embedder).generate_explained(ChatRequest(
        "rag", "p", "How many days of leave can employees buy, and when?", chunks))
    assert why is not None
    for sentence in why["sentences"]:
        assert f"{sentence['sentence']} {sentence['marker']}" in answer


# --- evidence ----------------------------------------------------------------------------
def _candidate(chunk_id: str, text: str, similarity: float, rank: int, chunk_type: str = "text") -> Candidate:
    return Candidate(Chunk(chunk_id, chunk_id.split("#")[0], text, "x.md", rank, chunk_type=chunk_type),
                     similarity, similarity, rank)


def test_evidence_ranks_an_answer_above_a_look_alike_question(embedder: Any) -> None:
    scorer = SentenceScorer(embedder)
    chunk = Chunk("p#0", "p", "Partner leave\n\nThe partner of a birth parent receives 8 weeks of leave at full pay.",
                  "p.md", 0)
    answered = scorer.chunk_evidence("How many weeks of leave does the partner of a birth parent get?", [chunk])[0]
    look_alike = scorer.chunk_evidence("How many weeks of leave does a grandparent get after a birth?", [chunk])[0]
    assert 0 < look_alike < answered <= 1
    assert answered - look_alike > 0.1  # the grandparent is nowhere in the context: coverage drops


def test_attach_evidence_scores_only_chunks_that_may_become_context(embedder: Any) -> None:
    settings = make_settings(Path("/tmp")).retrieval
    min_sim = settings.hybrid.min_similarity_for_hybrid
    cands = [_candidate("a#0", LEAVE_HEAD, min_sim + 0.3, 1), _candidate("f#0", "Figure of the floor plan.", 0.9, 2,
                                                                         "figure"),
             _candidate("w#0", LEAVE_TAIL, min_sim - 0.01, 3)]
    out = attach_evidence(cands, README_QUESTION, SentenceScorer(embedder), settings)
    assert out[0].evidence is not None and out[0].evidence > 0.5
    assert out[1].evidence is None and out[2].evidence is None
    assert [c.chunk.chunk_id for c in out] == ["a#0", "f#0", "w#0"]


def test_golden_sets_hold_enough_look_alike_questions() -> None:
    from backend.core.services.golden import load_golden_set

    for name, minimum in (("sample_golden.jsonl", 60), ("handbook_golden.jsonl", 30)):
        golden = load_golden_set(REPO / "data" / "golden" / name)
        unanswerable = [q for q in golden.queries if q.expected_mode == "hybrid"]
        assert len(golden.queries) >= minimum and len(unanswerable) >= 8, name
