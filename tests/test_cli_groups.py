"""The CLI's nouns: ``rag index list|status|promote|rollback|gc``; the old names (``rag promote``,
``rag rollback``, ``rag alias status|prune``) are gone and name the command that replaced them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from backend.cli.main import cli


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty store and its folders under ``tmp_path``."""
    for name, value in (("STORE__SQLITE__PATH", "rag.sqlite"), ("EVALUATION__REPORTS_DIR", "reports"),
                        ("DOCX__ASSETS_DIR", "assets"), ("KNOWLEDGE_BASES__REGISTRY_FILE", "kb.yaml"),
                        ("KNOWLEDGE_BASES__DIR", "kb")):
        monkeypatch.setenv(f"RAG_{name}", str(tmp_path / value))
    return tmp_path


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def _commands(help_text: str) -> set[str]:
    section = help_text.split("Commands:", 1)[1]
    return {line.split()[0] for line in section.splitlines() if line.startswith("  ") and line.split()}


def test_help_lists_the_nouns_and_hides_the_old_names() -> None:
    top = _commands(run("--help").stdout)
    assert {"index", "kb", "ingest", "eval", "config"} <= top
    assert not top & {"promote", "rollback", "alias"}
    assert _commands(run("index", "--help").stdout) == {"list", "status", "promote", "rollback", "gc"}


@pytest.mark.parametrize(("old", "new"), [("promote", "rag index promote"), ("rollback", "rag index rollback"),
                                        ("alias", "rag index status (alias status)")])
def test_a_removed_name_says_which_command_replaced_it(env: Path, old: str, new: str) -> None:
    result = run(old, "status") if old == "alias" else run(old)
    assert result.exit_code == 2
    assert f"Error: `rag {old}` was removed; use `{new}" in result.stderr


def test_rag_ingest_help_shows_the_command_a_user_types() -> None:
    usage = run("ingest", "--help").stdout.splitlines()[0]
    assert usage == "Usage: rag ingest [OPTIONS] MANIFEST|DIR"
    missing = run("ingest")
    assert missing.exit_code == 2 and "Try 'rag ingest --help' for help." in missing.stderr


def test_one_retention_verb_index_gc_on_the_alias_series(env: Path) -> None:
    gc = run("index", "gc", "--alias", "KB_ACTIVE", "--dry-run")
    assert gc.exit_code == 0, gc.output
    assert gc.stdout.startswith("KB_ACTIVE: would drop versions: none")
    both = run("index", "gc", "--alias", "KB_ACTIVE", "--domain-key", "x")
    assert both.exit_code == 2 and "give --domain-key or --alias, not both" in both.stderr
