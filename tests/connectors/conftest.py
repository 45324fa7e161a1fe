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


@pytest.fixture
def hr_share(env: Path) -> Path:
    """Connector ``hr-share`` declared (by ``rag connector add``) over a folder holding the leave
    policy, feeding knowledge base ``hr``, every file public; the folder."""
    from click.testing import CliRunner

    from backend.cli.main import cli
    from tests.connectors.scenario import LEAVE

    src = env / "src"
    src.mkdir()
    (src / "leave.md").write_text(LEAVE, encoding="utf-8")
    added = CliRunner().invoke(cli, ["connector", "add", "hr-share", "--kind", "folder", "--kb", "hr", "--option",
                                     f"path={src}", "--reader", "public"])
    assert added.exit_code == 0, added.output
    return src
