"""Gated alias rotation, rollback and retention.

``promote_version`` is the one promotion path: ``rag index promote``, ``rag ingest
--update-alias``, ``rag kb`` and the admin console all reach it through
``promote_configured`` (``Runtime.promote``). It takes an evaluator and the admin port,
never the whole settings: ``promote_configured`` reads the target, gates, naming,
retention and reports folder from them. It evaluates the candidate on the
golden set, re-evaluates the version the alias serves now on the same set (the
baseline for the regression gate: a stored result may come from an older golden
set), and points the alias only if every gate passes. Otherwise the alias is
untouched and ``GateFailed`` carries the result, unless ``force`` is given: then
the rotation happens and the history row is marked forced, its reason naming the
failing gates.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import structlog

from backend.common import telemetry
from backend.common.config import GateSettings, Settings
from backend.common.errors import (
    EmbeddingModelMismatch,
    EvaluationError,
    GateFailed,
    StoreError,
    UnknownDomain,
    VersionChanged,
    VersionConflict,
)
from backend.core.ports import CombinedStore, IndexAdmin, Stores
from backend.core.services.evaluation import EvaluationReport, Evaluator, with_comparison, write_report
from backend.common.assets import AssetFiles
from backend.core.model_stamp import same_model
from backend.core.golden import GoldenSet, load_golden_set
from backend.core.services.series_lock import SeriesLocks, held_or_own
from backend.core.services.starter_golden import starter_path, write_starter
from backend.core.versions import VersionNaming, gc_plan, latest_version
from backend.core.types import AliasChange, IndexVersion

log = structlog.get_logger(__name__)

#: gate setting -> metric it bounds from below
MIN_GATES = {"min_recall_at_k": "recall_at_k", "min_ndcg_at_10": "ndcg_at_10", "min_mode_accuracy": "mode_accuracy"}
#: gate setting -> metric it bounds from above (the abstention gate)
MAX_GATES = {"max_unanswerable_as_rag": "unanswerable_as_rag"}
_EPS = 1e-9
#: ``GateResult.warning``: the served version misses the floor too and the candidate is no worse
FLOOR_SHARED = "served_version_below_floor"
#: ``GateResult.warning``: a first version missing a floor of its generated starter set, served by policy
FIRST_ON_STARTER = "first_version_on_starter_set"


@dataclass(frozen=True)
class GateResult:
    """One gate: ``kind`` is ``min`` (value >= threshold), ``max`` (value <= threshold) or
    ``regression`` (baseline - value <= threshold). ``warning`` names why a floor the value
    misses does not block (``passed`` is then true): the served version is below it too and the
    candidate is no worse (``FLOOR_SHARED``), or a knowledge base's first version on its generated
    starter set (``FIRST_ON_STARTER``, by ``evaluation.gates.first_version_below_floor``)."""

    name: str
    metric: str
    kind: str
    value: float | None
    threshold: float
    passed: bool
    baseline: float | None = None
    warning: str | None = None

    def describe(self) -> str:
        shown = "n/a" if self.value is None else f"{self.value:.4f}"
        if self.warning == FLOOR_SHARED:
            return (f"{self.metric} = {shown}, below the minimum {self.threshold:.4f} as the served version is "
                    f"({self.baseline:.4f}); no worse than it, so it does not block")
        if self.warning == FIRST_ON_STARTER:
            return (f"{self.metric} = {shown}, below the minimum {self.threshold:.4f} on the generated starter set; "
                    "first version, served with this warning")
        if self.kind == "min":
            return f"{self.metric} = {shown}, minimum {self.threshold:.4f}"
        if self.kind == "max":
            return f"{self.metric} = {shown}, maximum {self.threshold:.4f}"
        drop = None if self.value is None or self.baseline is None else self.baseline - self.value
        return (f"{self.metric} regression = {'n/a' if drop is None else f'{drop:.4f}'} "
                f"(active {self.baseline:.4f} -> {shown}), maximum {self.threshold:.4f}")


@dataclass(frozen=True)
class PromotionResult:
    alias: str
    version: str
    previous: str | None
    promoted: bool
    forced: bool
    gates: tuple[GateResult, ...]
    report: EvaluationReport | None
    baseline: EvaluationReport | None = None
    change: AliasChange | None = None
    report_path: Path | None = None
    dropped: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def failed_gates(self) -> list[GateResult]:
        return [g for g in self.gates if not g.passed]


def check_gates(metrics: Mapping[str, float | None], gates: GateSettings,
                baseline: Mapping[str, float | None] | None) -> list[GateResult]:
    """Pure: every configured gate against the candidate's metrics (and the baseline's).

    A ``min`` floor the candidate misses does not block when the served version (``baseline``)
    misses it too and the candidate is no worse than it (its drop within ``max_regression``, or
    none when that is null): the alias would otherwise keep a version that is no better, and
    every edit would need ``--force`` (the served version was forced, or the floor was raised).
    The gate passes with ``warning=FLOOR_SHARED`` and keeps its figures."""
    results: list[GateResult] = []
    allowed_drop = gates.max_regression if gates.max_regression is not None else 0.0
    for name, metric in MIN_GATES.items():
        threshold = getattr(gates, name)
        if threshold is None:
            continue
        value = metrics.get(metric)
        passed = value is not None and value + _EPS >= threshold
        before = baseline.get(metric) if baseline is not None else None
        if not passed and value is not None and before is not None and before + _EPS < threshold \
                and before - value <= allowed_drop + _EPS:
            results.append(GateResult(name, metric, "min", value, threshold, True, before, warning=FLOOR_SHARED))
            continue
        results.append(GateResult(name, metric, "min", value, threshold, passed))
    for name, metric in MAX_GATES.items():
        threshold = getattr(gates, name)
        value = metrics.get(metric)
        if threshold is None or value is None:  # a golden set without unanswerable questions has nothing to gate
            continue
        results.append(GateResult(name, metric, "max", value, threshold, value <= threshold + _EPS))
    if gates.max_regression is not None and baseline is not None:
        for metric in MIN_GATES.values():
            before, value = baseline.get(metric), metrics.get(metric)
            if before is None:
                continue
            passed = value is not None and before - value <= gates.max_regression + _EPS
            results.append(GateResult("max_regression", metric, "regression", value, gates.max_regression, passed, before))
    return results


def waive_first_floors(results: Sequence[GateResult]) -> list[GateResult]:
    """Pure: the ``min`` floors a first version misses on its generated starter set, turned into
    warnings (``FIRST_ON_STARTER``). The abstention ceiling stays a gate: answering off-topic
    questions is never waved through, nor is a floor that could not be measured (no generated
    question asks about a document: nothing shows the files are found)."""
    return [replace(g, passed=True, warning=FIRST_ON_STARTER)
            if g.kind == "min" and not g.passed and g.value is not None else g for g in results]


def force_command(target: "PromotionTarget", version: str) -> str:
    """The exact command that promotes ``version`` despite its gates (pure)."""
    where = f"--domain-key {target.starter_for}" if target.starter_for else f"--alias {target.alias}"
    return f"rag index promote {where} --version {version} --force"


def gate_warnings(results: Sequence[GateResult]) -> tuple[str, ...]:
    """The notes a promotion with waived floors prints (pure)."""
    return tuple(f"warning: {g.name}: {g.describe()}" for g in results if g.warning)


@dataclass(frozen=True)
class PromotionTarget:
    alias: str
    version: str
    golden: Path
    #: the domain whose starter golden set ``golden`` is, generated from the candidate when missing
    starter_for: str | None = None


def resolve_target(settings: Settings, *, domain_key: str | None = None, alias: str | None = None,
                   version: str | None = None, golden: str | Path | None = None) -> PromotionTarget:
    """Defaults: the domain's alias / golden_set, else ``embeddings.alias.name`` and
    ``evaluation.golden_set``; the version defaults to the newest version of the
    series of the domain's (else the default profile's) index_name. A domain without a
    golden_set gets its starter set (``starter_golden``), never ``evaluation.golden_set``:
    another knowledge base's questions would say nothing about its documents."""
    emb = settings.embeddings
    golden_default = settings.evaluation.golden_set
    if domain_key is not None:
        domain = emb.domains.get(domain_key)
        if domain is not None and golden is None and domain.golden_set is None:
            return PromotionTarget(alias or domain.alias_name, version or domain.index_name,
                                   starter_path(settings, domain_key), starter_for=domain_key)
        if domain is None:
            raise UnknownDomain(f"--domain-key {domain_key!r} is not configured; known: {sorted(emb.domains) or '(none)'}",
                                field="domain_key")
        alias = alias or domain.alias_name
        version = version or domain.index_name
        golden_default = domain.golden_set or golden_default
    alias = alias or emb.alias.name
    version = version or emb.profiles[emb.default_profile].index_name
    golden = golden or golden_default
    if golden is None:
        raise EvaluationError("no golden set configured (evaluation.golden_set); promotion needs one to evaluate",
                         field="evaluation.golden_set")
    return PromotionTarget(alias, version, settings.resolve_path(str(golden)))


