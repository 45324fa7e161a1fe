"""``rag connector``: knowledge bases kept in sync with where their documents live (docs/CONNECTORS.md).

``add`` declares a connector in ``connectors.file`` (secrets as environment variable names,
never values); ``sync`` runs one sync (or one every ``--every 15m``, or one after each change of a
folder with ``--watch``) through the gate, and Ctrl-C
or ``cancel`` from another shell stops its ingest step after the group in flight; ``list``
and ``status`` read the declarations and the store's sync state; ``remove`` drops the
declaration and, with ``--forget``, the sync state (the knowledge base and its versions stay).
Exit codes: 2 a bad declaration, 3 the gate refused the version, 1 a refused or failed sync,
130 a cancelled one (the next sync resumes it).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import click
import yaml

from backend.cli.context import json_command, settings_from
from backend.cli.ingest_cancel import CancelOnInterrupt
from backend.common.config import ConnectorSpec, Settings
from backend.common.errors import ConfigError, RagError
from backend.ingest.cancel import CancelToken, IngestCancelled, default_cancel_dir, request_cancel

_EVERY = re.compile(r"^(\d+)\s*([smhd])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_every(value: str) -> int:
    """Pure: ``15m`` -> 900 seconds; ``ConfigError`` for anything else."""
    found = _EVERY.fullmatch(value.strip().lower())
    if not found or int(found.group(1)) == 0:
        raise ConfigError(f"--every {value!r}: expected a positive number and a unit, e.g. 30s, 15m, 2h, 1d",
                          field="every")
    return int(found.group(1)) * _UNITS[found.group(2)]


def pairs(values: tuple[str, ...], flag: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for value in values:
        key, sep, raw = value.partition("=")
        if not sep or not key:
            raise ConfigError(f"{flag} {value!r}: expected KEY=VALUE", field=flag.lstrip("-"))
        out[key.strip()] = yaml.safe_load(raw) if flag == "--option" and raw else raw
    return out


@click.group("connector")
def connector() -> None:
    """Connectors: add, list, sync, status, remove."""


@connector.command("add")
@click.argument("name")
@click.option("--kind", required=True, type=click.Choice(["folder", "git", "s3", "oci_object_storage", "web", "sql",
                                                                  "sharepoint", "confluence"]))
@click.option("--kb", "knowledge_base", required=True, help="The knowledge base it feeds (registered at first sync).")
@click.option("--option", "options", multiple=True, help="KEY=VALUE of the kind's options (repeatable).")
@click.option("--secret", "secrets", multiple=True,
              help="OPTION=ENV_VAR: the environment variable holding a secret (repeatable); never the value.")
@click.option("--reader", "readers", multiple=True, help="Reader of every item when the source gives none.")
@click.option("--permissions", "permissions_file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="YAML file of the permission mapping (users, groups, domains, everyone, public, default).")
@click.option("--replace", is_flag=True, help="Replace a connector of the same name.")
@click.pass_context
def add(ctx: click.Context, name: str, kind: str, knowledge_base: str, options: tuple[str, ...],
        secrets: tuple[str, ...], readers: tuple[str, ...], permissions_file: str | None, replace: bool) -> None:
    """Declare connector NAME in connectors.file."""

    from backend.connectors.declarations import add as declare, connectors_path

    settings = settings_from(ctx)
    body: dict[str, Any] = {"kind": kind, "knowledge_base": knowledge_base, "options": pairs(options, "--option"),
                            "secrets": pairs(secrets, "--secret")}
    if readers:
        body["readers"] = list(readers)
    if permissions_file:
        body["permissions"] = yaml.safe_load(open(permissions_file, encoding="utf-8")) or {}
    spec = checked_spec(body, f"connector {name!r}", field="options")
    declare(settings, name, spec, replace=replace)
    click.echo(f"connector {name!r} ({kind} -> {knowledge_base}) declared in {connectors_path(settings)}; "
               f"sync it with `rag connector sync {name}`")


def checked_spec(body: dict[str, Any], where: str, *, field: str) -> ConnectorSpec:
    """A declaration's body as a ``ConnectorSpec``; its first error a ``ConfigError`` led by ``where``."""
    from pydantic import ValidationError

    try:
        return ConnectorSpec.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{where}: {loc + ': ' if loc else ''}{first['msg'].removeprefix('Value error, ')}",
                          field=loc or field) from exc


def _last_runs(settings: Settings) -> dict[str, dict[str, Any]]:
    from backend.runtime import open_stores

    stores = open_stores(settings)
    try:
        runs = stores.sync_state.sync_runs(limit=1000) if stores.sync_state is not None else []
    finally:
        stores.close()
    last: dict[str, dict[str, Any]] = {}
    for run in runs:
        last.setdefault(run["connector"], run)
    return last


