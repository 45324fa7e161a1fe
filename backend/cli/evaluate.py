"""``rag eval``, ``rag promote``, ``rag rollback`` and ``rag alias status|prune``.

Evaluation answers through the real chat path (``build_services``), so the modes
it scores are the ones ``/chat`` would give once the alias points at the version.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any, Callable

import click

from backend.cli.context import settings_from
from backend.common.config import Settings
from backend.common.errors import GateFailed, UnknownDomain, VersionNotFound
from backend.common.progress import bar, progress_enabled
from backend.core.services.evaluation import METRICS, EvaluationReport, Evaluator, with_comparison, write_report
from backend.core.services.followups import load_followups, run_followups
from backend.core.services.followups import render as render_followups
from backend.core.services.followups import summary as followup_summary
from backend.core.services.golden import load_golden_set
from backend.core.services.promotion import (
    PromotionResult,
    alias_status,
    collect_garbage,
    promote_version,
    resolve_target,
    rollback as rollback_alias,
)
from backend.core.services.series_lock import SeriesLocks
from backend.core.services.versions import VersionNaming


ANSWERS_HELP = ("Answer every query through the chat service (modes exactly as /chat, must_contain checked). "
                "--no-answers decides the mode from the search hits alone: same decision rule, much faster, "
                "no must_contain.")


PROGRESS_HELP = ("Force the progress bar on stderr on or off (default: drawn when ingest.progress is on, stderr is "
                 "a terminal and --json is not given).")


def _services(settings: Settings) -> Any:
    from backend.api.app import build_services

    return build_services(settings)


def _fmt(value: float | None, metric: str) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if metric.endswith("_ms") else f"{value:.4f}"


def render_report(report: EvaluationReport) -> str:
    """The metrics table (with deltas when compared) and the mode confusion."""
    compared = report.comparison or {}
    comparison = compared.get("metrics")
    head = f"{'metric':<24}{'value':>10}"
    if comparison:
        head += f"{'baseline':>10}{'delta':>10}"
    lines = [f"version {report.version} ({report.target}) on {report.golden_set}: {report.counts['queries']} queries, "
             f"{report.counts['retrieval_queries']} with expected sources, k={report.k}, modes via {report.answer_source}",
             head, "-" * len(head)]
    for metric in METRICS:
        label = metric.replace("_at_k", f"@{report.k}").replace("_at_10", "@10")
        row = f"{label:<24}{_fmt(report.metrics[metric], metric):>10}"
        if comparison:
            c = comparison[metric]
            delta = "-" if c["delta"] is None else (f"{c['delta']:+.1f}" if metric.endswith("_ms") else f"{c['delta']:+.4f}")
            row += f"{_fmt(c['baseline'], metric):>10}{delta:>10}"
        lines.append(row)
    if comparison:
        how = "named by" if str(compared["alias"]).startswith("--") else "served by"
        lines.append(f"(baseline: {compared['baseline_version']}, {how} {compared['alias']})")
    confusion = ", ".join(f"{exp}->{dec}: {n}" for exp, row in sorted(report.mode_confusion.items())
                          for dec, n in sorted(row.items()))
    lines.append(f"modes (expected->decided): {confusion}")
    if report.by_principal:
        lines.append(f"{'principal':<24}{'queries':>8}{'hit@k':>8}{'recall@k':>10}{'mrr':>8}{'mode_acc':>10}")
        for name, m in report.by_principal.items():
            lines.append(f"{name:<24}{m['queries']:>8}{_fmt(m['hit_at_k'], 'hit'):>8}"
                         f"{_fmt(m['recall_at_k'], 'recall'):>10}{_fmt(m['mrr'], 'mrr'):>8}"
                         f"{_fmt(m['mode_accuracy'], 'mode'):>10}")
    return "\n".join(lines)


def _eval_target(settings: Settings, store: Any, version: str | None, alias: str | None,
                 domain_key: str | None) -> tuple[str, str]:
    """(version to evaluate, what the user named)."""
    if version:
        store.get_version(version)
        return version, version
    target = resolve_target(settings, domain_key=domain_key, alias=alias)
    served = store.resolve_alias(target.alias)
    if served is None:
        raise VersionNotFound(f"alias {target.alias} serves no version yet; pass --version or promote one first",
                              alias=target.alias)
    return served, target.alias


@click.command("eval")
@click.option("--version", default=None, help="Evaluate this index version.")
@click.option("--alias", default=None, help="Evaluate the version this alias serves (default: the config alias).")
@click.option("--domain-key", default=None, help="Use the domain's alias and golden set.")
@click.option("--golden", type=click.Path(dir_okay=False), default=None, help="Golden set (default from config).")
@click.option("--compare", "compare_alias", default=None, help="Add per-metric deltas against the version this alias serves.")
@click.option("--compare-version", default=None,
              help="Add per-metric deltas against this version, each version searched with its own stamped retrieval "
                   "settings (e.g. two builds with different retrieval.strategy: dense vs hyde or hierarchical).")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON report instead of the table.")
@click.option("--answers/--no-answers", default=True, show_default=True, help=ANSWERS_HELP)
@click.option("--followups", type=click.Path(dir_okay=False), default=None,
              help="Also run this follow-up set's conversations of the evaluated domain (two turns each) on the "
                   "evaluated version; default: evaluation.followup_set. --no-followups skips it.")
@click.option("--no-followups", is_flag=True, help="Skip the follow-up set.")
@click.option("--progress/--no-progress", default=None, help=PROGRESS_HELP)
@click.pass_context
def eval_cmd(ctx: click.Context, version: str | None, alias: str | None, domain_key: str | None, golden: str | None,
             compare_alias: str | None, compare_version: str | None, as_json: bool, answers: bool,
             followups: str | None, no_followups: bool, progress: bool | None) -> None:
    """Evaluate a version on a golden set; the result is recorded on the version."""
    if compare_alias and compare_version:
        raise click.UsageError("--compare and --compare-version are exclusive: compare against one baseline")
    settings = settings_from(ctx)
    services = _services(settings)
    followup_path = None if no_followups else (followups or settings.evaluation.followup_set)
    # read (and so checked) before the evaluation runs; the conversations need answers to run
    followup_set = load_followups(settings.resolve_path(followup_path)) if followup_path else None
    store = services.store
    name, shown = _eval_target(settings, store, version, alias, domain_key)
    golden_set = load_golden_set(resolve_target(settings, domain_key=domain_key, golden=golden).golden)
    evaluator = Evaluator(store, store, services.embedder, embeddings=settings.embeddings,
                          retrieval=settings.retrieval, evaluation=settings.evaluation,
                          chat=services.chat if answers else None, sanitize=settings.sanitize,
                          access=settings.access, reranker=services.search.reranker,
                          rerankers=_reranker_factory(settings, services.embedder))
    show = progress_enabled(progress, default=settings.ingest.progress, as_json=as_json)

    def evaluate(version_name: str, **kw: Any) -> EvaluationReport:
        """One evaluation with a live bar over its queries (answers can take minutes)."""
        with bar(show, desc=f"eval {version_name}", total=len(golden_set.queries), unit="query") as queries:
            return evaluator.evaluate(version_name, golden_set, on_query=lambda: queries.update(1), **kw)

    report = evaluate(name, target=shown)
    if compare_alias:
        baseline_version = store.resolve_alias(compare_alias)
        if baseline_version is None:
            raise VersionNotFound(f"--compare: alias {compare_alias} serves no version", alias=compare_alias)
        report = with_comparison(report, evaluate(baseline_version), compare_alias)
    if compare_version:
        store.get_version(compare_version)
        report = with_comparison(report, evaluate(compare_version), "--compare-version")
    store.record_evaluation(name, report.summary())
    path = write_report(report, settings.resolve_path(settings.evaluation.reports_dir))
    conversations = None
    if followup_set is not None and answers:  # the evaluated domain's conversations, on the evaluated version
        mine = [c for c in followup_set if c.domain == domain_key]
        conversations = run_followups(services.chat, mine, target=name) if mine else None
    if as_json:
        body = report.to_dict()
        if conversations is not None:
            body["followups"] = {**followup_summary(conversations), "results": [asdict(r) for r in conversations]}
        click.echo(json.dumps(body, indent=2, default=str))
    else:
        click.echo(render_report(report))
        if conversations is not None:
            click.echo(render_followups(conversations))
        if report.comparison:
            baseline = str(report.comparison["baseline_version"])
            click.echo("strategies: " + ", ".join(f"{v} {_strategy(settings, store, v)}" for v in (name, baseline)))
    click.echo(f"report: {path}", err=as_json)


def _strategy(settings: Settings, store: Any, version: str) -> str:
    """The search strategy a version is served with: its stamp's, else the configured one."""
    from backend.core.services.retrieval_stamp import stamped_settings

    row = store.get_version(version)
    profile = settings.embeddings.profiles.get(row.profile or "", settings.embeddings.profiles[
        settings.embeddings.default_profile])
    return stamped_settings(settings.retrieval, profile, getattr(row, "retrieval", None)).strategy


