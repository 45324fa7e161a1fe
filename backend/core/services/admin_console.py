"""What the admin console shows: knowledge bases, their documents, versions, evaluations,
feedback and golden sets, as plain JSON-ready dicts (docs/ADMIN.md).

The read model of ``backend/api/admin.py``. Everything here reads the store, the
evaluation reports and the golden files, and decides nothing but what to show; the
decisions (a version's role, where a document last changed, whether a query won or
lost) are pure functions, tested without a store. A *knowledge base* is the default
alias (key ``default``) or one configured domain (``embeddings.domains.<key>``,
registered ones included): its alias, the series of its configured ``index_name``,
its golden set.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Mapping, Sequence

from backend.common.config import DEFAULT_DOMAIN, REPO_ROOT, Settings
from backend.common.errors import EvaluationError, EvaluationNotFound, KnowledgeBaseNotFound
from backend.core.ports import CombinedStore, IndexAdmin, Stores
from backend.core.golden import load_golden_set
from backend.core.services.version_status import alias_versions
from backend.core.services.starter_golden import is_generated, starter_path
from backend.core.versions import VersionNaming
from backend.core.types import AliasChange, Feedback, IndexVersion

_EPS = 1e-9


@dataclass(frozen=True)
class KnowledgeBase:
    key: str
    title: str
    alias: str
    #: the configured index_name: every version of its series belongs to the knowledge base
    series: str
    golden: Path | None
    #: registered by the runtime (``rag kb create`` / the page), not defined in config/rag.yaml
    managed: bool

    @property
    def domain(self) -> str | None:
        """The X-RAG-Domain of the knowledge base (None: the default alias)."""
        return None if self.key == DEFAULT_DOMAIN else self.key


def _pretty(key: str) -> str:
    text = key.replace("-", " ").replace("_", " ")
    return text[:1].upper() + text[1:]


def golden_path(settings: Settings, key: str) -> Path | None:
    """The golden set that gates ``key``: the default alias's ``evaluation.golden_set``; a
    domain's own ``golden_set``, else its generated starter set once one exists (a domain is
    never scored against another's set)."""
    if key == DEFAULT_DOMAIN:
        value = settings.evaluation.golden_set
        return settings.resolve_path(value) if value else None
    domain = settings.embeddings.domains[key]
    if domain.golden_set:
        return settings.resolve_path(domain.golden_set)
    generated = starter_path(settings, key)
    return generated if generated.is_file() else None


def knowledge_bases(settings: Settings, managed: Collection[str] = ()) -> list[KnowledgeBase]:
    """The default alias first, then every configured domain by key."""
    emb = settings.embeddings
    out = [KnowledgeBase(DEFAULT_DOMAIN, emb.alias.title, emb.alias.name,
                         emb.profiles[emb.default_profile].index_name, golden_path(settings, DEFAULT_DOMAIN), False)]
    for key in sorted(emb.domains):
        d = emb.domains[key]
        out.append(KnowledgeBase(key, d.title or _pretty(key), d.alias_name, d.index_name, golden_path(settings, key),
                                 key in managed))
    return out


def knowledge_base(settings: Settings, key: str, managed: Collection[str] = ()) -> KnowledgeBase:
    """The knowledge base ``key``; ``KnowledgeBaseNotFound`` (404) naming the known keys."""
    for kb in knowledge_bases(settings, managed):
        if kb.key == key:
            return kb
    known = [DEFAULT_DOMAIN, *sorted(settings.embeddings.domains)]
    raise KnowledgeBaseNotFound(f"no knowledge base {key!r}; known: {known}", field="key")


# --- versions -------------------------------------------------------------------------
def role_of(name: str, live: str | None, rollback: str | None, naming: VersionNaming) -> str:
    """Pure: ``live`` (the alias serves it), ``rollback`` (the alias's rollback target),
    ``candidate`` (newer in the series than what is live, not served) or ``older``."""
    if name == live:
        return "live"
    if name == rollback:
        return "rollback"
    if live is None or naming.split(name)[1] > naming.split(live)[1]:
        return "candidate"
    return "older"


def series_versions(store: IndexAdmin, kb: KnowledgeBase, naming: VersionNaming,
                    history: Sequence[AliasChange]) -> list[IndexVersion]:
    """The versions of the knowledge base's series and those its alias has served, newest first."""
    listed = store.list_versions()
    served = set(alias_versions(history))
    own = [v for v in listed if naming.same_series(v.name, kb.series) or v.name in served]
    return sorted(own, key=lambda v: (naming.split(v.name)[1], v.created_at), reverse=True)