@json_command(connector, "list")
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """The declared connectors and their last sync."""
    from backend.connectors.declarations import connectors_path, declared

    settings = settings_from(ctx)
    specs = declared(settings)
    last = _last_runs(settings)
    rows: list[dict[str, Any]] = [{"name": n, "kind": s.kind, "knowledge_base": s.knowledge_base,
                                   "last": last.get(n)} for n, s in sorted(specs.items())]
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    if not rows:
        click.echo(f"no connector declared in {connectors_path(settings)}; add one with `rag connector add`")
    for row in rows:
        run = row["last"]
        said = "never synced" if run is None else (
            f"{run['status']} at {run['recorded_at']}: " + " ".join(f"{k}={v}" for k, v in run.get("counts", {}).items())
            + (f" version={run['version']}" if run.get("version") else ""))
        click.echo(f"{row['name']:<20} {row['kind']:<7} -> {row['knowledge_base']:<20} {said}")


def render_report(report: dict[str, Any]) -> list[str]:
    """A sync report as lines a person reads (pure)."""
    counts = report.get("counts") or {}
    lines = [f"{report['connector']} -> {report['knowledge_base']}: {report['status']}"
             + (f" ({report['message']})" if report.get("message") else ""),
             "  " + " ".join(f"{k}={v}" for k, v in counts.items()) + f"  embedded={report.get('embeddings_computed', 0)}"]
    if report.get("version"):
        verdict = {True: "passed", False: "REFUSED", None: "not run"}[report.get("gate_passed")]
        lines.append(f"  version {report['version']}: gate {verdict}; serving {report.get('served_version')}")
    for error in report.get("errors") or []:
        lines.append(f"  failed {error['item']}: {error['reason']}")
    if report.get("unmapped_readers"):
        lines.append("  unmapped readers (not given access): " + ", ".join(
            f"{r} ({n})" for r, n in report["unmapped_readers"].items()))
    if report.get("unknown_permissions"):
        shown = report["unknown_permissions"]
        lines.append(f"  {len(shown)} item(s) with unknown permissions, visible to admins only: "
                     + ", ".join(shown[:5]) + (" ..." if len(shown) > 5 else ""))
    return lines


def sync_once(settings: Settings, name: str, force: bool, *, bars: bool = False) -> dict[str, Any]:
    """One sync of connector ``name``; ``bars``: the ingest step's progress bars on stderr."""
    from backend.connectors.sync import sync_connector
    from backend.runtime import build_runtime, open_connector

    spec, source = open_connector(settings, name)
    runtime = build_runtime(settings)
    token = CancelToken(default_cancel_dir(settings))
    try:
        with CancelOnInterrupt(token, lambda line: click.echo(line, err=True)):
            return sync_connector(runtime, name, spec, source, force=force, cancel=token, bars=bars).to_dict()
    finally:
        runtime.stores.close()


@json_command(connector, "sync")
@click.argument("name")
@click.option("--force", is_flag=True, help="Let an empty listing or a mass deletion through.")
@click.option("--every", default=None, help="Sync again after this interval (30s, 15m, 2h), until stopped.")
@click.option("--watch", is_flag=True, help="A folder connector: sync now, then again whenever the folder changes "
              "(watchdog events, once the folder has been quiet for --quiet seconds), until stopped.")
@click.option("--quiet", "quiet_s", type=click.FloatRange(min=0.1), default=2.0, show_default=True,
              help="With --watch: seconds without a change before a sync starts.")
@click.option("--poll", is_flag=True, help="With --watch: poll the folder instead of waiting for the file system's "
              "events (network mounts, NFS or SMB, raise none for changes made elsewhere).")
@click.option("--progress/--no-progress", default=None,
              help="Force the ingest step's progress bars on stderr on or off (default: on a terminal, not with --json).")
@click.option("--times", type=int, default=None, hidden=True, help="With --every or --watch: stop after this many syncs.")
def sync(ctx: click.Context, name: str, force: bool, every: str | None, watch: bool, quiet_s: float, poll: bool,
         progress: bool | None, times: int | None, as_json: bool) -> None:
    """Sync connector NAME into its knowledge base: one version through the gate."""
    from backend.common.progress import progress_enabled

    settings = settings_from(ctx, quiet_info=True)
    bars = progress_enabled(progress, default=settings.ingest.progress, as_json=as_json)
    if watch and every:
        raise ConfigError("--watch and --every: choose one (--watch syncs on each change, --every on a clock)",
                          field="watch")
    interval = parse_every(every) if every else None
    if watch:
        _watch(ctx, settings, name, force=force, quiet_s=quiet_s, poll=poll, times=times, as_json=as_json, bars=bars)
        return
    runs = 0
    while True:
        runs += 1
        if not _sync_and_show(ctx, settings, name, force=force, as_json=as_json, looping=interval is not None,
                              bars=bars):
            return
        if interval is None or (times is not None and runs >= times):
            return
        time.sleep(interval)


