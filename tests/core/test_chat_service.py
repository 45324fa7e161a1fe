"""ChatService on the real fixture corpus: routing, targets, distances, raw mode, logging."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backend.common.config import Settings
from backend.common.errors import ConfigError, RequestError, UnknownDomain, VersionConflict
from backend.core.requests import RequestLimits
from backend.core.services.chat_service import ChatQuery, ChatService, Routing
from backend.core.services.search_service import SearchService
from backend.core.types import Chunk, DocumentWrite, VersionSpec
from backend.providers.local.extractive import DisabledChatModel, ExtractiveChatModel
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.api.corpus import COFFEE_VERSION, FALLBACK_QUESTION, RAG_QUESTION, Corpus, corpus_settings


def make_service(settings: Settings, store: Any, embedder: Any, primary: Any = None) -> ChatService:
    searches = {name: SearchService(store, embedder, profile, settings.retrieval)
                for name, profile in settings.embeddings.profiles.items()}
    return ChatService(
        searches, Routing.from_settings(settings.embeddings), settings.retrieval, settings.llm.prompts,
        primary or ExtractiveChatModel(embedder), DisabledChatModel(), admin=store, interactions=store,
        sanitize=settings.sanitize,
    )


def _dot_version(store: SqliteVectorStore, embedder: Any, name: str) -> None:
    store.create_version(VersionSpec(name, embedder.model_id, embedder.dimension, "dot"))
    texts = ["Annual leave is 25 days per year for full-time staff.", "Volcanoes erupt lava and ash."]
    chunks = [Chunk(f"d#{i}", "d", t, "d.md", i) for i, t in enumerate(texts)]
    store.write_documents(name, [DocumentWrite("d", "h", chunks, embedder.embed_documents(texts))])


def test_construction_rejects_alias_serving_another_distance(tmp_path: Path, embedder: Any) -> None:
    store = SqliteVectorStore(tmp_path / "dot.sqlite")
    _dot_version(store, embedder, "KB_DOT_V1")
    store.point_alias("KB_ACTIVE", "KB_DOT_V1")
    with pytest.raises(ConfigError, match="alias KB_ACTIVE serves version KB_DOT_V1 with distance 'dot', but "
                                          "retrieval.distance is 'cosine'"):
        make_service(corpus_settings(tmp_path), store, embedder)
    store.close()


def test_request_to_version_of_another_distance_fails_loudly(tmp_path: Path, embedder: Any) -> None:
    store = SqliteVectorStore(tmp_path / "mixed.sqlite")
    _dot_version(store, embedder, "KB_DOT_V1")
    service = make_service(corpus_settings(tmp_path), store, embedder)
    with pytest.raises(VersionConflict, match="KB_DOT_V1 serves version KB_DOT_V1 with distance 'dot'"):
        service.answer(ChatQuery(RAG_QUESTION, target="KB_DOT_V1", record=False))
    assert store.count_interactions() == 0
    store.close()


def test_named_version_target_answers_without_recording(corpus: Corpus, embedder: Any) -> None:
    service = make_service(corpus.settings, corpus.store, embedder)
    before = corpus.store.count_interactions()
    answer = service.answer(ChatQuery("How much coffee goes into a double espresso?", target=COFFEE_VERSION, record=False))
    assert (answer.mode, answer.decision_explain["retrieval_target"], answer.decision_explain["version"]) == (
        "rag", COFFEE_VERSION, COFFEE_VERSION)
    assert answer.citations[0].source == "data/coffee/espresso.md"
    assert corpus.store.count_interactions() == before


def test_unknown_domain_names_known_domains(corpus: Corpus, embedder: Any) -> None:
    service = make_service(corpus.settings, corpus.store, embedder)
    with pytest.raises(UnknownDomain, match="unknown domain 'hr'; known domains: coffee, handbook") as info:
        service.answer(ChatQuery(RAG_QUESTION, domain="hr"))
    assert info.value.context["known_domains"] == ["coffee", "handbook"]


@pytest.mark.parametrize("top_k", [0, 51])
def test_top_k_outside_limits_is_a_request_error(corpus: Corpus, embedder: Any, top_k: int) -> None:
    """The query is checked where it enters (``RequestLimits``), the service trusts it."""
    service = make_service(corpus.settings, corpus.store, embedder)
    limits = RequestLimits.from_settings(corpus.settings)
    with pytest.raises(RequestError, match=f"top_k must be between 1 and 50, got {top_k}"):
        service.answer(ChatQuery(RAG_QUESTION, top_k=limits.top_k(top_k)))


def test_raw_cosine_mode_compares_raw_scores(corpus: Corpus, embedder: Any) -> None:
    settings = corpus_settings(corpus.path, retrieval={"score_mode": "raw", "raw_cosine_low": 0.3, "raw_cosine_high": 0.9})
    service = make_service(settings, corpus.store, embedder)
    answer = service.answer(ChatQuery(RAG_QUESTION, record=False))
    explain = answer.decision_explain
    assert explain["thresholds"]["kind"] == "raw_cosine" and (explain["thresholds"]["low"], explain["thresholds"]["high"]) == (0.3, 0.9)
    top = answer.retrieved_chunks_metadata[0]
    assert top.similarity == top.raw_score and 0.8 < top.similarity < 0.9
    assert answer.mode == "hybrid"


def test_dot_distance_version_normalizes_with_plus_one_over_two(tmp_path: Path, embedder: Any) -> None:
    store = SqliteVectorStore(tmp_path / "dot.sqlite")
    _dot_version(store, embedder, "KB_DOT_V1")
    store.point_alias("KB_ACTIVE", "KB_DOT_V1")
    settings = corpus_settings(
        tmp_path, embeddings={"domains": {}, "profiles": {"sample": {"index_name": "KB_DOT_V1", "distance": "dot"}}},
        retrieval={"distance": "dot", "threshold_low": 0.675, "threshold_high": 0.775},
    )
    store.point_alias("KB_HANDBOOK", "KB_DOT_V1")
    answer = make_service(settings, store, embedder).answer(ChatQuery(RAG_QUESTION, record=False))
    top = answer.retrieved_chunks_metadata[0]
    assert top.similarity == pytest.approx((top.raw_score + 1) / 2, abs=1e-6)
    assert answer.decision_explain["distance"] == "dot" and answer.mode == "rag"
    store.close()


def test_interaction_row_mirrors_decision(corpus: Corpus, embedder: Any) -> None:
    service = make_service(corpus.settings, corpus.store, embedder)
    answer = service.answer(ChatQuery(FALLBACK_QUESTION, domain="handbook", conversation_id="c-1"))
    row = corpus.store.interactions(limit=1)[0]
    assert (row.question, row.resp_mode, row.used_llm, row.domain, row.retrieval_target, row.conversation_id) == (
        FALLBACK_QUESTION, "fallback", "fallback", "handbook", "KB_HANDBOOK", "c-1")
    assert row.decision_explain["reasons"] == answer.decision_explain["reasons"]
    assert row.latency_ms == answer.latency_ms


def test_sanitized_question_is_stored_when_enabled(corpus: Corpus, embedder: Any) -> None:
    settings = corpus_settings(corpus.path, sanitize={"enabled": True, "mode": "redact", "sanitize_questions": True})
    service = make_service(settings, corpus.store, embedder)
    question = "Can John Smith carry over unused annual leave? Mail john.smith@example.com"
    answer = service.answer(ChatQuery(question))
    row = corpus.store.interactions(limit=1)[0]
    assert "John Smith" not in row.question and "john.smith@example.com" not in row.question
    assert "<PERSON>" in row.question and "<EMAIL_ADDRESS>" in row.question
    assert row.decision_explain["effective_query"] == row.question
    assert answer.decision_explain["effective_query"] == question
    assert answer.mode in ("rag", "hybrid")


def test_sanitization_off_for_questions_keeps_question(corpus: Corpus, embedder: Any) -> None:
    settings = corpus_settings(corpus.path, sanitize={"enabled": True, "sanitize_questions": False})
    make_service(settings, corpus.store, embedder).answer(ChatQuery("Can John Smith carry over leave?"))
    assert corpus.store.interactions(limit=1)[0].question == "Can John Smith carry over leave?"


def test_unsupported_score_mode_stops_construction(corpus: Corpus, embedder: Any) -> None:
    settings = corpus_settings(corpus.path)
    broken = settings.model_copy(update={"retrieval": settings.retrieval.model_copy(update={"distance": "euclidean",
                                                                                           "score_mode": "raw"})})
    with pytest.raises(ConfigError, match="score_mode 'raw' is not supported with distance 'euclidean'"):
        make_service(broken, corpus.store, embedder)


def test_query_vectors_are_unit_length_so_thresholds_hold(embedder: Any) -> None:
    """The normalized-cosine choice assumes sentence vectors near unit length (documented)."""
    vec = embedder.embed_queries([RAG_QUESTION])[0]
    assert float(np.linalg.norm(vec)) == pytest.approx(1.0, abs=1e-4)


def test_a_part_time_follow_up_answers_with_the_part_time_sentence(corpus: Corpus, embedder: Any) -> None:
    """The follow-up replaces "full-time" by "part-time" (not appended: a query holding both
    would be as much about full-time staff), and its answer carries the part-time sentence."""
    service = make_service(corpus.settings, corpus.store, embedder)
    first = service.answer(ChatQuery(RAG_QUESTION, record=False))
    second = service.answer(ChatQuery("and for part-time staff?", record=False,
                                      history=(str(first.decision_explain["effective_query"]),)))
    assert second.decision_explain["effective_query"] == "How many days of paid annual leave do part-time staff get?"
    assert second.decision_explain["condensed_rule"] == "substitution"
    part_time = "Part-time employees receive annual leave in proportion to their contracted hours"
    assert part_time in second.answer and second.mode == "rag"


def test_decision_explain_says_how_the_dense_side_was_searched(corpus: Corpus, embedder: Any) -> None:
    """A fixture version is far below store.sqlite.ann.min_vectors: the exact scan, and why."""
    service = make_service(corpus.settings, corpus.store, embedder)
    answer = service.answer(ChatQuery("How much coffee goes into a double espresso?", target=COFFEE_VERSION,
                                      record=False))
    how = answer.decision_explain["dense_index"]
    assert how["kind"] == "exact" and "min_vectors" in how["reason"]

