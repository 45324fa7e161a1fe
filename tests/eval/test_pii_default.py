"""Issue 48: PII as the README says. The shipped profile audits PII at ingest: nothing is redacted,
``rag kb create`` and ``rag ingest DIR`` say how many findings and how to redact them, the
findings per document reach the audit log and the admin console (kinds and counts, never a value),
and the generated golden questions show no value the sanitizer flagged. Real files, model, store."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from backend.cli.main import cli
from backend.common.config import load_settings
from backend.core.services import admin_console
from backend.core.versions import VersionNaming
from backend.ingest.knowledge_bases import read_pii
from tests.conftest import REPO
from tests.ingest.helpers import write_config
from tests.ingest.kb_files import write_kb_folder

CONTACTS = """# Contacts

For travel bookings, contact Sigrid Aalberg at sigrid.aalberg@fjordline-travel.no or call +47 55 21 43 10.
The travel desk answers booking questions on weekdays between 09:00 and 15:00.
"""
VALUES = ("Sigrid", "Aalberg", "sigrid.aalberg@fjordline-travel.no", "55 21 43 10", "Halvorsen")


def _config(tmp_path: Path, mode: str = "audit") -> Path:
    return write_config(tmp_path, tmp_path / "unused-root", evaluation={"reports_dir": str(tmp_path / "reports")},
                        knowledge_bases={"registry_file": str(tmp_path / "kb.yaml"), "dir": str(tmp_path / "kb")},
                        sanitize={"enabled": True, "mode": mode, "audit_path": str(tmp_path / "audit" / "pii.jsonl")})


def test_the_shipped_profile_audits_pii_at_ingest() -> None:
    settings = load_settings(REPO / "config" / "rag.yaml", env={})
    assert (settings.sanitize.enabled, settings.sanitize.mode) == (True, "audit")


def test_kb_create_counts_the_findings_says_how_to_redact_and_shows_no_value(tmp_path: Path) -> None:
    config = _config(tmp_path)
    folder = write_kb_folder(tmp_path / "docs", extras=False)
    (folder / "contacts.md").write_text(CONTACTS, encoding="utf-8")
    run = CliRunner().invoke(cli, ["--config", str(config), "kb", "create", "travel", "--from", str(folder)])
    assert run.exit_code == 0, run.output
    pii_line = next(line for line in run.stdout.splitlines() if line.startswith("PII (audit):"))
    assert "finding(s) in " in pii_line and "EMAIL_ADDRESS 1" in pii_line and "PHONE_NUMBER 1" in pii_line
    assert f"per document in {tmp_path / 'audit' / 'pii.jsonl'}" in pii_line
    assert ("audit only: nothing was redacted, answers quote these values. To redact them, set sanitize.mode: "
            "redact (or RAG_SANITIZE__MODE=redact) and ingest again") in run.stdout

    # the audit log: one line per finding, its document and kind, never the value
    audit = [json.loads(line) for line in (tmp_path / "audit" / "pii.jsonl").read_text().splitlines()]
    contacts = [r for r in audit if r["doc_id"] == "contacts.md"]
    assert {r["entity_type"] for r in contacts} >= {"PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER"}
    assert all(set(r) == {"doc_id", "entity_type", "start", "end", "score", "recorded_at"} for r in audit)
    assert not any(value in json.dumps(audit) for value in VALUES)

    # the admin console's documents view: kinds and counts per document
    settings = load_settings(config, env={})
    counts = read_pii(settings, "travel")
    assert counts["contacts.md"]["EMAIL_ADDRESS"] == 1 and counts["contacts.md"]["PHONE_NUMBER"] == 1
    from backend.runtime import open_stores

    stores = open_stores(settings)
    try:
        kb = admin_console.knowledge_base(settings, "travel", managed={"travel"})
        view = admin_console.documents_view(stores, kb, VersionNaming(settings.ingest.version_name_template), counts)
    finally:
        stores.close()
    shown = {d["doc_id"]: d["pii"] for d in view["documents"]}
    assert shown["contacts.md"] == counts["contacts.md"] and len(shown) == 6
    assert all(shown[doc] == counts.get(doc, {}) for doc in shown)
    assert not any(value in json.dumps(view) for value in VALUES)

    # nothing redacted: the chunks keep the e-mail address; the generated golden set shows no flagged value
    golden = (tmp_path / "kb" / "travel" / "golden.generated.jsonl").read_text()
    assert "generated" in golden and not any(value in golden for value in VALUES)
    rows = [json.loads(line) for line in golden.splitlines() if line.startswith("{")]
    assert {r["expected_sources"][0] for r in rows if r["expected_mode"] == "rag"} >= {"greenhouse.txt", "contacts.md"}


def test_rag_ingest_dir_prints_the_findings_and_redact_mode_says_it_redacted(tmp_path: Path) -> None:
    config = _config(tmp_path, mode="redact")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "contacts.md").write_text(CONTACTS, encoding="utf-8")
    run = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(folder)])
    assert run.exit_code == 0, run.output
    assert "PII (redact):" in run.stdout and "EMAIL_ADDRESS 1" in run.stdout
    assert "redacted: the chunks hold typed placeholders" in run.stdout
    counts = read_pii(load_settings(config, env={}), "default")
    assert counts["contacts.md"]["EMAIL_ADDRESS"] == 1  # what the admin console shows for the default