def _sync_and_show(ctx: click.Context, settings: Settings, name: str, *, force: bool, as_json: bool,
                   looping: bool, bars: bool = False) -> bool:
    """One sync, its report printed. A single sync exits non-zero on a gate refusal (3), failed
    items (1) or an error; a loop reports an error and goes on (False: a cancel ends it)."""
    try:
        report = sync_once(settings, name, force, bars=bars)
    except RagError as exc:
        if not looping or isinstance(exc, IngestCancelled):  # a cancel stops the schedule too
            raise
        click.echo(f"error: {exc.user_message}", err=True)
        return True
    click.echo(json.dumps(report, indent=2, default=str) if as_json else "\n".join(render_report(report)))
    if not looping and report["status"] == "gate_refused":
        ctx.exit(3)
    if not looping and report.get("errors"):
        ctx.exit(1)
    return True


def _watch(ctx: click.Context, settings: Settings, name: str, *, force: bool, quiet_s: float, poll: bool,
           times: int | None, as_json: bool, bars: bool) -> None:
    """Sync, then sync again after each burst of changes of the connector's folder, until Ctrl-C."""
    from backend.connectors.declarations import spec_of
    from backend.connectors.watch import FolderWatch

    spec = spec_of(settings, name)
    if spec.kind != "folder":
        raise ConfigError(f"connector {name!r} is a {spec.kind} connector: --watch follows a folder's changes; "
                          f"use --every (e.g. --every 15m) to sync it on a clock", field="watch")
    runs = 0
    try:
        with FolderWatch(Path(spec.typed_options().path), quiet_s=quiet_s, polling=poll) as folder:
            while True:
                runs += 1
                _sync_and_show(ctx, settings, name, force=force, as_json=as_json, looping=True, bars=bars)
                if times is not None and runs >= times:
                    return
                if not as_json:
                    click.echo(f"watching {folder.root} for changes (Ctrl-C to stop)", err=True)
                folder.wait_for_change()
    except KeyboardInterrupt:
        click.echo("stopped watching", err=True)


@connector.command("cancel")
@click.argument("name")
@click.pass_context
def cancel(ctx: click.Context, name: str) -> None:
    """Ask a running sync of connector NAME (from any shell on this machine) to stop after the group
    in flight; the served version and the sync state stay as they were, and the next sync resumes."""
    from backend.connectors.declarations import spec_of
    from backend.connectors.sync import sync_series

    settings = settings_from(ctx)
    spec = spec_of(settings, name)
    series = sync_series(settings, spec.knowledge_base)
    marker = request_cancel(default_cancel_dir(settings), series)
    click.echo(f"cancel requested for connector {name!r} (knowledge base {spec.knowledge_base!r}, series {series}; "
               f"marker {marker}): a running sync stops after the group in flight and exits 130")


@json_command(connector, "status")
@click.argument("name")
@click.option("--runs", default=5, show_default=True, help="How many of the last runs to show.")
def status(ctx: click.Context, name: str, runs: int, as_json: bool) -> None:
    """The last syncs of connector NAME."""
    from backend.connectors.declarations import spec_of
    from backend.runtime import open_stores

    settings = settings_from(ctx)
    spec = spec_of(settings, name)
    stores = open_stores(settings)
    try:
        rows = stores.sync_state.sync_runs(name, limit=runs) if stores.sync_state is not None else []
        items = len(stores.sync_state.sync_items(name)) if stores.sync_state is not None else 0
    finally:
        stores.close()
    if as_json:
        click.echo(json.dumps({"name": name, "kind": spec.kind, "knowledge_base": spec.knowledge_base,
                               "items": items, "runs": rows}, indent=2, default=str))
        return
    click.echo(f"{name}: {spec.kind} -> {spec.knowledge_base}, {items} item(s) synced")
    for row in rows or []:
        click.echo(f"{row['recorded_at']}  " + "\n".join(render_report(row)))
    if not rows:
        click.echo("never synced")


@connector.command("remove")
@click.argument("name")
@click.option("--forget", is_flag=True, help="Also drop its sync state (a later sync starts from scratch).")
@click.pass_context
def remove(ctx: click.Context, name: str, forget: bool) -> None:
    """Remove connector NAME's declaration (its knowledge base and versions stay)."""
    from backend.connectors.declarations import remove as undeclare
    from backend.runtime import open_stores

    settings = settings_from(ctx)
    spec = undeclare(settings, name)
    dropped = 0
    if forget:
        stores = open_stores(settings)
        try:
            dropped = stores.sync_state.forget_sync(name) if stores.sync_state is not None else 0
        finally:
            stores.close()
    click.echo(f"connector {name!r} removed; knowledge base {spec.knowledge_base!r} keeps its versions"
               + (f"; {dropped} synced item(s) forgotten" if forget else ""))