#: ``(version, live version) -> action``: writes the starter golden set of a domain without one
#: so it fits the candidate's documents ("written", "extended" or "kept")
StarterWriter = Callable[[str, str | None], str]
#: ``series -> versions dropped``: retention applied to the series after a rotation
Retention = Callable[[str], Sequence[str]]


def promote_configured(settings: Settings, stores: Stores, evaluator: Evaluator, *, alias: str | None = None,
                       version: str | None = None, golden: str | Path | None = None, force: bool = False,
                       domain_key: str | None = None, write: bool = True, locks: SeriesLocks | None = None,
                       rotate: bool = True, by: str | None = None, command: str = "rag index promote") -> PromotionResult:
    """``promote_version`` with its arguments read from ``settings``: the target (``resolve_target``),
    the gates, version naming, retention, the reports folder and a domain's starter golden set.

    The candidate's series (and the served version's, when another) is locked from before the
    candidate is chosen until the rotation (``series_lock``): no ingest writes it while it is
    evaluated. ``locks`` that already hold it (``rag ingest --update-alias``) are kept; without
    them the promotion takes and releases its own. ``SeriesLocked`` when another run holds one."""
    with held_or_own(locks, stores.admin, settings, command) as held:
        target = resolve_target(settings, domain_key=domain_key, alias=alias, version=version, golden=golden)
        key = target.starter_for

        def starter(candidate: str, live: str | None) -> str:
            assert key is not None
            return write_starter(settings, stores.vectors, candidate, key, live=live)[1]

        return promote_version(
            evaluator, stores.admin, target, settings.evaluation.gates,
            naming=VersionNaming(settings.ingest.version_name_template), locks=held,
            retention=lambda series: collect_garbage(stores, settings, series=series).dropped,
            reports_dir=settings.resolve_path(settings.evaluation.reports_dir) if write else None,
            newest=version is None, starter=starter if key is not None else None, force=force, rotate=rotate,
            by=by)


