"""``rag calibrate``: fit the mode thresholds and hybrid gates on golden sets with k-fold
cross-validation, print per-fold mode accuracy and a suggested ``retrieval`` block.

It never writes configuration: copy the suggestion into the YAML profile yourself
(docs/CALIBRATION.md says how to keep a held-out set that judges it).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any, Callable, Sequence

import click
import yaml

from backend.cli.context import settings_from
from backend.cli.promotion_view import PROGRESS_HELP
from backend.common.config import Settings
from backend.common.errors import VersionNotFound
from backend.common.progress import bar, progress_enabled
from backend.core import answer_report as ctx
from backend.core.calibration import CalibrationQuery, CalibrationResult, Grid, Score, cross_validate
from backend.core.services.answerability import AnswerabilityJudge, AnswerabilityModel, attach_scores
from backend.core.services.answerability_fit import JudgedQuery, judge_query
from backend.core.services.answerability_fit import cross_validate as fit_answerability
from backend.core.services.evidence import SentenceScorer
from backend.core.golden import load_golden_set
from backend.core.ports import IndexAdmin
from backend.core.services.promotion import resolve_target
from backend.runtime import Runtime, build_runtime
from backend.core.answer_mode import is_short_query
from backend.core.types import Chunk
from backend.core.services.search_service import SearchRequest


def _sets(settings: Settings, store: IndexAdmin, domain_keys: tuple[str, ...], pairs: tuple[str, ...]) -> list[tuple[str, str]]:
    """(version, golden path) per golden set: ``--set VERSION=GOLDEN`` pairs, else the
    default alias and every configured domain (or only ``--domain-key`` ones)."""
    if pairs:
        out = []
        for pair in pairs:
            version, sep, golden = pair.partition("=")
            if not sep or not version or not golden:
                raise click.UsageError(f"--set expects VERSION=GOLDEN, got {pair!r}")
            store.get_version(version)
            out.append((version, golden))
        return out
    keys: list[str | None] = list(domain_keys) if domain_keys else [None, *settings.embeddings.domains]
    out = []
    for key in keys:
        target = resolve_target(settings, domain_key=key)
        served = store.resolve_alias(target.alias)
        if served is None:
            raise VersionNotFound(f"alias {target.alias} serves no version yet; promote one or pass --set VERSION=GOLDEN",
                                  alias=target.alias)
        if target.golden:
            out.append((served, str(target.golden)))
    return out


def collect(settings: Settings, services: Runtime, sets: list[tuple[str, str]], grid: Grid,
            on_query: Callable[[], Any] = lambda: None) -> list[CalibrationQuery]:
    """Search every golden query once (``retrieval.top_k`` deep, as /chat does) and score
    the sentence evidence for each ``min_similarity_for_hybrid`` of the grid; ``on_query``
    after each (the progress bar)."""
    retrieval = settings.retrieval
    # the runtime's scorer: with the answer reader when the profile enables it, as /chat judges
    scorer = services.chat.scorer or SentenceScorer(services.embedder)
    min_sims = sorted({*grid.min_similarity_for_hybrid, retrieval.hybrid.min_similarity_for_hybrid})
    queries = []
    for version, golden_path in sets:
        golden = load_golden_set(settings.resolve_path(golden_path))
        profile = services.admin.get_version(version).profile or settings.embeddings.default_profile
        search = services.searches.get(profile) or services.searches[settings.embeddings.default_profile]
        for q in golden.queries:
            question = " ".join(q.query.split())
            hits = search.search(SearchRequest(question, version, retrieval.top_k)).hits
            base = ctx.to_candidates(hits, retrieval.score_mode)
            per_sim = {}
            probe = _once_per_context(search.probe(version))
            for min_sim in min_sims:  # the unknown-word probe as /chat runs it, so relevance is the same
                grid_point = retrieval.model_copy(update={"hybrid": retrieval.hybrid.model_copy(
                    update={"min_similarity_for_hybrid": min_sim})})
                per_sim[min_sim] = tuple(attach_scores(base, question, scorer, grid_point, probe).candidates)
            queries.append(CalibrationQuery(f"{golden.path.name}:{q.id}", golden.path.name, q.expected_mode,
                                            is_short_query(question, retrieval.short_query), per_sim))
            on_query()
    return queries


def _once_per_context(probe: Callable[[str, Sequence[Chunk]], tuple[str, ...]]
                      ) -> Callable[[str, Sequence[Chunk]], tuple[str, ...]]:
    """``probe`` asked the store once per context: grid points that leave the same chunks usable
    ask the same full-text questions (one calibration question at a time)."""
    seen: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}

    def cached(question: str, context: Sequence[Chunk]) -> tuple[str, ...]:
        key = (question, tuple(c.chunk_id for c in context))
        if key not in seen:
            seen[key] = probe(question, context)
        return seen[key]

    return cached


def _score_line(score: Score) -> str:
    return (f"{score.accuracy:.4f} ({score.correct}/{score.queries}), "
            f"unanswerable answered rag: {score.unanswerable_as_rag}")


def render(result: CalibrationResult, k: int, seed: int) -> str:
    lines = [f"decision_score: {result.decision_score}; {k}-fold cross-validation (seed {seed}), "
             f"stratified by golden set and expected mode; objective: mode accuracy - {result.rag_penalty:g} x "
             "share of unanswerable queries answered rag", "",
             f"{'fold':<5}{'train':>6}{'test':>6}{'low':>7}{'high':>7}{'min_sim':>9}{'chunks':>8}{'chars':>7}"
             f"{'train acc':>11}{'test acc':>10}{'test ->rag':>11}"]
    for f in result.folds:
        s = f.setting
        lines.append(f"{f.index:<5}{f.train:>6}{f.test.queries:>6}{s.threshold_low:>7.3f}{s.threshold_high:>7.3f}"
                     f"{s.min_similarity_for_hybrid:>9.2f}{s.min_chunks_for_hybrid:>8}{s.min_total_context_chars:>7}"
                     f"{f.train_accuracy:>11.4f}{f.test.accuracy:>10.4f}{f.test.unanswerable_as_rag:>11}")
    lines += ["", f"held-out mode accuracy (pooled over folds): {_score_line(result.held_out)}"]
    for golden, score in result.held_out_by_golden.items():
        lines.append(f"  {golden}: {_score_line(score)}")
    confusion = ", ".join(f"{e}->{d}: {n}" for e, row in sorted(result.held_out.confusion.items())
                          for d, n in sorted(row.items()))
    lines.append(f"  held-out modes (expected->decided): {confusion}")
    lines += ["", f"current config: {_score_line(result.current)}"]
    for golden, score in result.current_by_golden.items():
        lines.append(f"  {golden}: {_score_line(score)}")
    lines += ["", f"suggested (fit on all queries; in-sample {_score_line(result.suggested_in_sample)}; "
              "judge it by the held-out figures above). Not written; copy into your profile:", "",
              yaml.safe_dump({"retrieval": {"decision_score": result.decision_score, **result.suggested.as_config()}},
                             sort_keys=False).rstrip()]
    return "\n".join(lines)


def result_dict(result: CalibrationResult) -> dict[str, Any]:
    def score(s: Score) -> dict[str, Any]:
        return {**asdict(s), "accuracy": round(s.accuracy, 4)}

    return {
        "decision_score": result.decision_score, "rag_penalty": result.rag_penalty,
        "folds": [{"fold": f.index, "train": f.train, "test_ids": list(f.test_ids), "setting": f.setting.as_config(),
                   "train_accuracy": round(f.train_accuracy, 4), "test": score(f.test)} for f in result.folds],
        "held_out": score(result.held_out),
        "held_out_by_golden": {g: score(s) for g, s in result.held_out_by_golden.items()},
        "current": score(result.current), "current_by_golden": {g: score(s) for g, s in result.current_by_golden.items()},
        "suggested": {"retrieval": {"decision_score": result.decision_score, **result.suggested.as_config()}},
        "suggested_in_sample": score(result.suggested_in_sample),
    }


@click.command("calibrate")
@click.option("--domain-key", "domain_keys", multiple=True,
              help="Calibrate on this domain's alias and golden set (repeatable). Default: the default alias and every domain.")
@click.option("--set", "pairs", multiple=True, metavar="VERSION=GOLDEN",
              help="An explicit version and golden set (repeatable); replaces the defaults.")
@click.option("--folds", "k", type=click.IntRange(2, 20), default=5, show_default=True, help="Cross-validation folds.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the stratified fold assignment.")
@click.option("--rag-penalty", type=click.FloatRange(0, 10), default=1.0, show_default=True,
              help="Extra cost of answering an unanswerable (hybrid/fallback) query in rag mode.")
@click.option("--answerability", is_flag=True,
              help="Fit the answerability model's weights and its thresholds (folds by group: article or document).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--progress/--no-progress", default=None, help=PROGRESS_HELP)
@click.pass_context
def calibrate(ctx: click.Context, domain_keys: tuple[str, ...], pairs: tuple[str, ...], k: int, seed: int,
              rag_penalty: float, answerability: bool, as_json: bool, progress: bool | None) -> None:
    """Fit threshold_low/high and the hybrid gates with k-fold cross-validation; print, never write."""
    settings = settings_from(ctx)
    services = build_runtime(settings)
    sets = _sets(settings, services.admin, domain_keys, pairs)
    total = sum(len(load_golden_set(settings.resolve_path(path)).queries) for _, path in sets)
    with bar(progress_enabled(progress, default=settings.ingest.progress, as_json=as_json), desc="golden queries",
             total=total, unit="query") as searched:
        if answerability:
            judged = collect_judged(settings, services, sets, lambda: searched.update(1))
        else:
            grid = Grid()
            queries = collect(settings, services, sets, grid, lambda: searched.update(1))
    if answerability:
        _calibrate_answerability(settings, judged, k, rag_penalty, as_json)
        return
    if len(queries) < k:
        raise click.UsageError(f"{len(queries)} golden queries cannot be split into {k} folds")
    result = cross_validate(queries, settings.retrieval, k=k, seed=seed, grid=grid, rag_penalty=rag_penalty)
    click.echo(json.dumps(result_dict(result), indent=2) if as_json else render(result, k, seed))


def collect_judged(settings: Settings, services: Runtime, sets: list[tuple[str, str]],
                   on_query: Callable[[], Any] = lambda: None) -> list[JudgedQuery]:
    """Search every golden query once and keep the features of its context sentences."""
    retrieval = settings.retrieval
    # the runtime's scorer: its answer reader (when the profile enables one) gives the ``reader`` feature
    judge = AnswerabilityJudge(services.chat.scorer or SentenceScorer(services.embedder), AnswerabilityModel(0.0, {}))
    out = []
    for version, golden_path in sets:
        golden = load_golden_set(settings.resolve_path(golden_path))
        search = services.searches.get(services.admin.get_version(version).profile or "") \
            or services.searches[settings.embeddings.default_profile]
        for q in golden.queries:
            question = " ".join(q.query.split())
            hits = search.search(SearchRequest(question, version, retrieval.top_k)).hits
            group = q.group or next(iter(q.expected_sources), None) or str(q.id)
            out.append(judge_query(
                f"{golden.path.name}:{q.id}", golden.path.name, f"{golden.path.name}:{group}", q.expected_mode,
                q.must_contain, question, is_short_query(question, retrieval.short_query),
                ctx.to_candidates(hits, retrieval.score_mode), judge, retrieval, search.probe(version)))
            on_query()
    return out


def _calibrate_answerability(settings: Settings, queries: list[JudgedQuery], k: int, rag_penalty: float,
                             as_json: bool) -> None:
    if len({q.group for q in queries}) < k:
        raise click.UsageError(f"the golden queries hold fewer than {k} groups (articles, documents) to fold by")
    result = fit_answerability(queries, settings.retrieval, k=k, rag_penalty=rag_penalty)
    held = result.held_out
    report: dict[str, Any] = {
        "folds": [{"fold": i, "train": n, "setting": s.as_config(), "model": {"intercept": m.intercept, **m.weights}}
                  for i, n, m, s in result.folds],
        "held_out": {g: {"accuracy": round(s.accuracy, 4), "queries": s.queries, "confusion": s.confusion,
                         "unanswerable_as_rag": s.unanswerable_as_rag, "roc_auc": held.auc(g)}
                     for g, s in held.by_golden.items()},
        "suggested": {"retrieval": result.suggested(settings.retrieval)},
    }
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    lines = [f"answerability: {k} folds by group (an article or expected document is never on both sides); "
             f"objective: balanced mode accuracy - {rag_penalty:g} x share of unanswerable answered rag", ""]
    for g, row in report["held_out"].items():
        lines.append(f"held out {g}: mode accuracy {row['accuracy']:.4f} ({row['queries']} queries), "
                     f"unanswerable answered rag: {row['unanswerable_as_rag']}, ROC AUC: {row['roc_auc']}")
    lines += ["", "suggested (fit on all queries). Not written; copy into your profile:", "",
              yaml.safe_dump(report["suggested"], sort_keys=False).rstrip()]
    click.echo("\n".join(lines))
