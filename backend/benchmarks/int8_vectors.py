"""INT8 against FLOAT32 vectors on CISI, offline (review §2.11; docs/BENCHMARKS.md, "INT8 vectors").

No Oracle server runs here, so the store's quantisation is applied in NumPy exactly as the Oracle
adapter applies it before binding (``vector_format.quantize_int8``: each vector scaled to +-127 and
rounded; Oracle stores those integers as they are). Both searches are exact cosine top-k, the query
vector float32 as the store sends it, so the figures isolate what the format loses, not what an
approximate index loses on top:

* recall@10 of INT8 against FLOAT32: the share of each query's FLOAT32 top 10 that the INT8
  search also returns, over all 112 queries;
* nDCG@10 of both against the relevance judgements (76 judged queries), which is what users see;
* the cosine between each vector and its dequantised INT8 copy, and the bytes per vector.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from backend.benchmarks.cisi import load_documents, load_qrels, load_queries
from backend.benchmarks.quality import K, _mean_ndcg
from backend.core.vector_format import dequantize, quantize_int8


def top_k(matrix: np.ndarray, queries: np.ndarray, k: int = K) -> np.ndarray:
    """Pure: the indexes of each query's k nearest rows by cosine, best first."""
    m = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    scores = q @ m.T
    part = np.argpartition(-scores, kth=min(k, scores.shape[1] - 1), axis=1)[:, :k]
    order = np.take_along_axis(scores, part, axis=1).argsort(axis=1)[:, ::-1]
    return np.take_along_axis(part, order, axis=1)


def overlap_recall(reference: np.ndarray, candidate: np.ndarray) -> np.ndarray:
    """Pure: per query, the share of ``reference``'s ids that ``candidate`` also holds."""
    return np.array([len(set(r) & set(c)) / len(r) for r, c in zip(reference.tolist(), candidate.tolist())])


def compare_formats(docs: np.ndarray, queries: np.ndarray, k: int = K) -> dict[str, Any]:
    """Pure: FLOAT32 against INT8 (the store's quantisation) on one collection's vectors."""
    int8 = quantize_int8(docs)
    back = dequantize(int8)
    unit = docs / np.linalg.norm(docs, axis=1, keepdims=True)
    exact, approx = top_k(docs, queries, k), top_k(int8.astype(np.float32), queries, k)
    recall = overlap_recall(exact, approx)
    fidelity = np.einsum("ij,ij->i", unit, back)
    return {"exact": exact, "int8": approx, "recall_mean": float(recall.mean()), "recall_min": float(recall.min()),
            "queries_all_10": int((recall == 1.0).sum()), "queries": len(recall),
            "vector_cosine_mean": float(fidelity.mean()), "vector_cosine_min": float(fidelity.min()),
            "bytes_float32": int(docs.shape[1] * 4), "bytes_int8": int(docs.shape[1])}


def measure(cisi_dir: Path, embedder: Any) -> dict[str, Any]:
    """Embed CISI (title + abstract, the queries as queries) with ``embedder`` and compare the formats."""
    documents: Mapping[str, str] = load_documents(cisi_dir)
    queries: Mapping[str, str] = load_queries(cisi_dir)
    qrels = load_qrels(cisi_dir)
    ids: Sequence[str] = list(documents)
    qids: Sequence[str] = list(queries)
    started = time.perf_counter()
    docs = np.asarray(embedder.embed_documents([documents[d] for d in ids]), dtype=np.float32)
    qvecs = np.asarray(embedder.embed_queries([queries[q] for q in qids]), dtype=np.float32)
    out = compare_formats(docs, qvecs)
    judged = [i for i, q in enumerate(qids) if q in qrels]
    for name in ("exact", "int8"):
        rankings = {qids[i]: [ids[j] for j in out[name][i]] for i in judged}
        out[f"ndcg_{name}"] = _mean_ndcg(rankings, qrels)
    out.pop("exact"), out.pop("int8")
    out.update(documents=len(ids), judged=len(judged), model=getattr(embedder, "model_id", "?"),
               seconds=round(time.perf_counter() - started, 1))
    return out
