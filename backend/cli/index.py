"""``rag index list``: the versions a store holds and the aliases over them."""

from __future__ import annotations

import json

import click

from backend.cli.context import settings_from
from backend.providers.registry import build_store


@click.group()
def index() -> None:
    """Inspect index versions."""


@index.command("list")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def list_versions(ctx: click.Context, as_json: bool) -> None:
    """List index versions with model, dimension, distance and counts."""
    settings = settings_from(ctx)
    store = build_store(settings)
    versions = store.list_versions()
    aliases = store.list_aliases()
    if as_json:
        click.echo(json.dumps({"versions": [v.__dict__ for v in versions], "aliases": aliases}, indent=2, default=str))
        return
    served: dict[str, list[str]] = {}
    for alias, version in aliases.items():
        served.setdefault(version, []).append(alias)
    for v in versions:
        click.echo(f"{v.name:<24} {v.model:<42} {v.dimension:>5} {v.distance:<9} docs={v.doc_count:<6} "
                   f"chunks={v.chunk_count:<7} aliases={','.join(served.get(v.name, [])) or '-'}")
