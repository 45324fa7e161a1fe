"""Gated alias rotation, rollback and retention.

``promote_version`` is the one promotion path: ``rag promote`` and
``rag ingest --update-alias`` both call it. It evaluates the candidate on the
golden set, re-evaluates the version the alias serves now on the same set (the
baseline for the regression gate: a stored result may come from an older golden
set), and points the alias only if every gate passes. Otherwise the alias is
untouched and ``GateFailed`` carries the result, unless ``force`` is given: then
the rotation happens and the history row is marked forced, its reason naming the
failing gates.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

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
from backend.core.ports import IndexAdmin
from backend.core.services.evaluation import EvaluationReport, Evaluator, with_comparison, write_report
from backend.common.assets import AssetFiles
from backend.core.model_stamp import same_model
from backend.core.services.golden import load_golden_set
from backend.core.services.retrieval_stamp import describe_stamp
from backend.core.services.series_lock import SeriesLocks, held_or_own
from backend.core.services.starter_golden import starter_path, write_starter
from backend.core.services.versions import VersionNaming, gc_plan, latest_version, version_roles
from backend.core.types import AliasChange

log = structlog.get_logger(__name__)

#: gate setting -> metric it bounds from below
MIN_GATES = {"min_recall_at_k": "recall_at_k", "min_ndcg_at_10": "ndcg_at_10", "min_mode_accuracy": "mode_accuracy"}
#: gate setting -> metric it bounds from above (the abstention gate)
MAX_GATES = {"max_unanswerable_as_rag": "unanswerable_as_rag"}
_EPS = 1e-9


@dataclass(frozen=True)
class GateResult:
    """One gate: ``kind`` is ``min`` (value >= threshold), ``max`` (value <= threshold) or
    ``regression`` (baseline - value <= threshold)."""

    name: str
    metric: str
    kind: str
    value: float | None
    threshold: float
    passed: bool
    baseline: float | None = None

    def describe(self) -> str:
        shown = "n/a" if self.value is None else f"{self.value:.4f}"
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
    """Pure: every configured gate against the candidate's metrics (and the baseline's)."""
    results: list[GateResult] = []
    for name, metric in MIN_GATES.items():
        threshold = getattr(gates, name)
        if threshold is None:
            continue
        value = metrics.get(metric)
        results.append(GateResult(name, metric, "min", value, threshold, value is not None and value + _EPS >= threshold))
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


@telemetry.traced("rag.promote", attributes=lambda settings, store, embedder, **kw: {"rag.alias": kw.get("alias"),
                                                                                     "rag.version": kw.get("version")},
                  result=lambda r: {"rag.alias": r.alias, "rag.version": r.version, "rag.promoted": r.promoted,
                                    "rag.gates.failed": len(r.failed_gates)})
def promote_version(settings: Settings, store: Any, embedder: Any, *, alias: str | None = None,
                    version: str | None = None, golden: str | Path | None = None, force: bool = False,
                    domain_key: str | None = None, chat: Any = None, write: bool = True,
                    reranker: Any = None, rerankers: Any = None, locks: SeriesLocks | None = None,
                    rotate: bool = True, by: str | None = None) -> PromotionResult:
    """Evaluate ``version``, check the gates, rotate ``alias`` if they pass (or ``force``).
    ``rotate=False`` evaluates, records and writes the reports but never rotates nor raises
    ``GateFailed`` (an upload's candidate waits for a person to promote it). ``by`` (who asked,
    e.g. "from the admin console by alice") opens the reason recorded in the alias history.

    Returns the result when the alias was rotated (or already served ``version``);
    raises ``GateFailed`` (``context["result"]`` holds the ``PromotionResult``) when a
    gate failed and ``force`` is false, leaving the alias untouched. ``force`` never
    overrides a model or dimension mismatch (``VersionConflict``).

    The candidate's series (and the served version's, when another) is locked from before the
    candidate is chosen until the rotation (``series_lock``): no ingest writes it while it is
    evaluated. ``locks`` that already hold it (``rag ingest --update-alias``) are kept; without
    them the promotion takes and releases its own. ``SeriesLocked`` when another run holds one."""
    with held_or_own(locks, store, settings, "rag promote") as held:
        target = resolve_target(settings, domain_key=domain_key, alias=alias, version=version, golden=golden)
        served = store.resolve_alias(target.alias)
        held.hold_all([target.version, *([served] if served else [])])
        return _promote(settings, store, embedder, target, version is None, force=force, chat=chat, write=write,
                        reranker=reranker, rerankers=rerankers, rotate=rotate, by=by)


def _promote(settings: Settings, store: Any, embedder: Any, target: PromotionTarget, newest_wanted: bool, *,
             force: bool, chat: Any, write: bool, reranker: Any, rerankers: Any,
             rotate: bool = True, by: str | None = None) -> PromotionResult:
    if newest_wanted:
        newest = latest_version(VersionNaming(settings.ingest.version_name_template), target.version,
                                store.list_versions())
        target = replace(target, version=newest.name if newest else target.version)
        undone = rolled_back_from(store.alias_history(target.alias), target.version)
        if undone is not None:
            raise VersionConflict(
                f"{target.version} was rolled back from {target.alias} ({undone.changed_at}); it is not promoted again "
                f"by default: name it (rag promote --version {target.version}) to serve it again",
                version=target.version, alias=target.alias)
    candidate = store.get_version(target.version)
    current = store.resolve_alias(target.alias)
    if target.starter_for is not None:  # a generated set follows the documents: every new file is asked about
        _, action = write_starter(settings, store, target.version, target.starter_for, live=current)
        if action != "kept":
            log.info("promotion.starter_golden_" + action, domain=target.starter_for, path=str(target.golden),
                     version=target.version)
    golden_set = load_golden_set(target.golden)
    evaluator = Evaluator(store, store, embedder, embeddings=settings.embeddings, retrieval=settings.retrieval,
                          evaluation=settings.evaluation, chat=chat, sanitize=settings.sanitize,
                          access=settings.access, reranker=reranker, rerankers=rerankers)
    if current == target.version:
        return _already_served(store, evaluator, golden_set, target, candidate)
    report = evaluator.evaluate(target.version, golden_set)
    baseline, notes = _baseline(evaluator, store, current, golden_set)
    gates = tuple(check_gates(report.metrics, settings.evaluation.gates, baseline.metrics if baseline else None))
    failed = [g for g in gates if not g.passed]
    if baseline is not None:
        report = with_comparison(report, baseline, target.alias)
    result = PromotionResult(target.alias, target.version, current, False, force, gates, report, baseline, notes=notes)
    if write:
        reports_dir = settings.resolve_path(settings.evaluation.reports_dir)
        baseline_path = write_report(baseline, reports_dir, extra={"alias": target.alias, "role": "baseline",
                                                                   "candidate": target.version}) \
            if baseline is not None else None
        path = write_report(report, reports_dir,
                            extra={"gates": [g.__dict__ for g in gates], "alias": target.alias, "forced": force,
                                   "baseline_report": str(baseline_path) if baseline_path else None})
        result = _replace(result, report_path=path)
    store.record_evaluation(target.version, {**report.summary(), "generation": candidate.generation,
                                             "gates": [g.__dict__ for g in gates], "gates_passed": not failed})
    if not rotate:
        return result
    if failed and not force:
        log.warning("promotion.blocked", alias=target.alias, version=target.version,
                    failed=[f"{g.name}:{g.metric}" for g in failed])
        raise GateFailed(
            f"{target.version} was not promoted to {target.alias} (still serving {current or 'nothing'}); failing gates:\n"
            + "\n".join(f"  - {g.name}: {g.describe()}" for g in failed),
            alias=target.alias, version=target.version, result=result,
        )
    _check_same_model(store, current, candidate)
    if store.get_version(target.version).generation != candidate.generation:
        raise EvaluationError(f"{target.version} changed while it was evaluated (an ingest wrote it); "
                              "promote again to evaluate what it holds now", version=target.version)
    reason = ("forced despite failing gates: " + "; ".join(f"{g.name}: {g.describe()}" for g in failed)) if failed \
        else ("forced; all gates passed" if force else "all gates passed")
    reason = f"{by}: {reason}" if by else reason
    try:
        # the store reads the generation again under the lock that orders the rotation against writes (C6)
        change = store.point_alias(target.alias, target.version, reason=reason, forced=force,
                                   expected_generation=candidate.generation)
    except VersionChanged as exc:
        raise EvaluationError(f"{target.version} changed while it was evaluated (an ingest wrote it); "
                              "promote again to evaluate what it holds now", version=target.version) from exc
    dropped = collect_garbage(store, settings, series=target.version).dropped
    log.info("promotion.rotated", alias=target.alias, version=target.version, previous=current, forced=force,
             dropped=dropped)
    return _replace(result, promoted=True, change=change, dropped=tuple(dropped))


def _already_served(store: Any, evaluator: Evaluator, golden_set: Any, target: PromotionTarget,
                    version: Any) -> PromotionResult:
    """Nothing to rotate. A version written in place since its last evaluation is
    evaluated again, so what ``rag alias status`` shows is about its present content."""
    notes = [f"{target.alias} already serves {target.version}; nothing to do"]
    report = None
    if not version.evaluation_current:
        report = evaluator.evaluate(target.version, golden_set)
        store.record_evaluation(target.version, {**report.summary(), "generation": version.generation})
        notes.append(f"{target.version} changed since its last evaluation (written in place): evaluated again")
    return PromotionResult(target.alias, target.version, target.version, False, False, (), report, notes=tuple(notes))


def _replace(result: PromotionResult, **changes: Any) -> PromotionResult:
    return replace(result, **changes)


def _baseline(evaluator: Evaluator, store: Any, current: str | None,
              golden_set: Any) -> tuple[EvaluationReport | None, tuple[str, ...]]:
    if current is None:
        return None, ("the alias serves nothing yet: no regression gate",)
    try:
        baseline = evaluator.evaluate(current, golden_set)
    except EmbeddingModelMismatch as exc:
        return None, (f"active version {current} cannot be evaluated with this embedder ({exc.user_message}); "
                      "no regression gate",)
    store.record_evaluation(current, {**baseline.summary(), "generation": store.get_version(current).generation})
    return baseline, ()


def _check_same_model(store: Any, current: str | None, candidate: Any) -> None:
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


def alias_versions(history: Sequence[AliasChange]) -> list[str]:
    """Versions an alias has served, most recent first (history is newest first)."""
    out: list[str] = []
    for change in history:
        for name in (change.version, change.previous):
            if name and name not in out:
                out.append(name)
    return out


@dataclass(frozen=True)
class GarbageCollection:
    dropped: tuple[str, ...]
    assets_removed: tuple[str, ...]
    dry_run: bool


def collect_garbage(store: Any, settings: Settings, *, series: str | None = None,
                    dry_run: bool = False) -> GarbageCollection:
    """Drop every version beyond ``evaluation.keep_versions`` of its series (only
    ``series``'s when given), never one an alias serves or keeps for rollback; then
    remove the figure images no remaining version cites (older than
    ``docx.assets_gc_grace_seconds``)."""
    naming = VersionNaming(settings.ingest.version_name_template)
    listed = store.list_versions()
    versions = listed if series is None else [v for v in listed if naming.same_series(v.name, series)]
    victims = gc_plan(naming, versions, store.protected_versions(), settings.evaluation.keep_versions)
    if not dry_run:
        for name in victims:
            store.drop_version(name)
        if victims:
            log.info("promotion.retention_dropped", dropped=victims, keep=settings.evaluation.keep_versions)
    assets = AssetFiles(settings.resolve_path(settings.docx.assets_dir))
    remaining = [v.name for v in listed if v.name not in victims]
    cited: set[str] = set()
    for name in remaining:
        cited |= store.asset_refs(name)
    orphans = assets.unreferenced(cited, grace_seconds=settings.docx.assets_gc_grace_seconds)
    if not dry_run:
        assets.remove(orphans)
    return GarbageCollection(tuple(victims), tuple(orphans), dry_run)


@dataclass(frozen=True)
class AliasStatus:
    """An alias, what it serves, and every version of its series or its history
    (newest first) with its role: live, rollback, candidate or retired."""

    alias: str
    active: str | None
    previous: str | None
    changed_at: str | None
    forced: bool
    reason: str
    versions: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"alias": self.alias, "active": self.active, "previous": self.previous, "changed_at": self.changed_at,
                "forced": self.forced, "reason": self.reason, "versions": list(self.versions)}

    def render(self) -> str:
        head = f"{self.alias}: {self.active or '(serves nothing)'}"
        if self.active:
            head += f"  previous={self.previous or '-'}  changed_at={self.changed_at}" + ("  [forced]" if self.forced else "")
        return "\n".join([head, *(f"  {render_version(v)}" for v in self.versions)])


_MARK = {"live": "*", "rollback": "<", "candidate": "+", "retired": " "}


def render_version(v: Mapping[str, Any]) -> str:
    """One line: role, name, counts, size, age, last evaluation (and whether it is stale)."""
    ev = v.get("evaluation") or {}
    m = ev.get("metrics") or {}
    if m:
        figures = " ".join(f"{k}={m[k]}" for k in ("recall_at_k", "ndcg_at_10", "mode_accuracy") if k in m)
        passed = ev.get("gates_passed")
        verdict = "" if passed is None else (" gates=pass" if passed else " gates=FAIL")
        summary = f"eval: {figures}{verdict}" + ("" if v.get("evaluation_current") else " (STALE: content changed since)")
    else:
        summary = "eval: -"
    return (f"{_MARK.get(v.get('role', ''), ' ')} {v['name']:<22} {v.get('role', ''):<9} docs={v['doc_count']:<5} "
            f"chunks={v['chunk_count']:<6} {_size(v.get('size_bytes', 0)):>8} age={v.get('age', '?'):<6} {summary}"
            f" | retrieval: {describe_stamp(v.get('retrieval'))}")


def _size(n: int) -> str:
    return f"{n / 1e6:.1f}MB" if n >= 1e6 else f"{n / 1e3:.0f}kB"


def _age(created_at: str, now: datetime | None = None) -> str:
    try:
        seconds = ((now or datetime.now(timezone.utc)) - datetime.fromisoformat(created_at)).total_seconds()
    except (TypeError, ValueError):
        return "?"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{max(0, int(seconds))}s"


def version_row(version: Any, role: str = "") -> dict[str, Any]:
    return {"name": version.name, "role": role, "model": version.model, "dimension": version.dimension,
            "distance": version.distance, "doc_count": version.doc_count, "chunk_count": version.chunk_count,
            "size_bytes": version.size_bytes, "created_at": version.created_at, "age": _age(version.created_at),
            "generation": version.generation, "parent": version.parent, "evaluation": version.evaluation,
            "evaluation_current": version.evaluation_current, "retrieval": version.retrieval}


def alias_status(store: Any, configured: Mapping[str, str],
                 naming: VersionNaming) -> tuple[list[AliasStatus], list[str]]:
    """Status of every configured alias (``alias -> configured index_name``) and every
    existing one, plus the versions that belong to none of them."""
    listed = store.list_versions()
    versions = {v.name: v for v in listed}
    aliases = store.list_aliases()
    roles = version_roles(naming, listed, aliases, store.protected_versions())
    names = list(dict.fromkeys([*configured, *aliases]))
    shown: set[str] = set()
    out = []
    for name in names:
        history = store.alias_history(name)
        anchors = [a for a in (configured.get(name), aliases.get(name)) if a]
        own = [v.name for v in listed if any(naming.same_series(v.name, a) for a in anchors)]
        own += [v for v in alias_versions(history) if v in versions and v not in own]
        own.sort(key=lambda n: (naming.split(n)[1], versions[n].created_at), reverse=True)
        shown.update(own)
        latest = history[0] if history else None
        out.append(AliasStatus(
            alias=name, active=aliases.get(name), previous=latest.previous if latest else None,
            changed_at=latest.changed_at if latest else None, forced=bool(latest and latest.forced),
            reason=latest.reason if latest else "",
            versions=tuple(version_row(versions[v], roles[v].role) for v in own),
        ))
    return out, [v for v in versions if v not in shown]
