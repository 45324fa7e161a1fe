"""``rag config check`` and how every command treats a bad config, through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from backend.cli.main import cli
from tests.conftest import REPO


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_check_of_the_default_file_prints_the_resolved_config_with_secrets_masked(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["config", "check"], env={"RAG_STORE__ORACLE__PASSWORD": "hunter2"})
    assert result.exit_code == 0, result.output
    resolved = yaml.safe_load(result.stdout)
    assert resolved["store"]["oracle"]["password"] == "**********"
    assert resolved["embeddings"]["profiles"]["sample"]["index_name"] == "KB_SAMPLE_V1"
    shipped = yaml.safe_load((REPO / "config" / "rag.yaml").read_text())
    assert resolved["retrieval"]["threshold_high"] == shipped["retrieval"]["threshold_high"]
    assert "hunter2" not in result.output
    assert result.stderr == ""


def test_check_as_json_masks_secrets_too(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["config", "check", "--json"],
                           env={"RAG_SERVER__API_KEYS": "k1,k2", "RAG_LLM__PRIMARY__API_KEY": "sk-x"})
    assert result.exit_code == 0, result.output
    resolved = json.loads(result.stdout)
    assert resolved["server"]["api_keys"] == ["**********", "**********"]
    assert resolved["llm"]["primary"]["api_key"] == "**********"
    assert "sk-x" not in result.output


def test_check_of_a_misspelt_key_exits_non_zero_naming_its_path(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text((REPO / "config" / "rag.yaml").read_text().replace("threshold_high:", "thresold_high:"))
    result = runner.invoke(cli, ["config", "check", "--config", str(bad)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["retrieval.thresold_high: unknown key; did you mean 'threshold_high'?"]
    assert result.stdout == ""


def test_group_config_option_is_checked_too(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("embeddings:\n  batching:\n    batch_sise: 8\nserver:\n  port: 0\n")
    result = runner.invoke(cli, ["--config", str(bad), "config", "check"])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == "embeddings.batching.batch_sise: unknown key; did you mean 'batch_size'?"
    assert lines[1].startswith("server.port: ")


def test_invalid_yaml_is_reported_with_file_and_line(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("store:\n  backend: [sqlite\n")
    result = runner.invoke(cli, ["config", "check", "--config", str(bad)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{bad}:3: invalid YAML")


def test_injected_identifier_stops_a_command_before_the_store_is_opened(runner: CliRunner, tmp_path: Path) -> None:
    """`rag index list` with `kb; DROP TABLE x` in the config exits 2 and never creates the database."""
    db = tmp_path / "never.sqlite"
    bad = tmp_path / "evil.yaml"
    bad.write_text(
        f"store:\n  sqlite:\n    path: {db}\n"
        "embeddings:\n  default_profile: p\n  profiles:\n    p:\n      index_name: 'kb; DROP TABLE x'\n"
    )
    result = runner.invoke(cli, ["--config", str(bad), "index", "list"])
    assert result.exit_code == 2
    assert "embeddings.profiles.p.index_name: invalid index_name 'kb; DROP TABLE x'" in result.stderr
    assert not db.exists()


def test_index_list_on_a_fresh_store_lists_nothing(runner: CliRunner, tmp_path: Path) -> None:
    cfg = tmp_path / "ok.yaml"
    cfg.write_text(f"store:\n  sqlite:\n    path: {tmp_path / 'fresh.sqlite'}\n")
    result = runner.invoke(cli, ["--config", str(cfg), "index", "list", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"versions": [], "aliases": {}}