@telemetry.traced("rag.promote", attributes=lambda evaluator, admin, target, *a, **kw: {
                      "rag.alias": target.alias, "rag.version": target.version},
                  result=lambda r: {"rag.alias": r.alias, "rag.version": r.version, "rag.promoted": r.promoted,
                                    "rag.gates.failed": len(r.failed_gates)})
def promote_version(evaluator: Evaluator, admin: IndexAdmin, target: PromotionTarget, gates: GateSettings, *,
                    naming: VersionNaming, locks: SeriesLocks, retention: Retention, reports_dir: Path | None,
                    newest: bool = False, starter: StarterWriter | None = None, force: bool = False,
                    rotate: bool = True, by: str | None = None) -> PromotionResult:
    """Evaluate ``target.version`` (with ``newest``: the newest version of its series), check the
    gates, rotate ``target.alias`` if they pass (or ``force``). ``rotate=False`` evaluates, records
    and writes the reports (into ``reports_dir``; None writes none) but never rotates nor raises
    ``GateFailed`` (an upload's candidate waits for a person to promote it). ``by`` (who asked,
    e.g. "from the admin console by alice") opens the reason recorded in the alias history.

    Returns the result when the alias was rotated (or already served the version);
    raises ``GateFailed`` (``context["result"]`` holds the ``PromotionResult``) when a
    gate failed and ``force`` is false, leaving the alias untouched. ``force`` never
    overrides a model or dimension mismatch (``VersionConflict``). ``locks`` are taken on the
    candidate's and the served version's series before anything is read."""
    served = admin.resolve_alias(target.alias)
    locks.hold_all([target.version, *([served] if served else [])])
    return _promote(evaluator, admin, target, gates, naming, newest, retention=retention, reports_dir=reports_dir,
                    starter=starter, force=force, rotate=rotate, by=by)


