"""Which ANN library the embedded store uses, by measurement (docs/BENCHMARKS.md, "ANN index").

Run: ``python -m backend.benchmarks.ann_choice [N ...] [--isotropic]``. For each candidate that
installs from PyPI as a wheel (hnswlib ships only a source archive, so it is not one): build
seconds (2 threads), p50 single-query latency on one thread (a serving worker's share of 2 cores),
recall@10 against exact NumPy, and the index's own memory against the raw float32 vectors.
usearch measured level with faiss but is not a dependency: imported before ONNX Runtime creates a
session, it crashes the process (docs/BENCHMARKS.md, section 11).
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from backend.benchmarks.ann_vectors import isotropic, minilm_like

QUERIES = 200


def _exact(data: np.ndarray, queries: np.ndarray) -> np.ndarray:
    out = []
    for q in queries:
        sims = data @ q
        top = np.argpartition(-sims, 10)[:10]
        out.append(top[np.argsort(-sims[top])])
    return np.array(out)


def _recall(found: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean([len(set(f.tolist()) & set(t.tolist())) / 10 for f, t in zip(found, truth)]))


EFS = (32, 64, 128)


def usearch_run(data: np.ndarray, queries: np.ndarray, dtype: str, ef_add: int) -> list[dict[str, Any]]:
    import os
    import tempfile

    from usearch.index import Index

    index = Index(ndim=data.shape[1], metric="ip", dtype=dtype, connectivity=16, expansion_add=ef_add)
    t = time.perf_counter()
    index.add(np.arange(len(data), dtype=np.uint64), data, threads=2)
    build = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        index.save(os.path.join(tmp, "i"))
        size = os.path.getsize(os.path.join(tmp, "i"))
    out = []
    for ef in EFS:
        index.expansion_search = ef  # type: ignore[misc]  # the property has a setter
        found, ms = [], []
        for q in queries:
            t = time.perf_counter()
            match = index.search(q, 10, threads=1)
            ms.append((time.perf_counter() - t) * 1000)
            found.append(np.asarray(match.keys, dtype=np.int64))
        out.append({"ef": ef, "build_s": build, "p50_ms": float(np.median(ms)), "found": np.array(found),
                    "memory_mb": size / 2**20})
    return out


def faiss_run(data: np.ndarray, queries: np.ndarray, ef_add: int) -> list[dict[str, Any]]:
    import faiss

    faiss.omp_set_num_threads(2)
    index = faiss.IndexHNSWFlat(data.shape[1], 16, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ef_add
    t = time.perf_counter()
    index.add(data)
    build = time.perf_counter() - t
    faiss.omp_set_num_threads(1)
    size = len(faiss.serialize_index(index))
    out = []
    for ef in EFS:
        index.hnsw.efSearch = ef
        found, ms = [], []
        for q in queries:
            t = time.perf_counter()
            _, ids = index.search(q[None, :], 10)
            ms.append((time.perf_counter() - t) * 1000)
            found.append(ids[0])
        out.append({"ef": ef, "build_s": build, "p50_ms": float(np.median(ms)), "found": np.array(found),
                    "memory_mb": size / 2**20})
    return out


def main(argv: list[str]) -> None:
    hard = "--isotropic" in argv
    sizes = [int(a) for a in argv if a.isdigit()] or [100_000]
    # usearch-<f32|f16|i8>@<ef_construction> rows need `pip install usearch` (not a dependency: see the docstring)
    libs = [a for a in argv if not a.isdigit() and a != "--isotropic"] or ["faiss-hnswflat@128"]
    for n in sizes:
        gen = isotropic if hard else minilm_like
        allv = gen(n + QUERIES)
        data, queries = np.ascontiguousarray(allv[:n]), allv[n:]
        truth = _exact(data, queries)
        t = time.perf_counter()
        for q in queries[:50]:
            np.argpartition(-(data @ q), 10)[:10]
        exact_ms = (time.perf_counter() - t) * 1000 / 50
        print(f"n={n} generator={'isotropic' if hard else 'minilm_like'} raw_mb={data.nbytes / 2**20:.0f} "
              f"exact_ms={exact_ms:.2f}", flush=True)
        for lib in libs:
            name, _, ef_add = lib.partition("@")
            runs = usearch_run(data, queries, name.split("-")[1], int(ef_add or 128)) \
                if name.startswith("usearch") else faiss_run(data, queries, int(ef_add or 128))
            for r in runs:
                print(f"  {lib:18} ef={r['ef']:3} build_s={r['build_s']:.1f} p50_ms={r['p50_ms']:.3f} "
                      f"recall@10={_recall(r['found'], truth):.3f} index_file_mb={r['memory_mb']:.0f} "
                      f"({r['memory_mb'] / (data.nbytes / 2**20):.2f}x raw)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
