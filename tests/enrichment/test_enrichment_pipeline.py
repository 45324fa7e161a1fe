"""Enrichment inside the real ingest pipeline: the OpenAI-compatible enricher (real httpx client)
against a local endpoint, the real embedder and the real SQLite store and cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from backend.core.types import QueryVector
from backend.ingest.pipeline import EnricherFactory, IngestPipeline
from backend.providers.registry import build_enricher
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import make_settings
from tests.enrichment.endpoint import Endpoint, endpoint  # noqa: F401 - fixture
from tests.ingest.helpers import write_manifest

SCHEMA = {"department": {"type": "enum", "values": ["People", "Finance"]},
          "audience": {"type": "enum", "values": ["staff", "managers"], "multi": True},
          "content_type": {"type": "enum", "values": ["policy", "faq"]}}
LEAVE = ("# Leave\n\n## Annual leave\n\n" + "Every employee receives 25 days of paid annual leave per year. " * 8
         + "\n\n## Carry-over\n\n" + "Up to five unused days may be carried over until 31 March. " * 8)
EXPENSES = "# Expenses\n\nReceipts are required for every claim over 25 EUR. Claims are paid monthly.\n"


def enricher_for(cfg: Any) -> EnricherFactory:
    """The provider registry's enrichers, as the composition root hands them to the pipeline."""
    return lambda profile: build_enricher(cfg, profile)


def settings(tmp_path: Path, url: str, **enrichment: Any) -> Any:
    return make_settings(tmp_path, retrieval={"metadata_schema": SCHEMA}, embeddings={"profiles": {"sample": {
        "enrichment": {"provider": "openai_compat", "base_url": url, "model": "tiny", "questions": 8,
                       "retry": {"max_attempts": 2, "initial_wait_s": 0, "max_wait_s": 0}, **enrichment}}}})


def corpus(tmp_path: Path) -> Path:
    (tmp_path / "leave.md").write_text(LEAVE, encoding="utf-8")
    (tmp_path / "expenses.md").write_text(EXPENSES, encoding="utf-8")
    return write_manifest(tmp_path / "m.jsonl", [
        {"path": "leave.md", "doc_id": "leave", "metadata": {"department": "People"}},
        {"path": "expenses.md", "doc_id": "expenses"}])


def ingest(tmp_path: Path, url: str, embedder: Any, manifest: Path, **enrichment: Any) -> Any:
    cfg = settings(tmp_path, url, **enrichment)
    store = SqliteVectorStore(cfg.resolve_path(cfg.store.sqlite.path))
    try:
        return IngestPipeline.from_settings(cfg, store, embedder, enricher_for=enricher_for(cfg)).run(manifest), cfg
    finally:
        store.close()


def test_enriched_chunks_carry_checked_metadata_and_their_questions_and_summaries(
        tmp_path: Path, endpoint: Endpoint, embedder: Any) -> None:  # noqa: F811
    report, cfg = ingest(tmp_path, endpoint.url, embedder, corpus(tmp_path))
    assert report.ok and report.version == "KB_SAMPLE_V1"
    store = SqliteVectorStore(cfg.resolve_path(cfg.store.sqlite.path))
    hits = store.search("KB_SAMPLE_V1", QueryVector(embedder.embed_queries(["annual leave"])[0], embedder.model_id),
                        50).hits
    chunks = {h.chunk.chunk_id: h.chunk for h in hits}
    text_chunks = len(chunks)
    assert text_chunks >= 3 and report.chunks_enriched == text_chunks
    # every proposal said department "Nope" and audience ["staff", "aliens"]: two values dropped per chunk
    assert report.metadata_dropped == 2 * text_chunks
    leave0 = chunks["leave::0"].metadata
    assert leave0["department"] == "People"  # the manifest's value, not the enricher's
    assert leave0["audience"] == ["staff"] and leave0["content_type"] == "policy"
    assert leave0["summary"] == "What the passage rules." and leave0["heading_path"] == ["Leave"]
    last = max((c for c in chunks.values() if c.doc_id == "leave"), key=lambda c: c.chunk_index)
    assert last.metadata["heading_path"] == ["Leave", "Carry-over"]
    assert "department" not in chunks["expenses::0"].metadata  # "Nope" was never stored
    # two distinct questions per chunk (the repeated one is dropped), embedded and linked to the chunk
    assert report.questions_written == 2 * text_chunks
    questions = store.search_questions("KB_SAMPLE_V1", QueryVector(
        embedder.embed_queries(["Who approves the request?"])[0], embedder.model_id), 10).hits
    assert {h.question for h in questions} == {"Who approves the request?"} and len(questions) == text_chunks
    # leave: one page summary per top heading ("Leave") + the document's; expenses the same
    summaries = store.search_summaries("KB_SAMPLE_V1", QueryVector(
        embedder.embed_queries(["summary"])[0], embedder.model_id), 10).hits
    assert sorted(h.summary.summary_id for h in summaries) == [
        "expenses::doc", "expenses::page::Expenses", "leave::doc", "leave::page::Leave"]
    assert report.summaries_written == 4
    # a one-page document's summary is asked for once: page and document summarise the same texts (cached)
    assert report.llm_calls == len(endpoint.requests) == text_chunks + 2
    # chunks, 2 distinct question texts and 2 distinct summary texts: each text embedded once
    assert report.embeddings_computed == text_chunks + 2 + len({h.summary.text for h in summaries})
    body = endpoint.chunk_requests()[0]["body"]
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["metadata"]["properties"]["department"]["enum"] == ["People", "Finance"]
    assert body["model"] == "tiny" and "untrusted" in body["messages"][0]["content"]
    store.close()


