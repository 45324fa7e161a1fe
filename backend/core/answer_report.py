"""Assembling what a chat answer reports: candidates, citations, metadata, explanation.

Pure functions over the search outcome and the mode decision, kept apart from
``chat_service`` so that the service reads as the sequence of steps it performs.
No chunk text leaves here except the ~200-character previews the API promises.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Sequence

from backend.core.decision_explain import DecisionExplain
from backend.core.citing import cite, locate, quoted_sentences, shown_source
from backend.core.hierarchy import DocumentNode
from backend.core.answer_mode import Candidate, ModeDecision, normalize_similarity
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
    #: PDF page number of the cited sentence (a passage cited as a whole: the page it starts on)
    page: str | None = None
    #: heading path ("Leave > Carry-over") or heading the cited sentence stands under
    section: str | None = None


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


def citations(decision: ModeDecision, candidates: Sequence[Candidate], answer: str | None = None,
              answer_explain: dict[str, Any] | None = None) -> list[Citation]:
    """See :func:`cited_answer`; the citations alone (without an answer: every used chunk)."""
    return cited_answer(decision, candidates, answer, answer_explain)[1]


def cited_answer(decision: ModeDecision, candidates: Sequence[Candidate], answer: str | None,
                 answer_explain: dict[str, Any] | None = None) -> tuple[str, list[Citation]]:
    """The answer with its markers renumbered ``[1]..[m]`` in reading order, and its citations:
    the used chunks the answer cites, in marker order (``citing.cite``: an answer that cites
    no used chunk, e.g. an LLM that wrote no marker, lists them all in prompt order), each
    with the section and page of the sentence it quoted (``citing.locate``); then figures
    related to a cited chunk: its own figures (``parent_chunk_id``) and figures of a cited
    document whose own similarity reaches ``min_similarity_for_hybrid``. ``source`` never
    shows a server path (``citing.shown_source``)."""
    text = answer or ""
    if decision.mode == "fallback":
        return text, []
    cited = cite(text, decision.context.used)
    quoted = quoted_sentences(answer_explain)
    out = []
    for i, c in enumerate(cited.passages, start=1):
        where = locate(c.chunk.text, c.chunk.metadata, quoted.get(c.chunk.chunk_id, ()))
        out.append(Citation(f"[{i}]", c.chunk.chunk_id, c.chunk.doc_id, shown_source(c.chunk.source),
                            round(c.similarity, 6), c.chunk.chunk_type,
                            page=None if where.page is None else str(where.page), section=where.section))
    cited_ids = {c.chunk.chunk_id for c in cited.passages}
    cited_docs = {c.chunk.doc_id for c in cited.passages}
    for c in candidates:
        meta = c.chunk.metadata
        related = meta.get("parent_chunk_id") in cited_ids or (
            c.chunk.doc_id in cited_docs and c.similarity >= decision.min_similarity_for_hybrid)
        if c.chunk.chunk_type == "figure" and related:
            where = locate(c.chunk.text, meta)
            out.append(Citation(None, c.chunk.chunk_id, c.chunk.doc_id, shown_source(c.chunk.source),
                                round(c.similarity, 6), "figure", _str_or_none(meta.get("image_ref")),
                                _str_or_none(meta.get("figure_id")),
                                None if where.page is None else str(where.page), where.section))
    return cited.text, out


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
            rank=c.rank, chunk_id=c.chunk.chunk_id, doc_id=c.chunk.doc_id, source=shown_source(c.chunk.source),
            chunk_type=c.chunk.chunk_type, similarity=round(c.similarity, 6), raw_score=round(c.raw_score, 6),
            used=c.chunk.chunk_id in used_ids, excluded_from_llm=c.chunk.chunk_type in exclusions,
            text_preview=preview(c.chunk.text), image_ref=_str_or_none(meta.get("image_ref")),
            figure_id=_str_or_none(meta.get("figure_id")), parent_chunk_id=_str_or_none(meta.get("parent_chunk_id")),
            metadata=meta,
        ))
    return rows


def decision_explain(decision: ModeDecision, **facts: Any) -> DecisionExplain:
    """The numbers and reasons behind the mode, plus the request facts the caller adds
    (effective_query, used_llm, retrieval_target, version, strategy, ...), built once."""
    return DecisionExplain.of(decision, **facts)
