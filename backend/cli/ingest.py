"""``rag ingest MANIFEST``: load, sanitize, chunk, embed and upsert into a version.

The summary goes to stdout (``--json`` for scripts), progress bars and logs to
stderr. The exit code is 1 when any manifest line or file failed, even though
every good document was ingested; ``--strict`` stops at the first bad line.
A version an alias serves is never written: when the run would change it, the
next version is built from it (see ``backend.core.versions``);
``--in-place`` is the explicit override. ``--update-alias`` never rotates an
alias directly: it hands the new version to the evaluation gate (as ``rag index promote --no-answers`` would), which prints its
figures and promotes only if every gate passes (exit code 3 otherwise).

One run per index series at a time: the run holds the series' writer lock from before it
plans until its promotion ends (``backend.core.services.series_lock``); a second run waits
or is refused (``ingest.concurrent_runs``), and exits 4 without writing when it does not get
the lock. The last lines say which version each alias serves and whether it includes this
run's changes (``backend.ingest.served``).

``rag ingest DIR`` walks the folder as ``rag kb create`` does (``backend.ingest.folder``: supported
types, ignore rules, links confined to it), prints what it skipped and why, writes the manifest it
built into the knowledge base's workspace (``<knowledge_bases.dir>/<key>/manifests/``, ``default``
without ``--domain-key``) for the record, and goes on as with that manifest. Naming the folder on
the command line makes it an allowed root for this run.

``--engine ray`` runs load, sanitize, chunk and embed on Ray Data actor pools (here, or on the
cluster at ``--address``) and writes the same version from this process
(``backend.ingest.ray_engine``); the default stays the single process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from backend.cli.context import settings_from
from backend.cli.ingest_cancel import CancelOnInterrupt, cancel_command
from backend.cli.promotion_view import promote_and_print
from backend.common.config import DEFAULT_DOMAIN, Settings
from backend.common.errors import GateFailed
from backend.common.progress import TqdmProgress, progress_enabled
from backend.core.ports import Stores
from backend.core.services.promotion import PromotionResult
from backend.core.services.series_lock import SeriesLocks
from backend.core.versions import VersionNaming
from backend.ingest.cancel import CancelToken, IngestCancelled, default_cancel_dir
from backend.ingest.engine import IngestEngine
from backend.ingest.pipeline import IngestPipeline
from backend.ingest.served import Served, served_after
from backend.runtime import (build_runtime, enricher_factory, open_embedder, open_stores, worker_cache_db,
                             worker_embedder, worker_vector_cache)

if TYPE_CHECKING:
    from backend.ingest.ray_engine import RayEngine


def _folder_manifest(settings: Settings, folder: Path, domain_key: str | None, *,
                     quiet: bool) -> tuple[Settings, Path]:
    """Walk ``folder`` into a manifest written to the knowledge base's workspace; the settings
    of this run allow the folder as a root (the user named it)."""
    from backend.common.errors import ManifestError
    from backend.ingest.folder import walk_folder
    from backend.ingest.knowledge_bases import write_manifest

    walk = walk_folder(folder)
    for skipped in walk.skipped:
        if not quiet:
            click.echo(f"skipped {skipped.file}: {skipped.reason}", err=True)
    if not walk.files:
        raise ManifestError(f"{folder}: no supported file to ingest ({len(walk.skipped)} skipped)", path=str(folder))
    roots = settings.ingest.allowed_roots
    if str(walk.root) not in roots:
        settings = settings.model_copy(update={"ingest": settings.ingest.model_copy(
            update={"allowed_roots": (*roots, str(walk.root))})})
    manifest = write_manifest(settings, domain_key or DEFAULT_DOMAIN, walk.manifest_lines())
    if not quiet:
        click.echo(f"{len(walk.files)} file(s) from {walk.root}; manifest used: {manifest}", err=True)
    return settings, manifest


class _IngestGroup(click.Group):
    """``rag ingest MANIFEST|DIR`` runs an ingest; ``rag ingest cancel`` is the one subcommand.
    Anything that is not a subcommand's name goes to ``run`` (``rag ingest run ...`` also works), and
    so does ``cancel`` when it is a file or folder here: a manifest named ``cancel`` is ingested as
    typed (to cancel while such a file is in the current folder, run ``rag ingest cancel`` from
    another one)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands or (args[0] != "run" and Path(args[0]).exists()):
            args = ["run", *args]
        return super().parse_args(ctx, args)


class _TypedAsIngest(click.Context):
    """``run``'s context names the command a user types: ``rag ingest [OPTIONS] MANIFEST|DIR`` in its
    usage line and its "Try ... --help" hint, never the ``run`` the group routes to."""

    @property
    def command_path(self) -> str:
        return self.parent.command_path if self.parent is not None else super().command_path


class _IngestRun(click.Command):
    context_class = _TypedAsIngest


