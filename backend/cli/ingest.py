"""``rag ingest MANIFEST``: load, sanitize, chunk, embed and upsert into a version.

The summary goes to stdout (``--json`` for scripts), progress bars and logs to
stderr. The exit code is 1 when any manifest line or file failed, even though
every good document was ingested; ``--strict`` stops at the first bad line.
A version an alias serves is never written: when the run would change it, the
next version is built from it (see ``backend.core.services.versions``);
``--in-place`` is the explicit override. ``--update-alias`` never rotates an
alias directly: it hands the new version to the evaluation gate (as ``rag promote --no-answers`` would), which prints its
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
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from backend.cli.context import settings_from
from backend.cli.evaluate import promote_and_print
from backend.common.config import DEFAULT_DOMAIN, Settings
from backend.common.errors import GateFailed
from backend.common.progress import progress_enabled
from backend.core.services.promotion import PromotionResult
from backend.core.services.series_lock import SeriesLocks
from backend.core.services.versions import VersionNaming
from backend.ingest.pipeline import IngestPipeline
from backend.ingest.served import Served, served_after
from backend.providers.registry import build_embedder, build_store


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


@click.command("ingest")
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
              "is a terminal and --json is not given).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def ingest(ctx: click.Context, manifest_arg: Path | None, manifest_opt: Path | None, profile: str | None,
           domain_key: str | None, prune: bool, strict: bool, update_alias: bool, in_place: bool,
           progress: bool | None, as_json: bool) -> None:
    """Ingest the documents listed in MANIFEST (JSONL), or every document of the folder DIR, into an
    index version."""
    if (manifest_arg is None) == (manifest_opt is None):
        raise click.UsageError("give the manifest once: as MANIFEST or with --manifest")
    manifest = manifest_arg or manifest_opt
    assert manifest is not None
    if manifest_arg is not None and not manifest_arg.exists():
        raise click.BadParameter(f"{manifest_arg}: no such file or folder (expected a JSONL manifest or a folder "
                                 "of documents)", param_hint="MANIFEST|DIR")
    settings = settings_from(ctx)
    if manifest_arg is not None and manifest_arg.is_dir():
        settings, manifest = _folder_manifest(settings, manifest_arg, domain_key, quiet=as_json)
    store = build_store(settings)
    embedder = build_embedder(settings)
    with SeriesLocks(store, settings, "rag ingest", on_wait=lambda line: click.echo(line, err=True)) as locks:
        show = progress_enabled(progress, default=settings.ingest.progress, as_json=as_json)
        report = IngestPipeline(settings, store, embedder, progress=show).run(
            manifest, profile=profile, domain_key=domain_key, prune=prune, strict=strict, in_place=in_place,
            locks=locks)
        promoting = update_alias and report.ok

        def served(promoted: str | None = None, refused: bool = False) -> list[Served]:
            return served_after(report.builds, store.list_aliases(), VersionNaming(settings.ingest.version_name_template),
                                update_alias=update_alias, ingest_ok=report.ok, promoted_version=promoted,
                                gate_refused=refused)

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
            result = promote_and_print(settings, store, embedder, as_json,
                                       {"ingest": report.to_dict()} if as_json else None, version=report.version,
                                       domain_key=domain_key, locks=locks, json_extra=served_json if as_json else None)
        except GateFailed as exc:
            if not as_json:
                blocked = exc.context.get("result")
                click.echo("\n".join([*_starter_note(settings, domain_key),
                                       *(o.render() for o in served(getattr(blocked, "version", None), True))]))
            raise
        if not as_json:
            click.echo("\n".join([*_starter_note(settings, domain_key), *(o.render() for o in served(result.version))]))


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
