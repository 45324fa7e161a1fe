"""Golden-query evaluation of one index version.

For every golden query the evaluator searches the version (deep enough to rank
``evaluation.search_depth`` chunks, deduplicated to documents) and decides the
answer mode. With a ``ChatService`` it asks the real chat path with
``target=<version>`` (so the mode, the blank-answer downgrade and the answer text
are exactly what ``/chat`` would produce once the alias points there) and checks
``must_contain``; without one it calls the same pure ``decide_answer_mode`` on the
first ``retrieval.top_k`` hits, and ``must_contain`` is not measured.

Retrieval metrics only count queries with expected sources; fallback queries with
none count for mode accuracy alone (they say nothing about ranking).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import structlog

from backend.common import telemetry
from backend.common.config import (AccessSettings, EmbeddingSettings, EvaluationSettings, ProfileSettings,
                                   RerankSettings, RetrievalSettings, SanitizeSettings, Settings)
from backend.common.errors import ConfigError, EvaluationError
from backend.core.access import configured_principal
from backend.core.embedding_text import query_input
from backend.core.ports import Embedder, IndexAdmin, Reranker, VectorStore, accepted_models
from backend.core import answer_report as ctx
from backend.core import ranking_metrics as rm
from backend.core.services.answerability import attach_scores, store_probe
from backend.core.services.evidence import SentenceScorer
from backend.core.golden import GoldenQuery, GoldenSet
from backend.core.answer_mode import decide_answer_mode, is_short_query
from backend.core.retrieval_stamp import stamped_settings
from backend.core.services.search_service import SearchRequest, SearchService
from backend.core.types import QueryVector, ScoredChunk, Visibility

if TYPE_CHECKING:
    from backend.core.services.chat_service import ChatService

log = structlog.get_logger(__name__)

NDCG_K = 10
#: metrics reported, in table order; "higher is better" for all but latency
METRICS = ("hit_at_k", "recall_at_k", "mrr", "ndcg_at_10", "mode_accuracy", "must_contain_pass_rate",
           "abstention_accuracy", "coverage", "accuracy_among_answered", "unanswerable_as_rag",
           "latency_p50_ms", "latency_p95_ms")


@dataclass(frozen=True)
class QueryResult:
    id: str
    query: str
    expected_mode: str
    decided_mode: str
    mode_correct: bool
    expected_sources: dict[str, float]
    ranked_doc_ids: list[str]
    max_similarity: float | None
    latency_ms: float
    hit_at_k: float | None = None
    recall_at_k: float | None = None
    reciprocal_rank: float | None = None
    ndcg_at_10: float | None = None
    must_contain_passed: bool | None = None
    missing_phrases: list[str] = field(default_factory=list)
    domain: str | None = None
    #: the principal the query ran as (None: unrestricted)
    principal: str | None = None


@dataclass(frozen=True)
class EvaluationReport:
    """What one evaluation measured. ``metrics`` values are None when nothing was
    measurable (e.g. no query with ``must_contain``)."""

    version: str
    target: str
    golden_set: str
    golden_sha256: str
    k: int
    created_at: str
    answer_source: str
    metrics: dict[str, float | None]
    counts: dict[str, int]
    mode_confusion: dict[str, dict[str, int]]
    queries: tuple[QueryResult, ...]
    comparison: dict[str, Any] | None = None
    #: the metrics per principal the golden queries ran as (``(unrestricted)`` for the others);
    #: None when no query names a principal
    by_principal: dict[str, dict[str, Any]] | None = None

    def summary(self) -> dict[str, Any]:
        """What is recorded on the version: figures, not per-query detail."""
        return {"version": self.version, "golden_set": self.golden_set, "golden_sha256": self.golden_sha256,
                "k": self.k, "created_at": self.created_at, "answer_source": self.answer_source,
                "metrics": self.metrics, "counts": self.counts}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _rounded(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


class Evaluator:
    """Evaluates versions against golden sets; holds no state between runs."""

    def __init__(self, store: VectorStore, admin: IndexAdmin, embedder: Embedder, *, embeddings: EmbeddingSettings,
                 retrieval: RetrievalSettings, evaluation: EvaluationSettings, chat: ChatService | None = None,
                 sanitize: SanitizeSettings | None = None, access: AccessSettings | None = None,
                 reranker: Reranker | None = None,
                 rerankers: Callable[[RerankSettings], Reranker | None] | None = None,
                 scorer: SentenceScorer | None = None) -> None:
        self._store = store
        #: the configured reranker, so the gate evaluates the order users will get; ``rerankers``
        #: builds the one a version's stamp names when it differs (``registry.reranker_factory``)
        self._reranker = reranker
        self._rerankers = rerankers
        self._admin = admin
        self._embedder = embedder
        self._embeddings = embeddings
        self._retrieval = retrieval
        self._evaluation = evaluation
        self._chat = chat
        #: redact mode: golden queries (and missing phrases) are redacted in the report like chat questions
        self._sanitize = sanitize or (chat.sanitize_settings if chat is not None else None)
        #: judges sentences when chat is None (the runtime's, with its answer reader); made on first use otherwise
        self._scorer: SentenceScorer | None = scorer
        self._access = access or AccessSettings()

    @classmethod
    def from_settings(cls, settings: Settings, vectors: VectorStore, admin: IndexAdmin, embedder: Embedder, *,
                      chat: ChatService | None = None, reranker: Reranker | None = None,
                      rerankers: Callable[[RerankSettings], Reranker | None] | None = None,
                      scorer: SentenceScorer | None = None) -> Evaluator:
        """The evaluator the configured gate uses: ``settings``' embeddings, retrieval, evaluation,
        sanitize and access slices; ``chat`` answers every golden query (modes exactly as ``/chat``)."""
        return cls(vectors, admin, embedder, embeddings=settings.embeddings, retrieval=settings.retrieval,
                   evaluation=settings.evaluation, chat=chat, sanitize=settings.sanitize, access=settings.access,
                   reranker=reranker, rerankers=rerankers, scorer=scorer)

    def _visibility(self, q: GoldenQuery) -> Visibility | None:
        """What a golden query may see: its principal's visibility, or None (unrestricted)."""
        if q.principal is None:
            return None
        try:
            return configured_principal(self._access, q.principal).visibility
        except ConfigError as exc:
            raise EvaluationError(f"golden query {q.id}: {exc.user_message}", field="principal") from exc

    def _profile(self, version: str) -> ProfileSettings:
        """The version's embedding profile (query prefix); the default one if unknown."""
        profile_name = self._admin.get_version(version).profile
        if profile_name not in self._embeddings.profiles:
            profile_name = self._embeddings.default_profile
        return self._embeddings.profiles[profile_name]

    @telemetry.traced("rag.evaluate", attributes=lambda self, version, golden, **_: {
        "rag.version": version, "rag.golden.queries": len(golden.queries)},
        result=lambda report: {"rag.eval.hit_at_k": report.metrics.get("hit_at_k")})
    def evaluate(self, version: str, golden: GoldenSet, *, target: str | None = None,
                 on_query: Callable[[], Any] | None = None) -> EvaluationReport:
        """Evaluate ``version`` (a version name, not an alias: results are recorded per version).
        ``on_query`` is called after each query is answered (the CLI's progress bar)."""
        profile = self._profile(version)
        # the version's own stamped retrieval settings, as serving will use them
        search = SearchService(self._store, self._embedder, profile, self._retrieval, self._reranker,
                               follow_stamp=True, rerankers=self._rerankers)
        depth = max(self._evaluation.search_depth, self._evaluation.k, NDCG_K, self._retrieval.top_k)
        visibilities = [self._visibility(q) for q in golden.queries]
        hits = self._ranked_hits(search, profile, version, [" ".join(q.query.split()) for q in golden.queries], depth,
                                 visibilities)
        results = []
        for q, (h, ms), vis in zip(golden.queries, hits, visibilities):
            results.append(self._run_query(version, q, h, ms, vis))
            if on_query is not None:
                on_query()
        report = aggregate(results, version=version, target=target or version, golden=golden, k=self._evaluation.k,
                           answer_source="chat" if self._chat is not None else "decision")
        log.info("eval.finished", version=version, queries=len(results),
                 **{m: report.metrics[m] for m in ("recall_at_k", "ndcg_at_10", "mode_accuracy")})
        return self._redacted(report)

    def _redacted(self, report: EvaluationReport) -> EvaluationReport:
        """The report with PII redacted from query texts and missing phrases (sanitize on, redact mode)."""
        s = self._sanitize
        if s is None or not s.enabled or s.mode != "redact" or not report.queries:
            return report
        from backend.common.sanitizer import sanitize_if_enabled

        texts = [q.query for q in report.queries] + [p for q in report.queries for p in q.missing_phrases]
        clean = iter(sanitize_if_enabled(texts, s, doc_ids=["eval-report"] * len(texts), ner_scope="full").texts)
        queries = [replace(q, query=next(clean)) for q in report.queries]
        queries = [replace(q, missing_phrases=[next(clean) for _ in q.missing_phrases]) for q in queries]
        return replace(report, queries=tuple(queries))

    def _ranked_hits(self, search: SearchService, profile: ProfileSettings, version: str, questions: list[str],
                     depth: int, visibilities: Sequence[Visibility | None] = ()
                     ) -> list[tuple[tuple[ScoredChunk, ...], float]]:
        """Hits and search latency per question. Dense search embeds all questions in
        one batch (the same vectors ``SearchService`` would make one at a time, at a
        fraction of the cost); other strategies go through ``SearchService.search``."""
        vis = list(visibilities) or [None] * len(questions)
        served = stamped_settings(self._retrieval, profile, self._admin.get_version(version).retrieval)
        if served.strategy != "dense" or served.rerank.provider != "none" or self._reranker is not None:
            out = []
            for question, visibility in zip(questions, vis):
                started = time.perf_counter()
                outcome = search.search(SearchRequest(question, version, depth, visibility=visibility))
                out.append((outcome.hits, (time.perf_counter() - started) * 1000))
            return out
        started = time.perf_counter()
        vectors = self._embedder.embed_queries([query_input(q, profile) for q in questions])
        per_query_embed = (time.perf_counter() - started) * 1000 / max(len(questions), 1)
        out = []
        for vector, visibility in zip(vectors, vis):
            started = time.perf_counter()
            query = QueryVector(vector, self._embedder.model_id, accepted_models(self._embedder))
            result = self._store.search(version, query, depth, visibility=visibility)
            out.append((result.hits, per_query_embed + (time.perf_counter() - started) * 1000))
        return out

    def _run_query(self, version: str, q: GoldenQuery, hits: tuple[ScoredChunk, ...], latency: float,
                   visibility: Visibility | None = None) -> QueryResult:
        question = " ".join(q.query.split())
        ranked = rm.ranked_doc_ids(h.chunk.doc_id for h in hits)
        candidates = ctx.to_candidates(hits[: self._retrieval.top_k], self._retrieval.score_mode)
        answer: str | None = None
        if self._chat is not None:
            from backend.core.services.chat_service import ChatQuery

            reply = self._chat.answer(ChatQuery(question=q.query, domain=q.domain, target=version, record=False,
                                                visibility=visibility))
            mode, answer, latency = reply.mode, reply.answer, reply.latency_ms
        else:
            if self._retrieval.decision_score != "similarity":
                if self._scorer is None:
                    if self._retrieval.judges_sentences and self._retrieval.answerability.reader.enabled:
                        raise ConfigError("the evaluator judges sentences with the answer reader "
                                          "(retrieval.answerability.reader): pass scorer= or chat= "
                                          "(build_runtime and Runtime.evaluator do)",
                                          field="retrieval.answerability.reader")
                    self._scorer = SentenceScorer(self._embedder)
                candidates = attach_scores(candidates, question, self._scorer, self._retrieval,
                                           store_probe(self._store, version, visibility)).candidates
            mode = decide_answer_mode(candidates, self._retrieval, is_short_query(question, self._retrieval.short_query)).mode
        top = max((c.similarity for c in candidates), default=None)
        result = QueryResult(
            id=str(q.id), query=q.query, expected_mode=q.expected_mode, decided_mode=mode,
            mode_correct=mode == q.expected_mode, expected_sources=dict(q.expected_sources),
            ranked_doc_ids=ranked[:NDCG_K], max_similarity=_rounded(top), latency_ms=round(latency, 3), domain=q.domain,
            principal=q.principal,
        )
        updates: dict[str, Any] = {}
        if q.counts_for_retrieval:
            rel, k = q.expected_sources, self._evaluation.k
            updates.update(hit_at_k=rm.hit_at_k(ranked, rel, k), recall_at_k=rm.recall_at_k(ranked, rel, k),
                           reciprocal_rank=rm.reciprocal_rank(ranked, rel), ndcg_at_10=rm.ndcg_at_k(ranked, rel, NDCG_K))
        if q.must_contain and answer is not None:
            passed, missing = rm.contains_all(answer, q.must_contain)
            updates.update(must_contain_passed=passed, missing_phrases=missing)
        return QueryResult(**{**asdict(result), **updates})