def _promote(evaluator: Evaluator, admin: IndexAdmin, target: PromotionTarget, gates: GateSettings,
             naming: VersionNaming, newest_wanted: bool, *, retention: Retention, reports_dir: Path | None,
             starter: StarterWriter | None, force: bool, rotate: bool, by: str | None) -> PromotionResult:
    store = admin
    if newest_wanted:
        newest = latest_version(naming, target.version, store.list_versions())
        target = replace(target, version=newest.name if newest else target.version)
        undone = rolled_back_from(store.alias_history(target.alias), target.version)
        if undone is not None:
            raise VersionConflict(
                f"{target.version} was rolled back from {target.alias} ({undone.changed_at}); it is not promoted again "
                f"by default: name it (rag index promote --version {target.version}) to serve it again",
                version=target.version, alias=target.alias)
    candidate = store.get_version(target.version)
    current = store.resolve_alias(target.alias)
    if starter is not None:  # a generated set follows the documents: every new file is asked about
        action = starter(target.version, current)
        if action != "kept":
            log.info("promotion.starter_golden_" + action, domain=target.starter_for, path=str(target.golden),
                     version=target.version)
    golden_set = load_golden_set(target.golden)
    if current == target.version:
        return _already_served(store, evaluator, golden_set, target, candidate)
    report = evaluator.evaluate(target.version, golden_set)
    baseline, notes = _baseline(evaluator, store, current, golden_set)
    checked = tuple(check_gates(report.metrics, gates, baseline.metrics if baseline else None))
    if current is None and starter is not None and gates.first_version_below_floor == "serve":
        checked = tuple(waive_first_floors(checked))
    failed = [g for g in checked if not g.passed]
    notes = (*notes, *gate_warnings(checked))
    if baseline is not None:
        report = with_comparison(report, baseline, target.alias)
    result = PromotionResult(target.alias, target.version, current, False, force, checked, report, baseline,
                             notes=notes)
    if reports_dir is not None:
        baseline_path = write_report(baseline, reports_dir, extra={"alias": target.alias, "role": "baseline",
                                                                   "candidate": target.version}) \
            if baseline is not None else None
        path = write_report(report, reports_dir,
                            extra={"gates": [g.__dict__ for g in checked], "alias": target.alias, "forced": force,
                                   "baseline_report": str(baseline_path) if baseline_path else None})
        result = _replace(result, report_path=path)
    store.record_evaluation(target.version, {**report.summary(), "generation": candidate.generation,
                                             "gates": [g.__dict__ for g in checked], "gates_passed": not failed})
    if not rotate:
        return result
    if failed and not force:
        log.warning("promotion.blocked", alias=target.alias, version=target.version,
                    failed=[f"{g.name}:{g.metric}" for g in failed])
        raise GateFailed(
            f"{target.version} was not promoted to {target.alias} (still serving {current or 'nothing'}); failing gates:\n"
            + "\n".join(f"  - {g.name}: {g.describe()}" for g in failed)
            + f"\nto serve it anyway (recorded as forced): {force_command(target, target.version)}",
            alias=target.alias, version=target.version, result=result,
        )
    _check_same_model(store, current, candidate)
    if store.get_version(target.version).generation != candidate.generation:
        raise EvaluationError(f"{target.version} changed while it was evaluated (an ingest wrote it); "
                              "promote again to evaluate what it holds now", version=target.version)
    reason = ("forced despite failing gates: " + "; ".join(f"{g.name}: {g.describe()}" for g in failed)) if failed \
        else ("forced; all gates passed" if force else "all gates passed")
    warned = [g for g in checked if g.warning]
    if warned and not failed:
        reason += "; warning: " + "; ".join(f"{g.name}: {g.describe()}" for g in warned)
    reason = f"{by}: {reason}" if by else reason
    try:
        # the store reads the generation again under the lock that orders the rotation against writes (C6)
        change = store.point_alias(target.alias, target.version, reason=reason, forced=force,
                                   expected_generation=candidate.generation)
    except VersionChanged as exc:
        raise EvaluationError(f"{target.version} changed while it was evaluated (an ingest wrote it); "
                              "promote again to evaluate what it holds now", version=target.version) from exc
    dropped = tuple(retention(target.version))
    log.info("promotion.rotated", alias=target.alias, version=target.version, previous=current, forced=force,
             dropped=dropped)
    return _replace(result, promoted=True, change=change, dropped=dropped)


def _already_served(store: IndexAdmin, evaluator: Evaluator, golden_set: GoldenSet, target: PromotionTarget,
                    version: IndexVersion) -> PromotionResult:
    """Nothing to rotate. A version written in place since its last evaluation is
    evaluated again, so what ``rag index status`` shows is about its present content."""
    notes = [f"{target.alias} already serves {target.version}; nothing to do"]
    report = None
    if not version.evaluation_current:
        report = evaluator.evaluate(target.version, golden_set)
        store.record_evaluation(target.version, {**report.summary(), "generation": version.generation})
        notes.append(f"{target.version} changed since its last evaluation (written in place): evaluated again")
    return PromotionResult(target.alias, target.version, target.version, False, False, (), report, notes=tuple(notes))


def _replace(result: PromotionResult, **changes: Any) -> PromotionResult:
    return replace(result, **changes)