def _evaluation(version: IndexVersion) -> dict[str, Any] | None:
    ev = version.evaluation
    if not ev:
        return None
    return {"metrics": dict(ev.get("metrics") or {}), "gates_passed": ev.get("gates_passed"),
            "created_at": ev.get("created_at"), "current": version.evaluation_current}


def versions_view(store: IndexAdmin, kb: KnowledgeBase, naming: VersionNaming) -> dict[str, Any]:
    """``GET /admin/knowledge-bases/<key>/versions``: each version with its role and last
    recorded evaluation, and the alias's history (newest first)."""
    history = store.alias_history(kb.alias)
    live = store.resolve_alias(kb.alias)
    rollback = history[0].previous if history else None
    rows = [{"name": v.name, "role": role_of(v.name, live, rollback, naming), "created_at": v.created_at,
             "documents": v.doc_count, "chunks": v.chunk_count, "parent": v.parent, "evaluation": _evaluation(v)}
            for v in series_versions(store, kb, naming, history)]
    return {"alias": kb.alias, "live": live, "rollback": rollback, "versions": rows,
            "history": [{"version": c.version, "previous": c.previous, "changed_at": c.changed_at,
                         "reason": c.reason, "forced": c.forced} for c in history]}


def kb_summary(store: IndexAdmin, kb: KnowledgeBase, naming: VersionNaming) -> dict[str, Any]:
    """One entry of ``GET /admin/knowledge-bases``."""
    view = versions_view(store, kb, naming)
    live_row = next((v for v in view["versions"] if v["role"] == "live"), None)
    return {"key": kb.key, "title": kb.title, "alias": kb.alias, "series": kb.series, "live": view["live"],
            "rollback": view["rollback"],
            "candidates": [v["name"] for v in view["versions"] if v["role"] == "candidate"],
            "documents": live_row["documents"] if live_row else 0, "managed": kb.managed,
            "golden": golden_info(kb.golden)}


# --- documents ------------------------------------------------------------------------
def changed_in(doc_id: str, live: str, oldest_first: Sequence[tuple[str, Mapping[str, str]]]) -> str:
    """Pure: the version the live copy of ``doc_id`` was last written in, as far as retention
    shows: going back from ``live`` through the retained versions of the series
    (``(name, doc_id -> doc_hash)``, oldest first, ``live`` among them), the earliest of the
    unbroken run that holds the live hash. A document unchanged since the oldest retained
    version answers that version (it may be older still)."""
    names = [name for name, _ in oldest_first]
    at = names.index(live)
    wanted = oldest_first[at][1].get(doc_id)
    found = live
    for name, hashes in reversed(oldest_first[:at]):
        if hashes.get(doc_id) != wanted:
            break
        found = name
    return found


def documents_view(stores: Stores | CombinedStore, kb: KnowledgeBase, naming: VersionNaming,
                   pii: Mapping[str, Mapping[str, int]] | None = None) -> dict[str, Any]:
    """``GET /admin/knowledge-bases/<key>/documents``: the live version's documents with their
    source, chunk count, ``changed_in`` and ``pii`` (the sanitizer's findings per type as last
    ingested: counts, never a value); no live version: an empty list. ``stores``: the
    bundle, or one object serving the admin and vector ports."""
    store, vectors = (stores.admin, stores.vectors) if isinstance(stores, Stores) else (stores, stores)
    live = store.resolve_alias(kb.alias)
    if live is None:
        return {"version": None, "documents": []}
    history = store.alias_history(kb.alias)
    live_n = naming.split(live)[1]
    older = [v.name for v in reversed(series_versions(store, kb, naming, history))
             if naming.same_series(v.name, live) and naming.split(v.name)[1] <= live_n]
    if live not in older:
        older.append(live)
    hashes = [(name, vectors.document_hashes(name)) for name in older]
    return {"version": live, "documents": [
        {"doc_id": d.doc_id, "source": d.source, "chunks": d.chunks, "changed_in": changed_in(d.doc_id, live, hashes),
         "pii": dict((pii or {}).get(d.doc_id) or {})}
        for d in vectors.document_list(live)]}


def counts_only(view: Mapping[str, Any], rows: str) -> dict[str, Any]:
    """Pure: ``view`` with its list ``rows`` emptied and counted in ``hidden``: what a reader
    without the admin role gets under access control (issue 49 M1). Its visibility cannot be
    told per document here (an ACL is a chunk's metadata), so it sees how many documents, golden
    questions and evaluated queries there are, never their names, sources or texts; the golden
    set's path goes too."""
    out = {**view, rows: [], "hidden": len(view.get(rows) or [])}
    if "how_to_replace" in out:
        out["path"] = "(shown to admins)" if view.get("path") else None
    if isinstance(out.get("golden"), dict):
        out["golden"] = {**out["golden"], "path": "(shown to admins)"}
    return out


