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
    ask,
    bench,
    calibrate,
    config_cmd,
    connector,
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


#: names the previous release still answered to (hidden, with a deprecation note), now gone: each
#: says which command replaced it instead of click's bare "No such command"
MOVED = {"promote": "rag index promote", "rollback": "rag index rollback",
         "alias": "rag index status (alias status) or rag index gc --alias NAME (alias prune)"}


class RagGroup(click.Group):
    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                             list[str]]:
        if args and args[0] in MOVED and args[0] not in self.commands:
            raise click.UsageError(f"`rag {args[0]}` was removed; use `{MOVED[args[0]]}`", ctx)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RagError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc(file=sys.stderr)
            click.echo(f"error: {exc.user_message}", err=True)
            ctx.exit(exc.exit_code)


@click.group("rag", cls=RagGroup)
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
    connector.connector,
):
    cli.add_command(command)

if __name__ == "__main__":  # pragma: no cover
    cli(prog_name="rag")  # `python -m backend.cli.main` is `rag` in every usage line
