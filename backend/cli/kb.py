"""``rag kb``: knowledge bases made from a folder (docs/KNOWLEDGE_BASES.md).

``rag kb create NAME --from DIR`` registers the knowledge base in the registry the runtime
manages (``knowledge_bases.registry_file``; no config edit, no environment variable), walks the
folder (supported types, ignore rules, links confined), ingests it into a first version, gates
it on its own golden set (a generated starter set when it has none) and serves it: a running
server sees it at its next request. Exit 3 when the gate refuses, with the figures.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click

from backend.cli.context import json_command, settings_from
from backend.common.config import DEFAULT_DOMAIN, Settings
from backend.common.errors import ConfigError, RagError
from backend.common.progress import progress_enabled


@click.group("kb")
def kb() -> None:
    """Knowledge bases made from a folder: create, list, show, set-golden, remove."""


def golden_note(key: str, golden: dict[str, Any]) -> list[str]:
    """What the user must know about the golden set that gated the run (pure)."""
    if not golden:
        return []
    if not golden.get("generated"):
        return [f"golden set: {golden['path']} ({golden['queries']} questions)"]
    return [
        f"golden set: GENERATED starter set, {golden['queries']} questions -> {golden['path']}",
        "  it asks about sentences of your own documents and checks that off-topic questions fall back;",
        "  it proves the files are found, not that your users' questions are answered. Replace it with real",
        f"  questions (one JSON object a line, see docs/EVALUATION_AND_PROMOTION.md): rag kb set-golden {key} FILE",
        "  grow it from the chat page's thumbs up/down: rag feedback export --out FILE, review the rows of",
        f"  domain {key!r} and add them to your file",
    ]


def render_run(result: Any) -> list[str]:
    """The gate's figures and what is served, from a ``KbRunResult``."""
    lines = []
    if result.refused:
        lines.append(f"skipped {len(result.refused)} file(s):")
        lines += [f"  {r['file']}: {r['reason']}" for r in result.refused]
    lines.append(f"manifest used: {result.manifest}")
    lines += golden_note(result.key, result.golden)
    ev = result.evaluation
    if ev:
        metrics = ev.get("metrics") or {}
        lines.append("figures: " + " ".join(f"{k}={metrics[k]}" for k in
                                             ("recall_at_k", "ndcg_at_10", "mode_accuracy", "unanswerable_as_rag")
                                             if metrics.get(k) is not None))
        if not result.golden.get("queries") or metrics.get("recall_at_k") is None:
            lines.append("no golden question asks about a document (the documents gave no sentence to ask "
                         "about): retrieval cannot be measured")
        for gate in ev.get("gates", []):
            value = "n/a" if gate["value"] is None else gate["value"]
            verdict = "WARN" if gate.get("warning") else ("PASS" if gate["passed"] else "FAIL")
            lines.append(f"gate {gate['name']:<24} {verdict}  {gate['metric']} = "
                         f"{value}, {'maximum' if gate['kind'] == 'max' else 'minimum'} {gate['threshold']}"
                         if gate["kind"] != "regression" else
                         f"gate {gate['name']:<24} {verdict}  {gate['metric']} "
                         f"{gate['baseline']} -> {gate['value']}, largest drop {gate['threshold']}")
        lines += list(ev.get("notes") or [])
        if ev.get("report_path"):
            lines.append(f"report: {ev['report_path']}")
    if result.promoted:
        warned = [g["name"] for g in (ev.get("gates") or []) if g.get("warning")] if ev else []
        lines.append(f"served{' WITH A WARNING (' + ', '.join(warned) + ' below the floor)' if warned else ''}: "
                     f"{result.alias} -> {result.served_version} (ask with X-RAG-Domain: {result.key}, "
                     "or pick it on the chat page)")
    elif result.gate_refused:
        lines.append(f"NOT served: the gate refused {result.version}; {result.alias} serves "
                     f"{result.served_version or 'nothing'}")
    else:
        lines.append(f"served: {result.alias} -> {result.served_version or 'nothing'}")
    return lines


