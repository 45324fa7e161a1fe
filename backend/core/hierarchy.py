"""Hierarchical search as pure functions (seed 002): chunks and page / document summaries
ranked together, and the document -> page -> chunk tree.

Why normalise per type: chunk similarities and summary similarities come from texts of
different granularity (a raw passage against a distilled paragraph), so "a 0.85 score
from an artifact summary and a 0.85 from a page chunk don't mean equal relevance"
(seed 002). Each type's scores are therefore put on one scale over its own candidates
(min-max or z-score, ``hierarchical.normalization``) before they are compared or added.

Then, as the seed ranks artifacts: a document scores the best normalised score among its
hits (its summary, its page summaries, its chunks); a page the best of its page summary
and its chunks; a chunk the weighted mean of its own, its page's and its document's
score. Chunks are ordered by that mean, so a passage of a document whose summary matches
the question rises above an equally similar passage of an unrelated document.

No I/O: hits go in, scores and a tree come out, so the explanation is exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from backend.core.citing import shown_source
from backend.core.fusion import normalise_scores
from backend.core.types import Chunk, SummaryHit


@dataclass(frozen=True)
class Weights:
    chunk: float = 1.0
    page: float = 0.5
    document: float = 0.5


@dataclass(frozen=True)
class ChunkNode:
    chunk_id: str
    score: float  # the hierarchical score the flat order uses


@dataclass(frozen=True)
class PageNode:
    """A page: the PDF page number or the heading path ("Leave > Carry-over"); None when the
    chunks carry neither."""

    page: str | None
    score: float
    summary: str | None
    chunks: tuple[ChunkNode, ...]


@dataclass(frozen=True)
class DocumentNode:
    doc_id: str
    source: str
    score: float
    summary: str | None
    pages: tuple[PageNode, ...]


@dataclass(frozen=True)
class Ranking:
    """Chunk ids best first with their hierarchical scores, and what made them."""

    order: tuple[tuple[str, float], ...]
    document_scores: Mapping[str, float]
    page_scores: Mapping[tuple[str, str | None], float]


def page_of(chunk: Chunk) -> str | None:
    """The page a chunk is on, as the ingest side records it: ``metadata['page']`` (PDF page
    number) or ``metadata['heading_path']`` (list of headings, shown joined by " > ")."""
    page = chunk.metadata.get("page")
    if page is not None and page != "":
        return str(page)
    path = chunk.metadata.get("heading_path")
    if isinstance(path, (list, tuple)) and path:
        return " > ".join(str(p) for p in path)
    if isinstance(path, str) and path:
        return path
    return None


def _normalised(scores: Mapping[str, float], method: str) -> dict[str, float]:
    keys = list(scores)
    return dict(zip(keys, normalise_scores([scores[k] for k in keys], method)))


def _page_keys(chunks: Sequence[Chunk], summaries: Sequence[SummaryHit]) -> dict[str, tuple[str, str | None]]:
    """``chunk_id -> (doc_id, page)``: the page summary that names the chunk decides, else the
    chunk's own page metadata."""
    named: dict[str, str | None] = {}
    for hit in summaries:
        if hit.summary.kind == "page_summary":
            for chunk_id in hit.summary.chunk_ids:
                named.setdefault(chunk_id, hit.summary.page)
    return {c.chunk_id: (c.doc_id, named[c.chunk_id] if c.chunk_id in named else page_of(c)) for c in chunks}


