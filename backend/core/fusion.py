"""Pure ranking functions: reciprocal rank fusion, normalised score fusion, reranking
and the freshness tie-breaker.

No I/O, no clock, no logging: ranked ids or hits go in, a new order comes out,
so the search service can explain exactly what was compared.
"""

from __future__ import annotations

import dataclasses
import heapq
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Mapping, Sequence

from backend.core.types import ScoredChunk


@dataclass(frozen=True)
class FusedRank:
    """One candidate after fusion: its fused score and its 1-based rank on each side
    that found it (a side that did not find it is absent from ``ranks``)."""

    chunk_id: str
    score: float
    ranks: Mapping[str, int]


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int, limit: int | None = None
) -> list[FusedRank]:
    """Fuse ranked id lists: ``score(id) = sum over sides of w_side / (k + rank_side)``.

    RRF uses ranks only, so a cosine similarity and a BM25 score never have to be put
    on one scale. A larger ``k`` flattens the curve (deep ranks count almost as much
    as the top ones). Equal fused scores are ordered by the best single-side rank,
    then by first appearance (sides in mapping order), so the result is deterministic.
    ``limit`` returns the first ``limit`` only (the same ones, cheaper than slicing).
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for side, ids in rankings.items():
        weight = weights.get(side, 1.0)
        for rank, chunk_id in enumerate(dict.fromkeys(ids), start=1):
            side_ranks = ranks.get(chunk_id)
            if side_ranks is None:
                ranks[chunk_id] = {side: rank}
                scores[chunk_id] = weight / (k + rank)
            else:
                side_ranks[side] = rank
                scores[chunk_id] += weight / (k + rank)
    return _ordered(scores, ranks, limit)


def _ordered(scores: dict[str, float], ranks: dict[str, dict[str, int]], limit: int | None) -> list[FusedRank]:
    """Best fused score first, then best single-side rank, then first appearance (the
    insertion order of ``scores``)."""
    keys = [(-score, min(ranks[c].values()), i, c) for i, (c, score) in enumerate(scores.items())]
    best = heapq.nsmallest(limit, keys) if limit is not None and limit < len(keys) else sorted(keys)
    return [FusedRank(c, scores[c], ranks[c]) for _, _, _, c in best]


def normalise_scores(scores: Sequence[float], method: str) -> list[float]:
    """Scores on one scale: ``minmax`` maps into [0, 1] (all equal -> all 1), ``zscore``
    subtracts the mean and divides by the standard deviation (all equal -> all 0)."""
    if not scores:
        return []
    if method == "minmax":
        low, high = min(scores), max(scores)
        return [1.0 if high == low else (s - low) / (high - low) for s in scores]
    if method == "zscore":
        mean = sum(scores) / len(scores)
        std = (sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5
        return [0.0 if std == 0 else (s - mean) / std for s in scores]
    raise ValueError(f"normalization must be minmax or zscore, got {method!r}")


def score_fusion(
    scored: Mapping[str, Sequence[tuple[str, float]]], weights: Mapping[str, float], normalization: str,
    limit: int | None = None,
) -> list[FusedRank]:
    """Fuse ``(id, score)`` lists by a convex combination of normalised scores:
    ``score(id) = sum over sides of w_side / sum(w) x norm_side(id)``.

    Unlike RRF this keeps *how much* better one candidate is than the next on each side.
    Each side is normalised over its own candidates; a side that did not find an id
    contributes that side's lowest normalised score (it ranked below everything found).
    Ties are broken like ``reciprocal_rank_fusion``."""
    total = sum(weights.get(side, 1.0) for side in scored)
    if total <= 0:
        raise ValueError("score fusion needs a positive weight")
    norms: dict[str, dict[str, float]] = {}
    ranks: dict[str, dict[str, int]] = {}
    first_seen: dict[str, int] = {}
    for side, pairs in scored.items():
        first: dict[str, float] = {}
        for chunk_id, score in pairs:
            first.setdefault(chunk_id, score)
        unique = list(first.items())
        norms[side] = dict(zip((c for c, _ in unique), normalise_scores([s for _, s in unique], normalization)))
        for rank, (chunk_id, _) in enumerate(unique, start=1):
            first_seen.setdefault(chunk_id, len(first_seen))
            ranks.setdefault(chunk_id, {})[side] = rank
    floors = {side: min(values.values(), default=0.0) for side, values in norms.items()}
    scores = {
        chunk_id: sum(weights.get(side, 1.0) / total * norms[side].get(chunk_id, floors[side]) for side in scored)
        for chunk_id in first_seen
    }
    return _ordered(scores, ranks, limit)


@dataclass(frozen=True)
class RerankMove:
    """One re-scored candidate: its reranker score and its rank before and after."""

    chunk_id: str
    score: float
    before: int
    after: int


def apply_rerank(hits: Sequence[ScoredChunk], scores: Sequence[float]) -> tuple[tuple[ScoredChunk, ...], list[RerankMove]]:
    """Put the first ``len(scores)`` hits in descending reranker-score order (ties keep
    their earlier order); the hits beyond them follow unchanged. ``hit.score`` stays the
    dense similarity, so answer-mode thresholds are unaffected. Ranks are renumbered."""
    if len(scores) > len(hits):
        raise ValueError(f"{len(scores)} rerank scores for {len(hits)} hits")
    head = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    order = head + list(range(len(scores), len(hits)))
    out = tuple(
        dataclasses.replace(hits[i], rank=new, rerank_score=float(scores[i]), rank_before_rerank=hits[i].rank)
        if i < len(scores) else dataclasses.replace(hits[i], rank=new)
        for new, i in enumerate(order, start=1))
    moves = [RerankMove(hits[i].chunk.chunk_id, float(scores[i]), hits[i].rank, new)
             for new, i in enumerate(head, start=1)]
    return out, moves


def parse_timestamp(value: object) -> datetime | None:
    """An ISO-8601 date or datetime as an aware UTC datetime; None when absent or unparseable.
    A bare date counts as its midnight, a naive datetime as UTC."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime(value.year, value.month, value.day)
    elif isinstance(value, str) and value.strip():
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    return parsed.replace(tzinfo=timezone.utc) if parsed.tzinfo is None else parsed.astimezone(timezone.utc)