def run_and_report(ctx: click.Context, settings: Settings, key: str, source: Path, *, as_json: bool,
                   progress: bool | None, head: dict[str, Any] | None = None) -> None:
    """Ingest ``source`` into ``key`` through the gate; print; exit 1 on failed files, 3 if refused."""
    from backend.ingest.knowledge_bases import ingest_into_candidate
    from backend.runtime import build_runtime

    bars = progress_enabled(progress, default=settings.ingest.progress, as_json=as_json)
    # the gate evaluates the order users get: the configured reranker, and the one a version's stamp names
    result = ingest_into_candidate(build_runtime(settings), key, source, principal=None, promote=True, bars=bars)
    if as_json:
        click.echo(json.dumps({**(head or {}), **result.to_dict(), "gate_refused": result.gate_refused},
                              indent=2, default=str))
    else:
        ingest = result.ingest
        click.echo(f"ingested into {result.version or '(no change)'}: {ingest.get('documents_written', 0)} "
                   f"document(s) written, {ingest.get('skipped_unchanged', 0)} unchanged, "
                   f"{len(ingest.get('failures') or [])} failed")
        for failure in ingest.get("failures") or []:
            click.echo(f"  failed {failure['where']}: {failure['reason']}")
        from backend.ingest.report import pii_summary

        for line in pii_summary(ingest.get("pii_findings") or {}, ingest.get("pii_mode"), ingest.get("pii_audit_path")):
            click.echo(line)
        click.echo("\n".join(render_run(result)))
    if result.gate_refused:
        click.echo(f"error: the gate refused {result.version}; nothing of {key!r} is served until a version passes. "
                   f"Fix the documents or the golden set and run `rag ingest {source} --domain-key {key} "
                   f"--update-alias` again, or serve this version anyway (recorded as forced): "
                   f"`rag index promote --domain-key {key} --version {result.version} --force`", err=True)
        ctx.exit(3)
    if result.ingest.get("failures"):
        ctx.exit(1)


#: what ``--from`` takes besides a folder: an object-store URL, made a connector named like the knowledge base
_SOURCE_URL = re.compile(r"^(?P<scheme>s3|oci)://(?P<bucket>[^/@\s]+)(?:@(?P<namespace>[^/\s]+))?(?:/(?P<prefix>\S*))?$")


def connector_for(url: str) -> dict[str, Any]:
    """Pure: the connector declaration (kind and options) an object-store ``--from`` URL stands for:
    ``s3://BUCKET/PREFIX`` (S3 or an S3-compatible store) or ``oci://BUCKET@NAMESPACE/PREFIX`` (OCI
    Object Storage's native API; the URI form of the OCI CLI and its HDFS connector)."""
    found = _SOURCE_URL.fullmatch(url.strip())
    if found is None or (found["scheme"] == "oci") != bool(found["namespace"]):
        raise ConfigError(f"--from {url!r}: expected a folder, s3://BUCKET/PREFIX or oci://BUCKET@NAMESPACE/PREFIX",
                          field="from")
    options: dict[str, Any] = {"bucket": found["bucket"], "prefix": found["prefix"] or ""}
    if found["scheme"] == "oci":
        return {"kind": "oci_object_storage", "options": {"namespace": found["namespace"], **options}}
    return {"kind": "s3", "options": options}


@kb.command("create")
@click.argument("name")
@click.option("--from", "source", required=True, metavar="DIR|s3://BUCKET/PREFIX|oci://BUCKET@NAMESPACE/PREFIX",
              help="Folder whose documents become the knowledge base (walked recursively), or an object-store "
              "prefix: a connector named NAME is declared for it and synced (`rag connector sync NAME` later).")
@click.option("--option", "options", multiple=True, help="With a URL: KEY=VALUE of the connector's options "
              "(endpoint_url, region, readers_tag, auth, ...; docs/CONNECTORS.md).")
@click.option("--secret", "secrets", multiple=True, help="With a URL: OPTION=ENV_VAR, the environment variable "
              "holding a secret (s3: access_key_id, secret_access_key; default: the AWS or OCI default chain).")
@click.option("--reader", "readers", multiple=True, help="With a URL: reader of every object whose own readers "
              "are not given (public, group:NAME, user:NAME); without one, such objects are for admins only.")
