"""Pure ranking functions: reciprocal rank fusion and the freshness tie-breaker.

No I/O, no clock, no logging: ranked ids or hits go in, a new order comes out,
so the search service can explain exactly what was compared.
"""

from __future__ import annotations

import dataclasses
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
    rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int
) -> list[FusedRank]:
    """Fuse ranked id lists: ``score(id) = sum over sides of w_side / (k + rank_side)``.

    RRF uses ranks only, so a cosine similarity and a BM25 score never have to be put
    on one scale. A larger ``k`` flattens the curve (deep ranks count almost as much
    as the top ones). Equal fused scores are ordered by the best single-side rank,
    then by first appearance (sides in mapping order), so the result is deterministic.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    first_seen: dict[str, int] = {}
    for side, ids in rankings.items():
        weight = weights.get(side, 1.0)
        for rank, chunk_id in enumerate(dict.fromkeys(ids), start=1):
            first_seen.setdefault(chunk_id, len(first_seen))
            ranks.setdefault(chunk_id, {})[side] = rank
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + rank)
    order = sorted(scores, key=lambda c: (-scores[c], min(ranks[c].values()), first_seen[c]))
    return [FusedRank(c, scores[c], dict(ranks[c])) for c in order]


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