_OLDEST = datetime.min.replace(tzinfo=timezone.utc)


def apply_freshness(hits: Sequence[ScoredChunk], epsilon: float, field: str = "updated_at") -> tuple[ScoredChunk, ...]:
    """Within runs of near-equal scores, put newer chunks first (seed 003's tie-breaker).

    A run starts at a hit and takes every following hit whose ``score`` (the dense
    similarity, whatever the strategy) is within ``epsilon`` of the run's first hit;
    anchoring on the first hit keeps a long slope of tiny steps from becoming one
    giant tie. Inside a run, hits are sorted newest ``metadata[field]`` first;
    the sort is stable and hits without a readable date sort as the oldest, so
    with no dates at all the order is unchanged. Ranks are renumbered from 1.
    """
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    ordered: list[ScoredChunk] = []
    start = 0
    while start < len(hits):
        end = start + 1
        while end < len(hits) and abs(hits[start].score - hits[end].score) <= epsilon:
            end += 1
        run = list(hits[start:end])
        run.sort(key=lambda h: parse_timestamp(h.chunk.metadata.get(field)) or _OLDEST, reverse=True)
        ordered.extend(run)
        start = end
    return tuple(dataclasses.replace(h, rank=i) for i, h in enumerate(ordered, start=1))


def collapse_duplicates(hits: Sequence[ScoredChunk]) -> tuple[tuple[ScoredChunk, ...], int]:
    """Keep the best-ranked hit of each ``content_hash`` and renumber the ranks.

    Ingest drops duplicates only within a document (so a document's chunks never
    depend on its neighbours); the same paragraph in two documents is collapsed
    here instead, so it fills one slot of ``top_k``, not several. Returns the kept
    hits and how many were dropped."""
    seen: set[str] = set()
    kept: list[ScoredChunk] = []
    for hit in hits:
        key = hit.chunk.content_hash or hit.chunk.chunk_id
        if key in seen:
            continue
        seen.add(key)
        kept.append(hit)
    renumbered = tuple(dataclasses.replace(h, rank=i) for i, h in enumerate(kept, start=1))
    return renumbered, len(hits) - len(kept)
