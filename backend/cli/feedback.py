"""``rag feedback export``: answer feedback as candidate golden queries (docs/WEB_UI.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from backend.cli.context import audit, settings_from
from backend.common.errors import ConfigError


@click.group()
def feedback() -> None:
    """Feedback readers gave in the chat page (POST /feedback)."""


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}", field="out") from exc


@feedback.command("export")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Candidate golden queries (thumbs up), one GoldenQuery JSON object a line.")
@click.option("--review-out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Lines to review (thumbs down, with the comment). Default: <out>.review.jsonl")
@click.option("--limit", type=click.IntRange(1, 1_000_000), default=100_000, show_default=True,
              help="Newest verdicts read.")
@click.pass_context
def export(ctx: click.Context, out: Path, review_out: Path | None, limit: int) -> None:
    """Write thumbs-up answers as golden queries (cited documents as expected sources, the
    served mode as expected mode) and thumbs-down ones as review lines with the comment."""
    from backend.core.feedback_export import export_feedback
    from backend.runtime import open_stores

    settings = settings_from(ctx)
    stores = open_stores(settings)
    try:
        if stores.conversations is None:
            raise ConfigError(f"store backend {settings.store.backend!r} keeps no feedback", field="store.backend")
        result = export_feedback(stores.conversations.feedback(limit))
        audit(stores, settings, "feedback_export", "ok",
              detail={"candidates": len(result.candidates), "review": len(result.review)})
    finally:
        stores.close()
    review_path = review_out or out.with_name(out.stem + ".review.jsonl")
    _write_jsonl(out, result.candidates)
    _write_jsonl(review_path, result.review)
    click.echo(f"{len(result.candidates)} candidate golden queries -> {out}")
    click.echo(f"{len(result.review)} answers to review -> {review_path}")
