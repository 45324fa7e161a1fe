"""Retrieval without an answer: embed the query, search the target, return hits.

Three strategies (``retrieval.strategy`` or per request): ``dense`` (vector
similarity), ``lexical`` (the store's BM25-style full-text search) and
``fusion`` (reciprocal rank fusion of both). Whatever the strategy, every hit's
``score`` is the dense similarity of the chunk to the query under the version's
distance, so the answer-mode thresholds always compare a similarity they were
tuned for; ``lexical_score`` and ``fused_score`` carry the other scores and the
strategy's own score decides the order. Hits found only lexically get their
similarity from a dense search restricted to their chunk ids. Fusion is (weighted)
RRF or a normalised score combination (``fusion.method``; the profile's own
``fusion`` overrides ``retrieval.fusion``). With ``retrieval.rerank`` a reranker
re-orders the first ``top_n`` candidates of any strategy; ``rerank_score`` and the
rank each hit had before are kept for the explanation, ``score`` stays dense.

Every call after the first names the version the first one resolved, so an alias
rotation between the dense and the lexical half can never mix two versions.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Sequence

import structlog

from backend.common.config import ProfileSettings, RetrievalSettings, SearchPreset
from backend.common.errors import RequestError
from backend.core.embedding_text import query_input
from backend.core.metadata_schema import Schema, parse_filter
from backend.core.ports import Embedder, Reranker, VectorStore
from backend.core.services.fusion import (
    apply_freshness,
    apply_rerank,
    collapse_duplicates,
    reciprocal_rank_fusion,
    score_fusion,
)
from backend.core.types import FieldFilter, QueryVector, ScoredChunk, Visibility

log = structlog.get_logger(__name__)

STRATEGIES = ("dense", "lexical", "fusion")
#: widening limit when cross-document duplicates crowd the candidate pool
_MAX_POOL = 1000
#: What decides the order of the hits under each strategy (``details["order_by"]``).
ORDER_BY = {"dense": "dense_similarity", "lexical": "lexical_score", "fusion": "fused_score"}


@dataclass(frozen=True)
class SearchRequest:
    query: str
    target: str
    top_k: int
    filters: tuple[FieldFilter, ...] = ()
    strategy: str | None = None
    #: access control, applied by the store inside every query of the search (dense, lexical
    #: and the similarity lookups); None only when ``access.enabled`` is false
    visibility: Visibility | None = None


@dataclass(frozen=True)
class SearchOutcome:
    target: str
    version: str
    strategy: str
    hits: tuple[ScoredChunk, ...]
    #: what ``hit.score`` means, for decision_explain
    score_source: str = "dense_similarity"
    details: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class _Ranked:
    version: str
    hits: tuple[ScoredChunk, ...]
    details: dict[str, Any]


def check_filter_limits(filters: Sequence[FieldFilter], settings: RetrievalSettings) -> None:
    """``RequestError`` (400) for more filters than ``retrieval.max_filters`` or a value list
    longer than ``retrieval.max_filter_values``: each value is one SQL condition, and the
    store's expression depth is finite (SQLite: 1000)."""
    if len(filters) > settings.max_filters:
        raise RequestError(f"filters: {len(filters)} fields; retrieval.max_filters is {settings.max_filters}",
                           field="filters", limit=settings.max_filters)
    for f in filters:
        longest = max(len(f.any_of), len(f.all_of))
        if longest > settings.max_filter_values:
            raise RequestError(f"filters.{f.field}: {longest} values; retrieval.max_filter_values is "
                               f"{settings.max_filter_values}", field=f"filters.{f.field}",
                               limit=settings.max_filter_values)


