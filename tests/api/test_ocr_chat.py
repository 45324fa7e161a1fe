"""A sentence that exists only in a scanned page, end to end: `rag ingest` (the CLI, the loader
worker, OCR) then `/chat` answers it `rag` citing the scanned page; a PDF with a good text
layer ingests exactly as with OCR off (no OCR page, same chunks, same hashes); a corrupt image
in the same run fails alone, named, and the rest is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from backend.api.app import create_app
from backend.runtime import build_services
from backend.cli.main import cli
from backend.common.config import load_settings
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.ingest.helpers import REPO, write_config, write_manifest
from backend.benchmarks.scan_pages import scanned_page
from tests.ingest.mixed_pdf import mixed_pdf

pytest.importorskip("rapidocr", reason="the `ocr` extra (make setup-test installs it)")

SCANNED = ("The diesel generator in building C is load tested every second Tuesday at seven in the morning "
           "by the facilities team.")
FIRST_PAGE = "The visitor policy says that every guest signs in at the front desk and wears a visible badge."


def _ingest(config: Path, manifest: Path) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(manifest), "--json"])
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}, result.output


def test_a_sentence_only_in_a_scanned_page_is_answered_rag_citing_its_page(tmp_path: Path, embedder: Any,
                                                                           extractive: Any) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    mixed_pdf(FIRST_PAGE, scanned_page([SCANNED]), kb / "facilities.pdf")
    (kb / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00not a picture" * 40)
    manifest = write_manifest(kb / "manifest.jsonl", [{"path": "facilities.pdf", "doc_id": "facilities"},
                                                      {"path": "broken.png", "doc_id": "broken"}])
    config = write_config(tmp_path, kb)
    code, body, output = _ingest(config, manifest)
    assert code == 1, output  # one file failed; the other was written
    assert [f["where"] for f in body["failures"]] == [str(kb / "broken.png")]
    assert body["failures"][0]["reason"].startswith("corrupt or unsupported image: cannot identify image file")
    assert body["documents_written"] == 1 and body["ocr_pages"] == 1
    settings = load_settings(config, env={})
    store = SqliteVectorStore(tmp_path / "cli.sqlite")
    version = body["versions"][0]
    assert set(store.document_hashes(version)) == {"facilities"}
    store.point_alias(settings.embeddings.alias.name, version, reason="ocr test")
    services = build_services(settings, store=store, embedder=embedder, primary=extractive)
    client = create_app(settings, services).test_client()
    resp = client.post("/chat", json={"question": "When is the diesel generator in building C load tested?"})
    answer = resp.get_json()
    assert resp.status_code == 200, answer
    assert answer["mode"] == "rag", answer["decision_explain"]
    assert "second Tuesday" in answer["answer"]
    cited = [c for c in answer["citations"] if c["marker"] is not None]
    assert cited and cited[0]["page"] == "2" and cited[0]["doc_id"] == "facilities"
    store.close()


def test_a_pdf_with_a_good_text_layer_ingests_exactly_as_with_ocr_off(tmp_path: Path, embedder: Any) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    pdf = REPO / "data" / "sample" / "backup-policy.pdf"
    (kb / "backup-policy.pdf").write_bytes(pdf.read_bytes())
    manifest = write_manifest(kb / "manifest.jsonl", [{"path": "backup-policy.pdf", "doc_id": "backup"}])
    stored = {}
    for name, ocr in (("on", {}), ("off", {"enabled": False})):
        config = write_config(tmp_path, kb, name=f"{name}.yaml", db=f"{name}.sqlite",
                              ingest={"allowed_roots": [str(kb)], "progress": False, "ocr": ocr})
        code, body, output = _ingest(config, manifest)
        assert code == 0, output
        assert body["ocr_pages"] == 0
        store = SqliteVectorStore(tmp_path / f"{name}.sqlite")
        version = body["versions"][0]
        stored[name] = _chunk_rows(tmp_path / f"{name}.sqlite", version)
        store.close()
    # the same chunks: ids, text, what was embedded (embed_hash), content hashes and metadata
    assert stored["on"] == stored["off"] and len(stored["on"]) >= 1
    # OCR off is a non-default OCR setting, and so part of the hash; at the defaults it is absent
    from backend.common.config import OcrSettings
    from backend.ingest.fingerprint import ocr_fingerprint

    assert ocr_fingerprint(OcrSettings(), image_file=False) is None
    assert ocr_fingerprint(OcrSettings(enabled=False), image_file=False) is not None


def _chunk_rows(db: Path, version: str) -> list[tuple[Any, ...]]:
    """Every chunk of ``version`` as stored: id, text, hashes, metadata."""
    import sqlite3

    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        table = next(t for t in tables if t.lower() == version.lower())
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        wanted = [c for c in ("chunk_id", "text", "content_hash", "embed_hash", "metadata") if c in cols]
        return list(conn.execute(f"SELECT {', '.join(wanted)} FROM {table} ORDER BY chunk_id"))