def aggregate(results: Sequence[QueryResult], *, version: str, target: str, golden: GoldenSet, k: int,
              answer_source: str) -> EvaluationReport:
    """Per-query results -> report (pure)."""
    retrieval = [r for r in results if r.recall_at_k is not None]
    checked = [r for r in results if r.must_contain_passed is not None]
    latencies = [r.latency_ms for r in results]

    def avg(name: str) -> float | None:
        return _rounded(rm.mean([getattr(r, name) for r in retrieval]))

    metrics: dict[str, float | None] = {
        "hit_at_k": avg("hit_at_k"),
        "recall_at_k": avg("recall_at_k"),
        "mrr": avg("reciprocal_rank"),
        "ndcg_at_10": avg("ndcg_at_10"),
        "mode_accuracy": _rounded(rm.mean([1.0 if r.mode_correct else 0.0 for r in results])),
        "must_contain_pass_rate": _rounded(rm.mean([1.0 if r.must_contain_passed else 0.0 for r in checked])),
        **abstention_metrics(results),
        "latency_p50_ms": _rounded(rm.percentile(latencies, 50), 2),
        "latency_p95_ms": _rounded(rm.percentile(latencies, 95), 2),
    }
    confusion: dict[str, dict[str, int]] = {}
    for r in results:
        row = confusion.setdefault(r.expected_mode, {})
        row[r.decided_mode] = row.get(r.decided_mode, 0) + 1
    counts = {"queries": len(results), "retrieval_queries": len(retrieval), "must_contain_queries": len(checked)}
    by_principal = None
    if any(r.principal is not None for r in results):
        groups: dict[str, list[QueryResult]] = {}
        for r in results:
            groups.setdefault(r.principal or UNRESTRICTED, []).append(r)
        by_principal = {name: _principal_metrics(rs) for name, rs in sorted(groups.items())}
    return EvaluationReport(
        version=version, target=target, golden_set=str(golden.path), golden_sha256=golden.sha256, k=k,
        created_at=_now(), answer_source=answer_source, metrics=metrics, counts=counts, mode_confusion=confusion,
        queries=tuple(results), by_principal=by_principal,
    )


