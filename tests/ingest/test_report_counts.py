"""The ingest report takes its stages' counts through ``common.counts.add_counts``: every field
named in its tables exists on both sides and is added, lists extended in place."""

from __future__ import annotations

from backend.common.counts import add_counts
from backend.ingest.embedding_batches import EmbeddingStats
from backend.ingest.enrichment_stage import EnrichmentStats
from backend.ingest.report import IngestReport


def test_add_counts_adds_named_pairs_and_extends_lists_in_place() -> None:
    into, source = IngestReport("m.jsonl"), IngestReport("other.jsonl", ocr_pages=3, notes=["n"])
    notes = into.notes
    add_counts(into, source, ("ocr_pages", "notes"))
    add_counts(into, source, {"documents_seen": "ocr_pages"})
    assert (into.ocr_pages, into.documents_seen, into.notes) == (3, 3, ["n"]) and into.notes is notes


def test_the_report_sums_enrichment_engine_and_absorbed_counts() -> None:
    report = IngestReport("m.jsonl", llm_calls=1, embeddings_reused=2, failures=[("a", "bad")])
    report.add_enrichment(EnrichmentStats(chunks_enriched=4, cache_hits=3, llm_calls=2, metadata_dropped=1,
                                          questions=5, summaries=6, seconds=0.5))
    report.add_engine_stats(EmbeddingStats(computed=7, reused=8, calls=9, retries=1, groups=2))
    report.absorb(IngestReport("m.jsonl", failures=[("b", "worse")], skipped=[("logo.png", "no text")],
                               notes=["x"], duplicates_dropped=2, ocr_pages=3, ocr_low_confidence_blocks=4,
                               pii_findings={"d": {"EMAIL": 1}}, pii_mode="redact"))
    assert (report.chunks_enriched, report.enrichment_cache_hits, report.llm_calls, report.metadata_dropped,
            report.questions_written, report.summaries_written, report.enrichment_seconds) == (4, 3, 3, 1, 5, 6, 0.5)
    assert (report.embeddings_computed, report.embeddings_reused, report.embedding_retries) == (7, 10, 1)
    assert report.failures == [("a", "bad"), ("b", "worse")] and report.skipped == [("logo.png", "no text")]
    assert (report.notes, report.duplicates_dropped, report.ocr_pages, report.ocr_low_confidence_blocks) == (
        ["x"], 2, 3, 4)
    assert report.pii_findings == {"d": {"EMAIL": 1}} and report.pii_mode == "redact"


def test_embedding_stats_add_every_field() -> None:
    total = EmbeddingStats(computed=1, reused=1, calls=1, retries=1, groups=1)
    total.add(EmbeddingStats(computed=2, reused=3, calls=4, retries=5, groups=6))
    assert total == EmbeddingStats(computed=3, reused=4, calls=5, retries=6, groups=7)
