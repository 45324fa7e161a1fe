"""What one search is and what it found: the checked request, the outcome, and the per-strategy
names (order, score source, fused sides) the service and the explanation share. Pure data and
checks, no I/O: the search service (``core/services/search_service.py``) runs it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from backend.common.config import RetrievalSettings
from backend.common.errors import RequestError
from backend.core.hierarchy import DocumentNode
from backend.core.requests import check_min_top_k, check_strategy
from backend.core.types import FieldFilter, ScoredChunk, Visibility

#: What decides the order of the hits under each strategy (``details["order_by"]``).
ORDER_BY = {"dense": "dense_similarity", "lexical": "lexical_score", "fusion": "fused_score",
            "hyde": "question_similarity", "hyde_fusion": "fused_score", "hierarchical": "hierarchical_score",
            "enriched_fusion": "fused_score"}
#: What ``hit.score`` (and so every threshold) compares under each strategy: always the chunk's own
#: dense similarity; for the strategies that find chunks through their questions, the parent chunk's.
SCORE_SOURCE = {"hyde": "parent_chunk_dense_similarity", "hyde_fusion": "parent_chunk_dense_similarity",
                "enriched_fusion": "parent_chunk_dense_similarity"}
#: The sides each multi-way fusion combines.
FUSED_SIDES = {"hyde_fusion": ("dense", "lexical", "hyde"),
               "enriched_fusion": ("dense", "lexical", "hyde", "hierarchical")}


@dataclass(frozen=True)
class SearchRequest:
    """One search, checked when it is made (``top_k`` at least 1, a known strategy: 422), so the
    service trusts it; the configured ``retrieval.max_top_k`` is the edge's to check."""

    query: str
    target: str
    top_k: int
    filters: tuple[FieldFilter, ...] = ()
    strategy: str | None = None
    #: access control, applied by the store inside every query of the search (dense, lexical
    #: and the similarity lookups); None only when ``access.enabled`` is false
    visibility: Visibility | None = None
    #: set by ``SearchService.search``, never by callers: the retrieval settings in force for
    #: this search (the version's stamp, or the live config), fusion and lexical resolved
    retrieval: RetrievalSettings | None = None

    def __post_init__(self) -> None:
        check_min_top_k(self.top_k)
        if self.strategy is not None:
            check_strategy(self.strategy)


@dataclass(frozen=True)
class SearchOutcome:
    target: str
    version: str
    strategy: str
    hits: tuple[ScoredChunk, ...]
    #: what ``hit.score`` means, for decision_explain
    score_source: str = "dense_similarity"
    details: dict[str, object] = field(default_factory=dict)
    #: hierarchical strategies: the hits grouped document -> page -> chunk (seed 002)
    tree: tuple[DocumentNode, ...] = ()


def stamp_summary(version: str | None, stamp: Mapping[str, Any] | None) -> dict[str, Any]:
    """``details["retrieval_settings"]`` (and ``decision_explain.retrieval_settings``): where the
    settings of this search came from, and the stamp itself when the version has one."""
    if not stamp:
        return {"source": "live config", "version": version, "stamped": False, "stamp": None}
    return {"source": "version stamp", "version": version, "stamped": True, "stamp": dict(stamp)}


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
