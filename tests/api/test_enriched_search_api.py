"""GET /search and POST /chat over a version with hypothetical questions and summaries.

Real store and model; the enrichment is written as ingestion writes it (questions and
summaries with real vectors, pages on the chunks' metadata), independent of any enricher.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Iterator

import pytest
from flask.testing import FlaskClient
from openapi_schema_validator import OAS31Validator

from backend.api.app import create_app
from backend.runtime import build_services
from backend.core.types import DocumentWrite, VersionSpec
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.api.corpus import corpus_settings
from tests.contracts.vector_store import corpus_docs, enriched

VERSION = "KB_SAMPLE_V1"
#: where each chunk is, as the ingest side records it: a PDF page number or a heading path
PAGES: dict[str, dict[str, Any]] = {
    "hr-leave#0": {"heading_path": ["Leave", "Accrual"]},
    "hr-leave#1": {"heading_path": ["Leave", "Carry-over"]},
    "fin-expense#0": {"page": 3},
}


def _with_pages(doc: DocumentWrite) -> DocumentWrite:
    chunks = [dataclasses.replace(c, metadata={**c.metadata, **PAGES.get(c.chunk_id, {})}) for c in doc.chunks]
    return dataclasses.replace(doc, chunks=chunks)


@pytest.fixture
def client(tmp_path: Path, embedder: Any, extractive: Any) -> Iterator[FlaskClient]:
    settings = corpus_settings(tmp_path, embeddings={"profiles": {"sample": {"index_name": VERSION}}})
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    store.create_version(VersionSpec(VERSION, embedder.model_id, embedder.dimension, "cosine", "sample"))
    store.write_documents(VERSION, [enriched(embedder, _with_pages(d)) for d in corpus_docs(embedder)])
    store.point_alias("KB_ACTIVE", VERSION)
    services = build_services(settings, store=store, embedder=embedder, primary=extractive)
    yield create_app(settings, services).test_client()
    store.close()


def test_hierarchical_search_returns_the_tree_with_pages_and_summaries(client: FlaskClient) -> None:
    resp = client.get("/search", query_string={"q": "carrying unused vacation over to next year",
                                               "strategy": "hierarchical", "top_k": 4})
    assert resp.status_code == 200, resp.get_json()
    body = resp.get_json()
    assert (body["strategy"], body["order_by"], body["score_source"]) == ("hierarchical", "hierarchical_score",
                                                                         "dense_similarity")
    top = body["tree"][0]
    assert top["doc_id"] == "hr-leave" and "leave policy" in top["summary"]
    pages = {p["page"]: p for p in top["pages"]}
    assert pages["Leave > Carry-over"]["summary"] == "Unused vacation may be carried into the first quarter."
    assert [c["chunk_id"] for c in pages["Leave > Carry-over"]["chunks"]] == ["hr-leave#1"]
    hit = next(h for h in body["hits"] if h["chunk_id"] == "hr-leave#1")
    assert hit["page"] == "Leave > Carry-over"
    assert sorted(c["chunk_id"] for d in body["tree"] for p in d["pages"] for c in p["chunks"]) == sorted(
        h["chunk_id"] for h in body["hits"])


def test_hyde_search_shows_the_matched_question_and_no_tree(client: FlaskClient) -> None:
    body = client.get("/search", query_string={"q": "What login do I need for remote access?",
                                               "strategy": "hyde", "top_k": 2}).get_json()
    assert body["hits"][0]["chunk_id"] == "it-vpn#0"
    assert body["hits"][0]["matched_question"] == "Which credentials does the VPN client need?"
    assert body["score_source"] == "parent_chunk_dense_similarity" and body["tree"] is None


def test_search_responses_match_the_published_schema(client: FlaskClient) -> None:
    spec = client.get("/openapi.json").get_json()
    for strategy in ("hierarchical", "hyde", "enriched_fusion"):
        body = client.get("/search", query_string={"q": "travel expense deadline", "strategy": strategy}).get_json()
        schema = {**spec["paths"]["/search"]["get"]["responses"]["200"]["content"]["application/json"]["schema"],
                  "components": spec["components"]}
        OAS31Validator(schema).validate(body)


def test_chat_with_hierarchical_search_cites_pages_and_orders_context_by_the_tree(client: FlaskClient) -> None:
    resp = client.post("/chat", json={"question": "When do travel expenses have to be submitted?",
                                      "strategy": "hierarchical"})
    assert resp.status_code == 200, resp.get_json()
    body = resp.get_json()
    explain = body["decision_explain"]
    assert (explain["strategy"], explain["score_source"]) == ("hierarchical", "dense_similarity")
    cited = {c["chunk_id"]: c for c in body["citations"]}
    assert "fin-expense#0" in cited and cited["fin-expense#0"]["page"] == "3"
    hyde = client.post("/chat", json={"question": "When do travel expenses have to be submitted?",
                                      "strategy": "hyde"}).get_json()
    assert hyde["decision_explain"]["score_source"] == "parent_chunk_dense_similarity"
