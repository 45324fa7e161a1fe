"""Exact dense search with NumPy over a version's vectors, cached per generation.

Why not sqlite-vec: the Python on our machines cannot load SQLite extensions,
and measured at 100k x 384 on 2 cores a NumPy matrix product (~13 ms) beats
sqlite-vec's scalar distance (~100 ms) and its vec0 table (~45 ms). The vectors
stay in SQLite (one file, transactional); the matrix is a read cache keyed by
the version's ``generation``, which every write bumps in the same transaction,
so a reader never scores a stale or half-written matrix.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from backend.core.types import Distance, Vector


def limit_blas_threads(threads: int | None) -> None:
    """Cap the threads of NumPy's BLAS for this process (``store.sqlite.blas_threads``).

    A matrix-vector product over a version is memory-bound, so extra BLAS threads
    buy little; worse, OpenBLAS threads keep spinning after each call and take the
    cores the embedding model (torch, its own thread pool) needs for the next
    question. Measured on 2 cores at 10k chunks: ``/chat`` service p50 40 ms with
    the default, 19 ms with one thread."""
    if threads is None:
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads, user_api="blas")


@dataclass(frozen=True)
class Matrix:
    generation: int
    rowids: np.ndarray  # int64, sorted ascending
    vectors: Vector  # (n, dim); unit rows for cosine
    #: the chunk id of each row (chunk matrices only), so candidates need no row reads
    ids: np.ndarray | None = None
    #: ``chunk_id -> position`` (chunk matrices only): lookups by id without an index probe
    positions: dict[str, int] | None = None


def prepare(rowids: np.ndarray, vectors: Vector, distance: Distance, generation: int,
            ids: np.ndarray | None = None) -> Matrix:
    order = np.argsort(rowids, kind="stable")
    rowids, vectors = rowids[order], vectors[order]
    if distance == "cosine" and len(vectors):
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.maximum(norms, 1e-12)
    ids = ids[order] if ids is not None else None
    return Matrix(generation, rowids, np.ascontiguousarray(vectors, dtype=np.float32), ids,
                  {c: i for i, c in enumerate(ids.tolist())} if ids is not None else None)


def scores(matrix: Vector, query: Vector, distance: Distance) -> np.ndarray:
    """Similarity, higher is better: cosine similarity, dot product, or -euclidean."""
    if distance == "cosine":
        q = query / max(float(np.linalg.norm(query)), 1e-12)
        return matrix @ q
    if distance == "dot":
        return matrix @ query
    return -np.linalg.norm(matrix - query, axis=1)


def top_k(sims: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` best scores, best first; ties broken by position."""
    k = min(k, len(sims))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k < len(sims):
        part = np.argpartition(-sims, k - 1)[:k]
    else:
        part = np.arange(len(sims))
    return part[np.lexsort((part, -sims[part]))]


class MatrixCache:
    """Process-wide cache of version matrices; thread-safe, bounded by versions."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[tuple[str, str], Matrix] = {}

    def get(self, db: str, version: str, generation: int) -> Matrix | None:
        with self._lock:
            m = self._items.get((db, version))
        return m if m is not None and m.generation == generation else None

    def put(self, db: str, version: str, matrix: Matrix) -> None:
        with self._lock:
            self._items[(db, version)] = matrix

    def drop(self, db: str, version: str) -> None:
        with self._lock:
            self._items.pop((db, version), None)
