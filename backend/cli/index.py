"""``rag index``: the versions a store holds and the aliases that serve them.

``list`` and ``status`` show them; ``promote`` (through the evaluation gate) and
``rollback`` rotate an alias; ``gc`` is the one retention verb. The older names
(``rag promote``, ``rag rollback``, ``rag alias status|prune``) are gone: typed, they name
the command that replaced them (``main.MOVED``).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Iterator

import click

from backend.cli.context import json_command, audit, settings_from
from backend.cli.promotion_view import ANSWERS_HELP, promote_and_print
from backend.common.config import Settings
from backend.common.errors import RagError, UnknownDomain
from backend.core.ports import Stores
from backend.core.services.promotion import collect_garbage, rollback as rollback_alias
from backend.core.services.version_status import alias_status, render_version, version_row
from backend.core.services.series_lock import SeriesLocks
from backend.core.versions import VersionNaming, version_roles
from backend.runtime import build_runtime, open_stores


@contextmanager
def opened(settings: Settings) -> Iterator[Stores]:
    """The configured store ports for one command, closed after it."""
    stores = open_stores(settings)
    try:
        yield stores
    finally:
        stores.close()


def locks(stores: Stores, settings: Settings, command: str) -> SeriesLocks:
    """The series locks of one command; a waiting run says so on stderr."""
    return SeriesLocks(stores.admin, settings, command, on_wait=lambda line: click.echo(line, err=True))


def configured_series(settings: Settings) -> dict[str, str]:
    """``alias -> index_name`` of the default alias and of every domain."""
    emb = settings.embeddings
    out = {emb.alias.name: emb.profiles[emb.default_profile].index_name}
    out.update({d.alias_name: d.index_name for d in emb.domains.values()})
    return out


def alias_option(settings: Settings, domain_key: str | None, alias: str | None) -> str:
    """The alias ``--domain-key`` or ``--alias`` names (default: embeddings.alias.name)."""
    if domain_key and alias:
        raise click.UsageError("give --domain-key or --alias, not both")
    if domain_key:
        if domain_key not in settings.embeddings.domains:
            raise UnknownDomain(f"--domain-key {domain_key!r} is not configured; known: "
                                f"{sorted(settings.embeddings.domains) or '(none)'}", field="domain_key")
        return settings.embeddings.domains[domain_key].alias_name
    return alias or settings.embeddings.alias.name


@click.group()
def index() -> None:
    """Index versions and aliases: list, status, promote, rollback, gc."""


@json_command(index, "list")
def list_versions(ctx: click.Context, as_json: bool) -> None:
    """Every version: role (live, rollback, candidate, retired), counts, size, age, evaluation."""
    settings = settings_from(ctx)
    with opened(settings) as stores:
        admin = stores.admin
        versions = admin.list_versions()
        aliases = admin.list_aliases()
        roles = version_roles(VersionNaming(settings.ingest.version_name_template), versions, aliases,
                              admin.protected_versions())
    rows = [{**version_row(v, roles[v.name].role), "why": roles[v.name].detail} for v in versions]
    if as_json:
        click.echo(json.dumps({"versions": rows, "aliases": aliases}, indent=2, default=str))
        return
    for row in rows:
        click.echo(f"{render_version(row)}  [{row['why']}]")
    for alias, version in sorted(aliases.items()):
        click.echo(f"alias {alias} -> {version}")


@json_command(index, "status")
def status(ctx: click.Context, as_json: bool) -> None:
    """Each alias, its active and previous version, and the versions with their last evaluation."""
    settings = settings_from(ctx)
    with opened(settings) as stores:
        statuses, others = alias_status(stores.admin, configured_series(settings),
                                        VersionNaming(settings.ingest.version_name_template))
    if as_json:
        click.echo(json.dumps({"aliases": [s.to_dict() for s in statuses], "other_versions": others},
                              indent=2, default=str))
        return
    for s in statuses:
        click.echo(s.render())
    click.echo("(* live, < rollback, + candidate; keep_versions="
               f"{settings.evaluation.keep_versions}, `rag index gc` drops the rest)")
    if others:
        click.echo("versions of no configured alias: " + ", ".join(others))


@index.command("promote")
@click.option("--domain-key", default=None, help="Promote into this domain's alias (default: embeddings.alias.name).")
@click.option("--version", default=None, help="Candidate version (default: the newest version of the domain's / "
              "default profile's index_name series).")
@click.option("--alias", default=None, help="Alias to rotate (overrides the domain's).")
@click.option("--golden", type=click.Path(dir_okay=False), default=None, help="Golden set (default from config).")
@click.option("--force", is_flag=True, help="Rotate even if gates fail; recorded as forced in the alias history.")
@click.option("--json", "as_json", is_flag=True)
@click.option("--answers/--no-answers", default=True, show_default=True, help=ANSWERS_HELP)
@click.pass_context
def promote(ctx: click.Context, domain_key: str | None, version: str | None, alias: str | None, golden: str | None,
            force: bool, as_json: bool, answers: bool) -> None:
    """Evaluate a version and point the alias at it only if every gate passes (exit 3 otherwise)."""
    runtime = build_runtime(settings_from(ctx))
    kb = domain_key or ("default" if alias is None else None)
    try:
        with locks(runtime.stores, runtime.settings, "rag index promote") as held:
            result = promote_and_print(lambda: runtime.promote(alias=alias, version=version, golden=golden,
                                                               force=force, domain_key=domain_key, answers=answers,
                                                               locks=held), as_json)
    except RagError as exc:
        audit(runtime.stores, runtime.settings, "promote", "refused", knowledge_base=kb,
              version=exc.context.get("version") if isinstance(exc.context.get("version"), str) else version,
              detail={"code": exc.code, "force": force})
        raise
    audit(runtime.stores, runtime.settings, "promote", "ok" if result.promoted else "refused", knowledge_base=kb,
          version=result.version, detail={"alias": result.alias, "force": force})


@index.command("rollback")
@click.option("--domain-key", default=None, help="Roll back this domain's alias.")
@click.option("--alias", default=None, help="Roll back this alias (default: embeddings.alias.name).")
@click.pass_context
def rollback(ctx: click.Context, domain_key: str | None, alias: str | None) -> None:
    """Point the alias back at the version it served before its latest change."""
    settings = settings_from(ctx)
    name = alias_option(settings, domain_key, alias)
    with opened(settings) as stores, locks(stores, settings, "rag index rollback") as held:
        change = rollback_alias(stores.admin, name, locks=held)
        audit(stores, settings, "rollback", "ok", knowledge_base=domain_key or None, version=change.version,
              detail={"alias": change.alias, "previous": change.previous})
    click.echo(f"rolled back: {change.alias} -> {change.version} (was {change.previous})")


@json_command(index, "gc")
@click.option("--domain-key", default=None, help="Only this domain's alias's series.")
@click.option("--alias", "alias_name", default=None, help="Only this alias's series.")
@click.option("--dry-run", is_flag=True, help="Only list what would be dropped and removed.")
def gc(ctx: click.Context, domain_key: str | None, alias_name: str | None, dry_run: bool, as_json: bool) -> None:
    """Drop versions beyond evaluation.keep_versions per series (only the alias's with --alias or
    --domain-key), never a live or rollback one, then remove figure images no remaining version cites."""
    settings = settings_from(ctx)
    scoped = bool(domain_key or alias_name)
    name = alias_option(settings, domain_key, alias_name) if scoped else None
    with opened(settings) as stores, locks(stores, settings, "rag index gc") as held:
        series = None
        if name is not None:
            series = stores.admin.resolve_alias(name) or configured_series(settings).get(name)
            if series is None:
                raise click.UsageError(f"alias {name} serves nothing and is not configured")
            if not dry_run:  # never drop a candidate an ingest is writing
                held.hold(series)
        result = collect_garbage(stores, settings, series=series, dry_run=dry_run)
        if not dry_run and (result.dropped or result.assets_removed):
            audit(stores, settings, "delete", "ok", knowledge_base=domain_key,
                  detail={"dropped": list(result.dropped), "assets_removed": len(result.assets_removed)})
    if as_json:
        click.echo(json.dumps({"dropped": list(result.dropped), "assets_removed": list(result.assets_removed),
                               "dry_run": dry_run}, indent=2))
        return
    verb = "would drop" if dry_run else "dropped"
    click.echo(f"{name + ': ' if name else ''}{verb} versions: {', '.join(result.dropped) or 'none'} "
               f"(keep_versions={settings.evaluation.keep_versions})")
    click.echo(f"{'would remove' if dry_run else 'removed'} unreferenced images: {len(result.assets_removed)}"
               f" (older than {settings.docx.assets_gc_grace_seconds}s)")
