"""Shared fixtures: isolated data directories, typed settings, the real local model.

Every test gets its own SQLite file under ``tmp_path``; the embedder is the real
all-MiniLM-L6-v2 from the installed package, loaded once per session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from backend.common.config import Settings, load_settings
from backend.common.logging import configure_logging

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="session")
def _offline_logging() -> None:
    configure_logging()


@pytest.fixture(autouse=True)
def _restored_logging() -> Iterator[None]:
    """A CLI run in-process configures structlog (a WARNING level filters the INFO events a
    later test captures); each test starts from the suite's configuration."""
    import structlog

    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's environment or writes into the repo's data dir."""
    import os

    for name in list(os.environ):
        if name.startswith(("RAG_", "SANITIZE_", "DOCX_", "ORACLE_")) and not name.startswith(("RAG_TEST_ORACLE_",
                                                                                                  "RAG_TEST_OCI_")):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    """Default profile with data paths under ``tmp_path``; ``overrides`` is a nested dict."""
    base: dict[str, Any] = {
        "store": {"sqlite": {"path": str(tmp_path / "rag.sqlite")}},
        "docx": {"assets_dir": str(tmp_path / "assets")},
        "ingest": {"allowed_roots": [str(REPO / "data"), str(REPO / "tests" / "fixtures"), str(tmp_path)],
                   "progress": False},
        "evaluation": {"reports_dir": str(tmp_path / "reports")},
        "knowledge_bases": {"registry_file": str(tmp_path / "knowledge-bases.yaml"), "dir": str(tmp_path / "kb")},
        # the shipped profile audits PII at ingest (issue 48); the PII tests (test_pii_*, test_sanitizer*,
        # tests/eval/test_pii_default.py) ask for it, the others ingest many corpora and read no finding
        "sanitize": {"enabled": False, "audit_path": str(tmp_path / "audit" / "pii_findings.jsonl")},
    }
    from backend.common.config import _deep_merge

    return load_settings(REPO / "config" / "rag.yaml", overrides=_deep_merge(base, overrides), env={})


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


@pytest.fixture(scope="session")
def embedder() -> Any:
    """The real local model on the configured default runtime (loaded once; an ONNX
    export is reused from ``embeddings.local.onnx_cache_dir``, made there at first use)."""
    from backend.providers.local.embedder import make_local_embedder

    return make_local_embedder(Settings().embeddings)


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Any:
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    store = SqliteVectorStore(tmp_path / "store.sqlite")
    yield store
    store.close()


def kb_runtime(settings: Settings, store: Any, embedder: Any) -> Any:
    """The runtime ``rag kb create`` runs in (``build_runtime``), over the test's store and the
    session's embedder, with the extractive answerer on it (what ``ingest_into_candidate`` is handed)."""
    from backend.core.ports import Stores
    from backend.providers.local.extractive import ExtractiveChatModel
    from backend.runtime import build_runtime

    return build_runtime(settings, stores=Stores.of(store), embedder=embedder, primary=ExtractiveChatModel(embedder))


def decision_scorer(settings: Settings, embedder: Any) -> Any:
    """The sentence scorer the configured decision judges with (the answer reader when the profile
    enables it), as ``build_runtime`` makes it: for tests that build an ``Evaluator`` by hand."""
    from backend.core.services.evidence import SentenceScorer
    from backend.providers.registry import build_answer_reader

    return SentenceScorer(embedder, reader=build_answer_reader(settings),
                          reader_sentences=settings.retrieval.answerability.reader.max_sentences)
