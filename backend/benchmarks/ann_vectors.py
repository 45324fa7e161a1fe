"""Synthetic embeddings for the ANN benchmarks, and the statistics they are calibrated by.

Isotropic random unit vectors are the worst case for a graph index (every point is about
as far from every other; no neighbourhoods to follow), so they would understate what an
index does on real text. ``minilm_like`` draws vectors from topics in a low-rank latent
space plus isotropic noise, with parameters chosen so that its neighbour statistics (mean
cosine to the 1st and 10th nearest neighbour, mean pairwise cosine) match all-MiniLM-L6-v2
vectors of the CISI abstracts chunked like an ingest (3,616 chunks; ``calibration``, the
figures are in docs/BENCHMARKS.md). ``isotropic`` is the deliberately harder generator.
"""

from __future__ import annotations

import numpy as np

#: Calibrated against MiniLM on CISI (docs/BENCHMARKS.md, "ANN index (embedded store)").
MINILM_LIKE = {"topics": 400, "latent": 48, "spread": 1.0, "noise": 0.6, "mean": 0.5}


def minilm_like(n: int, dim: int = 384, seed: int = 7, **overrides: float) -> np.ndarray:
    """``n`` unit vectors, float32, drawn in batches so 1M x 384 needs no more than the result."""
    p = {**MINILM_LIKE, **overrides}
    rng = np.random.default_rng(seed)
    latent, topics = int(p["latent"]), int(p["topics"])
    basis = (rng.standard_normal((latent, dim)) / np.sqrt(latent)).astype(np.float32)
    centers = rng.standard_normal((topics, latent)).astype(np.float32)
    common = rng.standard_normal(dim).astype(np.float32)
    common /= np.linalg.norm(common)
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(n, start + 100_000) - start
        z = centers[rng.integers(topics, size=m)] + p["spread"] * rng.standard_normal((m, latent), dtype=np.float32)
        x = z @ basis + p["noise"] * np.sqrt(latent) * rng.standard_normal((m, dim), dtype=np.float32) / np.sqrt(dim)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        x += p["mean"] * common
        out[start:start + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def isotropic(n: int, dim: int = 384, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim), dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def calibration(vectors: np.ndarray, sample: int = 500, seed: int = 1) -> dict[str, float]:
    """Mean cosine of a sample of rows to their 1st and 10th nearest other row, and to all rows."""
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(vectors), size=min(sample, len(vectors)), replace=False)
    sims = vectors[idx] @ vectors.T
    sims[np.arange(len(idx)), idx] = -2.0  # not its own neighbour
    top = -np.sort(-sims, axis=1)[:, :10]
    return {"nn1": round(float(top[:, 0].mean()), 3), "nn10": round(float(top[:, 9].mean()), 3),
            "mean": round(float(sims[sims > -2].mean()), 3)}
