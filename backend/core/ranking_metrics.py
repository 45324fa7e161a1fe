"""Document-level retrieval metrics, pure functions over ranked doc_ids.

A search returns chunks; a golden set names documents. ``ranked_doc_ids`` turns
the chunk ranking into a document ranking (first occurrence wins, duplicates
dropped), so a document split into five chunks cannot fill the top five on its
own and a relevant document counts once.

Gains for nDCG are the golden set's grades with the exponential form
``2**grade - 1`` (binary relevance gives gain 1), discounted by ``log2(rank + 1)``.
"""

from __future__ import annotations

import math
import re
from typing import Iterable, Mapping, Sequence

import numpy as np


def ranked_doc_ids(doc_ids: Iterable[str]) -> list[str]:
    """Chunk-ranked doc_ids -> document ranking (first occurrence, deduplicated)."""
    seen: set[str] = set()
    out: list[str] = []
    for doc_id in doc_ids:
        if doc_id not in seen:
            seen.add(doc_id)
            out.append(doc_id)
    return out


def hit_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """1.0 if any relevant document is in the first ``k``."""
    return 1.0 if any(d in relevant for d in ranked[:k]) else 0.0


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Share of the relevant documents found in the first ``k``."""
    if not relevant:
        raise ValueError("recall is undefined without relevant documents")
    return sum(1 for d in ranked[:k] if d in relevant) / len(relevant)


def reciprocal_rank(ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
    """1 / rank of the first relevant document; 0 if none was retrieved."""
    for rank, doc_id in enumerate(ranked, start=1):
        if doc_id in relevant:
            return 1.0 / rank
    return 0.0


def _dcg(gains: Sequence[float]) -> float:
    return float(sum((2.0 ** float(g) - 1.0) / math.log2(i + 2) for i, g in enumerate(gains)))


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int = 10) -> float:
    """Normalised discounted cumulative gain over the first ``k`` documents."""
    if not relevant:
        raise ValueError("nDCG is undefined without relevant documents")
    ideal = _dcg(sorted(relevant.values(), reverse=True)[:k])
    return float(_dcg([relevant.get(d, 0.0) for d in ranked[:k]]) / ideal)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (NumPy's default); None for no values."""
    if not values:
        return None
    return float(np.percentile(np.asarray(values, dtype=float), q))


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def contains_all(answer: str, phrases: Sequence[str]) -> tuple[bool, list[str]]:
    """Case-insensitive, whitespace-normalised containment at word boundaries (so
    "5 days" is not found in "25 days"); returns the missing phrases."""
    norm = " ".join(answer.split()).casefold()
    missing = []
    for phrase in phrases:
        pattern = r"(?<!\w)" + re.escape(" ".join(phrase.split()).casefold()) + r"(?!\w)"
        if not re.search(pattern, norm):
            missing.append(phrase)
    return not missing, missing
