"""Lexical-to-dense feedback: move the query vector toward the best keyword matches.

Pseudo-relevance feedback in the vector space (Rocchio without negatives): the first
lexical hits of a question share its topic's vocabulary, and their stored vectors say
what documents on that topic look like to the embedding model; averaging them into the
query vector lets the dense side find documents worded like them, not only like the
question. Taking the feedback from the *lexical* side gives the dense side evidence it
does not already have. Pure: vectors in, a vector out (docs/SEARCH.md, "dense feedback").
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def _unit(v: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def feedback_query(query: np.ndarray, feedback: Sequence[np.ndarray], weight: float) -> np.ndarray:
    """``unit(q) + weight x mean(unit(v) for v in feedback)``, rescaled to the query's own norm
    (so a dot-product or euclidean version compares it on the query's scale; under cosine the
    scale does not matter). No feedback vectors, or weight 0: the query unchanged."""
    if weight < 0:
        raise ValueError(f"weight must be >= 0, got {weight}")
    q = np.asarray(query, dtype=np.float32)
    if not len(feedback) or weight == 0:
        return q
    centroid = np.mean([_unit(np.asarray(v, dtype=np.float32)) for v in feedback], axis=0)
    moved = _unit(_unit(q) + weight * centroid)
    return (moved * float(np.linalg.norm(q))).astype(np.float32)