@click.option("--title", default=None, help="Name the chat page shows (default: NAME, prettified).")
@click.option("--profile", default=None, help="Embedding profile (default: embeddings.default_profile).")
@click.option("--progress/--no-progress", default=None,
              help="Force the progress bars on stderr on or off (default: on a terminal, not with --json).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def create(ctx: click.Context, name: str, source: str, options: tuple[str, ...], secrets: tuple[str, ...],
           readers: tuple[str, ...], title: str | None, profile: str | None, progress: bool | None,
           as_json: bool) -> None:
    """Register NAME, ingest the folder (or sync the object-store prefix), gate it on its own golden
    set and serve it."""
    from backend.ingest.folder import walk_folder
    from backend.ingest.knowledge_bases import register, registry_file

    settings = settings_from(ctx, quiet_info=True)  # the report, not INFO lines between its lines
    if "://" in source:
        _create_from_url(ctx, settings, name, source, options=options, secrets=secrets, readers=readers,
                         title=title, profile=profile, as_json=as_json)
        return
    if options or secrets or readers:
        raise ConfigError("--option, --secret and --reader go with an object-store --from (s3://, oci://); a "
                          "folder's readers are in its .rag-readers.yaml when it is synced as a connector",
                          field="from")
    folder = Path(source)
    walk = walk_folder(folder)  # a missing or empty folder is refused before anything is registered
    if not walk.files:
        from backend.common.errors import ManifestError

        raise ManifestError(f"{source}: no supported file to make a knowledge base of; skipped: "
                            + ("; ".join(f"{s.file}: {s.reason}" for s in walk.skipped[:10]) or "(nothing)"),
                            path=str(source))
    entry = register(settings, name, title=title, source_dir=folder, profile=profile)
    if not as_json:
        click.echo(f"knowledge base {name!r} ({entry.title}) registered in {registry_file(settings)}")
    run_and_report(ctx, settings, name, folder, as_json=as_json, progress=progress,
                   head={"registered": entry.model_dump(), "registry": str(registry_file(settings))})


def _create_from_url(ctx: click.Context, settings: Settings, name: str, url: str, *, options: tuple[str, ...],
                     secrets: tuple[str, ...], readers: tuple[str, ...], title: str | None, profile: str | None,
                     as_json: bool) -> None:
    """Declare connector NAME for ``url`` (checked first: nothing is registered for a bad one),
    register the knowledge base, and run its first sync through the gate."""
    from backend.cli.connector import checked_spec, pairs, render_report, sync_once
    from backend.connectors.declarations import add as declare, connectors_path, declared
    from backend.ingest.knowledge_bases import register, registry_file

    body = connector_for(url)
    body.update(knowledge_base=name, secrets=pairs(secrets, "--secret"))
    body["options"] = {**body["options"], **pairs(options, "--option")}
    if readers:
        body["readers"] = list(readers)
    spec = checked_spec(body, f"--from {url}", field="from")
    if name in declared(settings):
        raise ConfigError(f"a connector named {name!r} is already declared in {connectors_path(settings)}; "
                          f"sync it with `rag connector sync {name}`", field="name")
    entry = register(settings, name, title=title, profile=profile)
    declare(settings, name, spec)
    if not as_json:
        click.echo(f"knowledge base {name!r} ({entry.title}) registered in {registry_file(settings)}; connector "
                   f"{name!r} ({spec.kind}) declared in {connectors_path(settings)}")
    try:
        report = sync_once(settings, name, False)
    except RagError as exc:  # registered and declared: the next `rag connector sync` picks up from here
        click.echo(f"knowledge base {name!r} and connector {name!r} stay declared; once the source is reachable, "
                   f"run `rag connector sync {name}` (or `rag connector remove {name}` to give up)", err=True)
        raise exc
    if as_json:
        click.echo(json.dumps({"registered": entry.model_dump(), "connector": name, "sync": report}, indent=2,
                              default=str))
    else:
        click.echo("\n".join(render_report(report)))
    if report["status"] == "gate_refused":
        click.echo(f"error: the gate refused {report['version']}; nothing of {name!r} is served until a version "
                   f"passes. Fix the documents and run `rag connector sync {name}`, or serve this version anyway "
                   f"(recorded as forced): `rag index promote --domain-key {name} --version {report['version']} "
                   "--force`", err=True)
        ctx.exit(3)
    if report.get("errors"):
        ctx.exit(1)


