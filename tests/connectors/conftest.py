"""Fixtures of the connector tests that drive the ``rag`` command."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The command's store, reports, assets, registry, knowledge-base folder and connectors file
    under ``tmp_path`` (by environment, as a person's shell would set them); PII sanitizing off."""
    for name, value in (("STORE__SQLITE__PATH", "rag.sqlite"), ("EVALUATION__REPORTS_DIR", "reports"),
                        ("DOCX__ASSETS_DIR", "assets"), ("KNOWLEDGE_BASES__REGISTRY_FILE", "kb.yaml"),
                        ("KNOWLEDGE_BASES__DIR", "kb"), ("CONNECTORS__FILE", "connectors.yaml")):
        monkeypatch.setenv(f"RAG_{name}", str(tmp_path / value))
    monkeypatch.setenv("RAG_SANITIZE__ENABLED", "false")
    return tmp_path
