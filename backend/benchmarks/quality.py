"""Retrieval quality on CISI: the product's strategies beside two baselines, one run.

The product figures go through the ingest pipeline's store and ``SearchService``;
the baselines are computed here from the raw collection: BM25 (bm25s, English
stop words) and the bare all-MiniLM-L6-v2 model with an exact NumPy cosine
search. nDCG@10 with binary gains over the judged queries (CISI README).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from backend.benchmarks.stats import Section
from backend.common.config import Settings
from backend.core.services.ranking_metrics import ndcg_at_k, ranked_doc_ids
from backend.core.services.search_service import SearchRequest, SearchService
from backend.providers.sqlite_vs import dense

K = 10
CANDIDATES = 30  # chunk hits fetched before collapsing to documents


def _mean_ndcg(rankings: Mapping[str, Sequence[str]], qrels: Mapping[str, set[str]]) -> float:
    scores = [ndcg_at_k(list(rankings[q])[:K], {d: 1.0 for d in qrels[q]}, K) for q in rankings]
    return round(float(np.mean(scores)), 4)


def bm25_rankings(documents: Mapping[str, str], queries: Mapping[str, str]) -> dict[str, list[str]]:
    import bm25s

    ids = list(documents)
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([documents[d] for d in ids], stopwords="en", show_progress=False),
                    show_progress=False)
    out = {}
    for qid, text in queries.items():
        docs, _ = retriever.retrieve(bm25s.tokenize([text], stopwords="en", show_progress=False), k=K,
                                     show_progress=False)
        out[qid] = [ids[i] for i in docs[0]]
    return out


def bare_model_rankings(embedder: Any, documents: Mapping[str, str], queries: Mapping[str, str]) -> dict[str, list[str]]:
    ids = list(documents)
    matrix = embedder.embed_documents([documents[d] for d in ids])
    matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    qids = list(queries)
    qvecs = embedder.embed_queries([queries[q] for q in qids])
    return {q: [ids[i] for i in dense.top_k(matrix @ (v / np.linalg.norm(v)), K)] for q, v in zip(qids, qvecs)}


def product_rankings(service: SearchService, target: str, queries: Mapping[str, str],
                     strategy: str) -> dict[str, list[str]]:
    out = {}
    for qid, text in queries.items():
        outcome = service.search(SearchRequest(text, target, CANDIDATES, strategy=strategy))
        out[qid] = ranked_doc_ids(h.chunk.doc_id for h in outcome.hits)[:K]
    return out


def measure(settings: Settings, store: Any, embedder: Any, target: str, documents: Mapping[str, str],
            queries: Mapping[str, str], qrels: Mapping[str, set[str]]) -> Section:
    section = Section("Retrieval quality (CISI, nDCG@10, binary gains)")
    judged = {q: queries[q] for q in sorted(qrels, key=int) if q in queries}
    judged_rels = {q: qrels[q] for q in judged}
    bm25 = _mean_ndcg(bm25_rankings(documents, judged), judged_rels)
    bare = _mean_ndcg(bare_model_rankings(embedder, documents, judged), judged_rels)
    profile = settings.embeddings.profiles[settings.embeddings.default_profile]
    service = SearchService(store, embedder, profile, settings.retrieval)
    product = {s: _mean_ndcg(product_rankings(service, target, judged, s), judged_rels)
               for s in ("dense", "lexical", "fusion")}
    section.figures["judged queries"] = len(judged)
    section.figures["baseline BM25 (bm25s, English stop words)"] = bm25
    section.figures["baseline bare all-MiniLM-L6-v2 exact cosine"] = bare
    for strategy, value in product.items():
        section.figures[f"product {strategy}"] = value
    section.target("product dense / bare model", product["dense"] / bare, ">=", 0.99)
    section.target("product fusion - max(BM25, bare)", product["fusion"] - max(bm25, bare), ">=", 0.0)
    section.target("product fusion - max(product dense, lexical)",
                   product["fusion"] - max(product["dense"], product["lexical"]), ">=", 0.0)
    return section
