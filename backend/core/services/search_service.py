"""Retrieval without an answer: embed the query, search the target, return hits.

Every hit's ``score`` is the dense similarity of the chunk to the query under
the version's distance, whatever the strategy, so the answer-mode thresholds
always compare a similarity they were tuned for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import structlog

from backend.common.config import ProfileSettings, RetrievalSettings
from backend.core.embedding_text import query_input
from backend.core.ports import Embedder, VectorStore
from backend.core.types import FieldFilter, QueryVector, ScoredChunk

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class SearchRequest:
    query: str
    target: str
    top_k: int
    filters: tuple[FieldFilter, ...] = ()
    strategy: str | None = None


@dataclass(frozen=True)
class SearchOutcome:
    target: str
    version: str
    strategy: str
    hits: tuple[ScoredChunk, ...]
    #: what ``hit.score`` means, for decision_explain
    score_source: str = "dense_similarity"
    details: dict[str, object] = field(default_factory=dict)


class SearchService:
    def __init__(
        self, store: VectorStore, embedder: Embedder, profile: ProfileSettings, settings: RetrievalSettings
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._profile = profile
        self._settings = settings

    def embed_query(self, text: str) -> QueryVector:
        vec = self._embedder.embed_queries([query_input(text, self._profile)])[0]
        return QueryVector(vec, self._embedder.model_id)

    def search(self, request: SearchRequest) -> SearchOutcome:
        strategy = request.strategy or self._settings.strategy
        if strategy != "dense":
            raise NotImplementedError(strategy)
        result = self._store.search(request.target, self.embed_query(request.query), request.top_k, request.filters)
        return SearchOutcome(request.target, result.version, "dense", result.hits)
