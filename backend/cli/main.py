"""The ``rag`` command: a click group with one module per noun.

Each command loads settings once, builds what it needs through ``backend.runtime``,
calls one function and renders the result: results to stdout (``--json`` for
scripts), progress and logs to stderr. ``RagError`` is caught here, in one place:
its ``user_message`` goes to stderr and the process exits with the error's
``exit_code`` (2 config, 3 gate failed, 4 series locked, 1 otherwise); ``--debug``
adds the traceback.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

import click

from backend.cli import (
    aliases,
    ask,
    bench,
    calibrate,
    config_cmd,
    evaluate,
    feedback,
    index,
    ingest,
    kb,
    mcp_cmd,
    oracle,
    search,
    serve,
    train,
    tune,
)
from backend.common.errors import RagError


class RagGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RagError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc(file=sys.stderr)
            click.echo(f"error: {exc.user_message}", err=True)
            ctx.exit(exc.exit_code)


@click.group(cls=RagGroup)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="YAML profile (default: config/rag.yaml).")
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, debug: bool) -> None:
    """Configuration-driven RAG runtime on Oracle AI Vector Search (SQLite embedded default)."""
    ctx.ensure_object(dict)
    ctx.obj["config_path"] = config_path
    ctx.obj["debug"] = debug


#: one entry per noun (or noun-less verb); a new one adds its import and its line here
for command in (
    config_cmd.config, index.index, kb.kb, ingest.ingest, ask.ask, search.search, serve.serve, evaluate.eval_cmd,
    bench.bench, calibrate.calibrate, feedback.feedback, tune.tune, oracle.oracle, train.train, mcp_cmd.mcp,
    *aliases.COMMANDS,
):
    cli.add_command(command)

if __name__ == "__main__":  # pragma: no cover
    cli()
