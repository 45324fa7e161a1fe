"""Assembling what a chat answer reports: candidates, citations, metadata, explanation.

Pure functions over the search outcome and the mode decision, kept apart from
``chat_service`` so that the service reads as the sequence of steps it performs.
No chunk text leaves here except the ~200-character previews the API promises.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Sequence

from backend.core.services.hierarchy import DocumentNode, page_of
from backend.core.services.retrieval_service import Candidate, ModeDecision, normalize_similarity
from backend.core.types import ACL_FIELD, ScoredChunk

PREVIEW_CHARS = 200


@dataclass(frozen=True)
class Citation:
    """One cited chunk. Text chunks carry ``marker`` ``[n]`` (n = position, as in the
    answer); figures related to the answer carry ``image_ref`` and no marker."""

    marker: str | None
    chunk_id: str
    doc_id: str
    source: str
    score: float
    chunk_type: str
    image_ref: str | None = None
    figure_id: str | None = None
    #: PDF page number or heading path ("Leave > Carry-over"), as ingest recorded it
    page: str | None = None


@dataclass(frozen=True)
class RetrievedChunk:
    rank: int
    chunk_id: str
    doc_id: str
    source: str
    chunk_type: str
    similarity: float
    raw_score: float
    used: bool
    excluded_from_llm: bool
    text_preview: str
    image_ref: str | None = None
    figure_id: str | None = None
    parent_chunk_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def to_candidates(hits: Sequence[ScoredChunk], score_mode: str) -> list[Candidate]:
    """Hits with the similarity the thresholds compare, under each hit's own distance."""
    return [Candidate(h.chunk, normalize_similarity(h.score, h.distance, score_mode), h.score, h.rank) for h in hits]


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def citations(decision: ModeDecision, candidates: Sequence[Candidate]) -> list[Citation]:
    """Used chunks in prompt order (``[1]`` first), then figures that belong to a used
    chunk or are themselves relevant (similarity >= ``min_similarity_for_hybrid``)."""
    if decision.mode == "fallback":
        return []
    used = decision.context.used
    used_ids = {c.chunk.chunk_id for c in used}
    out = [
        Citation(f"[{i}]", c.chunk.chunk_id, c.chunk.doc_id, c.chunk.source, round(c.similarity, 6), c.chunk.chunk_type,
                 page=page_of(c.chunk))
        for i, c in enumerate(used, start=1)
    ]
    for c in candidates:
        meta = c.chunk.metadata
        related = meta.get("parent_chunk_id") in used_ids or c.similarity >= decision.min_similarity_for_hybrid
        if c.chunk.chunk_type == "figure" and related:
            out.append(Citation(None, c.chunk.chunk_id, c.chunk.doc_id, c.chunk.source, round(c.similarity, 6),
                                "figure", _str_or_none(meta.get("image_ref")), _str_or_none(meta.get("figure_id")),
                                page_of(c.chunk)))
    return out


def tree_order(candidates: Sequence[Candidate], tree: Sequence[DocumentNode]) -> list[Candidate]:
    """Hierarchical search (seed 002): the candidates re-ranked in the tree's reading order
    (best document first, its best page first, the page's chunks in hit order), so the prompt
    context keeps each document's passages together, page by page. Candidates outside the
    tree keep their relative order after it."""
    position = {c.chunk_id: n for n, c in enumerate(
        chunk for doc in tree for page in doc.pages for chunk in page.chunks)}
    ordered = sorted(candidates, key=lambda c: (position.get(c.chunk.chunk_id, len(position)), c.rank))
    return [dataclasses.replace(c, rank=rank) for rank, c in enumerate(ordered, start=1)]


def retrieved_metadata(
    decision: ModeDecision, candidates: Sequence[Candidate], exclusions: Sequence[str]
) -> list[RetrievedChunk]:
    """Every retrieved chunk (figures included), best similarity first, rank breaking ties."""
    used_ids = {c.chunk.chunk_id for c in decision.context.used} if decision.mode != "fallback" else set()
    rows = []
    for c in sorted(candidates, key=lambda c: (-c.similarity, c.rank)):
        meta = {k: v for k, v in c.chunk.metadata.items() if k != ACL_FIELD}  # who else may read it is not shown
        rows.append(RetrievedChunk(
            rank=c.rank, chunk_id=c.chunk.chunk_id, doc_id=c.chunk.doc_id, source=c.chunk.source,
            chunk_type=c.chunk.chunk_type, similarity=round(c.similarity, 6), raw_score=round(c.raw_score, 6),
            used=c.chunk.chunk_id in used_ids, excluded_from_llm=c.chunk.chunk_type in exclusions,
            text_preview=preview(c.chunk.text), image_ref=_str_or_none(meta.get("image_ref")),
            figure_id=_str_or_none(meta.get("figure_id")), parent_chunk_id=_str_or_none(meta.get("parent_chunk_id")),
            metadata=meta,
        ))
    return rows


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def decision_explain(decision: ModeDecision, **facts: Any) -> dict[str, Any]:
    """The numbers and reasons behind the mode, plus the request facts the caller adds
    (effective_query, used_llm, retrieval_target, version, strategy, ...)."""
    th = decision.thresholds
    return {
        "mode": decision.mode,
        "decided_mode": decision.decided_mode,
        "blank_primary_answer": decision.blank_primary_answer,
        "short_query_active": th.short_query_active,
        "thresholds": {
            "low": round(th.low, 6), "high": round(th.high, 6),
            "base_low": round(th.base_low, 6), "base_high": round(th.base_high, 6), "kind": th.kind,
        },
        "max_similarity": _round(decision.max_similarity),
        "max_eligible_similarity": _round(decision.max_eligible_similarity),
        "decision_score": decision.decision_score,
        "max_evidence": _round(decision.max_evidence),
        "gates": {
            "min_similarity_for_hybrid": decision.min_similarity_for_hybrid,
            "min_chunks_for_hybrid": decision.min_chunks_for_hybrid,
            "min_total_context_chars": decision.min_total_context_chars,
            "usable_chunks": decision.usable_chunks,
            "usable_context_chars": decision.usable_context_chars,
            "passed": decision.gates_passed,
        },
        "excluded_chunk_ids": list(decision.context.excluded_by_type),
        "reasons": list(decision.reasons),
        **facts,
    }