def test_nothing_is_enriched_twice_across_runs_versions_and_series(tmp_path: Path, endpoint: Endpoint,
                                                                    embedder: Any) -> None:  # noqa: F811
    manifest = corpus(tmp_path)
    first, cfg = ingest(tmp_path, endpoint.url, embedder, manifest)
    calls = len(endpoint.requests)
    assert first.llm_calls == calls > 0
    again, _ = ingest(tmp_path, endpoint.url, embedder, manifest)  # unchanged: skipped, no request
    assert again.skipped_unchanged == 2 and again.llm_calls == 0 and len(endpoint.requests) == calls
    store = SqliteVectorStore(cfg.resolve_path(cfg.store.sqlite.path))
    store.point_alias("KB_ACTIVE", "KB_SAMPLE_V1")  # served: a change builds a new version
    store.close()
    (tmp_path / "leave.md").write_text(LEAVE.replace("31 March", "30 April"), encoding="utf-8")
    edited, _ = ingest(tmp_path, endpoint.url, embedder, manifest)
    assert edited.builds[0]["action"] == "new_version" and edited.version == "KB_SAMPLE_V2"
    # only the chunks whose text changed (the carry-over part) and their page/document summaries are asked for
    asked = [r["body"]["messages"][-1]["content"] for r in endpoint.chunk_requests()[first.chunks_enriched:]]
    assert asked and all("30 April" in text for text in asked)
    assert edited.enrichment_cache_hits >= 1 and edited.llm_calls == len(endpoint.requests) - calls
    # the same documents into another series of the same store: every result comes from the cache
    calls = len(endpoint.requests)
    other = write_manifest(tmp_path / "m2.jsonl", [{"path": "leave.md", "doc_id": "leave", "metadata": {"department": "People"}},
                                                  {"path": "expenses.md", "doc_id": "expenses"}])
    cfg2 = settings(tmp_path, endpoint.url)
    store = SqliteVectorStore(cfg2.resolve_path(cfg2.store.sqlite.path))
    try:
        report = IngestPipeline.from_settings(cfg2, store, embedder, enricher_for=enricher_for(cfg2)).run(other, domain_key="handbook")
    finally:
        store.close()
    assert report.version == "KB_HANDBOOK_V1" and report.llm_calls == 0 and len(endpoint.requests) == calls
    assert report.chunks_enriched == edited.chunks_enriched + 1 and report.enrichment_cache_hits > 0