def rank(chunks: Sequence[tuple[Chunk, float]], summaries: Sequence[SummaryHit], *, normalization: str,
         weights: Weights) -> Ranking:
    """Order ``chunks`` (each with its dense similarity) by their hierarchical score."""
    if not chunks:
        return Ranking((), {}, {})
    by_id = {c.chunk_id: c for c, _ in chunks}
    chunk_norm = _normalised({c.chunk_id: s for c, s in chunks}, normalization)
    pages = _page_keys([c for c, _ in chunks], summaries)
    page_hits = {h.summary.summary_id: h for h in summaries if h.summary.kind == "page_summary"}
    doc_hits = {h.summary.summary_id: h for h in summaries if h.summary.kind == "artifact_summary"}
    page_norm = _normalised({k: h.score for k, h in page_hits.items()}, normalization)
    doc_norm = _normalised({k: h.score for k, h in doc_hits.items()}, normalization)

    doc_score: dict[str, float] = {}
    page_score: dict[tuple[str, str | None], float] = {}

    def best(mapping: dict, key: object, value: float) -> None:  # type: ignore[type-arg]
        mapping[key] = max(mapping.get(key, value), value)

    for sid, hit in doc_hits.items():
        best(doc_score, hit.summary.doc_id, doc_norm[sid])
    for sid, hit in page_hits.items():
        best(page_score, (hit.summary.doc_id, hit.summary.page), page_norm[sid])
        best(doc_score, hit.summary.doc_id, page_norm[sid])
    for chunk_id, score in chunk_norm.items():
        best(page_score, pages[chunk_id], score)
        best(doc_score, by_id[chunk_id].doc_id, score)

    total = weights.chunk + weights.page + weights.document
    scored = []
    for position, (chunk, _) in enumerate(chunks):
        cid = chunk.chunk_id
        value = (weights.chunk * chunk_norm[cid] + weights.page * page_score[pages[cid]]
                 + weights.document * doc_score[chunk.doc_id]) / total
        scored.append((cid, value, position))
    scored.sort(key=lambda x: (-x[1], x[2]))
    return Ranking(tuple((cid, value) for cid, value, _ in scored), doc_score, page_score)


def tree(hits: Sequence[tuple[Chunk, float]], summaries: Sequence[SummaryHit], ranking: Ranking
         ) -> tuple[DocumentNode, ...]:
    """The final hits (already cut to ``top_k``, in their final order) grouped document ->
    page -> chunk; documents and pages ordered by their scores (ties: first hit first),
    chunks in hit order. Each node carries the best summary text found for it."""
    if not hits:
        return ()
    pages = _page_keys([c for c, _ in hits], summaries)
    doc_summary: dict[str, str] = {}
    page_summary: dict[tuple[str, str | None], str] = {}
    for hit in summaries:  # best first: the first summary seen for a node is its best
        if hit.summary.kind == "artifact_summary":
            doc_summary.setdefault(hit.summary.doc_id, hit.summary.text)
        else:
            page_summary.setdefault((hit.summary.doc_id, hit.summary.page), hit.summary.text)
    docs: dict[str, dict[str | None, list[ChunkNode]]] = {}
    sources: dict[str, str] = {}
    for chunk, score in hits:
        doc_id, page = pages[chunk.chunk_id]
        sources.setdefault(doc_id, chunk.source)
        docs.setdefault(doc_id, {}).setdefault(page, []).append(ChunkNode(chunk.chunk_id, score))
    out = []
    for d_pos, (doc_id, by_page) in enumerate(docs.items()):
        nodes = [PageNode(page, round(ranking.page_scores.get((doc_id, page), 0.0), 6),
                          page_summary.get((doc_id, page)), tuple(chunk_nodes))
                 for page, chunk_nodes in by_page.items()]
        nodes = [n for _, n in sorted(enumerate(nodes), key=lambda x: (-x[1].score, x[0]))]
        out.append((d_pos, DocumentNode(doc_id, sources[doc_id], round(ranking.document_scores.get(doc_id, 0.0), 6),
                                        doc_summary.get(doc_id), tuple(nodes))))
    return tuple(node for _, node in sorted(out, key=lambda x: (-x[1].score, x[0])))


def documents_without_chunks(chunk_doc_ids: Sequence[str], summaries: Sequence[SummaryHit], limit: int
                             ) -> list[str]:
    """Documents a summary found but no chunk candidate represents, best summary first: the
    service looks their best chunks up, so a document found by its summary has passages."""
    have = set(chunk_doc_ids)
    out: list[str] = []
    for hit in summaries:
        doc_id = hit.summary.doc_id
        if doc_id not in have and doc_id not in out:
            out.append(doc_id)
    return out[:limit]


def as_dict(nodes: Sequence[DocumentNode]) -> list[dict[str, object]]:
    """The tree as JSON-ready dicts (``/search``'s ``tree`` and ``decision_explain``)."""
    return [{"doc_id": d.doc_id, "source": shown_source(d.source), "score": d.score, "summary": d.summary,
             "pages": [{"page": p.page, "score": p.score, "summary": p.summary,
                        "chunks": [{"chunk_id": c.chunk_id, "score": round(c.score, 6)} for c in p.chunks]}
                       for p in d.pages]}
            for d in nodes]
