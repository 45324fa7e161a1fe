"""The sample corpus, ingested once per session with the real pipeline and model.

The seed store holds four versions: ``KB_SAMPLE_V1`` and ``KB_SAMPLE_V2`` (the full
sample manifest, so both must pass the gates), ``KB_SAMPLE_BAD`` (only three
documents: it must fail them) and ``KB_HANDBOOK_V1`` (the handbook domain). No
alias exists yet. Each test gets its own copy of the file (SQLite backup API), so
rotations in one test never leak into another.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from backend.common.config import Settings
from backend.core.golden import GoldenSet, load_golden_set
from tests.conftest import REPO, make_settings

SAMPLE_MANIFEST = REPO / "manifests" / "sample.jsonl"
HANDBOOK_MANIFEST = REPO / "manifests" / "handbook.jsonl"
SAMPLE_GOLDEN = REPO / "data" / "golden" / "sample_golden.jsonl"
BAD_DOCS = ("annual-leave", "vpn-access", "visitor-policy")


def _profile_version(name: str) -> dict[str, Any]:
    return {"embeddings": {"profiles": {"sample": {"index_name": name}}}}


@pytest.fixture(scope="session")
def seed_store_path(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    from backend.ingest.pipeline import IngestPipeline
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    root = tmp_path_factory.mktemp("eval-seed")
    db = root / "seed.sqlite"
    store = SqliteVectorStore(db)
    bad_manifest = root / "bad.jsonl"
    lines = [json.loads(raw) for raw in SAMPLE_MANIFEST.read_text().splitlines()]
    bad_manifest.write_text("".join(
        json.dumps({**line, "path": str((SAMPLE_MANIFEST.parent / line["path"]).resolve())}) + "\n"
        for line in lines if line["doc_id"] in BAD_DOCS
    ))
    runs = [("KB_SAMPLE_V1", SAMPLE_MANIFEST, None), ("KB_SAMPLE_V2", SAMPLE_MANIFEST, None),
            ("KB_SAMPLE_BAD", bad_manifest, None), (None, HANDBOOK_MANIFEST, "handbook")]
    try:
        for version, manifest, domain in runs:
            settings = make_settings(root, **(_profile_version(version) if version else {}))
            report = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest, domain_key=domain)
            assert not report.failures and not report.manifest_errors, (report.failures, report.manifest_errors)
    finally:
        store.close()
    return db


@pytest.fixture
def eval_settings(tmp_path: Path, seed_store_path: Path) -> Settings:
    """Settings whose store is a private copy of the seed store."""
    settings = make_settings(tmp_path)
    src = sqlite3.connect(seed_store_path)
    dst = sqlite3.connect(settings.resolve_path(settings.store.sqlite.path))
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return settings


@pytest.fixture
def eval_store(eval_settings: Settings) -> Any:
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    store = SqliteVectorStore(eval_settings.resolve_path(eval_settings.store.sqlite.path))
    yield store
    store.close()


@pytest.fixture(scope="session")
def sample_golden() -> GoldenSet:
    return load_golden_set(SAMPLE_GOLDEN)


@pytest.fixture
def cli_env(eval_settings: Settings, eval_store: Any, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The CLI reads config/rag.yaml plus the environment: point it at the test's store copy."""
    monkeypatch.setenv("RAG_STORE__SQLITE__PATH", str(eval_settings.resolve_path(eval_settings.store.sqlite.path)))
    monkeypatch.setenv("RAG_EVALUATION__REPORTS_DIR", eval_settings.evaluation.reports_dir)
    monkeypatch.setenv("RAG_DOCX__ASSETS_DIR", eval_settings.docx.assets_dir)
    monkeypatch.setenv("RAG_KNOWLEDGE_BASES__REGISTRY_FILE", eval_settings.knowledge_bases.registry_file)
    monkeypatch.setenv("RAG_KNOWLEDGE_BASES__DIR", eval_settings.knowledge_bases.dir)
    return eval_settings