class SearchService:
    """Search one embedding profile's versions; stateless, so safe to share across threads."""

    def __init__(
        self, store: VectorStore, embedder: Embedder, profile: ProfileSettings, settings: RetrievalSettings,
        reranker: Reranker | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._profile = profile
        self._settings = settings
        self._reranker = reranker
        self._fusion_settings = profile.fusion or settings.fusion

    @property
    def reranker(self) -> Reranker | None:
        return self._reranker

    def embed_query(self, text: str) -> QueryVector:
        vec = self._embedder.embed_queries([query_input(text, self._profile)])[0]
        return QueryVector(vec, self._embedder.model_id, getattr(self._embedder, "compatible_models", frozenset()))

    def search(self, request: SearchRequest) -> SearchOutcome:
        """Top ``request.top_k`` hits under the request's strategy (default
        ``retrieval.strategy``). Raises ``RequestError`` for an unknown strategy or a
        ``top_k`` below 1; store errors (unknown alias, model mismatch) propagate."""
        strategy = request.strategy or self._settings.strategy
        if strategy not in STRATEGIES:
            raise RequestError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}",
                               field="strategy", allowed=list(STRATEGIES))
        if request.top_k < 1:
            raise RequestError(f"top_k must be at least 1, got {request.top_k}", field="top_k")
        check_filter_limits(request.filters, self._settings)
        fresh = self._settings.freshness
        # a tie can straddle the cut-off, so freshness looks one top_k further down
        want = request.top_k * 2 if fresh.enabled else request.top_k
        rerank_n = self._settings.rerank.top_n if self._reranker is not None else 0
        want = max(want, rerank_n)
        query = self.embed_query(request.query)
        run = {"dense": self._dense, "lexical": self._lexical, "fusion": self._fusion}[strategy]
        pool = want
        while True:
            ranked = run(request, query, pool)
            hits, duplicates = collapse_duplicates(ranked.hits)
            # duplicates across documents may have crowded out distinct hits: widen
            # until enough distinct ones are found or the target has no more
            if len(hits) >= want or len(ranked.hits) < pool or pool >= _MAX_POOL:
                break
            pool = min(pool * 2 + duplicates, _MAX_POOL)
        details = {"order_by": ORDER_BY[strategy], "score": "dense_similarity", **ranked.details}
        if duplicates:
            details["duplicates_collapsed"] = duplicates
        if fresh.enabled:
            before = [h.chunk.chunk_id for h in hits]
            hits = apply_freshness(hits, fresh.epsilon, fresh.field)
            moved = sum(a != b.chunk.chunk_id for a, b in zip(before, hits))
            details["freshness"] = {"epsilon": fresh.epsilon, "field": fresh.field, "reordered": moved}
        if self._reranker is not None and hits:
            hits = self._rerank(request.query, hits, details)
        hits = hits[: request.top_k]
        log.debug("search.done", strategy=strategy, target=request.target, version=ranked.version, hits=len(hits))
        return SearchOutcome(request.target, ranked.version, strategy, tuple(hits), "dense_similarity", details)

    def _rerank(self, query: str, hits: Sequence[ScoredChunk], details: dict[str, Any]) -> tuple[ScoredChunk, ...]:
        assert self._reranker is not None
        cfg = self._settings.rerank
        head = hits[: cfg.top_n]
        scores = self._reranker.rerank(query, [h.chunk.text[: cfg.max_chars] for h in head])
        reranked, moves = apply_rerank(hits, scores)
        details["order_by"] = f"rerank_score (top {len(head)}), then {details['order_by']}"
        details["rerank"] = {
            "provider": cfg.provider, "model": getattr(self._reranker, "name", cfg.provider), "top_n": cfg.top_n,
            "reranked": len(head), "moved": sum(m.before != m.after for m in moves),
            "order": [{"chunk_id": m.chunk_id, "rerank_score": round(m.score, 6), "rank_before": m.before,
                       "rank_after": m.after} for m in moves],
        }
        return reranked

    # --- strategies ---------------------------------------------------------------
    def _dense(self, request: SearchRequest, query: QueryVector, pool: int) -> _Ranked:
        result = self._store.search(request.target, query, pool, request.filters, visibility=request.visibility)
        return _Ranked(result.version, result.hits, {"candidates": {"dense": len(result.hits)}})

    def _lexical(self, request: SearchRequest, query: QueryVector, pool: int) -> _Ranked:
        lexical = self._store.lexical_search(request.target, request.query, pool, request.filters,
                                             visibility=request.visibility)
        ids = [h.chunk.chunk_id for h in lexical.hits]
        dense = self._similarities(lexical.version, query, ids, request.visibility)
        hits = tuple(
            dataclasses.replace(dense[h.chunk.chunk_id], rank=rank, lexical_score=_lexical_score(h), fused_score=None)
            for rank, h in enumerate((h for h in lexical.hits if h.chunk.chunk_id in dense), start=1)
        )
        details = {"candidates": {"lexical": len(lexical.hits)}, "dense_lookups": len(ids)}
        return _Ranked(lexical.version, hits, details)

    def _fusion(self, request: SearchRequest, query: QueryVector, pool: int) -> _Ranked:
        cfg = self._fusion_settings
        dense = self._store.search(request.target, query, max(cfg.dense_depth, pool), request.filters,
                                   visibility=request.visibility)
        lexical = self._store.lexical_search(dense.version, request.query, max(cfg.lexical_depth, pool),
                                             request.filters, visibility=request.visibility)
        weights = {"dense": cfg.dense_weight, "lexical": cfg.lexical_weight}
        if cfg.method == "score":
            fused = score_fusion(
                {"dense": [(h.chunk.chunk_id, h.score) for h in dense.hits],
                 "lexical": [(h.chunk.chunk_id, _lexical_score(h)) for h in lexical.hits]},
                weights, cfg.normalization,
            )[:pool]
        else:
            fused = reciprocal_rank_fusion(
                {"dense": [h.chunk.chunk_id for h in dense.hits], "lexical": [h.chunk.chunk_id for h in lexical.hits]},
                weights, cfg.k,
            )[:pool]
        by_dense = {h.chunk.chunk_id: h for h in dense.hits}
        by_lexical = {h.chunk.chunk_id: h for h in lexical.hits}
        missing = [f.chunk_id for f in fused if f.chunk_id not in by_dense]
        by_dense.update(self._similarities(dense.version, query, missing, request.visibility))
        hits: list[ScoredChunk] = []
        for f in fused:
            if f.chunk_id not in by_dense:
                continue
            lex = by_lexical.get(f.chunk_id)
            hits.append(dataclasses.replace(
                by_dense[f.chunk_id], rank=len(hits) + 1, fused_score=f.score,
                lexical_score=_lexical_score(lex) if lex is not None else None,
            ))
        details = {
            "candidates": {"dense": len(dense.hits), "lexical": len(lexical.hits)},
            "dense_lookups": len(missing),
            "fusion": {"method": cfg.method, "k": cfg.k, "normalization": cfg.normalization,
                       "dense_depth": cfg.dense_depth, "lexical_depth": cfg.lexical_depth,
                       "dense_weight": cfg.dense_weight, "lexical_weight": cfg.lexical_weight},
        }
        return _Ranked(dense.version, tuple(hits), details)

    def _similarities(self, version: str, query: QueryVector, chunk_ids: Sequence[str],
                      visibility: Visibility | None = None) -> dict[str, ScoredChunk]:
        """Dense hits for exactly these chunks of ``version`` (an exact search restricted by id)."""
        if not chunk_ids:
            return {}
        result = self._store.search(version, query, len(chunk_ids), (FieldFilter("chunk_id", any_of=tuple(chunk_ids)),),
                                    visibility=visibility)
        found = {h.chunk.chunk_id: h for h in result.hits}
        if len(found) < len(set(chunk_ids)):
            log.warning("search.similarity_missing", version=version, asked=len(set(chunk_ids)), found=len(found))
        return found


