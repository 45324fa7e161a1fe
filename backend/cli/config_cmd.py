"""``rag config check``: validate a profile and show what it resolves to."""

from __future__ import annotations

import json

import click
import yaml

from backend.common.config import load_settings, masked_dump
from backend.common.errors import ConfigError


@click.group()
def config() -> None:
    """Inspect and validate configuration."""


@config.command("check")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="File to check (default: the group's --config, else config/rag.yaml).")
@click.option("--json", "as_json", is_flag=True, help="Print the resolved config as JSON.")
@click.option("--connect/--no-connect", default=True, show_default=True,
              help="With store.backend oracle, also connect to the database (exit 1 naming host and port if it "
              "cannot be reached). The embedded store is never opened here.")
@click.pass_context
def check(ctx: click.Context, config_path: str | None, as_json: bool, connect: bool) -> None:
    """Print every problem with its YAML path and exit 2, or print the resolved
    config (secrets masked) and exit 0; exit 1 when a remote store cannot be reached."""
    path = config_path or (ctx.find_root().obj or {}).get("config_path")
    try:
        settings = load_settings(path)
    except ConfigError as exc:
        for problem in exc.problems:
            click.echo(problem, err=True)
        ctx.exit(2)
    data = masked_dump(settings)
    click.echo(json.dumps(data, indent=2) if as_json else yaml.safe_dump(data, sort_keys=False))
    if connect and settings.store.backend == "oracle":
        from backend.runtime import check_store

        check_store(settings)  # StoreUnavailable names host and port; main turns it into exit 1
