"""A configured reranker through the HTTP API: ``/search`` shows each hit's rerank score
and rank before, ``/chat`` explains the reordering, and the mode still compares the
dense similarity. The reranker is the real ``sentences`` one over the real model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from backend.api.app import create_app
from backend.runtime import build_services
from backend.core.services.search_service import SearchRequest, SearchService
from backend.core.types import QueryVector
from backend.providers.rerank.sentences import SentenceReranker
from tests.api.corpus import MAIN_VERSION, Corpus, corpus_settings

ERUPTION = "Why are some volcanic eruptions explosive?"


@pytest.fixture
def client(corpus: Corpus, embedder: Any, extractive: Any, tmp_path: Path) -> FlaskClient:
    settings = corpus_settings(tmp_path, retrieval={"strategy": "fusion", "rerank": {"provider": "sentences",
                                                                                     "top_n": 6}})
    services = build_services(settings, store=corpus.store, embedder=embedder, primary=extractive)
    assert isinstance(services.search.reranker, SentenceReranker)
    return create_app(settings, services).test_client()


def test_search_hits_carry_rerank_score_and_rank_before(client: FlaskClient, corpus: Corpus, embedder: Any) -> None:
    body = client.get("/search", query_string={"q": ERUPTION, "top_k": 4}).get_json()
    hits = body["hits"]
    assert body["order_by"] == "rerank_score (top 6), then fused_score"
    rerank = body["details"]["rerank"]
    assert (rerank["provider"], rerank["top_n"]) == ("sentences", 6)
    assert [o["rank_after"] for o in rerank["order"]] == list(range(1, len(rerank["order"]) + 1))
    scores = [h["rerank_score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and None not in scores
    assert [(h["chunk_id"], h["rank_before_rerank"]) for h in hits] == \
        [(o["chunk_id"], o["rank_before"]) for o in rerank["order"][:4]]
    # without the reranker, the same search ranks each hit where rank_before_rerank says
    plain = SearchService(corpus.store, embedder, corpus.settings.embeddings.profiles["sample"],
                          corpus.settings.retrieval.model_copy(update={"strategy": "fusion"}))
    before = [h.chunk.chunk_id for h in plain.search(SearchRequest(ERUPTION, "KB_ACTIVE", 6)).hits]
    assert [before.index(h["chunk_id"]) + 1 for h in hits] == [h["rank_before_rerank"] for h in hits]
    q = QueryVector(embedder.embed_queries([ERUPTION])[0], embedder.model_id)
    sims = {h.chunk.chunk_id: h.score for h in corpus.store.search(MAIN_VERSION, q, 50).hits}
    assert [h["dense_similarity"] for h in hits] == pytest.approx([sims[h["chunk_id"]] for h in hits], abs=1e-5)


def test_chat_explains_the_rerank_and_decides_on_dense_similarity(client: FlaskClient) -> None:
    response = client.post("/chat", json={"question": ERUPTION})
    assert response.status_code == 200
    body = response.get_json()
    explain = body["decision_explain"]
    assert explain["rerank"]["provider"] == "sentences" and explain["rerank"]["reranked"] >= 1
    top = max(r["similarity"] for r in body["retrieved_chunks_metadata"])
    assert explain["max_similarity"] == pytest.approx(top, abs=1e-4)
