"""How a promotion is shown on the terminal, shared by ``rag index promote`` and
``rag ingest --update-alias`` (a command module never imports another command module)."""

from __future__ import annotations

import json
from typing import Any, Callable

import click

from backend.common.errors import GateFailed
from backend.core.services.evaluation import METRICS, EvaluationReport
from backend.core.services.promotion import PromotionResult

ANSWERS_HELP = ("Answer every query through the chat service (modes exactly as /chat, must_contain checked). "
                "--no-answers decides the mode from the search hits alone: same decision rule, much faster, "
                "no must_contain.")

PROGRESS_HELP = ("Force the progress bar on stderr on or off (default: drawn when ingest.progress is on, stderr is "
                 "a terminal and --json is not given).")


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


def render_promotion(result: PromotionResult) -> str:
    lines = [render_report(result.report)] if result.report else []
    for gate in result.gates:
        verdict = "WARN" if gate.warning else ("PASS" if gate.passed else "FAIL")
        lines.append(f"gate {gate.name:<18} {verdict}  {gate.describe()}")
    lines.extend(note for note in result.notes if not note.startswith("warning: "))  # the WARN rows say it
    if result.promoted:
        lines.append(f"promoted: {result.alias} -> {result.version} (previous: {result.previous or '-'})"
                     + ("  [forced]" if result.forced else "")
                     + ("  [with a warning: a floor is missed, see WARN above]" if any(g.warning for g in result.gates)
                        else ""))
        if result.dropped:
            lines.append(f"retention dropped: {', '.join(result.dropped)}")
    elif result.gates:
        lines.append(f"NOT promoted: {result.alias} still serves {result.previous or 'nothing'}")
    if result.report_path:
        lines.append(f"report: {result.report_path}")
    return "\n".join(lines)


def promotion_dict(result: PromotionResult) -> dict[str, Any]:
    return {
        "alias": result.alias, "version": result.version, "previous": result.previous, "promoted": result.promoted,
        "forced": result.forced, "gates": [g.__dict__ for g in result.gates],
        "metrics": result.report.metrics if result.report else None,
        "comparison": result.report.comparison if result.report else None,
        "report_path": str(result.report_path) if result.report_path else None,
        "dropped": list(result.dropped), "notes": list(result.notes),
    }


def promote_and_print(promote: Callable[[], PromotionResult], as_json: bool,
                      json_prefix: dict[str, Any] | None = None,
                      json_extra: Callable[[PromotionResult], dict[str, Any]] | None = None) -> PromotionResult:
    """``promote()`` (a ``Runtime.promote`` call) with its figures and gates printed, passed or
    not; a failed gate still raises ``GateFailed`` (exit code 3) after the printout. With
    ``json_prefix`` the JSON is one object: the prefix plus ``promotion``; ``json_extra`` adds
    keys computed from the result (the ingest's ``served``)."""

    def show(result: PromotionResult) -> None:
        if not as_json:
            click.echo(render_promotion(result))
            return
        body = promotion_dict(result)
        if json_prefix is not None:
            body = {**json_prefix, "promotion": body}
        if json_extra is not None:
            body.update(json_extra(result))
        click.echo(json.dumps(body, indent=2, default=str))

    try:
        result = promote()
    except GateFailed as exc:
        blocked = exc.context.get("result")
        if isinstance(blocked, PromotionResult):
            show(blocked)
        raise
    show(result)
    return result
