"""``GET /search`` (retrieval only, no answer) and ``GET /search/presets``.

Same routing as ``/chat`` (``X-RAG-Domain`` -> that domain's alias and embedding
profile, through the chat service's ``Routing``), same strategies and the same
typed filters, but no mode decision: the hits come back with all three scores
so a client or an agent can inspect or re-rank them. Presets are seed 000's
``search_by_*`` tools as config; the listing describes their parameters.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request
from pydantic import BaseModel, ConfigDict, Field

from backend.api import access
from backend.api.chat import DOMAIN_HEADER, FieldOutOfRange
from backend.common.errors import RequestError, RequestTooLarge
from backend.common.config import SearchStrategy
from backend.core.metadata_schema import filterable_fields, parse_filters
from backend.core.services.citing import shown_source
from backend.core.services.hierarchy import as_dict, page_of
from backend.core.services.search_service import (
    SearchOutcome,
    SearchRequest,
    apply_preset,
    describe_presets,
    find_preset,
)
from backend.core.access import strip_acl
from backend.core.types import FieldFilter, ScoredChunk, Visibility

bp = Blueprint("search", __name__)


class SearchParams(BaseModel):
    """Query parameters of ``GET /search`` (strings coerced, unknown names rejected)."""

    model_config = ConfigDict(extra="forbid")

    q: str | None = Field(None, description="The query; optional only for a preset whose template does not use {query}.")
    top_k: int | None = Field(None, ge=1, description="Hits to return (1..retrieval.max_top_k); default retrieval.top_k.")
    strategy: SearchStrategy | None = Field(None, description="Default retrieval.strategy.")
    filters: str | None = Field(None, description='JSON object, e.g. {"department": {"any": ["it"]}}.')
    preset: str | None = Field(None, description="Name of a configured preset (GET /search/presets).")
    value: str | None = Field(None, description="The preset's filter value.")


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


def _request_filters(raw: str | None, schema: Any) -> tuple[FieldFilter, ...]:
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


def _query_and_filters(params: SearchParams, retrieval: Any) -> tuple[str, tuple[FieldFilter, ...]]:
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


def run_search(services: Any, params: SearchParams, domain: str | None,
               visibility: Visibility | None = None) -> SearchResponse:
    """One search as ``GET /search`` answers it; ``rag search`` calls this too. ``visibility``
    is the principal's (None only with access control off)."""
    settings = services.settings
    limit = settings.server.max_question_chars
    if params.q is not None and len(params.q) > limit:
        raise RequestTooLarge(f"q has {len(params.q)} characters; server.max_question_chars is {limit}",
                              field="q", limit=limit)
    retrieval = settings.retrieval
    top_k = params.top_k if params.top_k is not None else retrieval.top_k
    if top_k > retrieval.max_top_k:
        raise FieldOutOfRange(f"top_k must be between 1 and {retrieval.max_top_k}, got {top_k}",
                              field="top_k", limit=retrieval.max_top_k)
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


@bp.get("/search")
def search() -> Response:
    params = SearchParams.model_validate(request.args.to_dict())
    domain = (request.headers.get(DOMAIN_HEADER) or "").strip() or None
    visibility = access.visibility_for(domain)
    body = run_search(current_app.extensions["rag"], params, domain, visibility)
    response = jsonify(body.model_dump(mode="json"))
    response.headers["X-Retrieval-Target"] = body.retrieval_target
    return response


@bp.get("/search/presets")
def presets() -> Response:
    retrieval = current_app.extensions["rag"].settings.retrieval
    schema = retrieval.metadata_schema
    fields = {
        name: {"type": kind, **({"values": list(schema[name].values)} if name in schema and schema[name].values else {})}
        for name, kind in filterable_fields(schema).items()
    }
    return jsonify({"presets": describe_presets(retrieval.presets, schema), "filterable_fields": fields})
