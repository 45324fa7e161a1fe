"""``rag eval`` and ``rag calibrate`` show a live bar over their golden queries.

Why: both print nothing until they end, and with answers an evaluation takes minutes.
CliRunner's stderr is no terminal, so the bar is off by default (checked) and
``--progress`` forces it on; ``tests/ingest/test_cli_progress.py`` covers the terminal.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from backend.cli.main import cli
from backend.common.config import Settings
from tests.conftest import REPO
from tests.eval.conftest import SAMPLE_GOLDEN

HANDBOOK_GOLDEN = REPO / "data" / "golden" / "handbook_golden.jsonl"


def test_eval_bar_counts_the_queries_only_when_asked(cli_env: Settings, tmp_path: Path) -> None:
    tiny = tmp_path / "tiny.jsonl"
    tiny.write_text("".join(line + "\n" for line in SAMPLE_GOLDEN.read_text().splitlines()[:4]))
    args = ["eval", "--version", "KB_SAMPLE_V1", "--golden", str(tiny), "--no-answers"]
    shown = CliRunner().invoke(cli, [*args, "--progress"])
    assert shown.exit_code == 0, shown.output
    assert re.search(r"eval KB_SAMPLE_V1:\s+\d+%\|.*/4 ", shown.stderr), shown.stderr  # frames between mininterval
    assert "%|" not in shown.stdout
    quiet = CliRunner().invoke(cli, [*args, "--json"])
    assert quiet.exit_code == 0 and "%|" not in quiet.stderr
    assert json.loads(quiet.stdout)["counts"]["queries"] == 4


def test_calibrate_bar_counts_every_golden_query(cli_env: Settings) -> None:
    queries = len([line for line in HANDBOOK_GOLDEN.read_text().splitlines() if line.strip()])
    result = CliRunner().invoke(cli, ["calibrate", "--set", f"KB_HANDBOOK_V1={HANDBOOK_GOLDEN}", "--folds", "3",
                                      "--progress"])
    assert result.exit_code == 0, result.output
    assert re.search(rf"golden queries:\s+\d+%\|.*/{queries} ", result.stderr), result.stderr
    assert "%|" not in result.stdout
