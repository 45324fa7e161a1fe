"""Real files for the citation tests, ingested by the real pipeline from a folder outside the
repository (as an operator's knowledge base would be): a Markdown guide whose one chunk starts
under the title but holds a table under a later heading, a three-page PDF (one chunk that starts
on page 1 and runs to page 3) and a plain-text note; plus one document stored the way an older
ingest stored it, with an absolute server path as its source."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.common.config import Settings
from backend.core.types import Chunk, DocumentWrite, content_hash
from tests.conftest import make_settings
from tests.ingest.helpers import write_pdf as pdf_file

GUIDE = """# NWA-C200 Appliance Guide

Owner: Field Engineering

## Firmware

Appliances run the firmware version listed in FieldLink. Updates are installed only from the encrypted field USB
stick and take about 20 minutes. Never install a beta firmware at a customer site.

## Blinking red LED

| Status LED | Meaning | What to do |
|---|---|---|
| Blinking red | Overheating of the appliance | Check the air inlet and shut the appliance down if it still blinks after 15 minutes |
| Steady amber | Disk or fan fault | Open a FieldLink case and replace the faulty part |
"""
PDF_PAGES = [
    "Facility handbook. Visitors sign in at the main reception desk and wear a visitor badge at all times "
    "while they are inside the building.",
    "The server room is on the second floor. Only staff with a personal access badge may enter it, and every "
    "visit is logged by the security team.",
    "The backup diesel generator is tested on the first Monday of every month for thirty minutes. The test is "
    "run by the facilities team before office hours.",
]
NOTE = ("Expense claims are submitted in the finance portal within thirty days of the purchase. Receipts over "
        "fifty euros must be attached as a scan.\n")
LEGACY_SOURCE = "/srv/private/knowledge-base/legacy/parking-permits.md"
LEGACY_TEXT = ("Parking permits for the staff garage are renewed every January at the facilities desk. A permit "
               "costs forty euros per year.")

ROW_QUESTION = "What does a blinking red status LED mean?"
PDF_QUESTION = "How often is the backup diesel generator tested?"
LEGACY_QUESTION = "When are staff garage parking permits renewed?"


def write_pdf(path: Path, pages: list[str]) -> None:
    pdf_file(path, pages, size=11, line_height=6)


@dataclass
class CitationCorpus:
    settings: Settings
    store: Any
    version: str
    kb: Path


def build(root: Path, embedder: Any, **overrides: Any) -> CitationCorpus:
    from backend.ingest.pipeline import IngestPipeline
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    kb = root / "kb"
    (kb / "docs").mkdir(parents=True)
    (kb / "docs" / "appliance-guide.md").write_text(GUIDE, encoding="utf-8")
    write_pdf(kb / "docs" / "facility-handbook.pdf", PDF_PAGES)
    (kb / "docs" / "expenses.txt").write_text(NOTE, encoding="utf-8")
    manifest = kb / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(line) + "\n" for line in (
        {"path": "docs/appliance-guide.md", "doc_id": "appliance-guide"},
        {"path": "docs/facility-handbook.pdf", "doc_id": "facility-handbook"},
        {"path": "docs/expenses.txt", "doc_id": "expenses"},
    )), encoding="utf-8")
    # the shipped chunker keeps a document of up to 1000 characters as one chunk: each document here
    # is one chunk, which starts under its title (or on page 1) and holds what the questions ask for
    settings = make_settings(root, **overrides)
    store = SqliteVectorStore(settings.resolve_path(settings.store.sqlite.path))
    report = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest)
    assert not report.failures and not report.manifest_errors, (report.failures, report.manifest_errors)
    version = report.versions[0]
    # a document as an older ingest stored it: its source is the absolute path the server read
    legacy = Chunk("parking-permits::0", "parking-permits", LEGACY_TEXT, LEGACY_SOURCE, 0,
                   metadata={"heading_path": [], "char_start": 0})
    store.write_documents(version, [DocumentWrite("parking-permits", content_hash(LEGACY_TEXT), [legacy],
                                                  embedder.embed_documents([LEGACY_TEXT]))])
    store.point_alias(settings.embeddings.alias.name, version, reason="citation tests")
    return CitationCorpus(settings, store, version, kb)