def render_promotion(result: PromotionResult) -> str:
    lines = [render_report(result.report)] if result.report else []
    for gate in result.gates:
        lines.append(f"gate {gate.name:<18} {'PASS' if gate.passed else 'FAIL'}  {gate.describe()}")
    lines.extend(result.notes)
    if result.promoted:
        lines.append(f"promoted: {result.alias} -> {result.version} (previous: {result.previous or '-'})"
                     + ("  [forced]" if result.forced else ""))
        if result.dropped:
            lines.append(f"retention dropped: {', '.join(result.dropped)}")
    elif result.gates:
        lines.append(f"NOT promoted: {result.alias} still serves {result.previous or 'nothing'}")
    if result.report_path:
        lines.append(f"report: {result.report_path}")
    return "\n".join(lines)


@click.command("promote")
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
    settings = settings_from(ctx)
    services = _services(settings)
    with _locks(settings, services.store, "rag promote") as locks:
        promote_and_print(settings, services.store, services.embedder, as_json, alias=alias, version=version,
                          golden=golden, force=force, domain_key=domain_key, chat=services.chat if answers else None,
                          locks=locks)


def _locks(settings: Settings, store: Any, command: str) -> SeriesLocks:
    """The series locks of one command; a waiting run says so on stderr."""
    return SeriesLocks(store, settings, command, on_wait=lambda line: click.echo(line, err=True))


