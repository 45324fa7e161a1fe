"""OpenTelemetry spans of an ingest and its gate (docs/OBSERVABILITY.md): a real folder (text,
Markdown, DOCX) with PII, sanitized in the worker process, ingested, evaluated and promoted;
one span per stage, in one trace per run, and no document text or PII in any of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import docx

from tests.promoting import promote as promote_version
from backend.ingest.folder import walk_folder
from backend.ingest.pipeline import IngestPipeline
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import make_settings
from tests.ingest.helpers import write_manifest
from tests.telemetry_checks import assert_no_text, by_name, in_memory_telemetry, metric_points, parent_name

LEAVE = ("Full-time staff receive twenty-five days of paid annual leave each year. Requests go to Maria Jensen "
         "at maria.jensen@example.com two weeks ahead.")
TRAVEL = "Business travel must be booked through the travel desk. Economy class applies to flights under six hours."
EXPENSES = "# Expenses\n\nReceipts are submitted within thirty days. Meals are reimbursed up to forty euros a day."
QUESTIONS = ["How many days of annual leave do full-time staff get?", "Which class applies to short flights?"]


def _folder(root: Path) -> Path:
    folder = root / "policies"
    folder.mkdir()
    (folder / "leave.txt").write_text(LEAVE, encoding="utf-8")
    (folder / "expenses.md").write_text(EXPENSES, encoding="utf-8")
    document = docx.Document()
    document.add_paragraph(TRAVEL)
    document.save(str(folder / "travel.docx"))
    return folder


def test_ingest_and_promotion_are_traced_stage_by_stage_without_text(tmp_path: Path, embedder: Any) -> None:
    settings = make_settings(tmp_path, sanitize={"enabled": True, "mode": "redact",
                                                 "audit_path": str(tmp_path / "pii.jsonl")},
                             ingest={"documents_per_transaction": 1})  # three groups: the next one prepared ahead
    walk = walk_folder(_folder(tmp_path))
    manifest = write_manifest(tmp_path / "m.jsonl", walk.manifest_lines())
    golden = tmp_path / "golden.jsonl"
    ids = {Path(line["path"]).name: line["doc_id"] for line in walk.manifest_lines()}
    golden.write_text("".join(json.dumps(q) + "\n" for q in [
        {"query": QUESTIONS[0], "expected_sources": {ids["leave.txt"]: 3}, "expected_mode": "rag"},
        {"query": QUESTIONS[1], "expected_sources": {ids["travel.docx"]: 3}, "expected_mode": "rag"}]))
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    try:
        with in_memory_telemetry() as (exporter, reader):
            report = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest)
            result = promote_version(settings, store, embedder, version=report.version, golden=golden, force=True)
            spans = exporter.get_finished_spans()
            durations = metric_points(reader, "rag.stage.duration")
    finally:
        store.close()
    assert not report.failures and report.documents_written == 3 and result.promoted
    named = by_name(spans)
    assert {"rag.ingest", "rag.ingest.version", "rag.load", "rag.sanitize", "rag.chunk", "rag.embed", "rag.write",
            "rag.promote", "rag.evaluate"} <= set(named)
    # one trace for the ingest, one for the promotion
    [ingest], [promote] = named["rag.ingest"], named["rag.promote"]
    assert ingest.parent is None and promote.parent is None
    assert ingest.context.trace_id != promote.context.trace_id
    stages = [s for s in spans if s.context.trace_id == ingest.context.trace_id]
    assert {parent_name(s, spans) for s in named["rag.ingest.version"]} == {"rag.ingest"}
    # every stage, those prepared ahead in the sanitize thread included, is a child of its version's span
    for stage in ("rag.load", "rag.sanitize", "rag.chunk", "rag.embed", "rag.write"):
        assert {parent_name(s, spans) for s in named[stage]} == {"rag.ingest.version"}, stage
    assert sorted(s.attributes["rag.document.type"] for s in named["rag.load"]) == [".docx", ".md", ".txt"]
    assert len(named["rag.chunk"]) == 3 and len(named["rag.sanitize"]) == 3
    assert sum(s.attributes["rag.pii.findings"] for s in named["rag.sanitize"]) >= 2  # the name and the address
    assert ingest.attributes["rag.documents.written"] == 3
    assert ingest.attributes["rag.chunks.written"] == report.chunks_written == sum(
        s.attributes["rag.chunks"] for s in named["rag.write"])
    [version] = named["rag.ingest.version"]
    assert (version.attributes["rag.version"], version.attributes["rag.ingest.action"]) == (report.version, "create")
    embeds = [s for s in named["rag.embed"] if s in stages]
    assert embeds and {s.attributes["gen_ai.request.model"] for s in embeds} == {embedder.model_id}
    assert {s.attributes["gen_ai.operation.name"] for s in embeds} == {"embeddings"}
    # the gate: the candidate's evaluation under the promotion
    assert {parent_name(s, spans) for s in named["rag.evaluate"]} == {"rag.promote"}
    [evaluate] = named["rag.evaluate"]  # the alias served nothing: no baseline
    assert (evaluate.attributes["rag.version"], evaluate.attributes["rag.golden.queries"]) == (report.version, 2)
    assert (promote.attributes["rag.promoted"], promote.attributes["rag.alias"]) == (True, result.alias)
    assert_no_text(spans, [LEAVE, TRAVEL, EXPENSES, *QUESTIONS, "Maria Jensen", "maria.jensen@example.com",
                           "maria jensen example"])
    assert {"rag.load", "rag.sanitize", "rag.chunk", "rag.embed", "rag.write", "rag.evaluate",
            "rag.promote"} <= set(durations)
