"""``rag eval`` and ``rag index promote|rollback|status`` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from backend.cli.main import cli
from backend.common.config import Settings
from tests.eval.conftest import SAMPLE_GOLDEN


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_eval_answers_through_chat_and_checks_must_contain(cli_env: Settings, tmp_path: Path) -> None:
    tiny = tmp_path / "tiny.jsonl"
    keep = {"s01", "s21", "s39"}
    tiny.write_text("".join(line + "\n" for line in SAMPLE_GOLDEN.read_text().splitlines()
                            if json.loads(line)["id"] in keep))
    result = _run("eval", "--version", "KB_SAMPLE_V1", "--golden", str(tiny), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["answer_source"] == "chat"
    assert report["counts"] == {"queries": 3, "retrieval_queries": 2, "must_contain_queries": 2}
    assert report["metrics"]["hit_at_k"] == 1.0 and report["metrics"]["mode_accuracy"] == 1.0
    assert report["metrics"]["must_contain_pass_rate"] == 1.0
    written = Path(result.stderr.strip().splitlines()[-1].removeprefix("report: "))
    assert written.parent == Path(cli_env.evaluation.reports_dir) and json.loads(written.read_text())["version"] == "KB_SAMPLE_V1"


def test_promote_blocked_by_gates_exits_3_and_prints_failing_gates(cli_env: Settings) -> None:
    ok = _run("index", "promote", "--version", "KB_SAMPLE_V1", "--no-answers")
    assert ok.exit_code == 0, ok.output
    assert "promoted: KB_ACTIVE -> KB_SAMPLE_V1 (previous: -)" in ok.stdout
    bad = _run("index", "promote", "--version", "KB_SAMPLE_BAD", "--no-answers")
    assert bad.exit_code == 3
    assert "gate min_recall_at_k    FAIL  recall_at_k = " in bad.stdout
    assert "NOT promoted: KB_ACTIVE still serves KB_SAMPLE_V1" in bad.stdout
    assert "error: KB_SAMPLE_BAD was not promoted to KB_ACTIVE (still serving KB_SAMPLE_V1)" in bad.stderr
    status = json.loads(_run("index", "status", "--json").stdout)
    active = next(a for a in status["aliases"] if a["alias"] == "KB_ACTIVE")
    assert (active["active"], active["previous"]) == ("KB_SAMPLE_V1", None)
    bad_row = next(v for v in json.loads(_run("index", "list", "--json").stdout)["versions"] if v["name"] == "KB_SAMPLE_BAD")
    assert bad_row["evaluation"]["gates_passed"] is False


def test_eval_compare_shows_deltas_against_the_alias(cli_env: Settings) -> None:
    assert _run("index", "promote", "--version", "KB_SAMPLE_V1", "--no-answers").exit_code == 0
    result = _run("eval", "--version", "KB_SAMPLE_BAD", "--no-answers", "--compare", "KB_ACTIVE")
    assert result.exit_code == 0, result.output
    assert "(baseline: KB_SAMPLE_V1, served by KB_ACTIVE)" in result.stdout
    recall_row = next(line for line in result.stdout.splitlines() if line.startswith("recall@5"))
    value, baseline, delta = (float(x) for x in recall_row.split()[1:4])
    assert delta == pytest.approx(value - baseline, abs=1e-4) and delta < 0


def test_forced_promotion_rollback_and_alias_status(cli_env: Settings) -> None:
    assert _run("index", "promote", "--version", "KB_SAMPLE_V1", "--no-answers").exit_code == 0
    forced = _run("index", "promote", "--version", "KB_SAMPLE_BAD", "--no-answers", "--force")
    assert forced.exit_code == 0, forced.output
    assert "promoted: KB_ACTIVE -> KB_SAMPLE_BAD (previous: KB_SAMPLE_V1)  [forced]" in forced.stdout
    text = _run("index", "status").stdout
    assert "KB_ACTIVE: KB_SAMPLE_BAD  previous=KB_SAMPLE_V1" in text and "[forced]" in text
    assert "KB_HANDBOOK: (serves nothing)" in text
    lines = text.splitlines()
    roles = {line.split()[1]: line.split()[0] for line in lines if line.startswith("  ") and "docs=" in line}
    # * live, < rollback, + candidate (a newer version of a series than what it serves)
    assert roles == {"KB_SAMPLE_BAD": "*", "KB_SAMPLE_V2": "+", "KB_SAMPLE_V1": "<", "KB_HANDBOOK_V1": "+"}
    back = _run("index", "rollback")
    assert back.exit_code == 0 and back.stdout.strip() == "rolled back: KB_ACTIVE -> KB_SAMPLE_V1 (was KB_SAMPLE_BAD)"
    unknown = _run("index", "rollback", "--domain-key", "nope")
    assert unknown.exit_code == 1 and "--domain-key 'nope' is not configured; known: ['handbook']" in unknown.stderr
    empty = _run("index", "rollback", "--domain-key", "handbook")
    assert empty.exit_code == 1 and "alias KB_HANDBOOK has no history; nothing to roll back" in empty.stderr
    # the admin actions of the CLI are in the audit trail, as the operator (issue 45)
    from backend.cli.context import operator
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    store = SqliteVectorStore(cli_env.resolve_path(cli_env.store.sqlite.path))
    trail = [(e.action, e.outcome, e.version, e.principal, e.surface) for e in store.audit_events()]
    store.close()
    assert trail == [("rollback", "ok", "KB_SAMPLE_V1", operator(), "cli"),
                     ("promote", "ok", "KB_SAMPLE_BAD", operator(), "cli"),
                     ("promote", "ok", "KB_SAMPLE_V1", operator(), "cli")]


def test_a_plain_promote_does_not_undo_a_rollback(cli_env: Settings) -> None:
    """Issue 34: after a rollback the rolled-back version is still the newest; promoting "the
    newest" must not quietly serve it again. Naming it does."""
    assert _run("index", "promote", "--version", "KB_SAMPLE_V1", "--no-answers", "--force").exit_code == 0
    assert _run("index", "promote", "--version", "KB_SAMPLE_V2", "--no-answers", "--force").exit_code == 0
    assert _run("index", "rollback").exit_code == 0
    plain = CliRunner().invoke(cli, ["index", "promote", "--no-answers"])
    assert plain.exit_code != 0
    assert "KB_SAMPLE_V2 was rolled back from KB_ACTIVE" in plain.stderr
    assert "rag index promote --version KB_SAMPLE_V2" in plain.stderr
    status = json.loads(_run("index", "status", "--json").stdout)
    assert next(a for a in status["aliases"] if a["alias"] == "KB_ACTIVE")["active"] == "KB_SAMPLE_V1"
    named = _run("index", "promote", "--version", "KB_SAMPLE_V2", "--no-answers", "--force")
    assert named.exit_code == 0 and "promoted: KB_ACTIVE -> KB_SAMPLE_V2" in named.stdout
