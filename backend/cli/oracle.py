"""``rag oracle check``: the first command an operator runs against a new Oracle database.

It connects with ``store.oracle`` (the password only from the environment, never printed) and
runs ``backend.providers.oracle_vs.first_contact``: version, privileges, vector pool and advisor,
index status, ``EXPLAIN PLAN`` of every search shape, and the review's server-only checks.
Read-only (its own ``EXPLAIN PLAN`` rows are deleted and rolled back). Exit 0 when every required
check passes, 1 otherwise, 2 when the profile's store is not Oracle.
"""

from __future__ import annotations

import json
from typing import Any

import click

from backend.cli.context import settings_from
from backend.common.config import OracleSettings
from backend.providers.oracle_vs import check_report, first_contact


def open_connector(settings: OracleSettings) -> Any:
    """The connection pool (a seam for tests)."""
    from backend.providers.oracle_vs.connection import OracleConnector

    return OracleConnector.from_settings(settings)


@click.group()
@click.pass_context
def oracle(ctx: click.Context) -> None:
    """Oracle AI Vector Search: check a database before the first ingest."""
    # the commands of ``oracle_model`` open their pool through this module's seam, looked up when called
    ctx.ensure_object(dict)["open_connector"] = lambda settings: open_connector(settings)


@oracle.command("check")
@click.option("--version", "target", default=None,
              help="Version or alias whose search plans to explain (default: the newest version).")
@click.option("--json", "as_json", is_flag=True, help="The checks as JSON.")
@click.pass_context
def check(ctx: click.Context, target: str | None, as_json: bool) -> None:
    """Run the first-contact checks; print pass/warn/fail/skip per check and what to do.
    Exit 0 when every required check passes, 1 otherwise, 2 with store.backend sqlite."""
    settings = settings_from(ctx)
    if settings.store.backend != "oracle":
        click.echo(f"error: rag oracle check needs store.backend oracle; this profile uses "
                   f"'{settings.store.backend}' (the embedded store has no server to check). Set store.backend: "
                   "oracle (or RAG_STORE__BACKEND=oracle) with store.oracle.dsn and user, and the password in "
                   "RAG_STORE__ORACLE__PASSWORD.", err=True)
        ctx.exit(2)
    connector = open_connector(settings.store.oracle)
    try:
        report = first_contact.run_checks(connector, settings.store.oracle, target=target,
                                          max_question_chars=settings.server.max_question_chars)
    finally:
        connector.close()
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        check_report.render(report, click.echo)
    ctx.exit(0 if report.ok else 1)


def _register_model_commands() -> None:
    """``load-model`` and ``parity`` (in-database query embeddings) live in ``oracle_model``."""
    from backend.cli.oracle_model import load_model, parity

    oracle.add_command(load_model)
    oracle.add_command(parity)


_register_model_commands()