def abstention_metrics(results: Sequence[QueryResult]) -> dict[str, float | None]:
    """Whether the version answers (``rag``) exactly what it should (pure).

    * ``abstention_accuracy``: share of queries where answering or not (``rag`` vs ``hybrid``/
      ``fallback``) matches the expectation;
    * ``coverage``: share of queries answered ``rag``;
    * ``accuracy_among_answered``: of the queries answered ``rag``, the share that expect it and,
      when they name ``must_contain``, whose answer holds it;
    * ``unanswerable_as_rag``: share of the unanswerable queries (expecting ``hybrid`` or
      ``fallback``) answered ``rag``; None when the set has none (the abstention gate's metric).
    """
    answered = [r for r in results if r.decided_mode == "rag"]
    unanswerable = [r for r in results if r.expected_mode != "rag"]

    def right(r: QueryResult) -> bool:
        return r.expected_mode == "rag" and r.must_contain_passed is not False

    return {
        "abstention_accuracy": _rounded(rm.mean([1.0 if (r.decided_mode == "rag") == (r.expected_mode == "rag") else 0.0
                                                 for r in results])),
        "coverage": _rounded(rm.mean([1.0 if r.decided_mode == "rag" else 0.0 for r in results])),
        "accuracy_among_answered": _rounded(rm.mean([1.0 if right(r) else 0.0 for r in answered])),
        "unanswerable_as_rag": _rounded(rm.mean([1.0 if r.decided_mode == "rag" else 0.0 for r in unanswerable])),
    }