def test_a_new_prompt_version_or_question_count_reprocesses_every_document(tmp_path: Path, endpoint: Endpoint,
                                                                          embedder: Any) -> None:  # noqa: F811
    manifest = corpus(tmp_path)
    first, _ = ingest(tmp_path, endpoint.url, embedder, manifest)
    calls = len(endpoint.requests)
    bumped, _ = ingest(tmp_path, endpoint.url, embedder, manifest, prompt_version="2")
    assert bumped.documents_written == 2 and bumped.enrichment_cache_hits == first.enrichment_cache_hits
    assert len(endpoint.requests) - calls == first.llm_calls
    fewer, _ = ingest(tmp_path, endpoint.url, embedder, manifest, prompt_version="2", questions=9)
    assert fewer.documents_written == 2 and fewer.chunks_enriched == first.chunks_enriched


def test_a_rejecting_endpoint_fails_the_document_not_the_run(tmp_path: Path, endpoint: Endpoint,
                                                             embedder: Any) -> None:  # noqa: F811
    def reply(body: dict[str, Any]) -> tuple[int, Any]:
        text = body["messages"][-1]["content"]
        return (400, {"error": "bad"}) if "Receipts" in text else (200, {"choices": [{"message": {"content": "{}"}}]})

    endpoint.reply = reply
    report, cfg = ingest(tmp_path, endpoint.url, embedder, corpus(tmp_path))
    assert report.documents_written == 1 and [Path(w).name for w, _ in report.failures] == ["expenses.md"]
    assert "HTTP 400" in report.failures[0][1]


def test_extractive_enrichment_is_offline_and_its_vectors_are_the_embedders(tmp_path: Path, embedder: Any) -> None:
    cfg = make_settings(tmp_path, embeddings={"profiles": {"sample": {"enrichment": {"provider": "extractive",
                                                                                      "questions": 3}}}})
    store = SqliteVectorStore(cfg.resolve_path(cfg.store.sqlite.path))
    try:
        report = IngestPipeline.from_settings(cfg, store, embedder, enricher_for=enricher_for(cfg)).run(corpus(tmp_path))
        assert report.ok and report.llm_calls == 0 and report.questions_written > 0
        question = "What is Carry-over?"
        hit = store.search_questions("KB_SAMPLE_V1", QueryVector(embedder.embed_queries([question])[0],
                                                                 embedder.model_id), 1).hits[0]
        assert hit.question == question and hit.chunk.doc_id == "leave"
        # the question's vector is the embedder's vector of that text (never re-embedded differently)
        assert np.isclose(hit.score, float(np.dot(embedder.embed_queries([question])[0],
                                                  embedder.embed_documents([question])[0])), atol=1e-3)
    finally:
        store.close()


def test_an_assigned_content_type_picks_the_profiles_embedding_template(tmp_path: Path) -> None:
    from backend.core.types import Chunk
    from backend.ingest.enrichment_stage import EnrichmentStage
    from backend.providers.local.extractive_enricher import ExtractiveEnricher
    from backend.providers.sqlite_vs.enrichment_cache import SqliteEnrichmentCache

    cfg = make_settings(tmp_path, embeddings={"profiles": {"sample": {
        "templates": {"policy": "Policy document:"}, "enrichment": {"provider": "extractive", "questions": 2}}}})
    profile = cfg.embeddings.profile_for()
    stage = EnrichmentStage(cfg, profile, ExtractiveEnricher(profile.enrichment, {}, ("policy",)),
                            SqliteEnrichmentCache(str(tmp_path / "cache.sqlite")))
    chunk = Chunk("leave::0", "leave", "Every employee receives 25 days of paid annual leave per year.", "hr/leave.md",
                  0, metadata={"title": "Leave policy", "heading_path": ["Leave"]})
    manual = Chunk("manual::0", "manual", "Every employee receives 25 days of paid annual leave per year.",
                   "hr/manual.md", 0, metadata={"content_type": "faq", "heading_path": []})
    (enriched,) = stage.enrich("leave", "hr/leave.md", {"title": "Leave policy"}, [chunk]).chunks
    assert enriched.metadata["content_type"] == "policy"
    assert enriched.text == chunk.text and enriched.text_to_embed == f"Policy document:\n{chunk.text}"
    (kept,) = stage.enrich("manual", "hr/manual.md", {}, [manual]).chunks
    assert kept.metadata["content_type"] == "faq" and kept.text_to_embed == manual.text_to_embed  # manifest wins
    assert stage.stats.chunks_enriched == 2 and stage.stats.llm_calls == 0
