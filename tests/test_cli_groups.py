"""The CLI's nouns: ``rag index list|status|promote|rollback|gc``, with the old names
(``rag promote``, ``rag rollback``, ``rag alias status|prune``) hidden for one release."""

from __future__ import annotations

import json
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


def test_an_old_name_runs_the_new_command_and_says_which_name_to_use(env: Path) -> None:
    new = run("index", "status", "--json")
    old = run("alias", "status", "--json")
    assert new.exit_code == old.exit_code == 0, old.output
    assert json.loads(old.stdout) == json.loads(new.stdout)
    assert "deprecated" not in new.stderr
    assert old.stderr.strip().splitlines()[-1] == ("note: `rag alias status` is deprecated and goes in the next "
                                                   "release; use `rag index status`")


def test_an_old_name_keeps_its_error_line_first_and_its_exit_code(env: Path) -> None:
    result = run("rollback")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: alias KB_ACTIVE has no history; nothing to roll back")
    assert result.stderr.strip().splitlines()[-1].endswith("use `rag index rollback`")


def test_one_retention_verb_alias_prune_is_index_gc_on_the_alias_series(env: Path) -> None:
    gc = run("index", "gc", "--alias", "KB_ACTIVE", "--dry-run")
    prune = run("alias", "prune", "--dry-run")
    assert gc.exit_code == prune.exit_code == 0, prune.output
    assert prune.stdout == gc.stdout
    assert gc.stdout.startswith("KB_ACTIVE: would drop versions: none")
    assert prune.stderr.strip().splitlines()[-1].endswith("use `rag index gc`")
    both = run("index", "gc", "--alias", "KB_ACTIVE", "--domain-key", "x")
    assert both.exit_code == 2 and "give --domain-key or --alias, not both" in both.stderr
