"""The ``rag`` command: a click group with one module per noun.

Each command loads settings once, builds the services it needs, calls one
function and renders the result: results to stdout (``--json`` for scripts),
progress and logs to stderr. ``RagError`` is caught here, in one place: its
``user_message`` goes to stderr and the exit code is non-zero; ``--debug`` adds
the traceback.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

import click

from backend.common.errors import RagError


class RagGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RagError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc(file=sys.stderr)
            click.echo(f"error: {exc.user_message}", err=True)
            ctx.exit(exc_exit_code(exc))


def exc_exit_code(exc: RagError) -> int:
    from backend.common.errors import ConfigError, GateFailed, SeriesLocked

    if isinstance(exc, GateFailed):
        return 3
    if isinstance(exc, SeriesLocked):
        return 4
    if isinstance(exc, ConfigError):
        return 2
    return 1


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


def _register() -> None:
    from backend.cli import config_cmd, index

    cli.add_command(config_cmd.config)
    cli.add_command(index.index)
    # Further nouns register here, one line each: ingest, ask, serve, eval, promote, ...
    for module_name, attr in (
        ("backend.cli.ingest", "ingest"),
        ("backend.cli.ask", "ask"),
        ("backend.cli.serve", "serve"),
        ("backend.cli.search", "search"),
        ("backend.cli.evaluate", "eval_cmd"),
        ("backend.cli.evaluate", "promote"),
        ("backend.cli.evaluate", "rollback"),
        ("backend.cli.evaluate", "alias"),
        ("backend.cli.bench", "bench"),
        ("backend.cli.calibrate", "calibrate"),
        ("backend.cli.feedback", "feedback"),
        ("backend.cli.kb", "kb"),
        ("backend.cli.tune", "tune"),
        ("backend.cli.oracle", "oracle"),
    ):
        try:
            module = __import__(module_name, fromlist=[attr])
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        cli.add_command(getattr(module, attr))


_register()

if __name__ == "__main__":  # pragma: no cover
    cli()