# --- golden sets ----------------------------------------------------------------------
def shown_path(path: Path) -> str:
    """A path as the console shows it: relative to the repository when inside it."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def golden_info(path: Path | None) -> dict[str, Any] | None:
    """``{"path", "generated", "queries"}``; None without a golden set (or an unreadable one)."""
    if path is None or not path.is_file():
        return None
    try:
        golden = load_golden_set(path)
    except EvaluationError:
        return {"path": shown_path(path), "generated": False, "queries": 0}
    return {"path": shown_path(path), "generated": is_generated(golden), "queries": len(golden)}


def how_to_replace(kb: KnowledgeBase) -> str:
    """What the console says under a golden set: how real questions replace a generated one."""
    if kb.managed:
        use = f"run `rag kb set-golden {kb.key} FILE`"
    elif kb.key == DEFAULT_DOMAIN:
        use = "point evaluation.golden_set in config/rag.yaml at the file"
    else:
        use = f"point embeddings.domains.{kb.key}.golden_set in config/rag.yaml at the file"
    return (f"Write real questions as JSONL, one per line: {{\"id\", \"query\", \"expected_sources\": [doc_id, ...], "
            f"\"expected_mode\": \"rag\"|\"hybrid\"|\"fallback\"}} (docs/EVALUATION_AND_PROMOTION.md), and {use}; "
            f"the next gate uses it. Feedback from the chat page grows it: `rag feedback export --out FILE` turns the "
            f"answers readers rated into candidate golden queries to review and add.")


def golden_view(kb: KnowledgeBase) -> dict[str, Any]:
    """``GET /admin/knowledge-bases/<key>/golden``."""
    if kb.golden is None or not kb.golden.is_file():
        return {"path": None, "generated": False, "queries": [], "how_to_replace": how_to_replace(kb)}
    golden = load_golden_set(kb.golden)
    return {"path": shown_path(kb.golden), "generated": is_generated(golden),
            "queries": [{"id": q.id, "query": q.query, "expected_mode": q.expected_mode,
                         "expected_sources": sorted(q.expected_sources)} for q in golden.queries],
            "how_to_replace": how_to_replace(kb)}


# --- feedback -------------------------------------------------------------------------
def feedback_view(feedback: Sequence[Feedback], kb: KnowledgeBase, principal: str | None = None) -> dict[str, Any]:
    """Pure: ``GET /admin/knowledge-bases/<key>/feedback``: the verdicts on answers of this
    knowledge base, newest first; with ``principal`` only that principal's own (what a
    non-admin may read in ``read_only`` mode: others' questions are not its business)."""
    rows = [f for f in feedback if (f.domain or DEFAULT_DOMAIN) == kb.key
            and (principal is None or f.principal == principal)]
    return {"feedback": [{"interaction_id": f.interaction_id, "vote": f.rating, "comment": f.comment,
                          "created_at": f.created_at, "question": f.query, "mode": f.mode, "version": f.version,
                          "expected_answer": f.expected_answer} for f in rows]}


# --- evaluations ----------------------------------------------------------------------
def find_report(reports_dir: Path, version: str, golden_sha256: str | None = None, *,
                own: bool = False) -> dict[str, Any] | None:
    """The newest evaluation report JSON of ``version`` in ``reports_dir`` (with ``golden_sha256``:
    of that golden set only; with ``own``: not one written as another candidate's baseline), its
    path under ``"_path"``; None when there is none."""
    if not reports_dir.is_dir():
        return None
    best: tuple[str, str, dict[str, Any]] | None = None
    for path in [*reports_dir.glob(f"eval_*_{version}.json"), *reports_dir.glob(f"eval_*_{version}_*.json")]:
        report = _read_report(path)
        if report is None or report.get("version") != version:
            continue
        if golden_sha256 is not None and report.get("golden_sha256") != golden_sha256:
            continue
        if own and report.get("role") == "baseline":
            continue
        key = (str(report.get("created_at") or ""), path.name)
        if best is None or key > best[:2]:
            best = (*key, {**report, "_path": str(path)})
    return best[2] if best else None