@click.group("ingest", cls=_IngestGroup)
def ingest() -> None:
    """Ingest documents into an index version: rag ingest MANIFEST|DIR (see rag ingest --help);
    rag ingest cancel stops a running one."""


@ingest.command("run", cls=_IngestRun)
@click.argument("manifest_arg", metavar="MANIFEST|DIR", required=False, type=click.Path(path_type=Path))
@click.option("--manifest", "manifest_opt", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The JSONL manifest (same as the MANIFEST argument).")
@click.option("--profile", default=None, help="Embedding profile for every line (default: each line's profiles, "
              "else embeddings.default_profile).")
@click.option("--domain-key", default=None, help="Ingest into embeddings.domains.<key>.index_name with its profile.")
@click.option("--prune", is_flag=True, help="Delete documents of the version that the manifest no longer lists.")
@click.option("--strict", is_flag=True, help="Stop at the first malformed manifest line.")
@click.option("--update-alias", is_flag=True, help="Afterwards, hand the version to the evaluation gate for promotion.")
@click.option("--in-place", is_flag=True,
              help="Write the newest version directly even when an alias serves it or keeps it for rollback. "
              "Bypasses immutable versions and the evaluation gate: readers see the change at once and a rollback "
              "no longer restores the old content.")
@click.option("--progress/--no-progress", default=None,
              help="Force the progress bars on stderr on or off (default: drawn when ingest.progress is on, stderr "
              "is a terminal and --json is not given). They show files/s, chunks/s and the ETA.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--engine", "engine_name", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: one process. ray: load, sanitize, chunk and embed in Ray Data actor pools, written here "
              "into the same version (the `ray` extra; docs/INGESTION_AND_MANIFESTS.md).")
@click.option("--address", default=None, help="--engine ray: the Ray cluster to join (`auto`: the one `ray start` "
              "runs on this machine; default: start Ray here for this run).")
@click.option("--ray-actors", type=click.IntRange(min=1), default=None,
              help="--engine ray: embedding actors, one CPU and one model each (default: the cluster's CPUs).")
@click.option("--ray-prepare-actors", type=click.IntRange(min=1), default=1, show_default=True,
              help="--engine ray: actors that load, sanitize and chunk (more when sanitizing is on).")
@click.option("--ray-writers", type=click.IntRange(min=1), default=1, show_default=True,
              help="--engine ray: groups written at once, each in its own transaction of array DML on its own "
              "pooled connection (Oracle: up to store.oracle.pool_max - 1; the embedded store writes with one).")
@click.pass_context
def run(ctx: click.Context, manifest_arg: Path | None, manifest_opt: Path | None, profile: str | None,
        domain_key: str | None, prune: bool, strict: bool, update_alias: bool, in_place: bool,
        progress: bool | None, as_json: bool, engine_name: str, address: str | None, ray_actors: int | None,
        ray_prepare_actors: int, ray_writers: int) -> None:
    """Ingest the documents listed in MANIFEST (JSONL), or every document of the folder DIR, into an
    index version. Ctrl-C (or `rag ingest cancel` from another shell) stops after the group in
    flight is written: exit code 130, the version left resumable by running the same command."""
    if (manifest_arg is None) == (manifest_opt is None):
        raise click.UsageError("give the manifest once: as MANIFEST or with --manifest")
    manifest = manifest_arg or manifest_opt
    assert manifest is not None
    if manifest_arg is not None and not manifest_arg.exists():
        raise click.BadParameter(f"{manifest_arg}: no such file or folder (expected a JSONL manifest or a folder "
                                 "of documents)", param_hint="MANIFEST|DIR")
    folder = manifest_arg is not None and manifest_arg.is_dir()
    # a folder's run prints a report a person reads: INFO lines would interleave with it (--debug shows them)
    settings = settings_from(ctx, quiet_info=folder)
    pii_key: str | None = None
    if folder:
        assert manifest_arg is not None
        settings, manifest = _folder_manifest(settings, manifest_arg, domain_key, quiet=as_json)
        pii_key = domain_key or DEFAULT_DOMAIN
    engine = _engine(engine_name, address, ray_actors, ray_prepare_actors, ray_writers)
    try:
        stores = open_stores(settings)
        try:
            _run(ctx, settings, stores, manifest, profile=profile, domain_key=domain_key, prune=prune,
                 strict=strict, update_alias=update_alias, in_place=in_place, progress=progress, as_json=as_json,
                 engine=engine, pii_key=pii_key)
        finally:
            stores.close()
    finally:
        if engine is not None:
            engine.close()


def _engine(name: str, address: str | None, actors: int | None, prepare_actors: int,
            writers: int = 1) -> RayEngine | None:
    """The ``--engine`` the run processes its documents with (None: the single-process default)."""
    if name == "local":
        if address is not None or actors is not None or prepare_actors != 1 or writers != 1:
            raise click.UsageError("--address, --ray-actors, --ray-prepare-actors and --ray-writers need --engine ray")
        return None
    from backend.ingest.ray_engine import RayEngine

    engine = RayEngine(worker_embedder, address=address, actors=actors, prepare_actors=prepare_actors,
                       writers=writers, vector_cache=worker_vector_cache)
    engine.connection()  # an unreachable cluster fails the run here, before any version is planned
    return engine


def _run(ctx: click.Context, settings: Settings, stores: Stores, manifest: Path, *, profile: str | None,
         domain_key: str | None, prune: bool, strict: bool, update_alias: bool, in_place: bool,
         progress: bool | None, as_json: bool, engine: IngestEngine | None = None,
         pii_key: str | None = None) -> None:
    """``pii_key``: the knowledge base whose per-document PII counts the run brings up to date
    (a folder's run; ``knowledge_bases.record_pii``), read by the admin console."""
    embedder = open_embedder(settings)
    token = CancelToken(default_cancel_dir(settings))
    bars = TqdmProgress(progress_enabled(progress, default=settings.ingest.progress, as_json=as_json))
    pipeline = IngestPipeline.from_settings(settings, stores, embedder, progress=bars, cancel=token,
                                            enricher_for=enricher_factory(settings), engine=engine,
                                            worker_cache=worker_cache_db(stores))
    with SeriesLocks(stores.admin, settings, "rag ingest", on_wait=lambda line: click.echo(line, err=True)) as locks:
        try:
            with CancelOnInterrupt(token, lambda line: click.echo(line, err=True)):
                report = pipeline.run(manifest, profile=profile, domain_key=domain_key, prune=prune, strict=strict,
                                      in_place=in_place, locks=locks)
        except IngestCancelled as exc:
            _cancelled(ctx, exc, as_json)
            return
        if pii_key is not None:
            from backend.ingest.knowledge_bases import record_pii

            record_pii(settings, pii_key, report)
        promoting = update_alias and report.ok

        def served(promoted: str | None = None, refused: bool = False) -> list[Served]:
            return served_after(report.builds, stores.admin.list_aliases(),
                                VersionNaming(settings.ingest.version_name_template), update_alias=update_alias,
                                ingest_ok=report.ok, promoted_version=promoted, gate_refused=refused)

        if not promoting:
            outcome = served()
            if as_json:
                click.echo(json.dumps({**report.to_dict(), "served": [o.to_dict() for o in outcome]}, indent=2))
            else:
                click.echo("\n".join([report.render(), *(o.render() for o in outcome)]))
            if not report.ok:
                ctx.exit(1)
            return
        if not as_json:
            click.echo(report.render())
        # the gate's verdict decides the lines, so they are computed after it, still under the lock
        verdict: dict[str, Any] = {}

        def served_json(result: PromotionResult) -> dict[str, Any]:
            verdict.update(served=served(result.version, not result.promoted and bool(result.failed_gates)))
            return {"served": [o.to_dict() for o in verdict["served"]]}

        try:
            # the gate as `rag index promote --no-answers` runs it, with this run's stores and embedder
            runtime = build_runtime(settings, stores=stores, embedder=embedder)
            result = promote_and_print(
                lambda: runtime.promote(version=report.version, domain_key=domain_key, locks=locks, answers=False),
                as_json, {"ingest": report.to_dict()} if as_json else None,
                json_extra=served_json if as_json else None)
        except GateFailed as exc:
            if not as_json:
                blocked = exc.context.get("result")
                click.echo("\n".join([*_starter_note(settings, domain_key),
                                       *(o.render() for o in served(getattr(blocked, "version", None), True))]))
            raise
        if not as_json:
            click.echo("\n".join([*_starter_note(settings, domain_key), *(o.render() for o in served(result.version))]))


def _cancelled(ctx: click.Context, exc: IngestCancelled, as_json: bool) -> None:
    """The summary of what was written, then the one line that says how to resume; exit 130."""
    report = exc.report
    if as_json:
        click.echo(json.dumps({**(report.to_dict() if report else {}), "cancelled": True, "written": exc.written,
                               "total": exc.total, "version": exc.version}, indent=2))
    elif report is not None:
        click.echo(report.render())
    click.echo(exc.user_message, err=True)
    ctx.exit(exc.exit_code)


ingest.add_command(cancel_command)


def _starter_note(settings: Settings, domain_key: str | None) -> list[str]:
    """The user is told when the gate used a generated starter set, and how to replace and grow it."""
    from backend.cli.kb import golden_note
    from backend.core.services.promotion import resolve_target
    from backend.ingest.knowledge_bases import golden_info

    if domain_key is None:
        return []
    target = resolve_target(settings, domain_key=domain_key)
    if target.starter_for is None or not target.golden.exists():
        return []
    return golden_note(domain_key, golden_info(target.golden))
