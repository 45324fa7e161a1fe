"""``rag ingest`` through click's CliRunner and ``scripts/ingest.py`` as a process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from backend.cli.main import cli
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.ingest.helpers import FIXTURES, REPO, write_config, write_corpus, write_manifest


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    write_corpus(root, 3)
    (tmp_path / "outside.txt").write_text("Outside the allowed roots.", encoding="utf-8")
    return root


def test_bad_line_and_escaping_path_are_reported_and_good_lines_ingested(tmp_path: Path, kb: Path, embedder: Any) -> None:
    config = write_config(tmp_path, kb)
    manifest = write_manifest(kb / "manifest.jsonl", [
        {"path": "doc_000.txt", "tags": ["hr"]},
        {"path": "doc_001.txt", "tagz": ["typo"]},
        {"path": "../outside.txt"},
        {"path": "doc_002.txt"},
    ])
    result = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(manifest)])
    assert result.exit_code == 1, result.output
    assert "manifest error  manifest.jsonl:2: tagz: unknown key" in result.stdout
    assert "manifest error  manifest.jsonl:3: '../outside.txt' resolves to" in result.stdout
    assert "documents written:    2" in result.stdout
    store = SqliteVectorStore(tmp_path / "cli.sqlite")
    assert set(store.document_hashes("KB_SAMPLE_V1")) == {"doc_000.txt", "doc_002.txt"}
    assert store.list_aliases() == {}


def test_json_summary_and_exit_zero_when_everything_ingested(tmp_path: Path, kb: Path, embedder: Any) -> None:
    config = write_config(tmp_path, kb)
    manifest = write_manifest(kb / "manifest.jsonl", [{"dir": "."}])
    runner = CliRunner()
    first = runner.invoke(cli, ["--config", str(config), "ingest", str(manifest), "--json"])
    second = runner.invoke(cli, ["--config", str(config), "ingest", "--manifest", str(manifest), "--json"])
    assert (first.exit_code, second.exit_code) == (0, 0), first.output
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert (a["documents_written"], a["embeddings_computed"], a["version"], a["ok"]) == (3, 3, "KB_SAMPLE_V1", True)
    assert (b["skipped_unchanged"], b["embeddings_computed"], b["documents_written"]) == (3, 0, 0)


def test_manifest_must_be_given_exactly_once(tmp_path: Path, kb: Path) -> None:
    result = CliRunner().invoke(cli, ["ingest"])
    assert result.exit_code == 2
    assert "give the manifest once: as MANIFEST or with --manifest" in result.stderr


def test_strict_stops_at_the_first_bad_line(tmp_path: Path, kb: Path, embedder: Any) -> None:
    config = write_config(tmp_path, kb)
    manifest = write_manifest(kb / "manifest.jsonl", [{"path": "doc_000.txt"}, "{oops", {"path": "doc_001.txt"}])
    result = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(manifest), "--strict"])
    assert result.exit_code == 1
    assert "error: manifest.jsonl:2: invalid JSON" in result.stderr
    assert not (tmp_path / "cli.sqlite").exists() or "KB_SAMPLE_V1" not in {
        v.name for v in SqliteVectorStore(tmp_path / "cli.sqlite").list_versions()}


def _fixture_manifest(kb: Path) -> Path:
    for name in ("vacation.txt", "expenses.md", "security.html", "onboarding.md"):
        (kb / name).write_bytes((FIXTURES / name).read_bytes())
    return write_manifest(kb / "manifest.jsonl", [
        {"path": "vacation.txt", "doc_id": "vacation"}, {"path": "expenses.md", "doc_id": "expenses"},
        {"path": "security.html", "doc_id": "security"}, {"path": "onboarding.md", "doc_id": "onboarding"}])


def test_update_alias_promotes_only_through_the_evaluation_gate(tmp_path: Path, embedder: Any) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    manifest = _fixture_manifest(kb)
    golden = write_manifest(tmp_path / "golden.jsonl", [
        {"id": "g1", "query": "How many days of paid vacation do employees accrue?",
         "expected_sources": ["vacation"], "expected_mode": "rag"},
        {"id": "g2", "query": "What is the hotel limit for travel expenses?",
         "expected_sources": ["expenses"], "expected_mode": "rag"},
    ])
    config = write_config(tmp_path, kb)
    data = yaml.safe_load(config.read_text())
    data["evaluation"] = {"golden_set": str(golden), "k": 3, "reports_dir": str(tmp_path / "reports")}
    config.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(manifest), "--update-alias"])
    assert result.exit_code == 0, result.output
    assert "promoted: KB_ACTIVE -> KB_SAMPLE_V1 (previous: -)" in result.stdout
    assert "gate min_recall_at_k    PASS  recall_at_k = 1.0000" in result.stdout
    store = SqliteVectorStore(tmp_path / "cli.sqlite")
    assert store.list_aliases() == {"KB_ACTIVE": "KB_SAMPLE_V1"}
    assert store.alias_history("KB_ACTIVE")[0].reason == "all gates passed"
    again = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(manifest), "--update-alias", "--json"])
    assert again.exit_code == 0, again.output
    body = json.loads(again.stdout)
    assert body["ingest"]["skipped_unchanged"] == 4
    assert body["promotion"]["notes"] == ["KB_ACTIVE already serves KB_SAMPLE_V1; nothing to do"]


def test_update_alias_leaves_the_alias_alone_when_gates_fail(tmp_path: Path, embedder: Any) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    manifest = _fixture_manifest(kb)
    golden = write_manifest(tmp_path / "golden.jsonl", [
        {"id": "g1", "query": "How many days of paid vacation do employees accrue?",
         "expected_sources": ["not-ingested"], "expected_mode": "rag"}])
    config = write_config(tmp_path, kb)
    data = yaml.safe_load(config.read_text())
    data["evaluation"] = {"golden_set": str(golden), "k": 3, "reports_dir": str(tmp_path / "reports")}
    config.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(manifest), "--update-alias"])
    assert result.exit_code == 3, result.output
    assert "gate min_recall_at_k    FAIL  recall_at_k = 0.0000" in result.stdout
    assert "NOT promoted: KB_ACTIVE still serves nothing" in result.stdout
    assert "KB_SAMPLE_V1 was not promoted to KB_ACTIVE (still serving nothing)" in result.stderr
    assert SqliteVectorStore(tmp_path / "cli.sqlite").list_aliases() == {}


def test_ingest_script_runs_the_same_command(tmp_path: Path, kb: Path) -> None:
    config = write_config(tmp_path, kb)
    manifest = write_manifest(kb / "manifest.jsonl", [{"path": "doc_000.txt"}, {"path": "missing.txt"}])
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "ingest.py"), "--config", str(config),
                           str(manifest), "--json"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["documents_written"] == 1
    assert summary["manifest_errors"][0]["where"] == "manifest.jsonl:2"
    assert summary["manifest_errors"][0]["reason"].startswith("path 'missing.txt': no such file")


def test_a_run_whose_only_line_failed_says_so_once_and_its_counts_match_the_log(tmp_path: Path, kb: Path,
                                                                                 embedder: Any) -> None:
    config = write_config(tmp_path, kb)
    good = write_manifest(kb / "good.jsonl", [{"path": "doc_000.txt"}])
    assert CliRunner().invoke(cli, ["--config", str(config), "ingest", str(good)]).exit_code == 0
    store = SqliteVectorStore(tmp_path / "cli.sqlite")
    store.point_alias("KB_ACTIVE", "KB_SAMPLE_V1")
    store.close()
    bad = write_manifest(kb / "bad.jsonl", [{"path": "missing.txt"}])
    result = CliRunner().invoke(cli, ["--config", str(config), "ingest", str(bad)])
    assert result.exit_code == 1, result.output
    out, err = result.stdout, result.stderr
    assert (out + err).count("no such file") == 1 and "manifest error  bad.jsonl:1: path 'missing.txt'" in out
    assert "files failed:         0" in out and "manifest errors:      1" in out
    finished = next(line for line in err.splitlines() if "ingest.finished" in line)
    for name in ("documents_seen", "documents_written", "skipped_unchanged", "files_failed", "manifest_errors"):
        shown = next(line for line in out.splitlines() if line.startswith(name.replace("_", " ") + ":"))
        assert f"{name}={shown.split()[-1]}" in finished, (name, shown, finished)
    assert "already holds every listed document" not in out
    assert "served: KB_SAMPLE_V1 by KB_ACTIVE (this run changed nothing: every listed document failed, see above)" in out
