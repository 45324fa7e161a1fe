"""With sanitizing on (redact), no planted value escapes into any artefact of a run.

One ingest (two documents, one per transaction so the analyzer runs in its worker
process), chat requests over HTTP (answered, and refused with an error), and a
``rag eval`` through the CLI. Then every file the run wrote under the test folder
(the SQLite store with its FTS index and interactions table, WAL files, the audit
file, the evaluation report) and everything printed or logged (stdout, stderr at
the file-descriptor level, so the worker process too) is searched for every
planted value, and for each name's words in lower case (FTS tokens).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import make_settings

NAME = "Maria Gonzalez"
VALUES = [NAME, "maria.gonzalez@example.com", "(212) 555-0198", "+1 415 555 0134", "DE89 3704 0044 0532 0130 00",
          "4111 1111 1111 1111", "536-22-8519", "192.168.10.24", "221 Baker Street", "Siobhan O'Sullivan",
          "siobhan@corp-mail.net"]
DOC_A = f"""# Onboarding record

Please complete the onboarding record for our new analyst, {NAME}. She reports to Siobhan O'Sullivan and
lives at 221 Baker Street, London NW1 6XE.

Her e-mail address is maria.gonzalez@example.com and her mobile phone number is (212) 555-0198. Her manager
can be reached at siobhan@corp-mail.net or on +1 415 555 0134.
"""
DOC_B = """# Payroll details

The monthly salary is paid to IBAN DE89 3704 0044 0532 0130 00. Her social security number is 536-22-8519.
The corporate expense card 4111 1111 1111 1111 was issued last week. Her laptop has the address 192.168.10.24.
Annual leave is 25 days a year for every employee.
"""


def _leaks(blob: bytes) -> list[str]:
    found = [v for v in VALUES if v.encode() in blob]
    tokens = {w.lower() for v in (NAME, "Siobhan O'Sullivan") for w in v.replace("'", " ").split() if len(w) > 3}
    found += [t for t in tokens if t.encode() in blob.lower()]
    return found


@pytest.mark.slow
def test_no_planted_value_reaches_store_fts_interactions_reports_logs_or_errors(
        tmp_path: Path, embedder: Any, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    from backend.api.app import create_app
    from backend.runtime import build_services
    from backend.cli.main import cli
    from backend.core.services.conversation import conversation_key
    from backend.ingest.pipeline import IngestPipeline
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    caplog.set_level(logging.INFO)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "a.md").write_text(DOC_A, encoding="utf-8")
    (inputs / "b.md").write_text(DOC_B, encoding="utf-8")
    manifest = inputs / "m.jsonl"
    manifest.write_text(
        json.dumps({"path": str(inputs / "a.md"), "doc_id": "onboarding",
                    "metadata": {"owner": NAME, "contact": "maria.gonzalez@example.com"}}) + "\n"
        + json.dumps({"path": str(inputs / "b.md"), "doc_id": "payroll"}) + "\n", encoding="utf-8")
    golden = inputs / "golden.jsonl"
    golden.write_text(json.dumps({"id": "q1", "query": f"How many leave days does {NAME} get, card 4111 1111 1111 1111?",
                                  "expected_mode": "rag", "expected_sources": {"payroll": 1}}) + "\n")
    out = tmp_path / "out"
    settings = make_settings(out, sanitize={"enabled": True, "mode": "redact", "audit_path": str(out / "audit.jsonl")},
                             ingest={"documents_per_transaction": 1, "allowed_roots": [str(inputs)]})
    version = settings.embeddings.profiles[settings.embeddings.default_profile].index_name

    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    try:
        report = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest)
        assert report.ok and report.documents_written == 2, (report.failures, report.manifest_errors)
        store.point_alias(settings.embeddings.alias.name, version, reason="test", forced=True)
        client = create_app(settings, build_services(settings, store=store, embedder=embedder)).test_client()
        ok = client.post("/chat", json={"question": f"What is the phone number of {NAME} (maria.gonzalez@example.com)?",
                                        "conversation_id": "maria.gonzalez@example.com"})
        assert ok.status_code == 200, ok.get_json()
        # a streamed follow-up (condensed with the stored turn) and feedback naming the person
        follow = client.post("/chat/stream", json={"question": f"and what about {NAME}'s manager?",
                                                   "conversation_id": "maria.gonzalez@example.com"})
        done = [json.loads(line[6:]) for line in follow.get_data(as_text=True).splitlines() if line.startswith("data: ")]
        assert follow.status_code == 200 and done[-1]["decision_explain"]["condensed_by"] == "rule"
        assert client.post("/feedback", json={"interaction_id": done[-1]["interaction_id"], "rating": "down",
                                              "comment": f"{NAME} is not in this answer",
                                              "expected_answer": "Write to maria.gonzalez@example.com"}).status_code == 201
        bad = client.post("/chat", json={"question": f"Card 4111 1111 1111 1111 of {NAME}?", "top_k": 10_000})
        assert bad.status_code in (400, 422)
        interactions = store.interactions()
        assert len(interactions) == 2 and {i.conversation_id for i in interactions} == {"<EMAIL_ADDRESS>"}
        turns = store.conversation_turns(conversation_key("maria.gonzalez@example.com"), None)
        assert len(turns) == 2 and "<PERSON>" in turns[1].effective_query
        assert [_leaks(repr(x).encode()) for x in (interactions, turns, store.feedback())] == [[], [], []]
        assert _leaks(repr(interactions).encode()) == []
    finally:
        store.close()

    monkeypatch.setenv("RAG_STORE__SQLITE__PATH", str(settings.resolve_path(settings.store.sqlite.path)))
    monkeypatch.setenv("RAG_EVALUATION__REPORTS_DIR", settings.evaluation.reports_dir)
    monkeypatch.setenv("RAG_DOCX__ASSETS_DIR", settings.docx.assets_dir)
    monkeypatch.setenv("SANITIZE_ENABLED", "1")
    monkeypatch.setenv("SANITIZE_MODE", "redact")
    monkeypatch.setenv("RAG_SANITIZE__AUDIT_PATH", str(out / "audit.jsonl"))
    result = CliRunner().invoke(cli, ["eval", "--version", version, "--golden", str(golden), "--json"])
    assert result.exit_code in (0, 3), result.output
    assert json.loads(result.stdout)["queries"][0]["query"].count("<PERSON>") == 1

    written = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert any(p.suffix == ".sqlite" for p in written) and any(p.name == "audit.jsonl" for p in written)
    assert any(p.suffix == ".json" for p in written), sorted(map(str, written))  # the evaluation report
    leaked = {str(p.relative_to(out)): _leaks(blob) for p, blob in written.items() if _leaks(blob)}
    captured = capfd.readouterr()
    printed = (result.output + captured.out + captured.err + "\n".join(r.getMessage() for r in caplog.records)
               + bad.get_data(as_text=True))  # (the 200 answer may show the asker their own question)
    assert leaked == {}
    assert _leaks(printed.encode()) == []
