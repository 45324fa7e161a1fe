"""The pipeline end to end on real files, the real model and the real SQLite store."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import docx
import numpy as np
import pytest
import structlog
from PIL import Image

from backend.common.errors import ConfigError, ProviderError
from backend.core.types import QueryVector
from backend.ingest.pipeline import IngestPipeline
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import make_settings
from tests.ingest.helpers import FIXTURES, FlakyEmbedder, write_corpus, write_manifest


@pytest.fixture
def store(tmp_path: Path) -> Any:
    s = SqliteVectorStore(tmp_path / "ingest.sqlite")
    yield s
    s.close()


def rows(store: Any, version: str) -> dict[str, tuple[str, str, str]]:
    con = store._conn()
    return {r[0]: (r[1], r[2], r[3]) for r in con.execute(f"SELECT chunk_id, doc_id, content_hash, doc_hash FROM {version}")}


def test_second_run_of_unchanged_manifest_embeds_nothing(tmp_path: Path, store: Any, embedder: Any) -> None:
    write_corpus(tmp_path / "kb", 4, sentences=40)
    manifest = write_manifest(tmp_path / "kb" / "m.jsonl", [{"dir": "."}])
    pipeline = IngestPipeline.from_settings(make_settings(tmp_path), store, embedder)
    before = embedder.texts_embedded
    first = pipeline.run(manifest)
    computed_first = embedder.texts_embedded - before
    assert (first.documents_seen, first.documents_written, first.failed) == (4, 4, 0)
    assert first.chunks_written == computed_first == first.embeddings_computed
    assert first.chunks_written > 4
    before = embedder.texts_embedded
    second = pipeline.run(manifest)
    assert embedder.texts_embedded - before == 0
    assert (second.skipped_unchanged, second.documents_written, second.embeddings_computed) == (4, 0, 0)
    assert store.get_version("KB_SAMPLE_V1").chunk_count == first.chunks_written
    assert store.list_aliases() == {}


def test_changing_one_file_reembeds_only_its_chunks(tmp_path: Path, store: Any, embedder: Any) -> None:
    paths = write_corpus(tmp_path / "kb", 3, sentences=30)
    manifest = write_manifest(tmp_path / "kb" / "m.jsonl", [{"dir": "."}])
    pipeline = IngestPipeline.from_settings(make_settings(tmp_path), store, embedder)
    pipeline.run(manifest)
    old = rows(store, "KB_SAMPLE_V1")
    text = paths[1].read_text(encoding="utf-8")
    paths[1].write_text(text.replace("Rule 29 of the", "Final rule 29 of the"), encoding="utf-8")
    before = embedder.texts_embedded
    report = pipeline.run(manifest)
    new = rows(store, "KB_SAMPLE_V1")
    changed = {cid for cid in new if new[cid][1] != old.get(cid, (None, None))[1]}
    assert (report.skipped_unchanged, report.documents_written) == (2, 1)
    assert changed == {max(cid for cid in new if cid.startswith("doc_001.txt::"))}
    assert embedder.texts_embedded - before == 1 == report.embeddings_computed
    assert report.embeddings_reused == report.chunks_written - 1
    assert {cid: v for cid, v in new.items() if v[0] != "doc_001.txt"} == \
        {cid: v for cid, v in old.items() if v[0] != "doc_001.txt"}


def test_prune_removes_documents_no_longer_listed(tmp_path: Path, store: Any, embedder: Any) -> None:
    write_corpus(tmp_path / "kb", 3)
    pipeline = IngestPipeline.from_settings(make_settings(tmp_path), store, embedder)
    pipeline.run(write_manifest(tmp_path / "kb" / "all.jsonl", [{"dir": "."}]))
    fewer = write_manifest(tmp_path / "kb" / "fewer.jsonl", [{"path": "doc_000.txt"}, {"path": "doc_002.txt"}])
    kept = pipeline.run(fewer)
    assert set(store.document_hashes("KB_SAMPLE_V1")) == {"doc_000.txt", "doc_001.txt", "doc_002.txt"}
    pruned = pipeline.run(fewer, prune=True)
    assert (kept.documents_pruned, pruned.documents_pruned) == (0, 1)
    assert set(store.document_hashes("KB_SAMPLE_V1")) == {"doc_000.txt", "doc_002.txt"}


def test_bad_files_fail_alone_and_the_run_continues(tmp_path: Path, store: Any, embedder: Any) -> None:
    kb = tmp_path / "kb"
    write_corpus(kb, 2)
    (kb / "empty.md").write_text("", encoding="utf-8")
    (kb / "broken.docx").write_bytes(b"not a zip")
    (kb / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    manifest = write_manifest(kb / "m.jsonl", [{"dir": "."}])
    with structlog.testing.capture_logs() as logs:
        report = IngestPipeline.from_settings(make_settings(tmp_path), store, embedder).run(manifest)
    failed_events = {Path(e["file"]).name: e["reason"] for e in logs if e["event"] == "ingest.file_failed"}
    reasons = {Path(where).name: reason for where, reason in report.failures}
    assert failed_events == reasons
    assert set(reasons) == {"empty.md", "broken.docx", "broken.pdf"}
    assert reasons["empty.md"] == "empty file (0 bytes)"
    assert reasons["broken.docx"].startswith("corrupt DOCX")
    assert reasons["broken.pdf"].startswith("corrupt PDF")
    assert (report.documents_seen, report.documents_written, report.ok) == (5, 2, False)
    assert set(store.document_hashes("KB_SAMPLE_V1")) == {"doc_000.txt", "doc_001.txt"}


def test_permanent_provider_error_is_reported_for_that_document_only(tmp_path: Path, store: Any, embedder: Any) -> None:
    write_corpus(tmp_path / "kb", 3)
    manifest = write_manifest(tmp_path / "kb" / "m.jsonl", [{"dir": "."}])
    flaky = FlakyEmbedder(embedder, fail_on="document 1:", fail_with=ProviderError("input rejected by provider"))
    report = IngestPipeline.from_settings(make_settings(tmp_path), store, flaky).run(manifest)
    assert [(Path(w).name, r) for w, r in report.failures] == [("doc_001.txt", "input rejected by provider")]
    assert set(store.document_hashes("KB_SAMPLE_V1")) == {"doc_000.txt", "doc_002.txt"}
    assert report.documents_written == 2


def test_chunks_carry_manifest_metadata_and_templates_are_embedded_not_stored(
        tmp_path: Path, store: Any, embedder: Any) -> None:
    settings = make_settings(tmp_path, embeddings={"profiles": {"sample": {
        "index_name": "KB_SAMPLE_V1", "templates": {"policy": "HR policy document:"}}}})
    manifest = write_manifest(tmp_path / "m.jsonl", [{
        "path": str(FIXTURES / "vacation.txt"), "doc_id": "hr/vacation", "tags": ["hr"], "lang": "en",
        "content_type": "policy", "updated_at": "2025-02-01", "metadata": {"owner": "people-ops"}}])
    IngestPipeline.from_settings(settings, store, embedder).run(manifest)
    hit = store.search("KB_SAMPLE_V1", QueryVector(embedder.embed_queries(["paid vacation days"])[0], embedder.model_id), 1).hits[0]
    chunk = hit.chunk
    assert chunk.chunk_id == "hr/vacation::0" and chunk.source == "tests/fixtures/ingest/vacation.txt"
    assert chunk.text.startswith("Vacation policy\n\nEmployees accrue twenty days")
    assert {k: chunk.metadata[k] for k in ("tags", "lang", "content_type", "updated_at", "owner")} == {
        "tags": ["hr"], "lang": "en", "content_type": "policy", "updated_at": "2025-02-01", "owner": "people-ops"}
    templated = embedder.embed_documents([f"HR policy document:\n{chunk.text}"])[0]
    stored = store.cached_vectors(embedder.model_id, [__import__("hashlib").sha256(
        f"HR policy document:\n{chunk.text}".encode()).hexdigest()])
    assert len(stored) == 1 and np.allclose(next(iter(stored.values())), templated, atol=1e-5)


def test_domain_key_writes_the_domains_index(tmp_path: Path, store: Any, embedder: Any) -> None:
    write_corpus(tmp_path / "kb", 1)
    manifest = write_manifest(tmp_path / "kb" / "m.jsonl", [{"dir": "."}])
    pipeline = IngestPipeline.from_settings(make_settings(tmp_path), store, embedder)
    report = pipeline.run(manifest, domain_key="handbook")
    assert report.version == "KB_HANDBOOK_V1"
    assert store.get_version("KB_HANDBOOK_V1").doc_count == 1
    with pytest.raises(ConfigError, match=r"--domain-key 'nope' is not configured; known: \['handbook'\]"):
        pipeline.run(manifest, domain_key="nope")


def _docx_with_figure(path: Path) -> Path:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(buf, format="PNG")
    buf.seek(0)
    document = docx.Document()
    document.add_paragraph("The evacuation map shows every exit on the floor.")
    document.add_picture(buf)
    document.add_paragraph("Figure 1: Evacuation map of floor 3", style="Caption")
    document.add_paragraph("Meet at the assembly point in the car park.")
    document.save(str(path))
    return path


def test_docx_figures_become_placeholders_and_figure_chunks(tmp_path: Path, store: Any, embedder: Any) -> None:
    path = _docx_with_figure(tmp_path / "safety.docx")
    manifest = write_manifest(tmp_path / "m.jsonl", [{"path": path.name}])
    report = IngestPipeline.from_settings(make_settings(tmp_path), store, embedder).run(manifest)
    assert report.failures == [] and report.chunks_written == 2
    con = store._conn()
    got = {r[0]: (r[1], r[2], json.loads(r[3])) for r in con.execute(
        "SELECT chunk_id, chunk_type, text, metadata FROM KB_SAMPLE_V1")}
    text_type, text, _ = got["safety.docx::0"]
    assert text_type == "text" and "[FIGURE:" in text and text.startswith("The evacuation map")
    [figure_id] = [cid for cid in got if "::fig::" in cid]
    kind, description, meta = got[figure_id]
    assert kind == "figure" and "Caption: Figure 1: Evacuation map of floor 3" in description
    assert meta["parent_chunk_id"] == "safety.docx::0"


def test_every_docx_gets_both_summaries_even_without_pictures(tmp_path: Path, store: Any, embedder: Any) -> None:
    document = docx.Document()
    document.add_paragraph("Meet at the assembly point in the car park.")
    document.save(str(tmp_path / "plain.docx"))
    _docx_with_figure(tmp_path / "safety.docx")
    manifest = write_manifest(tmp_path / "m.jsonl", [{"path": "plain.docx"}, {"path": "safety.docx"}])
    with structlog.testing.capture_logs() as logs:
        report = IngestPipeline.from_settings(make_settings(tmp_path), store, embedder).run(manifest)
    assert report.failures == []
    summaries = {e["doc_id"]: e for e in logs if e["event"] == "DOCX_FIGURE_CHUNKING_SUMMARY"}
    assert set(summaries) == {"plain.docx", "safety.docx"}
    assert (summaries["plain.docx"]["figures"], summaries["plain.docx"]["figure_chunks"]) == (0, 0)
    assert (summaries["safety.docx"]["figures"], summaries["safety.docx"]["figure_chunks"]) == (1, 1)
    assert {e["doc_id"] for e in logs if e["event"] == "DOCX_IMAGES_SUMMARY"} == {"plain.docx", "safety.docx"}


def test_sanitize_redacts_before_chunking_and_writes_findings(tmp_path: Path, store: Any, embedder: Any) -> None:
    settings = make_settings(tmp_path, sanitize={"enabled": True, "mode": "redact",
                                                 "audit_path": str(tmp_path / "audit" / "pii.jsonl")})
    doc = tmp_path / "contact.txt"
    doc.write_text("Questions about payroll go to payroll.help@example.com every weekday.", encoding="utf-8")
    IngestPipeline.from_settings(settings, store, embedder).run(write_manifest(tmp_path / "m.jsonl", [{"path": doc.name}]))
    [text] = [r[0] for r in store._conn().execute("SELECT text FROM KB_SAMPLE_V1")]
    assert text == "Questions about payroll go to <EMAIL_ADDRESS> every weekday."
    [finding] = [json.loads(line) for line in (tmp_path / "audit" / "pii.jsonl").read_text().splitlines()]
    assert (finding["doc_id"], finding["entity_type"], finding["start"], finding["end"]) == (
        "contact.txt", "EMAIL_ADDRESS", 30, 54)
    assert "example.com" not in json.dumps(finding)


def test_sanitize_also_redacts_figure_captions(tmp_path: Path, store: Any, embedder: Any) -> None:
    settings = make_settings(tmp_path, sanitize={"enabled": True, "mode": "redact",
                                                 "audit_path": str(tmp_path / "pii.jsonl")})
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (0, 90, 200)).save(buf, format="PNG")
    buf.seek(0)
    document = docx.Document()
    document.add_paragraph("The escalation chart lists who to call.")
    document.add_picture(buf)
    document.add_paragraph("Figure 2: Escalations go to oncall.lead@example.com", style="Caption")
    document.save(str(tmp_path / "escalation.docx"))
    report = IngestPipeline.from_settings(settings, store, embedder).run(
        write_manifest(tmp_path / "m.jsonl", [{"path": "escalation.docx"}]))
    assert report.failures == []
    texts = {r[0]: r[1] for r in store._conn().execute("SELECT chunk_type, text FROM KB_SAMPLE_V1")}
    assert "Caption: Figure 2: Escalations go to <EMAIL_ADDRESS>" in texts["figure"]
    assert "example.com" not in texts["figure"] and "example.com" not in texts["text"]