def _baseline(evaluator: Evaluator, store: IndexAdmin, current: str | None,
              golden_set: GoldenSet) -> tuple[EvaluationReport | None, tuple[str, ...]]:
    if current is None:
        return None, ("the alias serves nothing yet: no regression gate",)
    try:
        baseline = evaluator.evaluate(current, golden_set)
    except EmbeddingModelMismatch as exc:
        return None, (f"active version {current} cannot be evaluated with this embedder ({exc.user_message}); "
                      "no regression gate",)
    store.record_evaluation(current, {**baseline.summary(), "generation": store.get_version(current).generation})
    return baseline, ()


def _check_same_model(store: IndexAdmin, current: str | None, candidate: IndexVersion) -> None:
    """``point_alias(forced=True)`` skips the store's model check; keep it for ``--force``.
    Another runtime of the same model passes: the gate evaluated the candidate with it."""
    if current is None:
        return
    old = store.get_version(current)
    if not same_model(old.model, candidate.model) or old.dimension != candidate.dimension:
        raise VersionConflict(
            f"{candidate.name} uses {candidate.model} ({candidate.dimension} dims) but the alias serves {current} "
            f"({old.model}, {old.dimension} dims); queries would be embedded with the wrong model",
            version=candidate.name,
        )


def rollback(store: IndexAdmin, alias: str, *, locks: SeriesLocks | None = None, by: str | None = None) -> AliasChange:
    """Point ``alias`` back at the version it served before its latest change. A second
    rollback undoes the first (the rollback is itself a change). With ``locks`` (``rag
    rollback``), the series of both versions are locked first, so a rollback never lands in the
    middle of an ingest's or a promotion's run. ``by`` (who asked) is appended to the recorded
    reason, which still starts with "rollback from" (what ``rolled_back_from`` reads)."""
    history = store.alias_history(alias)
    if not history:
        from backend.common.errors import AliasNotFound

        raise AliasNotFound(f"alias {alias} has no history; nothing to roll back", alias=alias)
    if locks is not None:
        locks.hold_all([v for v in (history[0].version, history[0].previous) if v])
        history = store.alias_history(alias)  # what the lock's holder may have changed meanwhile
    latest = history[0]
    if latest.previous is None:
        raise StoreError(f"alias {alias} has no previous version (it was created pointing at {latest.version})",
                         alias=alias)
    store.get_version(latest.previous)
    reason = f"rollback from {latest.version}" + (f" ({by})" if by else "")
    change = store.point_alias(alias, latest.previous, reason=reason)
    log.info("promotion.rolled_back", alias=alias, version=latest.previous, previous=latest.version)
    return change


def rolled_back_from(history: Sequence[AliasChange], version: str) -> AliasChange | None:
    """The rollback that took ``alias`` away from ``version``, if nothing has pointed the alias
    at ``version`` since (``history`` newest first): then "promote the newest" must not quietly
    undo the rollback (pure)."""
    for change in history:
        if change.version == version:
            return None
        if change.previous == version and change.reason.startswith("rollback from "):
            return change
    return None


@dataclass(frozen=True)
class GarbageCollection:
    dropped: tuple[str, ...]
    assets_removed: tuple[str, ...]
    dry_run: bool


def collect_garbage(store: Stores | CombinedStore, settings: Settings, *, series: str | None = None,
                    dry_run: bool = False) -> GarbageCollection:
    """Drop every version beyond ``evaluation.keep_versions`` of its series (only
    ``series``'s when given), never one an alias serves or keeps for rollback; then
    remove the figure images no remaining version cites (older than
    ``docx.assets_gc_grace_seconds``). ``store``: the bundle, or one object serving both ports."""
    admin, vectors = (store.admin, store.vectors) if isinstance(store, Stores) else (store, store)
    naming = VersionNaming(settings.ingest.version_name_template)
    listed = admin.list_versions()
    versions = listed if series is None else [v for v in listed if naming.same_series(v.name, series)]
    victims = gc_plan(naming, versions, admin.protected_versions(), settings.evaluation.keep_versions)
    if not dry_run:
        for name in victims:
            admin.drop_version(name)
        if victims:
            log.info("promotion.retention_dropped", dropped=victims, keep=settings.evaluation.keep_versions)
    assets = AssetFiles(settings.resolve_path(settings.docx.assets_dir))
    remaining = [v.name for v in listed if v.name not in victims]
    cited: set[str] = set()
    for name in remaining:
        cited |= vectors.asset_refs(name)
    orphans = assets.unreferenced(cited, grace_seconds=settings.docx.assets_gc_grace_seconds)
    if not dry_run:
        assets.remove(orphans)
    return GarbageCollection(tuple(victims), tuple(orphans), dry_run)
