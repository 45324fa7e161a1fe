"""Killing ingestion at any moment and re-running gives the same table as one clean run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from tests.ingest.stored import documents_stored
from backend.cli.main import cli
from backend.common.config import load_settings
from backend.ingest.pipeline import IngestPipeline
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.ingest.helpers import REPO, write_config, write_corpus, write_manifest

pytestmark = pytest.mark.slow

DOCS = 30
VERSION = "KB_CRASH_V1"
PROFILE = {"crash": {"index_name": VERSION, "chunker": {"kind": "char", "size": 200, "overlap": 20}}}


def _documents_stored(db: Path) -> int:
    return documents_stored(db, VERSION)


def _ingest_process(config: Path, manifest: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "backend.cli.main", "--config", str(config), "ingest", str(manifest)],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _table(db: Path) -> dict[str, tuple[Any, ...]]:
    con = sqlite3.connect(db)
    try:
        rows = con.execute(f"SELECT chunk_id, doc_id, chunk_index, text, content_hash, doc_hash, embed_hash, metadata, "
                           f"embedding FROM {VERSION}").fetchall()
        assert con.execute("SELECT COUNT(*) FROM rag_aliases").fetchone()[0] == 0
    finally:
        con.close()
    return {r[0]: r for r in rows}


def test_killed_run_resumes_to_the_same_table_as_an_uninterrupted_run(tmp_path: Path, embedder: Any) -> None:
    kb = tmp_path / "kb"
    write_corpus(kb, DOCS, sentences=6)
    manifest = write_manifest(kb / "manifest.jsonl", [{"dir": "."}])
    # paced by the rate limiter (5 calls a second) so the kill lands mid-run
    sections = {"ingest": {"allowed_roots": [str(kb)], "progress": False, "documents_per_transaction": 1},
                "embeddings": {"default_profile": "crash", "profiles": PROFILE, "domains": {},
                               "batching": {"batch_size": 4, "rate_limit_per_min": 300}}}
    config = write_config(tmp_path, kb, db="killed.sqlite", **sections)
    db = tmp_path / "killed.sqlite"

    proc = _ingest_process(config, manifest)
    deadline = time.monotonic() + 240
    while _documents_stored(db) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    partial = _documents_stored(db)
    assert proc.returncode == -signal.SIGKILL
    assert 3 <= partial < DOCS

    rerun = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(manifest), "--json"])
    assert rerun.exit_code == 0, rerun.output
    resumed = json.loads(rerun.stdout)
    assert (resumed["skipped_unchanged"], resumed["documents_written"]) == (partial, DOCS - partial)

    sections["embeddings"]["batching"]["rate_limit_per_min"] = 0
    clean_config = write_config(tmp_path, kb, name="clean.yaml", db="clean.sqlite", **sections)
    settings = load_settings(clean_config, env={})
    store = SqliteVectorStore(tmp_path / "clean.sqlite")
    report = IngestPipeline.from_settings(settings, store, embedder).run(manifest)
    store.close()
    assert report.documents_written == DOCS and report.failed == 0

    killed, clean = _table(db), _table(tmp_path / "clean.sqlite")
    assert sorted(killed) == sorted(clean)
    assert len({(r[1], r[2]) for r in killed.values()}) == len(killed)
    assert len({r[1] for r in killed.values()}) == DOCS
    for chunk_id, row in clean.items():
        other = killed[chunk_id]
        assert other[1:8] == row[1:8], chunk_id
        assert np.allclose(np.frombuffer(other[8], np.float32), np.frombuffer(row[8], np.float32), atol=1e-5)