def _rows(settings: Settings) -> list[dict[str, Any]]:
    from backend.core.services.promotion import resolve_target
    from backend.ingest.knowledge_bases import apply_registry, list_registered
    from backend.runtime import open_stores

    settings = apply_registry(settings)
    registered = list_registered(settings)
    stores = open_stores(settings)
    rows = []
    default = settings.embeddings.alias
    listed: list[tuple[str, Any]] = [(DEFAULT_DOMAIN, default),
                                     *sorted(settings.embeddings.domains.items())]
    for key, domain in listed:
        alias = domain.name if key == DEFAULT_DOMAIN else domain.alias_name
        live = stores.admin.resolve_alias(alias)
        docs = len(stores.vectors.document_hashes(live)) if live else 0
        golden = resolve_target(settings, domain_key=None if key == DEFAULT_DOMAIN else key).golden
        info: dict[str, Any] = {"path": str(golden), "generated": None, "queries": None}
        if golden.exists():
            from backend.ingest.knowledge_bases import golden_info

            info = golden_info(golden)
        entry = registered.get(key)
        rows.append({"key": key, "title": domain.title or key, "alias": alias, "live": live,
                     "documents": docs, "managed": entry is not None,
                     "source_dir": entry.source_dir if entry else None, "golden": info})
    stores.close()
    return rows


@json_command(kb, "list")
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """Every knowledge base (registered or configured): live version, documents, golden set."""
    rows = _rows(settings_from(ctx))
    if as_json:
        click.echo(json.dumps({"knowledge_bases": rows}, indent=2))
        return
    for r in rows:
        g = r["golden"]
        kind = "generated" if g["generated"] else ("none yet" if g["generated"] is None else "real")
        click.echo(f"{r['key']:<24} {r['live'] or '(serves nothing)':<22} docs={r['documents']:<5} "
                   f"golden={kind}  {'registry' if r['managed'] else 'config'}  {r['title']}")


@json_command(kb, "show")
@click.argument("name")
def show(ctx: click.Context, name: str, as_json: bool) -> None:
    """One knowledge base: its folder, live version, document count and golden set."""
    from backend.common.errors import UnknownDomain

    rows = {r["key"]: r for r in _rows(settings_from(ctx))}
    if name not in rows:
        raise UnknownDomain(f"knowledge base {name!r} is not configured; known: {sorted(rows) or '(none)'}",
                            field="name")
    row = rows[name]
    if as_json:
        click.echo(json.dumps(row, indent=2))
        return
    g = row["golden"]
    click.echo("\n".join([
        f"{row['key']}: {row['title']}",
        f"  alias: {row['alias']} -> {row['live'] or '(serves nothing)'}",
        f"  documents: {row['documents']}",
        f"  source folder: {row['source_dir'] or '-'}  ({'registry' if row['managed'] else 'config file'})",
        f"  golden set: {g['path']}" + ("" if g["generated"] is None else
                                        f" ({g['queries']} questions{', GENERATED' if g['generated'] else ''})"),
    ]))


@kb.command("set-golden")
@click.argument("name")
@click.argument("golden", required=False, type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--starter", is_flag=True, help="Go back to the generated starter set.")
@click.pass_context
def set_golden(ctx: click.Context, name: str, golden: Path | None, starter: bool) -> None:
    """Gate NAME with the golden set GOLDEN (real questions) instead of its starter set."""
    from backend.ingest.knowledge_bases import set_golden_set

    if (golden is None) == (not starter):
        raise click.UsageError("give a GOLDEN file, or --starter to go back to the generated set")
    entry = set_golden_set(settings_from(ctx), name, golden)
    click.echo(f"{name}: golden set -> {entry.golden_set or 'the generated starter set'}; "
               f"the next gate uses it (rag index promote --domain-key {name})")


@kb.command("remove")
@click.argument("name")
@click.pass_context
def remove(ctx: click.Context, name: str) -> None:
    """Take NAME out of the registry: no longer listed, asked or routed (a running server drops it at
    its next request). Nothing stored is deleted: its versions, alias and folder stay, and
    `rag kb create NAME --from DIR` brings it back with them."""
    from backend.connectors.declarations import declared
    from backend.ingest.knowledge_bases import unregister, workspace

    settings = settings_from(ctx)
    feeding = sorted(c for c, spec in declared(settings).items() if spec.knowledge_base == name)
    if feeding:  # its next sync would register it again
        raise ConfigError(f"knowledge base {name!r} is synced by connector(s) {', '.join(feeding)}; remove them "
                          f"first (rag connector remove {feeding[0]})", field="name")
    entry = unregister(settings, name)
    click.echo(f"removed knowledge base {name!r} from the registry; kept: its versions ({entry.alias_name}_V1, "
               f"_V2, ...) and the alias {entry.alias_name} in the store, and {workspace(settings, name)} "
               f"(`rag index list` shows them; `rag kb create {name} --from DIR` serves them again)")
