"""Abstention: the metrics ``rag eval`` prints, the gate that blocks a version answering
unanswerable golden questions, and the follow-up set run by ``rag eval`` on the real store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from backend.cli.main import cli
from backend.common.config import GateSettings, Settings
from backend.core.services.evaluation import QueryResult, abstention_metrics
from backend.core.services.promotion import check_gates
from tests.conftest import REPO


def result(expected: str, decided: str, passed: bool | None = None) -> QueryResult:
    return QueryResult(id=f"{expected}-{decided}", query="q", expected_mode=expected, decided_mode=decided,
                       mode_correct=expected == decided, expected_sources={}, ranked_doc_ids=[], max_similarity=None,
                       latency_ms=1.0, must_contain_passed=passed)


def test_abstention_metrics_count_what_was_answered_and_what_should_have_been() -> None:
    rows = [result("rag", "rag", True), result("rag", "rag", False), result("rag", "hybrid"),
            result("fallback", "rag"), result("fallback", "fallback"), result("hybrid", "fallback")]
    m = abstention_metrics(rows)
    assert m["coverage"] == 0.5                               # 3 of 6 answered rag
    assert m["accuracy_among_answered"] == round(1 / 3, 4)    # only one rag answer expected rag and held its phrase
    assert m["unanswerable_as_rag"] == round(1 / 3, 4)        # 1 of the 3 expecting hybrid or fallback
    assert m["abstention_accuracy"] == round(4 / 6, 4)
    assert abstention_metrics([result("rag", "rag", True)])["unanswerable_as_rag"] is None


def test_the_abstention_gate_fails_a_version_that_answers_the_unanswerable() -> None:
    gates = GateSettings(min_recall_at_k=None, min_ndcg_at_10=None, min_mode_accuracy=None,
                         max_unanswerable_as_rag=0.1)
    failed = check_gates({"unanswerable_as_rag": 0.2}, gates, None)
    assert [(g.name, g.kind, g.passed) for g in failed] == [("max_unanswerable_as_rag", "max", False)]
    assert failed[0].describe() == "unanswerable_as_rag = 0.2000, maximum 0.1000"
    assert check_gates({"unanswerable_as_rag": 0.1}, gates, None)[0].passed
    assert check_gates({"unanswerable_as_rag": None}, gates, None) == []  # no unanswerable question: nothing to gate


def test_rag_eval_prints_abstention_and_runs_the_follow_up_set(cli_env: Settings, tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text("\n".join([
        json.dumps({"id": "a", "query": "How many days of annual leave do full-time employees get?",
                    "expected_sources": ["annual-leave"], "expected_mode": "rag", "must_contain": ["25 days"]}),
        json.dumps({"id": "u", "query": "What is the dress code for the boat party?", "expected_sources": {},
                    "expected_mode": "fallback"}),
    ]) + "\n")
    followups = tmp_path / "followups.jsonl"
    followups.write_text(json.dumps({"id": "f1", "domain": None,
                                     "first": "How many days of annual leave do full-time employees get?",
                                     "follow_up": "and for part-time staff?", "expected_mode": "rag",
                                     "must_contain": ["pro rata"]}) + "\n")
    run: Any = CliRunner().invoke(cli, ["eval", "--version", "KB_SAMPLE_V1", "--golden", str(golden),
                                        "--followups", str(followups)], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    assert "unanswerable_as_rag" in run.stdout and "abstention_accuracy" in run.stdout
    assert "fallback->fallback: 1" in run.stdout
    assert "follow-ups: 1 two-turn conversations; second answer must_contain 1.0000" in run.stdout
    as_json = CliRunner().invoke(cli, ["eval", "--version", "KB_SAMPLE_V1", "--golden", str(golden), "--json",
                                       "--followups", str(followups)], catch_exceptions=False)
    body = json.loads(as_json.stdout)
    assert body["metrics"]["unanswerable_as_rag"] == 0.0
    row = body["followups"]["results"][0]
    assert row["effective_query"] == "How many days of annual leave do part-time staff get?"
    assert row["condensed_rule"] == "substitution" and row["must_contain_passed"] is True


def test_a_bad_follow_up_line_is_named_with_its_file_and_line(cli_env: Settings, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "f1", "first": "q", "follow_up": "and?", "must_contain": ["x"]}) + "\n"
                   + json.dumps({"id": "f2", "first": "q", "must_contain": ["x"]}) + "\n")
    run = CliRunner().invoke(cli, ["eval", "--version", "KB_SAMPLE_V1", "--golden",
                                   str(REPO / "data" / "golden" / "sample_golden.jsonl"), "--no-answers",
                                   "--followups", str(bad)])
    assert run.exit_code != 0
    assert f"{bad}:2:" in run.output and "follow_up" in run.output
