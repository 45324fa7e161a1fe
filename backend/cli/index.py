"""``rag index list`` and ``rag index gc``: the versions a store holds, their roles,
and retention."""

from __future__ import annotations

import json

import click

from backend.cli.context import settings_from
from backend.core.services.promotion import collect_garbage, render_version, version_row
from backend.core.services.versions import VersionNaming, version_roles
from backend.providers.registry import build_store


@click.group()
def index() -> None:
    """Inspect index versions and drop the ones retention no longer keeps."""


@index.command("list")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def list_versions(ctx: click.Context, as_json: bool) -> None:
    """Every version: role (live, rollback, candidate, retired), counts, size, age, evaluation."""
    settings = settings_from(ctx)
    store = build_store(settings)
    versions = store.list_versions()
    aliases = store.list_aliases()
    roles = version_roles(VersionNaming(settings.ingest.version_name_template), versions, aliases,
                          store.protected_versions())
    rows = [{**version_row(v, roles[v.name].role), "why": roles[v.name].detail} for v in versions]
    if as_json:
        click.echo(json.dumps({"versions": rows, "aliases": aliases}, indent=2, default=str))
        return
    for row in rows:
        click.echo(f"{render_version(row)}  [{row['why']}]")
    for alias, version in sorted(aliases.items()):
        click.echo(f"alias {alias} -> {version}")


@index.command("gc")
@click.option("--dry-run", is_flag=True, help="Only list what would be dropped and removed.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def gc(ctx: click.Context, dry_run: bool, as_json: bool) -> None:
    """Drop versions beyond evaluation.keep_versions per series, never a live or rollback one,
    then remove figure images no remaining version cites."""
    settings = settings_from(ctx)
    result = collect_garbage(build_store(settings), settings, dry_run=dry_run)
    if as_json:
        click.echo(json.dumps({"dropped": list(result.dropped), "assets_removed": list(result.assets_removed),
                               "dry_run": dry_run}, indent=2))
        return
    verb = "would drop" if dry_run else "dropped"
    click.echo(f"{verb} versions: {', '.join(result.dropped) or 'none'} "
               f"(keep_versions={settings.evaluation.keep_versions})")
    click.echo(f"{'would remove' if dry_run else 'removed'} unreferenced images: {len(result.assets_removed)}"
               f" (older than {settings.docx.assets_gc_grace_seconds}s)")