#: the ``by_principal`` key of golden queries that name no principal
UNRESTRICTED = "(unrestricted)"


def _principal_metrics(results: Sequence[QueryResult]) -> dict[str, Any]:
    """One principal's share of the report: queries, and the retrieval and mode metrics."""
    retrieval = [r for r in results if r.recall_at_k is not None]

    def avg(name: str) -> float | None:
        return _rounded(rm.mean([getattr(r, name) for r in retrieval]))

    return {"queries": len(results), "hit_at_k": avg("hit_at_k"), "recall_at_k": avg("recall_at_k"),
            "mrr": avg("reciprocal_rank"), "ndcg_at_10": avg("ndcg_at_10"),
            "mode_accuracy": _rounded(rm.mean([1.0 if r.mode_correct else 0.0 for r in results]))}


def compare(candidate: Mapping[str, float | None], baseline: Mapping[str, float | None]) -> dict[str, Any]:
    """Per-metric ``{candidate, baseline, delta}`` (delta = candidate - baseline)."""
    out: dict[str, Any] = {}
    for name in METRICS:
        a, b = candidate.get(name), baseline.get(name)
        out[name] = {"candidate": a, "baseline": b,
                     "delta": None if a is None or b is None else round(a - b, 4)}
    return out


def with_comparison(report: EvaluationReport, baseline: EvaluationReport, alias: str) -> EvaluationReport:
    comparison = {"alias": alias, "baseline_version": baseline.version, "metrics": compare(report.metrics, baseline.metrics)}
    return EvaluationReport(**{**{f: getattr(report, f) for f in report.__dataclass_fields__}, "comparison": comparison})


def write_report(report: EvaluationReport, reports_dir: Path, *, extra: Mapping[str, Any] | None = None) -> Path:
    """Write the JSON report; the file name sorts by time and names the version."""
    reports_dir.mkdir(parents=True, exist_ok=True)
    stamp = report.created_at.replace(":", "").replace("-", "").replace("+0000", "Z")
    path = reports_dir / f"eval_{stamp}_{report.version}.json"
    n = 1
    while path.exists():
        n += 1
        path = reports_dir / f"eval_{stamp}_{report.version}_{n}.json"
    payload = {**report.to_dict(), **(dict(extra) if extra else {})}
    path.write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
    return path