def promote_and_print(settings: Settings, store: Any, embedder: Any, as_json: bool,
                      json_prefix: dict[str, Any] | None = None,
                      json_extra: Callable[[PromotionResult], dict[str, Any]] | None = None,
                      **options: Any) -> PromotionResult:
    """``promote_version`` with its figures and gates printed, passed or not; a
    failed gate still raises ``GateFailed`` (exit code 3) after the printout.
    With ``json_prefix`` the JSON is one object: the prefix plus ``promotion``;
    ``json_extra`` adds keys computed from the result (the ingest's ``served``)."""

    def show(result: PromotionResult) -> None:
        if not as_json:
            click.echo(render_promotion(result))
        else:
            body = _promotion_dict(result)
            if json_prefix is not None:
                body = {**json_prefix, "promotion": body}
            if json_extra is not None:
                body.update(json_extra(result))
            click.echo(json.dumps(body, indent=2, default=str))

    try:
        if "reranker" not in options:  # the gate evaluates the order users will get
            from backend.providers.registry import build_reranker

            options["reranker"] = build_reranker(settings, embedder)
            options["rerankers"] = _reranker_factory(settings, embedder)
        result = promote_version(settings, store, embedder, **options)
    except GateFailed as exc:
        blocked = exc.context.get("result")
        if isinstance(blocked, PromotionResult):
            show(blocked)
        raise
    show(result)
    return result