def _read_report(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def baseline_report(reports_dir: Path, report: Mapping[str, Any], baseline_version: str | None
                    ) -> dict[str, Any] | None:
    """The report to compare ``report`` with: the baseline report the gate wrote beside it
    (``baseline_report``), else the newest report of ``baseline_version`` on the same golden set."""
    if baseline_version is None:
        return None
    named = report.get("baseline_report")
    if isinstance(named, str):
        found = _read_report(Path(named))
        if found is not None and found.get("version") == baseline_version:
            return found
    return find_report(reports_dir, baseline_version, report.get("golden_sha256"))


def _outcome(q: Mapping[str, Any]) -> dict[str, Any]:
    """A query's result as the console shows it: decided mode, hit (None: no expected source)
    and the 1-based rank of the first expected document in the ranking (None: not found)."""
    expected = set(q.get("expected_sources") or {})
    ranked = list(q.get("ranked_doc_ids") or [])
    rank = next((i + 1 for i, doc in enumerate(ranked) if doc in expected), None)
    hit = q.get("hit_at_k")
    return {"mode": q.get("decided_mode"), "mode_correct": bool(q.get("mode_correct")),
            "hit": None if hit is None else hit >= 1.0 - _EPS, "rank": rank,
            "reciprocal_rank": q.get("reciprocal_rank")}


def query_change(candidate: Mapping[str, Any], live: Mapping[str, Any] | None) -> str:
    """Pure: how one golden query fared on the candidate against the live version.

    ``new`` when the live version's evaluation has no such query. Otherwise each side scores
    the number of things it got right among *retrieval* (hit@k: an expected document in the
    top k; not counted for queries without expected sources) and *mode* (the decided answer
    mode equals the expected one). More right on the candidate is a ``win``, fewer a ``loss``;
    on a tie, a better reciprocal rank of the first expected document (it moved up the ranking)
    is a ``win``, a worse one a ``loss``; else ``same``."""
    if live is None:
        return "new"

    def right(q: Mapping[str, Any]) -> int:
        return int(bool(q.get("mode_correct"))) + int((q.get("hit_at_k") or 0.0) >= 1.0 - _EPS)

    a, b = right(candidate), right(live)
    if a != b:
        return "win" if a > b else "loss"
    ra, rb = candidate.get("reciprocal_rank") or 0.0, live.get("reciprocal_rank") or 0.0
    if abs(ra - rb) > _EPS:
        return "win" if ra > rb else "loss"
    return "same"


def evaluation_view(report: Mapping[str, Any], baseline: Mapping[str, Any] | None,
                    golden: dict[str, Any] | None) -> dict[str, Any]:
    """Pure: ``GET .../versions/<version>/evaluation`` from the version's report and the
    baseline's (the live version's): figures, gates and every query with its change."""
    by_id = {str(q.get("id")): q for q in (baseline or {}).get("queries") or []}
    rows = []
    for q in report.get("queries") or []:
        old = by_id.get(str(q.get("id")))
        rows.append({"id": q.get("id"), "query": q.get("query"), "expected_mode": q.get("expected_mode"),
                     "candidate": _outcome(q), "live": _outcome(old) if old is not None else None,
                     "change": query_change(q, old)})
    gates = [{"name": g.get("name"), "metric": g.get("metric"), "passed": bool(g.get("passed")),
              "value": g.get("value"), "threshold": g.get("threshold"), "kind": g.get("kind"),
              "baseline": g.get("baseline")} for g in report.get("gates") or []]
    summary = {"wins": sum(1 for r in rows if r["change"] == "win"),
               "losses": sum(1 for r in rows if r["change"] == "loss"),
               "same": sum(1 for r in rows if r["change"] == "same"),
               "new": sum(1 for r in rows if r["change"] == "new")}
    return {"version": report.get("version"), "baseline_version": baseline.get("version") if baseline else None,
            "created_at": report.get("created_at"), "golden": golden, "metrics": dict(report.get("metrics") or {}),
            "baseline_metrics": dict(baseline.get("metrics") or {}) if baseline else None, "gates": gates,
            "gates_passed": all(g["passed"] for g in gates) if gates else None, "queries": rows, "summary": summary}


def version_evaluation(store: IndexAdmin, settings: Settings, kb: KnowledgeBase, version: str) -> dict[str, Any]:
    """The newest evaluation of ``version`` against the live version's (the version is live:
    against the one it replaced). ``EvaluationNotFound`` (404) when none was written yet."""
    store.get_version(version)  # VersionNotFound (404) for an unknown name
    reports_dir = settings.resolve_path(settings.evaluation.reports_dir)
    report = find_report(reports_dir, version, own=True) or find_report(reports_dir, version)
    if report is None:
        raise EvaluationNotFound(f"{version} has not been evaluated yet; evaluate it first", field="version")
    live = store.resolve_alias(kb.alias)
    baseline_version = live if live and live != version else (report.get("comparison") or {}).get("baseline_version")
    baseline = baseline_report(reports_dir, report, baseline_version)
    golden = golden_info(Path(report["golden_set"])) if report.get("golden_set") else golden_info(kb.golden)
    return evaluation_view(report, baseline, golden)
