"""One search as ``GET /search`` answers it, for the route and ``rag search`` alike.

The route parses and checks the HTTP parameters, the CLI its options; both hand the
checked query here, with the services to search, and render the ``SearchResponse``
(JSON for HTTP and ``--json``, a table in the terminal). Routing is ``/chat``'s: the
domain picks the alias and the embedding profile.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Protocol

from pydantic import BaseModel, Field

from backend.common.config import RetrievalSettings, Settings
from backend.common.errors import RequestError
from backend.core.access import strip_acl
from backend.core.metadata_schema import Schema, parse_filters
from backend.core.services.chat_service import ChatService
from backend.core.citing import shown_source
from backend.core.hierarchy import as_dict, page_of
from backend.core.services.search_service import (
    SearchOutcome,
    SearchRequest,
    SearchService,
    apply_preset,
    find_preset,
)
from backend.core.types import FieldFilter, ScoredChunk, Visibility


class SearchQuery(Protocol):
    """A checked search: what ``GET /search``'s ``SearchParams`` and ``rag search`` carry."""

    @property
    def q(self) -> str | None: ...
    @property
    def top_k(self) -> int | None: ...
    @property
    def strategy(self) -> str | None: ...
    @property
    def filters(self) -> str | None: ...
    @property
    def preset(self) -> str | None: ...
    @property
    def value(self) -> str | None: ...


class Searching(Protocol):
    """What a search needs from the runtime (``Runtime`` and the server's ``ServingRuntime``)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def chat(self) -> ChatService: ...
    @property
    def searches(self) -> Mapping[str, SearchService]: ...


class SearchHit(BaseModel):
    rank: int
    chunk_id: str
    doc_id: str
    source: str
    chunk_type: str
    chunk_index: int
    text: str
    dense_similarity: float = Field(..., description="Similarity under the version's distance: what thresholds compare.")
    lexical_score: float | None = Field(None, description="BM25-style score, when the lexical side found the chunk.")
    fused_score: float | None = Field(None, description="Fusion score (strategy fusion: RRF or normalised score).")
    rerank_score: float | None = Field(None, description="Reranker score, when retrieval.rerank re-scored the hit.")
    rank_before_rerank: int | None = Field(None, description="The hit's rank before the reranker re-ordered it.")
    matched_question: str | None = Field(None, description="hyde strategies: the chunk's hypothetical question that "
                                         "matched the query best.")
    page: str | None = Field(None, description="The PDF page number or the heading path (\"Leave > Carry-over\") the "
                             "chunk is on, when ingest recorded one.")
    metadata: dict[str, Any] = Field(default_factory=dict)


class TreeChunk(BaseModel):
    chunk_id: str
    score: float = Field(..., description="The score that ordered the hit: the hierarchical score, or the fused "
                         "score under enriched_fusion.")


class TreePage(BaseModel):
    page: str | None = Field(..., description="PDF page number or heading path; null when the chunks carry neither.")
    score: float = Field(..., description="Best of the page summary's and the page's chunks' per-type normalised scores.")
    summary: str | None = Field(None, description="The page summary, when one matched.")
    chunks: list[TreeChunk]


class TreeDocument(BaseModel):
    doc_id: str
    source: str
    score: float = Field(..., description="Best per-type normalised score among the document's summary, pages and "
                         "chunks (seed 002).")
    summary: str | None = Field(None, description="The document (artifact) summary, when it matched.")
    pages: list[TreePage]


class SearchResponse(BaseModel):
    query: str = Field(..., description="The query searched (after a preset's template).")
    strategy: str
    score_source: str
    order_by: str
    retrieval_target: str
    domain: str | None
    version: str
    top_k: int
    preset: str | None
    filters: list[dict[str, Any]]
    hits: list[SearchHit]
    tree: list[TreeDocument] | None = Field(
        None, description="hierarchical and enriched_fusion: the hits grouped document -> page -> chunk, with the "
        "summaries that matched; null for the other strategies.")
    details: dict[str, Any]


def _hit(hit: ScoredChunk) -> SearchHit:
    c = hit.chunk
    return SearchHit(rank=hit.rank, chunk_id=c.chunk_id, doc_id=c.doc_id, source=shown_source(c.source),
                     chunk_type=c.chunk_type,
                     chunk_index=c.chunk_index, text=c.text, dense_similarity=hit.score,
                     lexical_score=hit.lexical_score, fused_score=hit.fused_score, rerank_score=hit.rerank_score,
                     rank_before_rerank=hit.rank_before_rerank, matched_question=hit.matched_question,
                     page=page_of(c), metadata=strip_acl(c.metadata))


def _filter_dict(f: FieldFilter) -> dict[str, Any]:
    out: dict[str, Any] = {"field": f.field}
    for key, value in (("any", f.any_of), ("all", f.all_of), ("gte", f.gte), ("lte", f.lte)):
        if value:
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


def _request_filters(raw: str | None, schema: Schema) -> tuple[FieldFilter, ...]:
    if raw is None or not raw.strip():
        return ()
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise RequestError(f"filters: not valid JSON: {exc.msg} (column {exc.colno})", field="filters") from exc
    except RecursionError as exc:
        raise RequestError("filters: nested too deeply; expected an object of field -> condition",
                           field="filters") from exc
    return parse_filters(data, schema)


def _query_and_filters(params: SearchQuery, retrieval: RetrievalSettings) -> tuple[str, tuple[FieldFilter, ...]]:
    schema = retrieval.metadata_schema
    filters = _request_filters(params.filters, schema)
    if params.preset is not None:
        text, preset_filters = apply_preset(find_preset(retrieval.presets, params.preset), params.q, params.value, schema)
        return text, preset_filters + filters
    if params.value is not None:
        raise RequestError("value: only meaningful with preset", field="value")
    if not (params.q or "").strip():
        raise RequestError("q: the query parameter is required (or use a preset)", field="q")
    return " ".join((params.q or "").split()), filters


def run_search(services: Searching, params: SearchQuery, domain: str | None,
               visibility: Visibility | None = None) -> SearchResponse:
    """One search as ``GET /search`` answers it; ``rag search`` calls this too. ``params`` were
    checked once where they entered (``SearchParams.checked``, the CLI's ``RequestLimits``);
    ``visibility`` is the principal's (None only with access control off)."""
    retrieval = services.settings.retrieval
    top_k = params.top_k if params.top_k is not None else retrieval.top_k
    query, filters = _query_and_filters(params, retrieval)
    route = services.chat.routing.route(domain)
    outcome: SearchOutcome = services.searches[route.profile].search(
        SearchRequest(query, route.target, top_k, filters, params.strategy, visibility=visibility)
    )
    return SearchResponse(
        query=query, strategy=outcome.strategy, score_source=outcome.score_source,
        order_by=str(outcome.details.get("order_by", "dense_similarity")), retrieval_target=route.target,
        domain=route.domain, version=outcome.version, top_k=top_k, preset=params.preset,
        filters=[_filter_dict(f) for f in filters], hits=[_hit(h) for h in outcome.hits],
        tree=[TreeDocument.model_validate(d) for d in as_dict(outcome.tree)] if outcome.tree else None,
        details=dict(outcome.details),
    )