def _lexical_score(hit: ScoredChunk) -> float:
    return hit.lexical_score if hit.lexical_score is not None else hit.score


# --- presets (seed 000's search_by_* tools as config) ---------------------------------
def find_preset(presets: Sequence[SearchPreset], name: str) -> SearchPreset:
    for preset in presets:
        if preset.name == name:
            return preset
    known = [p.name for p in presets]
    raise RequestError(f"preset: unknown preset {name!r}; known presets: {', '.join(known) or '(none configured)'}",
                       field="preset", allowed=known)


def preset_uses(preset: SearchPreset, placeholder: str) -> bool:
    return "{" + placeholder + "}" in preset.query_template


def apply_preset(
    preset: SearchPreset, query: str | None, value: str | None, schema: Schema
) -> tuple[str, tuple[FieldFilter, ...]]:
    """The query text and filter a preset call stands for: ``filter_field any [value]``
    (checked against the schema like any request filter) and the template filled in.
    Raises ``RequestError`` when a parameter the preset needs is missing."""
    needs_value = preset.filter_field is not None or preset_uses(preset, "value")
    if needs_value and not (value or "").strip():
        raise RequestError(f"preset {preset.name}: parameter 'value' is required", field="value")
    if preset_uses(preset, "query") and not (query or "").strip():
        raise RequestError(f"preset {preset.name}: parameter 'q' is required (template {preset.query_template!r})",
                           field="q")
    text = preset.query_template.format(query=(query or "").strip(), value=(value or "").strip()).strip()
    if not text:
        raise RequestError(f"preset {preset.name}: the query template produced an empty query", field="q")
    filters = (parse_filter(preset.filter_field, [value], schema),) if preset.filter_field else ()
    return text, filters


def preset_parameters(preset: SearchPreset, schema: Schema) -> dict[str, Any]:
    """JSON-Schema-like parameters of a preset, so an agent can call it as a tool."""
    params: dict[str, Any] = {}
    if preset_uses(preset, "query"):
        params["q"] = {"type": "string", "required": True, "description": "The search query."}
    if preset.filter_field is not None or preset_uses(preset, "value"):
        value: dict[str, Any] = {"type": "string", "required": True}
        if preset.filter_field is not None:
            declared = schema.get(preset.filter_field)
            value["description"] = f"Value of {preset.filter_field} to filter on."
            if declared is not None and declared.type == "enum":
                value["enum"] = list(declared.values)
        params["value"] = value
    return params


def describe_presets(presets: Sequence[SearchPreset], schema: Schema) -> list[dict[str, Any]]:
    return [
        {"name": p.name, "description": p.description, "filter_field": p.filter_field,
         "query_template": p.query_template, "parameters": preset_parameters(p, schema)}
        for p in presets
    ]