def _reranker_factory(settings: Settings, embedder: Any) -> Any:
    """Builds the reranker a version's stamp names when it is not the configured one."""
    from backend.providers.registry import reranker_factory

    return reranker_factory(settings, embedder)


def _promotion_dict(result: PromotionResult) -> dict[str, Any]:
    return {
        "alias": result.alias, "version": result.version, "previous": result.previous, "promoted": result.promoted,
        "forced": result.forced, "gates": [g.__dict__ for g in result.gates],
        "metrics": result.report.metrics if result.report else None,
        "comparison": result.report.comparison if result.report else None,
        "report_path": str(result.report_path) if result.report_path else None,
        "dropped": list(result.dropped), "notes": list(result.notes),
    }


def _alias_option(settings: Settings, domain_key: str | None, alias: str | None) -> str:
    if domain_key and alias:
        raise click.UsageError("give --domain-key or --alias, not both")
    if domain_key:
        if domain_key not in settings.embeddings.domains:
            raise UnknownDomain(f"--domain-key {domain_key!r} is not configured; known: "
                                f"{sorted(settings.embeddings.domains) or '(none)'}", field="domain_key")
        return settings.embeddings.domains[domain_key].alias_name
    return alias or settings.embeddings.alias.name


@click.command("rollback")
@click.option("--domain-key", default=None, help="Roll back this domain's alias.")
@click.option("--alias", default=None, help="Roll back this alias (default: embeddings.alias.name).")
@click.pass_context
def rollback(ctx: click.Context, domain_key: str | None, alias: str | None) -> None:
    """Point the alias back at the version it served before its latest change."""
    from backend.providers.registry import build_store

    settings = settings_from(ctx)
    name = _alias_option(settings, domain_key, alias)
    store = build_store(settings)
    with _locks(settings, store, "rag rollback") as locks:
        change = rollback_alias(store, name, locks=locks)
    click.echo(f"rolled back: {change.alias} -> {change.version} (was {change.previous})")


@click.group("alias")
def alias() -> None:
    """Aliases, their versions and retention."""


@alias.command("status")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Each alias, its active and previous version, and the versions with their last evaluation."""
    from backend.providers.registry import build_store

    settings = settings_from(ctx)
    statuses, others = alias_status(build_store(settings), configured_series(settings),
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


def configured_series(settings: Settings) -> dict[str, str]:
    """``alias -> index_name`` of the default alias and of every domain."""
    emb = settings.embeddings
    out = {emb.alias.name: emb.profiles[emb.default_profile].index_name}
    out.update({d.alias_name: d.index_name for d in emb.domains.values()})
    return out


@alias.command("prune")
@click.option("--domain-key", default=None)
@click.option("--alias", "alias_name", default=None)
@click.option("--dry-run", is_flag=True, help="Only list what would be dropped.")
@click.pass_context
def prune(ctx: click.Context, domain_key: str | None, alias_name: str | None, dry_run: bool) -> None:
    """Drop versions of an alias's series beyond evaluation.keep_versions (never a live or rollback one)."""
    from backend.providers.registry import build_store

    settings = settings_from(ctx)
    name = _alias_option(settings, domain_key, alias_name)
    store = build_store(settings)
    series = store.resolve_alias(name) or configured_series(settings).get(name)
    if series is None:
        raise click.UsageError(f"alias {name} serves nothing and is not configured")
    with _locks(settings, store, "rag alias prune") as locks:
        if not dry_run:  # never drop a candidate an ingest is writing
            locks.hold(series)
        victims = collect_garbage(store, settings, series=series, dry_run=dry_run).dropped
    verb = "would drop" if dry_run else "dropped"
    click.echo(f"{name}: {verb} {', '.join(victims) if victims else 'nothing'} "
               f"(keep_versions={settings.evaluation.keep_versions})")
