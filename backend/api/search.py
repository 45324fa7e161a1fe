"""``GET /search`` (retrieval only, no answer) and ``GET /search/presets``.

Same routing as ``/chat`` (``X-RAG-Domain`` -> that domain's alias and embedding
profile, through the chat service's ``Routing``), same strategies and the same
typed filters, but no mode decision: the hits come back with all three scores
so a client or an agent can inspect or re-rank them. Presets are seed 000's
``search_by_*`` tools as config; the listing describes their parameters.
"""

from __future__ import annotations

from typing import Any, Mapping

from flask import Blueprint, Response, jsonify, request
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from backend.api.runtime import current_runtime
from backend.api import access
from backend.api.chat import DOMAIN_HEADER
from backend.api.models import Strategy, request_limits
from backend.core.requests import RequestLimits
from backend.core.metadata_schema import filterable_fields
from backend.core.services.search_query import SearchHit, SearchResponse, TreeChunk, TreeDocument, TreePage, run_search
from backend.core.services.search_service import describe_presets

#: the response models and ``run_search`` live with the service (``rag search`` uses them too)
__all__ = ["SearchHit", "SearchParams", "SearchResponse", "TreeChunk", "TreeDocument", "TreePage", "bp", "run_search"]

bp = Blueprint("search", __name__)


class SearchParams(BaseModel):
    """Query parameters of ``GET /search`` (strings coerced, unknown names rejected)."""

    model_config = ConfigDict(extra="forbid")

    q: str | None = Field(None, description="The query; optional only for a preset whose template does not use {query}.")
    top_k: int | None = Field(None, ge=1, description="Hits to return (1..retrieval.max_top_k); default retrieval.top_k.")
    strategy: Strategy | None = Field(None, description="Default retrieval.strategy.")
    filters: str | None = Field(None, description='JSON object, e.g. {"department": {"any": ["it"]}}.')
    preset: str | None = Field(None, description="Name of a configured preset (GET /search/presets).")
    value: str | None = Field(None, description="The preset's filter value.")

    @classmethod
    def checked(cls, data: Mapping[str, Any], limits: RequestLimits) -> "SearchParams":
        """The parameters checked once, the configured limits included (route and ``rag search``)."""
        return cls.model_validate(data, context={"limits": limits})

    @model_validator(mode="after")
    def _within_limits(self, info: ValidationInfo) -> "SearchParams":
        """The configured limits, after the shape: 413 for a long ``q``, 422 for ``top_k``."""
        limits = request_limits(info)
        if limits is not None:
            limits.text(self.q, field="q")
            limits.top_k(self.top_k)
        return self


@bp.get("/search")
def search() -> Response:
    params = SearchParams.checked(request.args.to_dict(), RequestLimits.from_settings(current_runtime().settings))
    domain = (request.headers.get(DOMAIN_HEADER) or "").strip() or None
    visibility = access.visibility_for(domain)
    body = run_search(current_runtime(), params, domain, visibility)
    response = jsonify(body.model_dump(mode="json"))
    response.headers["X-Retrieval-Target"] = body.retrieval_target
    return response


@bp.get("/search/presets")
def presets() -> Response:
    retrieval = current_runtime().settings.retrieval
    schema = retrieval.metadata_schema
    fields = {
        name: {"type": kind, **({"values": list(schema[name].values)} if name in schema and schema[name].values else {})}
        for name, kind in filterable_fields(schema).items()
    }
    return jsonify({"presets": describe_presets(retrieval.presets, schema), "filterable_fields": fields})
