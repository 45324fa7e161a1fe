"""Retrieval quality on CISI: the product's strategies beside two baselines, then the
tunable options (fusion method and weights, rerankers, contextual headers), one run.

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
            queries: Mapping[str, str], qrels: Mapping[str, set[str]], headed_store: Any | None = None) -> Section:
    """The baselines and the product's strategies, then (``measure_options``) the tunable
    options; ``headed_store`` is the same collection ingested with contextual headers."""
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
    measure_options(settings, store, headed_store, embedder, target, queries, qrels, section)
    return section


# --- the tunable options: fusion methods and weights, rerankers, contextual headers -------------
class MemoEmbedder:
    """The bench's embedder with every document text embedded at most once per run: the
    bare baseline, the header store and the sentence reranker ask for many of the same texts."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.compatible_models: frozenset[str] = getattr(inner, "compatible_models", frozenset())
        self._documents: dict[str, np.ndarray] = {}
        self.computed = 0

    def __getattr__(self, name: str) -> Any:  # tokenizer, texts_embedded... of the real embedder
        return getattr(self._inner, name)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._documents))
        if todo:
            for text, vec in zip(todo, self._inner.embed_documents(todo)):
                self._documents[text] = vec
            self.computed += len(todo)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._documents[t] for t in texts])

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._inner.embed_queries(texts)


def header_store(base_config: Any, embedder: Any, documents: Mapping[str, str], titles: Mapping[str, str],
                 work: Any) -> Any:
    """CISI ingested again with ``chunk_headers`` on and each title as manifest metadata."""
    import json

    from backend.benchmarks import ingestion

    folder = work / "corpus-headers"
    manifest = ingestion.write_corpus(dict(documents), folder)
    lines = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines()]
    manifest.write_text("\n".join(json.dumps({**line, "metadata": {"title": titles.get(line["doc_id"], "")}})
                                  for line in lines) + "\n", encoding="utf-8")
    settings = ingestion.bench_settings(base_config, folder, work / "headers.sqlite", False, worker=False)
    profile = settings.embeddings.profiles[ingestion.CISI_PROFILE].model_copy(update={"chunk_headers": True})
    settings = settings.model_copy(update={"embeddings": settings.embeddings.model_copy(
        update={"profiles": {**settings.embeddings.profiles, ingestion.CISI_PROFILE: profile}})})
    return ingestion.run_pipeline(settings, embedder, manifest).store


def measure_options(settings: Settings, plain_store: Any, headed_store: Any | None, embedder: Any, target: str,
                    queries: Mapping[str, str], qrels: Mapping[str, set[str]], section: Section,
                    rerankers: Sequence[str] = ("none", "sentences")) -> list[Any]:
    """The tuning grid on CISI: every fusion method and weight set, with and without the
    ``sentences`` reranker and contextual headers; per-query wins/losses against plain fusion."""
    from backend.core.services import tuning
    from backend.providers.rerank.sentences import SentenceReranker

    judged = {q: queries[q] for q in sorted(qrels, key=int) if q in queries}
    relevant = {q: {d: 1.0 for d in qrels[q]} for q in judged}
    profile = settings.embeddings.profiles[settings.embeddings.default_profile].model_copy(update={"fusion": None})
    reranker = SentenceReranker(embedder, sentence_weight=settings.retrieval.rerank.sentence_weight)
    headers = (False, True) if headed_store is not None else (False,)

    def make_search(candidate: Any) -> tuple[SearchService, str]:
        store: Any = headed_store if candidate.headers else plain_store
        retrieval = candidate.retrieval(settings.retrieval)
        return SearchService(store, embedder, profile, retrieval,
                             reranker if candidate.rerank == "sentences" else None), target

    results = tuning.run_grid(tuning.default_grid(rerankers=rerankers, headers=headers), make_search, judged,
                              relevant)
    baseline = tuning.baseline_of(results)
    best = max(results, key=lambda r: r.ndcg)
    for r in results:
        wins, losses = r.against(baseline)
        section.figures[f"option {r.candidate.label}"] = (
            f"{r.ndcg:.4f} ({r.ndcg - baseline.ndcg:+.4f}; wins {wins} / losses {losses}; "
            f"{r.ms_per_query:.1f} ms/query = {r.ms_per_query / max(baseline.ms_per_query, 1e-9):.2f}x)")
    section.figures["best option"] = best.candidate.label
    section.target("best option nDCG@10 (issue 21 target)", best.ndcg, ">=", 0.46)
    section.target("best option ms/query / plain fusion", best.ms_per_query / max(baseline.ms_per_query, 1e-9),
                   "<=", 2.0)
    section.notes.append("options: wins/losses count judged queries whose nDCG@10 is above/below plain fusion "
                         "(unweighted RRF, no reranker, no headers); ms/query is the whole search on CISI "
                         "(1460 chunks) in this process, reranking included")
    return results
