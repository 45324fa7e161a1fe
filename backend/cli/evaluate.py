"""``rag eval``: evaluate a version on a golden set.

Evaluation answers through the real chat path (``Runtime.evaluator(answers=True)``),
so the modes it scores are the ones ``/chat`` would give once the alias points at
the version. Promotion, rollback and retention are ``rag index`` (``cli/index.py``).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import click

from backend.cli.context import settings_from
from backend.cli.promotion_view import ANSWERS_HELP, PROGRESS_HELP, render_report
from backend.common.config import Settings
from backend.common.errors import VersionNotFound
from backend.common.progress import bar, progress_enabled
from backend.core.ports import IndexAdmin
from backend.core.services.evaluation import EvaluationReport, with_comparison, write_report
from backend.core.services.followups import load_followups, run_followups
from backend.core.services.followups import render as render_followups
from backend.core.services.followups import summary as followup_summary
from backend.core.golden import load_golden_set
from backend.core.services.promotion import resolve_target
from backend.runtime import build_runtime

__all__ = ["ANSWERS_HELP", "PROGRESS_HELP", "eval_cmd", "render_report"]


def _eval_target(settings: Settings, store: IndexAdmin, version: str | None, alias: str | None,
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
    runtime = build_runtime(settings_from(ctx))
    settings = runtime.settings
    followup_path = None if no_followups else (followups or settings.evaluation.followup_set)
    # read (and so checked) before the evaluation runs; the conversations need answers to run
    followup_set = load_followups(settings.resolve_path(followup_path)) if followup_path else None
    store = runtime.admin
    name, shown = _eval_target(settings, store, version, alias, domain_key)
    golden_set = load_golden_set(resolve_target(settings, domain_key=domain_key, golden=golden).golden)
    evaluator = runtime.evaluator(answers=answers)
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
        conversations = run_followups(runtime.chat, mine, target=name) if mine else None
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


def _strategy(settings: Settings, store: IndexAdmin, version: str) -> str:
    """The search strategy a version is served with: its stamp's, else the configured one."""
    from backend.core.retrieval_stamp import stamped_settings

    row = store.get_version(version)
    profile = settings.embeddings.profiles.get(row.profile or "", settings.embeddings.profiles[
        settings.embeddings.default_profile])
    return stamped_settings(settings.retrieval, profile, getattr(row, "retrieval", None)).strategy
