"""``rag train answerability`` on a tiny SQuAD-format file: the whole path (pairs, a few steps of
training, the ONNX export and its int8 variant, parity with torch, held-out figures, the card),
through the real command, the packaged MiniLM weights and ONNX Runtime (issue 42)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from backend.cli.main import cli
from tests.training.test_answer_pairs import _squad


def test_tiny_training_run_writes_a_reader_that_scores_like_torch(tmp_path: Path) -> None:
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps({"version": "v2.0", "data": _squad(tmp_path)}))
    out = tmp_path / "reader"
    result = CliRunner().invoke(cli, ["train", "answerability", "--squad", str(squad), "--strangers",
                                      str(tmp_path / "none.jsonl"), "--out", str(out), "--max-pairs", "12",
                                      "--batch-size", "4", "--hold-out", "Frederic Chopin", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout[result.stdout.index("{"):])
    assert 0 < summary["train_pairs"] <= 12
    # the ONNX export reads like the torch model it came from; int8 within quantization noise
    assert summary["parity"]["model-fp32.onnx"] < 1e-3
    assert summary["parity"]["model-int8.onnx"] < 0.1
    held = summary["held_out"]
    assert held["questions"] == 1 and set(held) >= {"torch", "int8"}
    card = json.loads((out / "card.json").read_text())
    assert card["sources"]["squad2_train"]["held_out_articles"] == ["Frederic Chopin"]
    assert card["pairs_by_kind"] and (out / "CARD.md").read_text().startswith("# Answer reader")
    assert (out / card["file"]).is_file() and (out / "tokenizer.json").is_file()
    assert not (out.with_name("reader.tmp")).exists()

    from backend.providers.local.answer_reader import load_reader

    reader = load_reader(out)
    scores = reader.score("Where was Beyonce born?", ["Beyonce was born in Houston.", "Chopin wrote nocturnes."])
    assert scores.shape == (2,) and np.all((scores >= 0) & (scores <= 1))


def test_a_held_out_article_that_is_not_in_the_file_is_a_clear_error(tmp_path: Path) -> None:
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps({"version": "v2.0", "data": _squad(tmp_path)}))
    result = CliRunner().invoke(cli, ["train", "answerability", "--squad", str(squad), "--out", str(tmp_path / "r"),
                                      "--max-pairs", "4", "--hold-out", "Atlantis"])
    assert result.exit_code == 2
    assert "held-out articles not in" in result.output and "Atlantis" in result.output
    result = CliRunner().invoke(cli, ["train", "answerability", "--squad", str(tmp_path / "missing.json")])
    assert result.exit_code == 2 and "missing.json: file not found" in result.output
