"""``rag connector add|list|sync|status|remove`` (issue 46) through click's runner, on a real store
and folder: declarations in YAML, secrets by environment variable name, errors naming the file
and field, a scheduled loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from backend.cli.connector import parse_every
from backend.cli.main import cli
from backend.common.errors import ConfigError
from tests.connectors.scenario import CANTEEN, LEAVE


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize(("value", "seconds"), [("30s", 30), ("15m", 900), ("2h", 7200), ("1d", 86400), (" 5M ", 300)])
def test_parse_every(value: str, seconds: int) -> None:
    assert parse_every(value) == seconds


@pytest.mark.parametrize("value", ["0m", "15", "m", "15 minutes", "-1m"])
def test_parse_every_refuses(value: str) -> None:
    with pytest.raises(ConfigError, match="expected a positive number and a unit"):
        parse_every(value)


def test_add_sync_list_status_remove(env: Path) -> None:
    src = env / "src"
    src.mkdir()
    (src / "leave.md").write_text(LEAVE, encoding="utf-8")
    (src / "canteen.md").write_text(CANTEEN, encoding="utf-8")
    added = run("connector", "add", "hr-share", "--kind", "folder", "--kb", "hr", "--option", f"path={src}",
                "--reader", "public")
    assert added.exit_code == 0, added.output
    declared = yaml.safe_load((env / "connectors.yaml").read_text())
    assert declared["connectors"]["hr-share"] == {"kind": "folder", "knowledge_base": "hr",
                                                  "options": {"path": str(src)}, "readers": ["public"]}
    synced = run("connector", "sync", "hr-share", "--json")
    assert synced.exit_code == 0, synced.output
    report = json.loads(synced.stdout)
    assert report["status"] == "ok" and report["counts"]["new"] == 2 and report["version"] == "KB_HR_V1"
    assert report["served_version"] == "KB_HR_V1"
    listed = run("connector", "list")
    assert listed.exit_code == 0 and "hr-share" in listed.stdout and "ok at" in listed.stdout and "new=2" in listed.stdout
    # the scheduled loop: two runs, nothing changed, nothing built
    looped = run("connector", "sync", "hr-share", "--every", "1s", "--times", "2")
    assert looped.exit_code == 0, looped.output
    assert looped.stdout.count("hr-share -> hr: up_to_date") == 2
    status = run("connector", "status", "hr-share", "--json")
    body = json.loads(status.stdout)
    assert body["items"] == 2 and [r["status"] for r in body["runs"]] == ["up_to_date", "up_to_date", "ok"]
    assert body["runs"][-1]["seconds"] > 0 and body["runs"][-1]["version"] == "KB_HR_V1"
    removed = run("connector", "remove", "hr-share", "--forget")
    assert removed.exit_code == 0 and "2 synced item(s) forgotten" in removed.stdout
    assert yaml.safe_load((env / "connectors.yaml").read_text())["connectors"] == {}


def test_bad_declarations_name_the_file_and_field(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = env / "connectors.yaml"
    path.write_text("connectors:\n  docs:\n    kind: s3\n    knowledge_base: docs\n    options: {prefix: a/}\n")
    result = run("connector", "sync", "docs")
    assert result.exit_code == 2
    assert f"error: {path}: connectors.docs.bucket: Field required" in result.stderr
    path.write_text("connectors:\n  docs:\n    kind: s3\n    knowledge_base: docs\n"
                    "    options: {bucket: b, secret_access_key: abc123}\n")
    result = run("connector", "list")
    assert result.exit_code == 2 and "options.secret_access_key: a secret never goes in the file" in result.stderr
    assert "abc123" not in result.stderr
    path.write_text("connectors:\n  docs:\n    kind: s3\n    knowledge_base: docs\n    options: {bucket: bkt}\n"
                    "    secrets: {secret_access_key: RAG_TEST_S3_SECRET}\n")
    result = run("connector", "sync", "docs")
    assert result.exit_code == 2
    assert "secrets.secret_access_key names the environment variable RAG_TEST_S3_SECRET, which is not set" \
        in result.stderr
    path.write_text("connectors:\n  docs:\n    kind: ftp\n")
    result = run("connector", "list")
    assert result.exit_code == 2 and "connectors.docs.kind" in result.stderr
    path.write_text("connectors: [\n")
    result = run("connector", "list")
    assert result.exit_code == 2 and f"{path}:2: not valid YAML" in result.stderr
    bad = run("connector", "add", "x", "--kind", "web", "--kb", "site", "--option", "start_url=ftp://x")
    assert bad.exit_code == 2 and "connector 'x': start_url: String should match pattern" in bad.stderr
    path.write_text("connectors: {}\n")
    unknown = run("connector", "sync", "nope")
    assert unknown.exit_code == 2 and "connector 'nope' is not declared" in unknown.stderr


def test_cancel_names_the_series_and_a_stale_request_stops_no_later_sync(env: Path, hr_share: Path) -> None:
    src = hr_share
    early = run("connector", "cancel", "hr-share")
    assert early.exit_code == 2 and "knowledge base 'hr' is not registered yet" in early.stderr
    assert run("connector", "sync", "hr-share").exit_code == 0
    cancelled = run("connector", "cancel", "hr-share")
    assert cancelled.exit_code == 0, cancelled.output
    assert "series KB_HR" in cancelled.stdout and (env / "ingest-cancel" / "KB_HR.cancel").exists()
    # a request written before a sync started is not that sync's: it runs to the end
    (src / "canteen.md").write_text(CANTEEN, encoding="utf-8")
    again = run("connector", "sync", "hr-share", "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["status"] == "ok"
