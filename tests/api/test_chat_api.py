"""POST /chat end to end on the real fixture corpus: modes, routing, figures, logging."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from backend.api.app import create_app
from backend.runtime import build_services
from backend.core.services.chat_service import FALLBACK_MESSAGE
from backend.core.types import ChatRequest
from backend.providers.local.extractive import PARTIAL_NOTE
from tests.api.corpus import (
    COFFEE_QUESTION,
    COFFEE_VERSION,
    FALLBACK_QUESTION,
    FIGURE_ID,
    FIGURE_QUESTION,
    HYBRID_QUESTION,
    IMAGE_REF,
    MAIN_VERSION,
    RAG_QUESTION,
    Corpus,
)

EXPLAIN_KEYS = {
    "mode", "decided_mode", "blank_primary_answer", "llm_judged_unanswerable", "short_query_active", "thresholds",
    "max_similarity", "max_eligible_similarity", "gates", "excluded_chunk_ids", "reasons", "effective_query", "query_tokens",
    "used_llm", "answered_by", "score_mode", "distance", "retrieval_target", "domain", "version", "strategy",
    "score_source", "top_k", "candidates", "decision_score", "max_evidence", "answerability", "answer_explain",
    "condensed_by", "condensed_rule", "rerank", "retrieval_settings", "dense_index",
}


class RecordingChatModel:
    """ChatModel test double: records what the port receives, answers from a handler."""

    def __init__(self, answer: str = "Recorded answer [1].", name: str = "recording") -> None:
        self.name = name
        self.answer = answer
        self.requests: list[ChatRequest] = []

    def generate(self, request: ChatRequest) -> str:
        self.requests.append(request)
        return self.answer


def post(client: FlaskClient, question: str, headers: dict[str, str] | None = None, **body: Any) -> Any:
    return client.post("/chat", json={"question": question, **body}, headers=headers or {})


def app_with(corpus: Corpus, embedder: Any, **models: Any) -> Flask:
    services = build_services(corpus.settings, store=corpus.store, embedder=embedder, **models)
    return create_app(corpus.settings, services)


def test_answerable_question_is_rag_with_citations_and_full_explain(client: FlaskClient) -> None:
    resp = post(client, RAG_QUESTION)
    body = resp.get_json()
    assert resp.status_code == 200
    assert resp.headers["X-Answer-Mode"] == "rag" and body["mode"] == "rag"
    assert set(body["decision_explain"]) == EXPLAIN_KEYS
    explain = body["decision_explain"]
    assert explain["retrieval_target"] == "KB_ACTIVE" and explain["version"] == MAIN_VERSION
    assert explain["used_llm"] == "primary" and explain["answered_by"] == "extractive"
    assert (explain["score_mode"], explain["distance"], explain["strategy"]) == ("normalized", "cosine", "dense")
    assert explain["thresholds"] == {"low": 0.35, "high": 0.55, "base_low": 0.35, "base_high": 0.55, "kind": "normalized"}
    assert explain["max_eligible_similarity"] > 0.8
    assert explain["effective_query"] == RAG_QUESTION and explain["short_query_active"] is False
    assert body["citations"][0] == {
        "marker": "[1]", "chunk_id": "hr-handbook#0", "doc_id": "hr-handbook", "source": "data/hr/handbook.docx",
        "score": body["retrieved_chunks_metadata"][0]["similarity"], "chunk_type": "text", "image_ref": None,
        "figure_id": None, "page": None, "section": None,
    }
    assert "25 days of paid annual leave" in body["answer"] and "[1]" in body["answer"]
    why = explain["answer_explain"]  # which sentence won, and why
    assert why["question_type"] == "number" and why["sentences"][0]["role"] == "lead"
    lead = why["sentences"][0]
    assert "25 days of paid annual leave" in lead["sentence"] and lead["answer_type_match"] is True
    assert body["answer"].startswith(lead["sentence"])
    assert lead["score"] == round(lead["dense"] + 0.3 * lead["lexical"] + 0.1, 4)
    assert body["used_chunks"][0] == "hr-handbook#0"
    sims = [m["similarity"] for m in body["retrieved_chunks_metadata"]]
    assert sims == sorted(sims, reverse=True) and len(sims) == 8
    assert all(len(m["text_preview"]) <= 200 for m in body["retrieved_chunks_metadata"])


def test_partly_covered_question_is_hybrid_and_says_so(client: FlaskClient) -> None:
    resp = post(client, HYBRID_QUESTION)
    body = resp.get_json()
    assert resp.headers["X-Answer-Mode"] == "hybrid" and body["mode"] == "hybrid"
    explain = body["decision_explain"]
    assert 0.35 <= explain["max_eligible_similarity"] < 0.55
    assert explain["gates"]["usable_chunks"] >= 2 and explain["gates"]["usable_context_chars"] >= 300
    assert explain["gates"]["passed"] == {"min_chunks_for_hybrid": True, "min_total_context_chars": True,
                                          "min_similarity_for_hybrid": True, "min_best_similarity": True}
    assert body["answer"].startswith(PARTIAL_NOTE)
    assert body["sources_used"] == "partial"
    assert len(body["used_chunks"]) == explain["gates"]["usable_chunks"]


def test_unrelated_question_falls_back_with_honest_message(client: FlaskClient) -> None:
    resp = post(client, FALLBACK_QUESTION)
    body = resp.get_json()
    assert resp.headers["X-Answer-Mode"] == "fallback"
    assert body["answer"] == FALLBACK_MESSAGE
    assert (body["sources_used"], body["used_chunks"], body["citations"]) == ("none", [], [])
    explain = body["decision_explain"]
    assert (explain["used_llm"], explain["answered_by"]) == ("fallback", "none")
    assert explain["max_eligible_similarity"] < 0.35
    assert explain["reasons"][-1].startswith("max similarity") and "< low threshold 0.35" in explain["reasons"][-1]
    assert len(body["retrieved_chunks_metadata"]) == 8 and not any(m["used"] for m in body["retrieved_chunks_metadata"])


def test_short_question_is_flagged_and_tightens_thresholds(client: FlaskClient) -> None:
    body = post(client, "annual leave days").get_json()
    explain = body["decision_explain"]
    assert explain["short_query_active"] is True and explain["query_tokens"] == 3
    assert (explain["thresholds"]["low"], explain["thresholds"]["high"]) == (0.4, 0.6)


def test_domain_header_routes_to_domain_alias(client: FlaskClient) -> None:
    resp = post(client, COFFEE_QUESTION, headers={"X-RAG-Domain": "coffee"})
    body = resp.get_json()
    assert resp.status_code == 200 and resp.headers["X-Retrieval-Target"] == "KB_COFFEE"
    explain = body["decision_explain"]
    assert (explain["retrieval_target"], explain["domain"], explain["version"]) == ("KB_COFFEE", "coffee", COFFEE_VERSION)
    assert {m["source"] for m in body["retrieved_chunks_metadata"]} == {"data/coffee/espresso.md"}
    assert body["mode"] == "rag" and "18 grams" in body["answer"]
    default = post(client, COFFEE_QUESTION).get_json()
    assert default["decision_explain"]["retrieval_target"] == "KB_ACTIVE"
    assert "data/coffee/espresso.md" not in {m["source"] for m in default["retrieved_chunks_metadata"]}


def test_unknown_domain_is_400_listing_known_domains(client: FlaskClient) -> None:
    resp = post(client, RAG_QUESTION, headers={"X-RAG-Domain": "finance"})
    assert resp.status_code == 400
    assert resp.get_json() == {"error": {
        "code": "unknown_domain",
        "message": "X-RAG-Domain: unknown domain 'finance'; known domains: coffee, handbook",
        "details": {"field": "X-RAG-Domain", "known_domains": ["coffee", "handbook"]},
    }}


def test_figure_chunks_never_reach_prompt_but_appear_in_metadata(corpus: Corpus, embedder: Any) -> None:
    recorder = RecordingChatModel()
    client = app_with(corpus, embedder, primary=recorder).test_client()
    body = post(client, FIGURE_QUESTION).get_json()
    assert body["mode"] == "rag"
    assert len(recorder.requests) == 1
    sent = recorder.requests[0]
    assert sent.mode == "rag" and sent.question == FIGURE_QUESTION
    assert [c.chunk_type for c in sent.context] == ["text"] * len(sent.context)
    assert FIGURE_ID not in {c.chunk_id for c in sent.context}
    assert sent.context[0].chunk_id == "hr-handbook#1"
    figure = next(m for m in body["retrieved_chunks_metadata"] if m["chunk_id"] == FIGURE_ID)
    assert figure == {**figure, "used": False, "excluded_from_llm": True, "image_ref": IMAGE_REF,
                      "chunk_type": "figure", "parent_chunk_id": "hr-handbook#1", "rank": 1}
    assert body["decision_explain"]["excluded_chunk_ids"] == [FIGURE_ID]
    assert body["decision_explain"]["max_similarity"] > body["decision_explain"]["max_eligible_similarity"]
    figure_citations = [c for c in body["citations"] if c["chunk_type"] == "figure"]
    assert figure_citations == [{"marker": None, "chunk_id": FIGURE_ID, "doc_id": "hr-handbook",
                                 "source": "data/hr/handbook.docx", "score": figure["similarity"],
                                 "chunk_type": "figure", "image_ref": IMAGE_REF, "figure_id": "fig-001",
                                 "page": None, "section": None}]
    assert FIGURE_ID not in body["used_chunks"]


def test_prompt_receives_mode_template_and_numbered_context(corpus: Corpus, embedder: Any) -> None:
    recorder = RecordingChatModel()
    client = app_with(corpus, embedder, primary=recorder).test_client()
    body = post(client, HYBRID_QUESTION).get_json()
    sent = recorder.requests[0]
    assert sent.mode == "hybrid" and sent.system_prompt == corpus.settings.llm.prompts.hybrid
    assert [c.chunk_id for c in sent.context] == body["used_chunks"] and len(body["used_chunks"]) >= 2
    # the answer ("Recorded answer [1].") cites the first passage only: it alone is a source
    assert [(c["marker"], c["chunk_id"]) for c in body["citations"] if c["marker"]] == [("[1]", body["used_chunks"][0])]


def test_an_llm_answer_without_markers_lists_every_used_passage(corpus: Corpus, embedder: Any) -> None:
    """Documented choice: an answer that cites nothing lists the passages it was written from."""
    client = app_with(corpus, embedder, primary=RecordingChatModel(answer="Take leave when the manager agrees.")
                      ).test_client()
    body = post(client, HYBRID_QUESTION).get_json()
    assert body["answer"] == "Take leave when the manager agrees."
    assert [c["marker"] for c in body["citations"] if c["marker"]] == [f"[{n}]" for n in range(1, len(body["used_chunks"]) + 1)]
    assert [c["chunk_id"] for c in body["citations"] if c["marker"]] == body["used_chunks"]


def test_blank_primary_answer_falls_back_to_fallback_model(corpus: Corpus, embedder: Any) -> None:
    primary = RecordingChatModel(answer="  \n")
    fallback = RecordingChatModel(answer="General answer, not from the knowledge base.", name="backup")
    client = app_with(corpus, embedder, primary=primary, fallback=fallback).test_client()
    resp = post(client, RAG_QUESTION)
    body = resp.get_json()
    assert resp.headers["X-Answer-Mode"] == "fallback"
    assert body["answer"] == "General answer, not from the knowledge base."
    explain = body["decision_explain"]
    assert (explain["mode"], explain["decided_mode"], explain["blank_primary_answer"]) == ("fallback", "rag", True)
    assert (explain["used_llm"], explain["answered_by"]) == ("fallback", "backup")
    assert explain["reasons"][-1] == "primary model returned a blank answer in mode rag"
    assert fallback.requests[0].mode == "fallback" and fallback.requests[0].context == ()
    assert fallback.requests[0].system_prompt == corpus.settings.llm.prompts.fallback


def test_fallback_mode_uses_fallback_model_not_primary(corpus: Corpus, embedder: Any) -> None:
    primary, fallback = RecordingChatModel(), RecordingChatModel(answer="Not in the knowledge base.", name="backup")
    client = app_with(corpus, embedder, primary=primary, fallback=fallback).test_client()
    body = post(client, FALLBACK_QUESTION).get_json()
    assert body["answer"] == "Not in the knowledge base." and primary.requests == []
    assert body["decision_explain"]["answered_by"] == "backup"


def test_each_answer_writes_one_interaction_row(client: FlaskClient, corpus: Corpus) -> None:
    before = corpus.store.count_interactions()
    resp = post(client, HYBRID_QUESTION, headers={"X-RAG-Domain": "handbook"}, conversation_id="conv-7")
    assert corpus.store.count_interactions() == before + 1
    row = corpus.store.interactions(limit=1)[0]
    assert (row.question, row.resp_mode, row.used_llm, row.domain, row.retrieval_target, row.conversation_id) == (
        HYBRID_QUESTION, "hybrid", "primary", "handbook", "KB_HANDBOOK", "conv-7")
    assert row.decision_explain == resp.get_json()["decision_explain"]
    assert row.latency_ms > 0


def test_alias_rotation_is_followed_without_restart(client: FlaskClient, corpus: Corpus) -> None:
    assert post(client, COFFEE_QUESTION, headers={"X-RAG-Domain": "handbook"}).get_json()["decision_explain"]["version"] == MAIN_VERSION
    corpus.store.point_alias("KB_HANDBOOK", COFFEE_VERSION, reason="test rotation")
    try:
        body = post(client, COFFEE_QUESTION, headers={"X-RAG-Domain": "handbook"}).get_json()
        assert body["decision_explain"]["version"] == COFFEE_VERSION and body["mode"] == "rag"
    finally:
        corpus.store.point_alias("KB_HANDBOOK", MAIN_VERSION, reason="test rotation back")


def test_top_k_and_filters_reach_retrieval(client: FlaskClient) -> None:
    body = post(client, HYBRID_QUESTION, top_k=3, filters={"doc_id": {"any": ["volcanoes"]}}).get_json()
    assert len(body["retrieved_chunks_metadata"]) == 3
    assert {m["doc_id"] for m in body["retrieved_chunks_metadata"]} == {"volcanoes"}
    assert body["decision_explain"]["top_k"] == 3
